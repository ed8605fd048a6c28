"""auth.json as Pi keeps it: bad files give clear errors and lose nothing, the lock is Pi's,
modes are Pi's, secrets are registered for redaction and never shown in a repr."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from pi_nb.auth import AuthFileError, AuthStorage, Credential, ResolvedAuth, auth_path
from pi_nb.auth.storage import file_lock
from pi_nb.redaction import redact

TOKEN = "sk-ant-oat01-secretAccess0123456789"


def _store(tmp_path: Path, content: str | None = None) -> AuthStorage:
    path = tmp_path / "agent" / "auth.json"
    if content is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return AuthStorage(str(path))


def test_auth_path_follows_the_agent_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "a"))
    assert auth_path() == str(tmp_path / "a" / "auth.json")
    assert AuthStorage().path == str(tmp_path / "a" / "auth.json")


def test_missing_file_is_no_credentials(tmp_path: Path) -> None:
    store = _store(tmp_path)
    assert store.read("anthropic") is None
    assert store.read_all() == {}
    assert not Path(store.path).exists()  # reading never creates it


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON (line 1, column 2)"),
        ("[1, 2]", "not a JSON object"),
        ('"text"', "not a JSON object"),
    ],
)
def test_a_corrupt_file_is_an_error_and_is_never_rewritten(tmp_path: Path, content: str, words: str) -> None:
    store = _store(tmp_path, content)
    with pytest.raises(AuthFileError, match="not read") as err:
        store.read("anthropic")
    assert words in str(err.value) and store.path in str(err.value)
    with pytest.raises(AuthFileError):
        store.set("anthropic", {"type": "api_key", "key": "k"})
    with pytest.raises(AuthFileError):
        store.delete("anthropic")
    assert Path(store.path).read_text() == content
    assert not Path(store.path + ".lock").exists()


def test_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "agent" / "auth.json").mkdir(parents=True)
    store = _store(tmp_path)
    with pytest.raises(AuthFileError, match="is a directory, not a regular file"):
        store.read("anthropic")
    with pytest.raises(AuthFileError):
        store.set("anthropic", {"type": "api_key", "key": "k"})
    assert (tmp_path / "agent" / "auth.json").is_dir()


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    os.mkfifo(tmp_path / "agent" / "auth.json")
    store = _store(tmp_path)
    result: list[BaseException] = []

    def go() -> None:
        for op in (lambda: store.read("x"), lambda: store.set("x", {"type": "api_key", "key": "k"})):
            try:
                op()
            except AuthFileError as exc:
                result.append(exc)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "a FIFO blocked the reader"
    assert len(result) == 2 and "FIFO" in str(result[0])
    assert stat.S_ISFIFO(os.stat(tmp_path / "agent" / "auth.json").st_mode)


def test_a_wrong_entry_is_an_error_for_its_provider_only_and_is_kept(tmp_path: Path) -> None:
    content = {
        "anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": "tomorrow"},
        "openai": {"type": "api_key", "key": "sk-openai-0123456789"},
        "weird": ["not", "an", "object"],
    }
    store = _store(tmp_path, json.dumps(content))
    with pytest.raises(AuthFileError, match='"expires"'):
        store.read("anthropic")
    with pytest.raises(AuthFileError, match="not an object"):
        store.read("weird")
    assert store.read("openai") == Credential(content["openai"])
    store.set("xai", {"type": "api_key", "key": "xai-0123456789"})
    after = json.loads(Path(store.path).read_text())
    assert after == {**content, "xai": {"type": "api_key", "key": "xai-0123456789"}}
    with pytest.raises(AuthFileError, match="not written"):
        store.set("xai", {"type": "oauth", "access": "a"})


def test_a_new_file_is_0600_in_a_0700_dir_and_an_existing_mode_is_kept(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.set("openai", {"type": "api_key", "key": "sk-0123456789"})
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "agent").st_mode) == 0o700
    os.chmod(store.path, 0o640)  # an administrator's choice: Pi leaves it alone, so does pi_nb
    store.set("openai", {"type": "api_key", "key": "sk-9876543210"})
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o640


def test_written_as_pi_writes_it(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.set("b", {"type": "api_key", "key": "ü-key"})
    store.set("a", {"type": "oauth", "access": "x", "refresh": "y", "expires": 5})
    store.set("b", {"type": "api_key", "key": "v2"})
    text = Path(store.path).read_text(encoding="utf-8")
    assert text == json.dumps(
        {
            "b": {"type": "api_key", "key": "v2"},
            "a": {"type": "oauth", "access": "x", "refresh": "y", "expires": 5},
        },
        indent=2,
    )
    assert store.delete("b") and not store.delete("b")
    assert list(json.loads(Path(store.path).read_text())) == ["a"]


def test_a_bom_and_key_references_are_read_as_pi_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY_VAR", "from-the-environment-0123")
    content = {
        "a": {"type": "api_key", "key": "$MY_KEY_VAR"},
        "b": {"type": "api_key", "key": "!echo from-a-command-0123"},
        "c": {"type": "api_key", "key": "${ACCT}-x", "env": {"ACCT": "acct9"}},
        "d": {"type": "api_key", "key": "$UNSET_VAR_XYZ"},
    }
    store = _store(tmp_path, "\ufeff" + json.dumps(content))
    assert store.read("a")["key"] == "from-the-environment-0123"  # type: ignore[index]
    assert store.read("b")["key"] == "from-a-command-0123"  # type: ignore[index]
    assert store.read("c")["key"] == "acct9-x"  # type: ignore[index]
    assert "key" not in store.read("d")  # type: ignore[operator]
    assert store.read_raw("a")["key"] == "$MY_KEY_VAR"  # type: ignore[index]


def test_secrets_are_registered_and_never_in_a_repr(tmp_path: Path) -> None:
    store = _store(
        tmp_path,
        json.dumps(
            {
                "anthropic": {
                    "type": "oauth",
                    "access": TOKEN,
                    "refresh": "sk-ant-ort01-refresh0123456789",
                    "expires": 1767225600000,
                },
                "openai": {"type": "api_key", "key": "sk-openai-secret-0123456789"},
            }
        ),
    )
    cred = store.read("anthropic")
    assert cred is not None
    for shown in (repr(cred), str(cred), repr(store.read("openai")), repr(store)):
        assert TOKEN not in shown and "sk-openai-secret" not in shown and "refresh0123" not in shown
    assert repr(cred) == "Credential(type='oauth', expires=2026-01-01T00:00:00Z)"
    assert TOKEN not in redact(f"the token is {TOKEN}")
    assert "sk-openai-secret-0123456789" not in redact("key sk-openai-secret-0123456789")
    assert "sk-ant-ort01-refresh0123456789" not in redact("sk-ant-ort01-refresh0123456789")
    assert TOKEN not in repr(ResolvedAuth(api_key=TOKEN, source="auth.json (OAuth)", oauth=True))


def test_the_lock_is_proper_lockfiles(tmp_path: Path) -> None:
    store = _store(tmp_path, "{}")
    lock = Path(store.path + ".lock")
    lock.mkdir()  # Pi holds it
    with pytest.raises(AuthFileError, match="locked by another process"):
        with file_lock(store.path, timeout=0.3):
            pass
    assert lock.is_dir()  # not ours to remove
    old = time.time() - 60
    os.utime(lock, (old, old))  # a crashed holder: stale after 30 s, taken over
    store.set("openai", {"type": "api_key", "key": "sk-0123456789"})
    assert not lock.exists()


def test_the_lock_is_refreshed_while_held(tmp_path: Path) -> None:
    path = str(tmp_path / "f")
    with file_lock(path, stale=0.4):
        first = os.stat(path + ".lock").st_mtime
        time.sleep(0.5)
        assert os.stat(path + ".lock").st_mtime > first
    assert not os.path.exists(path + ".lock")


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)

    def bump(current: Credential | None) -> dict[str, object]:
        n = int(current["key"]) if current is not None else 0  # type: ignore[index]
        time.sleep(0.001)
        return {"type": "api_key", "key": str(n + 1)}

    def worker(i: int) -> None:
        other = AuthStorage(store.path)
        for _ in range(5):
            other.modify("counter", bump)
        other.set(f"p{i}", {"type": "api_key", "key": f"k{i}"})

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    data = json.loads(Path(store.path).read_text())
    assert data["counter"]["key"] == "30"
    assert {f"p{i}" for i in range(6)} <= set(data)
