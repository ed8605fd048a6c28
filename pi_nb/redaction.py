"""Secrets are redacted by *value* before anything is stored or shown.

Cleaning the environment of ``bash`` by variable name (see :mod:`pi_nb.tools.bash`) is not enough:
a model can ``read /proc/self/environ``, or find a key kept under a custom variable name. So every
text that leaves a boundary (tool results, streamed updates, error texts, session entries, notebook
outputs) goes through :func:`redact`, which replaces every known secret value by a marker such as
``[redacted: OPENAI_API_KEY]``. What the model *asked* is never rewritten: a tool runs with the
arguments as the model wrote them, only what is stored and shown of them is redacted.

What counts as a secret: the credentials pi_nb itself uses or can read, and nothing else.

* the provider key variables of the model catalog (``OPENAI_API_KEY``, ``ANTHROPIC_AUTH_TOKEN``,
  ``HF_TOKEN``, ... :data:`CATALOG_KEY_ENVS`), any other variable named ``*_API_KEY``, and the few
  credential variables the bash tool keeps out of commands (:data:`EXTRA_KEY_ENVS`);
* every variable registered with :func:`register_secret_env` (a model's ``api_key_env``, say
  ``LLM_TOKEN``), and every value registered with :func:`register_secret` (a key passed in code,
  the password of a base URL, the values of Pi's ``auth.json`` read by :func:`register_auth_file`);
* values shorter than :data:`MIN_SECRET_LENGTH` characters are never secrets: redacting ``"1"`` or
  ``"true"`` would destroy ordinary output and protect nothing.

A variable whose name merely *sounds* secret is not one: ``POSTGRES_PASSWORD=postgres``,
``GOOGLE_APPLICATION_CREDENTIALS=/path/key.json``, ``SSH_AUTH_SOCK`` or ``GIT_ASKPASS`` are left
alone (redacting them rewrote compose files, paths and common words). Register such a value
explicitly when it must not be shown.

The environment is read at each call (cheap: a dict scan), so a key exported after import is still
caught. Pi has no such redaction; this is a deliberate difference.

Order: text is redacted *before* it is cut (:func:`redact_cut`), so a cut never keeps the start of
a key. A stream (bash output arriving in chunks, a streamed answer) can split a secret across two
chunks; :class:`StreamRedactor` and :func:`redact_stream_text` hold back a suffix that could be the
start of a secret until the next chunk decides it (or the stream ends).
"""

from __future__ import annotations

import base64
import codecs
import dataclasses
import json
import os
import re
import stat
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from pi_nb._catalog_data import bundled_key_envs

__all__ = [
    "EXTRA_KEY_ENVS",
    "MIN_SECRET_LENGTH",
    "RedactingBashOperations",
    "StreamRedactor",
    "catalog_key_envs",
    "held_prefix_length",
    "is_secret_env_name",
    "known_secrets",
    "redact",
    "redact_cut",
    "redact_cut_tail",
    "redact_message",
    "redact_partial_result",
    "redact_stream_text",
    "redact_url",
    "redact_value",
    "register_auth_file",
    "register_model_secrets",
    "register_secret",
    "register_secret_env",
    "register_url_secrets",
]

#: Values shorter than this are never treated as secrets.
MIN_SECRET_LENGTH = 8

#: Credential variables pi_nb can read besides the catalog's and ``*_API_KEY``: the bash tool's
#: :data:`~pi_nb.tools.bash.CREDENTIAL_ENV_KEYS` and the AWS credentials pi-ai's Bedrock reads.
EXTRA_KEY_ENVS = frozenset(
    {
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_OAUTH_TOKEN",
        "AZURE_OPENAI_AD_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
    }
)

_catalog_envs: frozenset[str] | None = None


def catalog_key_envs() -> frozenset[str]:
    """The key variables of every provider in the model catalog (read once)."""
    global _catalog_envs
    if _catalog_envs is None:
        try:
            names = bundled_key_envs()
        except Exception:  # a broken catalog must not break redaction
            names = frozenset()
        _catalog_envs = names
    return _catalog_envs


_lock = threading.Lock()
_registered_envs: set[str] = set()
_registered_envs_version = 0  # bumped when a name is added (the environment scan's cache key)
_registered_values: dict[str, str] = {}
_auth_files: dict[str, tuple[tuple[int, int, int], dict[str, str]]] = {}


def is_secret_env_name(name: str) -> bool:
    """Whether the environment variable ``name`` holds a credential pi_nb uses (see the module docstring)."""
    return (
        name.upper().endswith("_API_KEY")
        or name in EXTRA_KEY_ENVS
        or name in catalog_key_envs()
        or name in _registered_envs
    )


