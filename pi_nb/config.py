"""Pi's ``config.ts`` and the path half of ``utils/paths.ts``: the names and places every package
shares (the session store, the resource loaders, the tools).

* :data:`APP_NAME` (``pi``) and :data:`CONFIG_DIR_NAME` (``.pi``, the project folder
  ``<cwd>/.pi`` and the home folder ``~/.pi``);
* the environment variables :data:`ENV_AGENT_DIR` (``PI_CODING_AGENT_DIR``) and
  :data:`ENV_SESSION_DIR` (``PI_CODING_AGENT_SESSION_DIR``), named from the app name as Pi names
  them;
* :func:`get_agent_dir` (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``) and
  :func:`get_sessions_dir`;
* Pi's ``normalizePath`` / ``resolvePath`` (:func:`normalize_path`, :func:`resolve_path`) with
  Node's ``path.resolve`` / ``path.join`` (:func:`node_resolve`, :func:`node_join`), as the
  session store and the resource loaders compare paths *as strings*.

The tools keep their own POSIX flavour of the same normalisation (:mod:`pi_nb.tools.paths`: Pi's
``path-utils.ts`` with ``fileURLToPath``'s dot-segment folding and the tool errors); they share
the home directory and the unicode-space class defined here.

This module imports nothing of pi_nb but the small JavaScript helpers and the error types, so any
package may import it at module level.
"""

from __future__ import annotations

import os
import re
import sys
from urllib.parse import unquote, urlsplit

from pi_nb._js import js_homedir, js_trim
from pi_nb.errors import ResourceError

__all__ = [
    "APP_NAME",
    "CONFIG_DIR_NAME",
    "ENV_AGENT_DIR",
    "ENV_SESSION_DIR",
    "UNICODE_SPACES",
    "get_agent_dir",
    "get_sessions_dir",
    "home_dir",
    "node_join",
    "node_resolve",
    "normalize_path",
    "resolve_path",
]

#: Pi's ``APP_NAME`` (used in the trust question and the "not a valid pi session" error).
APP_NAME = "pi"
#: Pi's ``CONFIG_DIR_NAME``: ``<cwd>/.pi`` for a project, ``~/.pi/agent`` for the user.
CONFIG_DIR_NAME = ".pi"
#: ``PI_CODING_AGENT_DIR``: where the agent dir is, when set and not empty.
ENV_AGENT_DIR = f"{APP_NAME.upper()}_CODING_AGENT_DIR"
#: ``PI_CODING_AGENT_SESSION_DIR``: a flat custom session directory.
ENV_SESSION_DIR = f"{APP_NAME.upper()}_CODING_AGENT_SESSION_DIR"

#: The unicode space variants Pi's ``normalizePath`` turns into plain spaces (NBSP, U+2000..U+200A,
#: narrow NBSP, medium math space, ideographic space).
UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")

#: Node's ``process.env.HOME || os.homedir()``: the one home directory, as Pi resolves ``~``.
home_dir = js_homedir


def _posix_fixup(p: str) -> str:
    # os.path.normpath keeps exactly two leading slashes; Node's path.resolve does not.
    if os.sep == "/" and p.startswith("//"):
        return "/" + p.lstrip("/")
    return p


def node_resolve(*segments: str) -> str:
    """Node's ``path.resolve(...segments)``: absolute, normalised, no trailing separator.

    Like Node, the current directory is consulted only when no segment is absolute (a kernel whose
    cwd was deleted can still resolve absolute paths: ``os.getcwd()`` raises there).
    """
    joined = ""
    for seg in segments:
        if not seg:
            continue
        joined = seg if os.path.isabs(seg) else os.path.join(joined, seg)
    if not os.path.isabs(joined):
        joined = os.path.join(os.getcwd(), joined)
    return _posix_fixup(os.path.normpath(joined))


def node_join(*segments: str) -> str:
    """Node's ``path.join``: join the non-empty segments with the separator, then normalise
    (a trailing separator survives, an empty result is ``"."``)."""
    parts = [s for s in segments if s]
    if not parts:
        return "."
    joined = os.sep.join(parts)
    out = _posix_fixup(os.path.normpath(joined))
    if joined.endswith(os.sep) and not out.endswith(os.sep):
        out += os.sep
    return out


def _file_url_to_path(url: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc
    if sys.platform != "win32":
        if host not in ("", "localhost"):
            raise ResourceError(f'File URL host must be "localhost" or empty on {sys.platform}')
        if re.search(r"%2f", parts.path, re.IGNORECASE):
            raise ResourceError("File URL path must not include encoded / characters")
        return unquote(parts.path)
    path = unquote(parts.path)  # pragma: no cover - Windows only
    if re.match(r"^/[A-Za-z]:", path):  # pragma: no cover
        path = path[1:]
    path = path.replace("/", "\\")  # pragma: no cover
    return f"\\\\{host}{path}" if host else path  # pragma: no cover


def normalize_path(
    input: str,
    *,
    trim: bool = False,
    expand_tilde: bool = True,
    home_dir: str | None = None,
    strip_at_prefix: bool = False,
    normalize_unicode_spaces: bool = False,
) -> str:
    """Pi's ``normalizePath``: optional trim (JavaScript's ``trim``) / ``@`` strip, ``~``
    expansion, ``file://`` URLs; otherwise unchanged, not made absolute.

    ``~user`` is *not* expanded (Pi only knows ``~`` and ``~/``, and ``~\\`` on Windows).
    """
    normalized = js_trim(input) if trim else input
    if normalize_unicode_spaces:
        normalized = UNICODE_SPACES.sub(" ", normalized)
    if strip_at_prefix and normalized.startswith("@"):
        normalized = normalized[1:]
    if expand_tilde:
        home = home_dir if home_dir is not None else js_homedir()
        if normalized == "~":
            return home
        if normalized.startswith("~/") or (sys.platform == "win32" and normalized.startswith("~\\")):
            return node_join(home, normalized[2:])
    if normalized.startswith("file://"):
        return _file_url_to_path(normalized)
    return normalized


def resolve_path(
    input: str,
    base_dir: str | None = None,
    *,
    trim: bool = False,
    expand_tilde: bool = True,
    home_dir: str | None = None,
    strip_at_prefix: bool = False,
    normalize_unicode_spaces: bool = False,
) -> str:
    """Pi's ``resolvePath(input, baseDir = process.cwd(), options)``: normalise, then resolve
    against ``base_dir`` like Node's ``path.resolve`` (an absolute, normalised path)."""
    normalized = normalize_path(
        input,
        trim=trim,
        expand_tilde=expand_tilde,
        home_dir=home_dir,
        strip_at_prefix=strip_at_prefix,
        normalize_unicode_spaces=normalize_unicode_spaces,
    )
    if os.path.isabs(normalized):
        return node_resolve(normalized)
    base = normalize_path(base_dir) if base_dir is not None else os.getcwd()
    return node_resolve(base, normalized)


def get_agent_dir() -> str:
    """Pi's ``getAgentDir``: ``$PI_CODING_AGENT_DIR`` (``~`` expanded) when set and not empty,
    else ``~/.pi/agent``."""
    env = os.environ.get(ENV_AGENT_DIR)
    if env:
        return normalize_path(env)
    return os.path.join(js_homedir(), CONFIG_DIR_NAME, "agent")


def get_sessions_dir() -> str:
    """Pi's ``getSessionsDir``: ``{agent dir}/sessions``."""
    return os.path.join(get_agent_dir(), "sessions")
