"""Secrets are redacted by *value* before anything is stored or shown.

Cleaning the environment of ``bash`` by variable name (see :mod:`pi_nb.tools.bash`) is not enough:
a model can ``read /proc/self/environ``, ``cat /proc/$PPID/environ``, or find a key kept under a
custom variable name. So every text that leaves a boundary (tool results, streamed updates, error
texts, session entries, notebook outputs) goes through :func:`redact`, which replaces every known
secret value by a marker such as ``[redacted: OPENAI_API_KEY]``.

What counts as a secret:

* every environment variable whose name looks like a credential: ``*_API_KEY``, ``*_TOKEN``,
  ``*_SECRET*``, ``*PASSWORD*``, ``*_CREDENTIALS``, ``*ACCESS_KEY*``, ``*_AUTH*`` (case-insensitive);
* every variable registered with :func:`register_secret_env` (a model's ``api_key_env``, say
  ``LLM_TOKEN``), and every value registered with :func:`register_secret` (a key passed in code);
* values shorter than :data:`MIN_SECRET_LENGTH` characters are never secrets: redacting ``"1"`` or
  ``"true"`` would destroy ordinary output and protect nothing.

The environment is read at each call (cheap: a dict scan), so a key exported after import is still
caught. Pi has no such redaction; this is a deliberate difference.

A stream (bash output arriving in chunks) can split a secret across two chunks;
:class:`StreamRedactor` holds back the last ``longest secret - 1`` characters until the next chunk
or :meth:`StreamRedactor.flush`, so a split key is still replaced.
"""

from __future__ import annotations

import codecs
import dataclasses
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "MIN_SECRET_LENGTH",
    "RedactingBashOperations",
    "StreamRedactor",
    "is_secret_env_name",
    "known_secrets",
    "redact",
    "redact_message",
    "redact_partial_result",
    "redact_value",
    "register_model_secrets",
    "register_secret",
    "register_secret_env",
]

#: Values shorter than this are never treated as secrets.
MIN_SECRET_LENGTH = 8

_SECRET_NAME = re.compile(
    r"(_API_KEY$|^API_KEY$|_TOKEN$|^TOKEN$|SECRET|PASSWORD|PASSWD|_CREDENTIALS?$|ACCESS_KEY|_AUTH_|_AUTH$|^AUTH_)",
    re.IGNORECASE,
)

_lock = threading.Lock()
_registered_envs: set[str] = set()
_registered_values: dict[str, str] = {}


def is_secret_env_name(name: str) -> bool:
    """Whether an environment variable of this name holds a credential (by name only)."""
    return bool(_SECRET_NAME.search(name)) or name in _registered_envs


def register_secret_env(name: str) -> None:
    """Treat the value of environment variable ``name`` as a secret from now on (e.g. ``LLM_TOKEN``)."""
    if name:
        with _lock:
            _registered_envs.add(name)


def register_secret(value: str | None, name: str = "secret") -> None:
    """Treat ``value`` (a key passed in code, not through the environment) as a secret named ``name``."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered_values[value] = name


def known_secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every secret value the process knows, mapped to the name shown in its marker."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    with _lock:
        found.update(_registered_values)
        registered = set(_registered_envs)
    for name, value in env.items():
        if value and len(value) >= MIN_SECRET_LENGTH and (_SECRET_NAME.search(name) or name in registered):
            found.setdefault(value, name)
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
    if isinstance(base_url, str) and "@" in base_url:
        try:
            password = urlsplit(base_url).password
        except ValueError:
            password = None
        register_secret(password, "base_url password")


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