def register_secret_env(name: str) -> None:
    """Treat the value of environment variable ``name`` as a secret from now on (e.g. ``LLM_TOKEN``)."""
    global _registered_envs_version
    if name:
        with _lock:
            if name not in _registered_envs:
                _registered_envs.add(name)
                _registered_envs_version += 1


def register_secret(value: str | None, name: str = "secret") -> None:
    """Treat ``value`` (a key passed in code, not through the environment) as a secret named ``name``."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered_values[value] = name


_AUTH_VALUE_KEYS = ("key", "access", "refresh", "token", "apikey", "accesstoken", "refreshtoken")
_AUTH_MAX_BYTES = 1 << 20


def register_auth_file(path: str) -> None:
    """Register the credentials in Pi's ``auth.json`` at ``path`` (``{provider: {type, key}}`` or
    OAuth ``{access, refresh}``). Read only when it is a regular file under 1 MiB; again when it
    changed. A ``key`` naming an environment variable registers that variable instead; a ``!command``
    key is left alone (its output is not known here)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _AUTH_MAX_BYTES:
            return
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = _auth_files.get(path)
        if cached is not None and cached[0] == stamp:
            return
        data = os.read(fd, _AUTH_MAX_BYTES + 1)
    except OSError:
        return
    finally:
        os.close(fd)
    try:
        parsed = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return
    found: dict[str, str] = {}
    if isinstance(parsed, dict):
        for provider, cred in parsed.items():
            if not isinstance(cred, dict):
                continue
            for field, value in cred.items():
                if not isinstance(value, str) or str(field).lower() not in _AUTH_VALUE_KEYS:
                    continue
                if value.startswith("!"):
                    continue
                if re.fullmatch(r"[A-Z][A-Z0-9_]*", value) and value in os.environ:
                    register_secret_env(value)
                    continue
                if len(value) >= MIN_SECRET_LENGTH:
                    found[value] = f"auth.json {provider}"
    with _lock:
        _auth_files[path] = (stamp, found)
        _registered_values.update(found)


