"""pi_nb's sign-in flows, refresh and auth.json against Pi 0.85.0's own code: every scenario of
``tests/auth_cases.py`` run by pi_nb against the local fake OAuth server
(:mod:`pi_nb.auth.testing`) sends the requests pi-ai sent (headers, bodies, order), shows the
same events and prompts, stores the same credential and writes the same auth.json
(``tests/golden/auth_flows.json``, made by ``tests/golden/make_auth.py``). No network, no Node."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

import auth_cases
import pytest

import pi_nb.auth.oauth.common as common
import pi_nb.auth.oauth.openai_codex as codex
import pi_nb.auth.oauth.openrouter as openrouter
from pi_nb.auth import AuthFileError, AuthStorage, LoginCancelled, login, resolve_provider_auth
from pi_nb.auth.http import redirect_to
from pi_nb.auth.testing import FakeOAuthServer, act_as_browser

GOLDEN = {
    s["name"]: s for s in json.loads((Path(__file__).parent / "golden" / "auth_flows.json").read_text())
}


def _fake_random(n: int) -> bytes:
    return bytes((i + n) % 256 for i in range(n))


def run_pi_nb(scenario: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(common, "random_bytes", _fake_random)
    monkeypatch.setattr(codex, "random_bytes", _fake_random)
    monkeypatch.setattr(openrouter, "random_uuid", lambda: auth_cases.UUID)
    monkeypatch.setenv("OTHER_KEY", "other-key-0123456789")
    path = tmp_path / "agent" / "auth.json"
    storage = AuthStorage(str(path))
    out: dict[str, Any] = {"events": [], "prompts": [], "credential": None, "error": None}
    with FakeOAuthServer() as server, redirect_to(server.url):
        try:
            if scenario["kind"] == "login":
                answers = list(scenario.get("answers", []))
                paste = scenario.get("paste")

                def notify(event: dict[str, Any]) -> None:
                    out["events"].append(event)
                    if event["type"] == "auth_url" and not paste:
                        threading.Timer(0.05, act_as_browser, [event["url"]]).start()

                def prompt(p: dict[str, Any]) -> str:
                    out["prompts"].append({k: v for k, v in p.items() if k != "signal"})
                    if p["type"] == "manual_code":
                        if paste:
                            url = next(e for e in out["events"] if e["type"] == "auth_url")["url"]
                            state = dict(x.split("=", 1) for x in url.split("?", 1)[1].split("&")).get(
                                "state", ""
                            )
                            return str(paste).replace("<state>", state)
                        p["signal"].wait(30)
                        raise LoginCancelled("aborted")
                    return answers.pop(0) if answers else ""

                cred = login(scenario["provider"], notify=notify, prompt=prompt, storage=storage)
                data = cred.to_json()
                data["expires"] = auth_cases.lifetime(data["expires"], time.time() * 1000)
                out["credential"] = data
            elif scenario["kind"] == "refresh":
                path.parent.mkdir(parents=True)
                path.write_text(json.dumps(scenario["credentials"], indent=2))
                got = resolve_provider_auth(scenario["provider"], storage=storage)
                assert got is not None
                out["resolved"] = {
                    "apiKey": got.api_key,
                    "baseUrl": got.base_url,
                    "headers": dict(got.headers) or None,
                }
            elif scenario["kind"] == "write":
                for op, provider, *rest in scenario["ops"]:
                    if op == "set":
                        storage.set(provider, rest[0])
                    else:
                        storage.delete(provider)
                out["mode"] = oct(stat.S_IMODE(os.stat(path).st_mode))[2:]
            elif scenario["kind"] == "lock":
                # the other way round from the golden: Pi's lock directory (what proper-lockfile
                # made there) held, then stale, as pi_nb's lock meets it
                from pi_nb.auth.storage import file_lock

                held = tmp_path / "held"
                os.mkdir(str(held) + ".lock")
                try:
                    with file_lock(str(held), timeout=0.2):
                        out["locks"] = {"held": "acquired"}
                except AuthFileError:
                    out["locks"] = {"held": "ELOCKED"}
                old = time.time() - 60
                os.utime(str(held) + ".lock", (old, old))
                with file_lock(str(held)):
                    out["locks"]["stale"] = "acquired"
                    out["locks"]["ownLockIsDirectory"] = os.path.isdir(str(held) + ".lock")
            elif scenario["kind"] == "form":
                from pi_nb.auth.http import form, json_body

                out["forms"] = [form({"k": v}) for v in scenario["values"]]
                out["jsons"] = [json_body({"k": v}) for v in scenario["values"]]
            elif scenario["kind"] == "read":
                path.parent.mkdir(parents=True)
                reads = []
                for text in scenario["files"]:
                    path.write_text(text, encoding="utf-8")
                    try:
                        cred = storage.read(scenario["provider"])
                        reads.append({"ok": cred.to_json() if cred is not None else None})
                    except AuthFileError as exc:
                        reads.append({"error": str(exc)})
                out["reads"] = reads
        except Exception as exc:  # compared with the golden's error
            out["error"] = str(exc)
        requests = [auth_cases.comparable(q) for q in server.requests]
    out["requests"] = requests
    out["events"] = [auth_cases.event_comparable(e) for e in out["events"]]
    out["prompts"] = auth_cases.free_port(out["prompts"])
    out["authJson"] = auth_cases.normalize_auth_json(path.read_text() if path.exists() else None)
    return out


@pytest.mark.parametrize("name", [s["name"] for s in auth_cases.SCENARIOS])
def test_scenario_equals_pi(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = next(s for s in auth_cases.SCENARIOS if s["name"] == name)
    want = GOLDEN[name]
    got = run_pi_nb(scenario, tmp_path, monkeypatch)
    assert got["error"] == want["error"]
    assert got["requests"] == want["requests"]
    assert got["events"] == want["events"]
    assert got["prompts"] == want["prompts"]
    if want["credential"] is not None:
        assert got["credential"] == want["credential"]
    if scenario["kind"] == "refresh":
        assert got["resolved"] == {k: want["resolved"][k] for k in ("apiKey", "baseUrl", "headers")}
    if scenario["kind"] == "lock":
        assert want["locks"] == {"held": "ELOCKED", "stale": "acquired", "ownLockIsDirectory": True}
        assert got["locks"] == want["locks"]
    if scenario["kind"] == "form":
        assert (got["forms"], got["jsons"]) == (want["forms"], want["jsons"])
    if scenario["kind"] == "write":
        assert got["mode"] == want["mode"] == "600"
    if scenario["kind"] == "read":
        # Pi's read-only storage: an error where pi_nb gives one (the words are pi_nb's own)
        assert [("error" in r, r.get("ok")) for r in got["reads"]] == [
            ("error" in r, r.get("ok")) for r in want["reads"]
        ]
    else:
        assert got["authJson"] == want["authJson"]


@pytest.mark.parametrize("name", [s["name"] for s in auth_cases.SCENARIOS if s["kind"] == "login"])
def test_pi_nb_reads_the_auth_json_pi_wrote(name: str, tmp_path: Path) -> None:
    """The auth.json Pi's storage wrote after each sign-in, read back by pi_nb: the credential Pi
    stored (its ``expires`` put back as a number)."""
    want = GOLDEN[name]
    path = tmp_path / "auth.json"
    path.write_text(want["authJson"].replace('"<n>"', "4102444800000"))
    provider = next(s for s in auth_cases.SCENARIOS if s["name"] == name)["provider"]
    got = AuthStorage(str(path)).read(provider)
    assert got is not None and got.type == "oauth"
    expected = {k: v for k, v in want["credential"].items() if k != "expires"}
    assert {k: v for k, v in got.to_json().items() if k != "expires"} == expected
    assert got.expires == 4102444800000 or want["credential"]["expires"] == "MAX_SAFE_INTEGER"
