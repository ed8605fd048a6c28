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

import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MIN_SECRET_LENGTH",
    "StreamRedactor",
    "is_secret_env_name",
    "known_secrets",
    "redact",
    "redact_value",
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


def names_of(secrets: Iterable[str]) -> list[str]:
    """The marker names of ``secrets`` values (for messages that must not show the values)."""
    table = known_secrets()
    return [table[s] for s in secrets if s in table]
