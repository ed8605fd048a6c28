"""Path handling shared by the tools (Pi's ``utils/paths.ts`` and ``core/tools/path-utils.ts``).

A path the model passes is normalised before it is resolved against the tool's cwd:

* unicode space variants (NBSP, the U+2000..U+200A spaces, narrow NBSP, medium math space,
  ideographic space) become plain spaces, because models copy paths out of rendered text;
* one leading ``@`` is dropped (Pi's CLI ``@file`` mention syntax leaks into tool calls);
* ``~`` and ``~/...`` expand to the home directory (``~user`` does not);
* ``file://`` URLs become paths (Node's ``fileURLToPath``: host must be empty or ``localhost``,
  no encoded ``/``, percent-decoding);
* then Node's ``path.resolve``: relative to the cwd, ``.``/``..`` folded, duplicate and trailing
  slashes dropped.

The read tool additionally tries macOS file-name variants when the path does not exist:
a narrow no-break space before ``AM``/``PM`` (screenshot names), NFD normalisation, the curly
apostrophe U+2019 (``Capture d'écran``), and NFD plus curly apostrophe.
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from urllib.parse import unquote, urlsplit

from pi_nb.config import UNICODE_SPACES, home_dir
from pi_nb.errors import ToolError

__all__ = ["expand_path", "normalize_path", "resolve_path", "resolve_read_path", "resolve_to_cwd"]

NARROW_NO_BREAK_SPACE = "\u202f"
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)


_home = home_dir


def node_normalize(path: str) -> str:
    """Node's ``path.normalize`` for absolute POSIX paths, without a trailing slash."""
    out = posixpath.normpath(path)
    if out.startswith("//") and not out.startswith("///"):
        out = out[1:]  # POSIX lets normpath keep exactly two leading slashes; Node does not
    return out


def node_resolve(*segments: str) -> str:
    """Node's ``path.resolve(...segments)`` on POSIX.

    The current directory is read only when no segment is absolute, as in Node (so tools with an
    absolute cwd keep working in a kernel whose own directory was deleted).
    """
    resolved = ""
    for seg in reversed(segments):
        if not seg:
            continue
        resolved = seg + "/" + resolved if resolved else seg
        if seg.startswith("/"):
            return node_normalize(resolved)
    cwd = os.getcwd()
    return node_normalize(cwd + "/" + resolved if resolved else cwd)


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 dot-segment removal, as the WHATWG URL parser applies it to a file URL path."""
    out: list[str] = []
    segments = path.split("/")[1:] if path.startswith("/") else path.split("/")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        low = seg.lower()
        if seg == "." or low == "%2e":
            if last:
                out.append("")
            continue
        if seg == ".." or low in (".%2e", "%2e.", "%2e%2e"):
            if out:
                out.pop()
            if last:
                out.append("")
            continue
        out.append(seg)
    return "/" + "/".join(out)


def file_url_to_path(url: str) -> str:
    """Node's ``fileURLToPath`` on Linux (errors carry Node's messages)."""
    parts = urlsplit(url.replace("\\", "/"))
    host = parts.hostname or ""
    if host not in ("", "localhost"):
        raise ToolError('File URL host must be "localhost" or empty on linux')
    path = _remove_dot_segments(parts.path or "/")
    if re.search(r"%2f", path, re.IGNORECASE):
        raise ToolError("File URL path must not include encoded / characters")
    try:
        return unquote(path, errors="strict")
    except UnicodeDecodeError:
        raise ToolError("URI malformed") from None


def normalize_path(
    path: str,
    *,
    normalize_unicode_spaces: bool = False,
    strip_at_prefix: bool = False,
    expand_tilde: bool = True,
    home_dir: str | None = None,
    trim: bool = False,
) -> str:
    """Pi's ``normalizePath(input, options)`` (POSIX), as the tools call it.

    Kept apart from :func:`pi_nb.config.normalize_path` on purpose: the tools' ``file://``
    handling folds dot segments and raises :class:`~pi_nb.errors.ToolError` with Node's
    ``fileURLToPath`` messages, and ``trim`` is :meth:`str.strip` (the goldens pin both)."""
    normalized = path.strip() if trim else path
    if normalize_unicode_spaces:
        normalized = UNICODE_SPACES.sub(" ", normalized)
    if strip_at_prefix and normalized.startswith("@"):
        normalized = normalized[1:]
    if expand_tilde:
        home = home_dir if home_dir is not None else _home()
        if normalized == "~":
            return home
        if normalized.startswith("~/"):
            rest = normalized[2:]
            joined = node_normalize(posixpath.join(home, rest)) if rest else home
            if rest.endswith("/") and not joined.endswith("/"):
                joined += "/"  # Node's path.join keeps a trailing separator
            return joined
    if normalized.startswith("file://"):
        return file_url_to_path(normalized)
    return normalized


def resolve_path(path: str, base_dir: str | None = None, **options: bool) -> str:
    """Pi's ``resolvePath(input, baseDir, options)``: normalise, then Node's ``path.resolve``."""
    normalized = normalize_path(path, **options)  # type: ignore[arg-type]
    base = normalize_path(base_dir if base_dir is not None else os.getcwd())
    if normalized.startswith("/"):
        return node_resolve(normalized)
    return node_resolve(base, normalized)


def expand_path(path: str) -> str:
    """Pi's ``expandPath``: the tool normalisation without resolving against a cwd."""
    return normalize_path(path, normalize_unicode_spaces=True, strip_at_prefix=True)


def resolve_to_cwd(path: str, cwd: str) -> str:
    """Pi's ``resolveToCwd``: how every tool turns the model's path into an absolute one."""
    return resolve_path(path, cwd, normalize_unicode_spaces=True, strip_at_prefix=True)


def _exists(path: str) -> bool:
    return os.path.exists(path)


def resolve_read_path(path: str, cwd: str) -> str:
    """Pi's ``resolveReadPath``: :func:`resolve_to_cwd`, then the macOS file-name variants."""
    resolved = resolve_to_cwd(path, cwd)
    if _exists(resolved):
        return resolved
    am_pm = _AM_PM.sub(lambda m: f"{NARROW_NO_BREAK_SPACE}{m.group(1)}.", resolved)
    if am_pm != resolved and _exists(am_pm):
        return am_pm
    nfd = unicodedata.normalize("NFD", resolved)
    if nfd != resolved and _exists(nfd):
        return nfd
    curly = resolved.replace("'", "\u2019")
    if curly != resolved and _exists(curly):
        return curly
    nfd_curly = nfd.replace("'", "\u2019")
    if nfd_curly != resolved and _exists(nfd_curly):
        return nfd_curly
    return resolved
