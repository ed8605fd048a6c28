"""The agent dir's ``auth.json``, read and written as Pi 0.85.0's coding agent does.

The file maps a provider id to one credential::

    {"anthropic": {"type": "oauth", "access": "...", "refresh": "...", "expires": 1767225600000},
     "openai": {"type": "api_key", "key": "sk-..."},
     "cloudflare-ai-gateway": {"type": "api_key", "key": "$CF_KEY", "env": {"CLOUDFLARE_ACCOUNT_ID": "..."}}}

An ``api_key`` credential's ``key`` may be a ``!command`` (its trimmed output) or hold ``$VAR`` /
``${VAR}`` references (interpolated from the credential's ``env``, then the environment), as Pi
resolves it. An ``oauth`` credential has ``access``, ``refresh`` and ``expires`` (milliseconds since
the epoch) and may carry provider fields (``accountId``, ``enterpriseUrl``, ``availableModelIds``).

Writes follow Pi's ``FileAuthStorageBackend``: the directory is created ``0700`` and the file
``0600`` when missing (an existing file keeps its mode, as Pi leaves administrator-set modes
alone); every change is a read-modify-write under the same lock Pi takes (proper-lockfile's lock
directory ``auth.json.lock``, stale after 30 s, its time refreshed while held), written as
``JSON.stringify(data, null, 2)``. A file that is not JSON, not an object, a directory or a FIFO
raises :class:`AuthFileError` naming the path and the problem, never a value, and is never
rewritten; an entry of the wrong shape is an error for that provider only and is kept as it is.

Every secret read from the file is registered with :mod:`pi_nb.redaction`, and
:class:`Credential`'s ``repr`` shows the type and expiry, never a value.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pi_nb._config_value import resolve_config_value
from pi_nb._fs import FileTooLargeError, SpecialFileError, read_regular

__all__ = [
    "LOCK_STALE_SECONDS",
    "AuthEntryError",
    "AuthFileError",
    "AuthStorage",
    "Credential",
    "auth_path",
    "file_lock",
]

#: proper-lockfile's ``stale`` as Pi passes it: an older lock directory is taken over
LOCK_STALE_SECONDS = 30.0
_MAX_AUTH_BYTES = 4 << 20
_SECRET_FIELDS = ("key", "access", "refresh", "token", "apiKey", "accessToken", "refreshToken", "idToken")


class AuthFileError(RuntimeError):
    """``auth.json`` cannot be read or written (not JSON, wrong types, not a regular file, lock)."""


class AuthEntryError(AuthFileError):
    """One provider's entry in ``auth.json`` is not a credential (the rest of the file is fine)."""


def auth_path(agent_dir: str | None = None) -> str:
    """``{agent dir}/auth.json`` (the agent dir: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``)."""
    from pi_nb.config import get_agent_dir, normalize_path

    return os.path.join(normalize_path(agent_dir) if agent_dir else get_agent_dir(), "auth.json")