def known_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every secret value the process knows, mapped to the name shown in its marker."""
    found: dict[str, str] = {}
    with _lock:
        found.update(_registered_values)
    for value, name in _env_secrets(environ).items():
        found.setdefault(value, name)
    return found


def _scan_env(env: Mapping[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, value in env.items():
        if value and len(value) >= MIN_SECRET_LENGTH and is_secret_env_name(name):
            found.setdefault(value, name)
    return found


# The scan of os.environ, kept while the environment (its raw, undecoded table: comparing it is
# one C-level dict comparison, while iterating os.environ decodes every name and value) and the
# registered names are unchanged. Turns redact several times each; the environment rarely changes.
_env_cache: tuple[dict[Any, Any], int, dict[str, str]] | None = None


def _env_secrets(environ: Mapping[str, str] | None) -> dict[str, str]:
    global _env_cache
    if environ is not None and environ is not os.environ:
        return _scan_env(environ)
    raw = getattr(os.environ, "_data", None)  # CPython's os._Environ table; else no cache
    if type(raw) is not dict:
        return _scan_env(os.environ)
    version = _registered_envs_version
    cached = _env_cache
    if cached is not None and cached[1] == version and cached[0] == raw:
        return cached[2]
    snapshot = dict(raw)
    found = _scan_env(os.environ)
    _env_cache = (snapshot, version, found)
    return found


_cache_key: tuple[tuple[str, str], ...] | None = None
_cache_pattern: re.Pattern[str] | None = None


def _pattern(secrets: Mapping[str, str]) -> re.Pattern[str] | None:
    global _cache_key, _cache_pattern
    if not secrets:
        return None
    key = tuple(sorted(secrets.items()))
    if key != _cache_key:
        # Longest first, so a secret that contains another is replaced whole.
        alternatives = sorted(secrets, key=len, reverse=True)
        _cache_pattern = re.compile("|".join(re.escape(v) for v in alternatives))
        _cache_key = key
    return _cache_pattern


def redact(text: str, secrets: Mapping[str, str] | None = None) -> str:
    """``text`` with every known secret value replaced by ``[redacted: NAME]``."""
    if not text:
        return text
    table = known_secrets() if secrets is None else secrets
    pattern = _pattern(table)
    if pattern is None:
        return text
    return pattern.sub(lambda m: f"[redacted: {table[m.group(0)]}]", text)


def redact_value(value: Any, secrets: Mapping[str, str] | None = None) -> Any:
    """A JSON-shaped value (dicts, lists, strings) with every string redacted; other values as they are."""
    table = known_secrets() if secrets is None else secrets
    if not table:
        return value
    return _redact_value(value, table)


def _redact_value(value: Any, table: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return redact(value, table)
    if isinstance(value, dict):
        return {k: _redact_value(v, table) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v, table) for v in value]
    if isinstance(value, tuple):
        return tuple(_redact_value(v, table) for v in value)
    return value


class StreamRedactor:
    """Redacts a text stream chunk by chunk, catching secrets split across chunk boundaries.

    ``feed`` returns the text that is safe to emit now; the last ``longest secret - 1`` characters
    wait for the next chunk. ``flush`` returns the rest. The secrets are fixed when it is created.
    """

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        self._secrets = dict(known_secrets() if secrets is None else secrets)
        self._hold = max((len(s) for s in self._secrets), default=0) - 1
        self._pending = ""

    def feed(self, chunk: str) -> str:
        if not self._secrets:
            return chunk
        text = self._pending + chunk
        pattern = _pattern(self._secrets)
        assert pattern is not None
        out: list[str] = []
        pos = 0
        for m in pattern.finditer(text):
            out.append(text[pos : m.start()])
            out.append(f"[redacted: {self._secrets[m.group(0)]}]")
            pos = m.end()
        rest = text[pos:]
        # Keep back what could be the start of a secret that continues in the next chunk.
        keep = min(self._hold, len(rest))
        keep = self._partial_suffix(rest, keep)
        self._pending = rest[len(rest) - keep :] if keep else ""
        out.append(rest[: len(rest) - keep] if keep else rest)
        return "".join(out)

    def _partial_suffix(self, rest: str, limit: int) -> int:
        """Length of the longest suffix of ``rest`` (at most ``limit``) that starts some secret."""
        for n in range(limit, 0, -1):
            tail = rest[-n:]
            if any(s.startswith(tail) for s in self._secrets):
                return n
        return 0

    def flush(self) -> str:
        rest, self._pending = self._pending, ""
        return redact(rest, self._secrets) if rest else rest


def redact_message(value: Any, secrets: Mapping[str, str] | None = None) -> Any:
    """Like :func:`redact_value`, but copy-on-write: ``value`` itself when no string in it holds a
    secret (no copy of a large tool result that is clean), else a redacted copy."""
    table = known_secrets() if secrets is None else secrets
    pattern = _pattern(table)
    if pattern is None:
        return value
    return _redact_cow(value, pattern, table)


def _redact_cow(value: Any, pattern: re.Pattern[str], table: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        if not value or pattern.search(value) is None:
            return value
        return pattern.sub(lambda m: f"[redacted: {table[m.group(0)]}]", value)
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for k, v in value.items():
            r = _redact_cow(v, pattern, table)
            if r is not v:
                if out is None:
                    out = dict(value)
                out[k] = r
        return value if out is None else out
    if isinstance(value, list):
        items: list[Any] | None = None
        for i, v in enumerate(value):
            r = _redact_cow(v, pattern, table)
            if r is not v:
                if items is None:
                    items = list(value)
                items[i] = r
        return value if items is None else items
    if isinstance(value, tuple):
        redacted = tuple(_redact_cow(v, pattern, table) for v in value)
        return value if all(a is b for a, b in zip(redacted, value, strict=True)) else redacted
    return value


def redact_partial_result(partial: Any) -> Any:
    """A tool's streamed partial result (a mapping or an ``AgentToolResult``) with secrets redacted."""
    if isinstance(partial, Mapping) or partial is None:
        return redact_message(partial)
    if dataclasses.is_dataclass(partial) and not isinstance(partial, type):
        changes = {}
        for name in ("content", "details"):
            if hasattr(partial, name):
                old = getattr(partial, name)
                new = redact_message(old)
                if new is not old:
                    changes[name] = new
        return dataclasses.replace(partial, **changes) if changes else partial
    return partial


def register_model_secrets(model: Any) -> None:
    """Register what a model authenticates with: its key variable (``api_key_env``, whatever its
    name), a key passed in code (``api_key``), and a password inside its ``base_url``."""
    env_name = getattr(model, "api_key_env", None)
    if isinstance(env_name, str) and env_name:
        register_secret_env(env_name)
    key = getattr(model, "api_key", None)
    if isinstance(key, str):
        register_secret(key, f"{getattr(model, 'provider', 'model')} api_key")
    base_url = getattr(model, "base_url", None)
    if isinstance(base_url, str):
        register_url_secrets(base_url)


def register_url_secrets(url: str) -> None:
    """Register the password of a URL with credentials (``https://user:pw@host/``): the password as
    written and percent-decoded, and ``base64(user:pw)``, the form an HTTP Basic ``Authorization``
    header carries (a server that echoes its request headers repeats it)."""
    if "@" not in url:
        return
    try:
        parts = urlsplit(url)
        raw_user, raw_password = parts.username, parts.password
    except ValueError:
        return
    if not raw_password:
        return
    user, password = unquote(raw_user or ""), unquote(raw_password)
    for value in {raw_password, password}:
        register_secret(value, "base_url password")
    for pair in {f"{user}:{password}", f"{raw_user or ''}:{raw_password}"}:
        register_secret(base64.b64encode(pair.encode()).decode("ascii"), "base_url credentials")
    # the whole ``user:pw@`` is also shown as written in a URL; a short password still goes
    netloc = parts.netloc.rsplit("@", 1)[0]
    if len(raw_password) < MIN_SECRET_LENGTH and len(netloc) >= MIN_SECRET_LENGTH:
        register_secret(netloc, "base_url credentials")


def redact_url(url: str) -> str:
    """``url`` with the password of its ``user:password@`` part replaced by ``***`` (for hints that
    show the URL itself), then redacted."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return redact(url)
    if password:
        user_info, _, host = parts.netloc.rpartition("@")
        user = user_info.split(":", 1)[0]
        url = parts._replace(netloc=f"{user}:***@{host}").geturl()
    return redact(url)


def redact_cut(text: str, limit: int, secrets: Mapping[str, str] | None = None) -> str:
    """``text`` redacted, then cut to ``limit`` characters (a cut never keeps the start of a key),
    and, should the cut fall inside a marker, the marker kept whole."""
    table = known_secrets() if secrets is None else secrets
    red = redact(text, table)
    if len(red) <= limit:
        return red
    cut = red[:limit]
    start = cut.rfind("[redacted: ")
    if start != -1 and "]" not in cut[start:]:
        end = red.find("]", start)
        cut = red[: end + 1] if end != -1 else cut[:start]
    return cut


def held_prefix_length(text: str, secrets: Mapping[str, str]) -> int:
    """Length of the longest suffix of ``text`` that is a proper start of some secret (what a stream
    must hold back until the next chunk decides it)."""
    if not secrets or not text:
        return 0
    longest = max(len(s) for s in secrets) - 1
    for n in range(min(longest, len(text)), 0, -1):
        tail = text[-n:]
        if any(s.startswith(tail) and len(s) > n for s in secrets):
            return n
    return 0


def redact_cut_tail(text: str, secrets: Mapping[str, str] | None = None, min_chars: int = 4) -> str:
    """``text`` redacted, and a trailing start of a secret (``min_chars`` or more characters: what a
    cut made elsewhere left of a key) replaced by ``[redacted: NAME]``. For texts known to end at a
    cut, such as an error body a provider shortened."""
    table = known_secrets() if secrets is None else secrets
    red = redact(text, table)
    n = held_prefix_length(red, table)
    if n < min_chars:
        return red
    tail = red[-n:]
    name = next(table[s] for s in sorted(table, key=len, reverse=True) if s.startswith(tail))
    return red[:-n] + f"[redacted: {name}]"


def redact_stream_text(text: str, secrets: Mapping[str, str] | None = None) -> str:
    """The shown part of a *growing* text (a streamed answer so far): redacted, without a trailing
    possible start of a secret. As the text grows, each result extends the previous one."""
    table = known_secrets() if secrets is None else secrets
    pattern = _pattern(table)
    if pattern is None:
        return text
    out: list[str] = []
    pos = 0
    for m in pattern.finditer(text):
        out.append(text[pos : m.start()])
        out.append(f"[redacted: {table[m.group(0)]}]")
        pos = m.end()
    rest = text[pos:]
    keep = held_prefix_length(rest, table)
    out.append(rest[: len(rest) - keep] if keep else rest)
    return "".join(out)


class RedactingBashOperations:
    """Wraps a bash tool's ``operations`` so the command's output is redacted *as it streams*.

    Each ``exec`` gets its own :class:`StreamRedactor`: a key split across two output chunks is
    still replaced, and neither the tool's accumulator, its full-output temp file, its streamed
    updates nor its result ever hold the key. Bytes are decoded incrementally as UTF-8 with
    ``surrogateescape`` and encoded back the same way, so non-UTF-8 output passes unchanged.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def exec(self, command: str, cwd: str, *, on_data: Callable[[bytes], None], **kwargs: Any) -> Any:
        redactor = StreamRedactor()
        decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")

        def feed(data: bytes) -> None:
            text = redactor.feed(decoder.decode(data))
            if text:
                on_data(text.encode("utf-8", "surrogateescape"))

        def flush() -> None:
            text = redactor.feed(decoder.decode(b"", final=True)) + redactor.flush()
            if text:
                on_data(text.encode("utf-8", "surrogateescape"))

        try:
            result = await self.inner.exec(command, cwd, on_data=feed, **kwargs)
        finally:
            flush()
        return result


def names_of(secrets: Iterable[str]) -> list[str]:
    """The marker names of ``secrets`` values (for messages that must not show the values)."""
    table = known_secrets()
    return [table[s] for s in secrets if s in table]