class Credential:
    """One provider's credential as stored (a JSON object with ``type`` ``api_key`` or ``oauth``).

    Fields read as from a mapping (``cred["access"]``, ``cred.get("expires")``); :meth:`to_json`
    gives the stored object. The ``repr`` names the type (and an OAuth expiry), never a value."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data: dict[str, Any] = json.loads(json.dumps(dict(data)))

    @property
    def type(self) -> str:
        return str(self._data.get("type"))

    @property
    def expires(self) -> float | None:
        value = self._data.get("expires")
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def __getitem__(self, name: str) -> Any:
        return self._data[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self._data.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self._data

    def to_json(self) -> dict[str, Any]:
        """The stored object (a copy)."""
        out: dict[str, Any] = json.loads(json.dumps(self._data))
        return out

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Credential) and other._data == self._data

    def __hash__(self) -> int:  # pragma: no cover - credentials are not dict keys
        return hash(self.type)

    def __repr__(self) -> str:
        if self.type == "oauth" and self.expires is not None:
            return f"Credential(type='oauth', expires={_iso(self.expires)})"
        return f"Credential(type={self.type!r})"

    __str__ = __repr__


def _iso(ms: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


def register_credential_secrets(provider: str, data: Mapping[str, Any]) -> None:
    """Register every secret value of one stored credential with :mod:`pi_nb.redaction`."""
    from pi_nb.redaction import register_secret

    for field in _SECRET_FIELDS:
        value = data.get(field)
        if isinstance(value, str) and value and not value.startswith("!"):
            register_secret(value, f"auth.json {provider}")


def validate_credential(provider: str, value: Any) -> str | None:
    """Why the stored entry of ``provider`` is not a credential Pi accepts (its read-only storage's
    checks), or ``None`` when it is one."""
    if not isinstance(value, dict):
        return f'the entry for provider "{provider}" is not an object'
    kind = value.get("type")
    if kind == "api_key":
        key = value.get("key")
        env = value.get("env")
        if key is not None and not isinstance(key, str):
            return f'the api_key entry for provider "{provider}" has a non-string "key"'
        if env is not None and not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
            return (
                f'the api_key entry for provider "{provider}" has an "env" that is not an object of strings'
            )
        return None
    if kind == "oauth":
        for field in ("access", "refresh"):
            if not isinstance(value.get(field), str):
                return f'the oauth entry for provider "{provider}" has no string "{field}"'
        exp = value.get("expires")
        if (
            isinstance(exp, bool)
            or not isinstance(exp, int | float)
            or exp != exp
            or exp in (float("inf"), -float("inf"))
        ):
            return f'the oauth entry for provider "{provider}" has no finite number "expires"'
        return None
    return f'the entry for provider "{provider}" has type {json.dumps(kind)}, not "api_key" or "oauth"'


# --- the lock (proper-lockfile's protocol: mkdir <file>.lock, mtime as the heartbeat) ---------


@contextlib.contextmanager
def file_lock(
    path: str, *, stale: float = LOCK_STALE_SECONDS, timeout: float | None = None
) -> Iterator[None]:
    """Hold proper-lockfile's lock on ``path`` (the directory ``path + ".lock"``), as Pi's
    ``lockfile.lock(path, {realpath: false, stale: 30000})`` does: a lock directory older than
    ``stale`` seconds is taken over; while held its mtime is refreshed every ``stale / 2`` seconds;
    a busy lock is retried with Pi's backoff (10 ms doubling, at most 1 s, with jitter) until
    ``timeout`` (default ``stale``) has passed, then :class:`AuthFileError`."""
    lock = path + ".lock"
    deadline = time.monotonic() + (stale if timeout is None else timeout)
    retry = 0
    while True:
        try:
            os.mkdir(lock)
            break
        except FileExistsError:
            try:
                age = time.time() - os.stat(lock).st_mtime
            except FileNotFoundError:
                continue
            if age > stale:
                with contextlib.suppress(OSError):
                    os.rmdir(lock)
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AuthFileError(
                    f"{path} is locked by another process (lock {lock}); try again, or remove the lock "
                    "directory if no Pi is running"
                ) from None
            base = min(0.01 * 2**retry, 1.0)
            retry += 1
            time.sleep(min(base * (1 + random.random()), remaining))
        except OSError as exc:
            raise AuthFileError(f"cannot lock {path}: {exc.strerror or exc}") from None
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(stale / 2):
            with contextlib.suppress(OSError):
                os.utime(lock)

    beat = threading.Thread(target=heartbeat, name="pi_nb auth.json lock", daemon=True)
    beat.start()
    try:
        yield
    finally:
        stop.set()
        beat.join(timeout=1)
        with contextlib.suppress(OSError):
            os.rmdir(lock)


# --- the file -------------------------------------------------------------------------------


class AuthStorage:
    """Pi's ``AuthStorage`` over one ``auth.json`` (default: the agent dir's).

    :meth:`read` gives one provider's credential (an ``api_key`` key resolved like Pi: ``!command``
    and ``$VAR``), :meth:`read_raw` the stored one, :meth:`modify` the one write path (a
    read-modify-write under the lock), :meth:`delete` removes an entry (logout)."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or auth_path()

    def __repr__(self) -> str:
        return f"AuthStorage({self.path!r})"

    # reading

    def _text(self) -> str | None:
        try:
            data = read_regular(self.path, _MAX_AUTH_BYTES)
        except FileNotFoundError:
            return None
        except SpecialFileError as exc:
            raise AuthFileError(
                f"{self.path} is {exc.kind}, not a regular file: credentials not read"
            ) from None
        except FileTooLargeError:
            raise AuthFileError(f"{self.path} is larger than {_MAX_AUTH_BYTES:,} bytes: not read") from None
        except NotADirectoryError:
            return None
        except OSError as exc:
            raise AuthFileError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise AuthFileError(f"{self.path} is not UTF-8 text: credentials not read") from None

    def _parse(self, text: str | None) -> dict[str, Any]:
        if text is None:
            return {}
        text = text[1:] if text.startswith("\ufeff") else text
        if not text.strip():
            # Pi's parseStorageData treats empty content as no credentials
            return {}
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError) as exc:
            where = (
                f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
            )
            raise AuthFileError(
                f"{self.path} is not valid JSON{where}: credentials not read, file left as it is"
            ) from None
        if not isinstance(parsed, dict):
            raise AuthFileError(f"{self.path} is not a JSON object: credentials not read, file left as it is")
        return parsed

    def read_all(self) -> dict[str, Any]:
        """The whole file as stored (``{}`` when it does not exist); its secrets registered."""
        data = self._parse(self._text())
        for provider, value in data.items():
            if isinstance(value, dict):
                register_credential_secrets(provider, value)
        return data

    def read_raw(self, provider: str) -> Credential | None:
        """``provider``'s stored credential as written (an api key not resolved), or ``None``."""
        value = self.read_all().get(provider)
        if value is None:
            return None
        problem = validate_credential(provider, value)
        if problem is not None:
            raise AuthEntryError(f"{self.path}: {problem}")
        return Credential(value)

    def read(self, provider: str) -> Credential | None:
        """``provider``'s credential, an ``api_key``'s ``key`` resolved as Pi's storage resolves it."""
        cred = self.read_raw(provider)
        if cred is None or cred.type != "api_key" or cred.get("key") is None:
            return cred
        data = cred.to_json()
        env = data.get("env") if isinstance(data.get("env"), dict) else None
        resolved = resolve_config_value(str(data["key"]), env)
        if resolved is None:
            data.pop("key", None)
        else:
            data["key"] = resolved
            from pi_nb.redaction import register_secret

            register_secret(resolved, f"auth.json {provider}")
        return Credential(data)

    def list(self) -> list[tuple[str, str]]:
        """``(provider, type)`` of every stored entry (nothing resolved)."""
        return [(p, str(v.get("type")) if isinstance(v, dict) else "?") for p, v in self.read_all().items()]

    # writing

    def _ensure_file(self) -> None:
        parent = os.path.dirname(self.path) or "."
        try:
            if not os.path.exists(parent):
                os.makedirs(parent, mode=0o700, exist_ok=True)
            if not os.path.lexists(self.path):
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                try:
                    os.write(fd, b"{}")
                finally:
                    os.close(fd)
        except FileExistsError:
            pass
        except OSError as exc:
            raise AuthFileError(f"cannot create {self.path}: {exc.strerror or exc}") from None

    def _write(self, data: Mapping[str, Any]) -> None:
        text = json.dumps(data, indent=2, ensure_ascii=False)
        try:
            fd = os.open(
                self.path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), 0o600
            )
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                raise AuthFileError(
                    f"{self.path} is a FIFO or socket, not a regular file: not written"
                ) from None
            raise AuthFileError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise AuthFileError(f"{self.path} is not a regular file: not written")
            os.ftruncate(fd, 0)
            payload = text.encode("utf-8")
            while payload:
                n = os.write(fd, payload)
                payload = payload[n:]
            os.fsync(fd)
        finally:
            os.close(fd)

    def modify(
        self, provider: str, fn: Callable[[Credential | None], Credential | Mapping[str, Any] | None]
    ) -> Credential | None:
        """Pi's ``modify``: under the lock, ``fn`` sees ``provider``'s current credential and returns
        the new one (``None`` leaves the entry unchanged); the file is rewritten with the other
        entries as they were. Returns the credential after the write."""
        self._ensure_file()
        with file_lock(self.path):
            data = self._parse(self._text())
            current_raw = data.get(provider)
            current: Credential | None = None
            if current_raw is not None and validate_credential(provider, current_raw) is None:
                register_credential_secrets(provider, current_raw)
                current = Credential(current_raw)
            nxt = fn(current)
            if nxt is None:
                return current
            stored = nxt.to_json() if isinstance(nxt, Credential) else json.loads(json.dumps(dict(nxt)))
            problem = validate_credential(provider, stored)
            if problem is not None:
                raise AuthFileError(f"not written to {self.path}: {problem}")
            register_credential_secrets(provider, stored)
            merged = {**data, provider: stored}
            self._write(merged)
            return Credential(stored)

    def set(self, provider: str, credential: Credential | Mapping[str, Any]) -> Credential:
        """Store ``credential`` for ``provider`` (what Pi does after a login)."""
        out = self.modify(provider, lambda _current: credential)
        assert out is not None
        return out

    def delete(self, provider: str) -> bool:
        """Remove ``provider``'s entry (logout); whether there was one."""
        if not os.path.lexists(self.path):
            return False
        self._ensure_file()
        with file_lock(self.path):
            data = self._parse(self._text())
            had = provider in data
            data.pop(provider, None)
            self._write(data)
            return had
