"""The notebook side of signing in: ``login_command`` shows the device code as a link and the
code, updated live, saves the sign-in to auth.json and never shows a token; ``logout_command``;
the credential-source column of ``%pi models``."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from pi_nb.auth.http import redirect_to
from pi_nb.auth.testing import USER_CODE, FakeOAuthServer
from pi_nb.notebook.login import LoginView, credential_source_column, login_command, logout_command


@pytest.fixture
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("COPILOT_GITHUB_TOKEN", raising=False)
    return tmp_path / "agent"


def test_device_code_sign_in_shows_link_and_code_and_saves(agent: Path) -> None:
    with FakeOAuthServer() as server, redirect_to(server.url):
        view = login_command("github-copilot --wait")
    assert view.state == "done", view.message
    page = view.to_html()
    assert "href='https://github.com/login/device'" in page and USER_CODE in page
    assert "signed in: auth.json (OAuth, expires" in page
    stored = json.loads((agent / "auth.json").read_text())["github-copilot"]
    assert stored["access"] not in page and stored["refresh"] not in page
    assert stored["access"] not in repr(view)
    widget = view.widget()
    assert USER_CODE in widget.children[0].value
    assert credential_source_column(["github-copilot", "openai", "github-copilot"])[0].startswith(
        "auth.json (OAuth"
    )
    assert logout_command("github-copilot") == "signed out of github-copilot (removed from auth.json)"
    assert logout_command("github-copilot") == "no credential for github-copilot in auth.json"
    assert credential_source_column(["github-copilot"]) == [""]


def test_the_view_updates_while_waiting(agent: Path) -> None:
    with FakeOAuthServer(pending_polls=2) as server, redirect_to(server.url):
        view = login_command("github-copilot")
        widget = view.widget()
        seen = threading.Event()
        for _ in range(100):
            if view.events:
                seen.set()
                break
            view._done.wait(0.05)
        assert seen.is_set() and view.state == "running"
        assert USER_CODE in widget.children[0].value and "waiting" in widget.children[0].value
        assert view.wait(30) == "done"
    assert "signed in" in widget.children[0].value


def test_a_browser_sign_in_takes_a_pasted_redirect_url(agent: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pi_nb.auth.oauth.anthropic.CALLBACK_PORT", 0)  # the redirect never comes
    with FakeOAuthServer() as server, redirect_to(server.url):
        view = login_command("anthropic")
        for _ in range(100):
            if view.events:
                break
            view._done.wait(0.05)
        url = view.events[0]["url"]
        state = dict(p.split("=", 1) for p in url.split("?", 1)[1].split("&"))["state"]
        view.paste(f"pasted-code#{state}")
        assert view.wait(30) == "done", view.message
    assert json.loads(server.requests[0]["body"])["code"] == "pasted-code"
    assert "Open the sign-in page" in view.to_html()


def test_errors_are_shown_not_raised(agent: Path) -> None:
    with FakeOAuthServer() as server, redirect_to(server.url + "/nowhere"):
        view = login_command("xai --wait")
    assert view.state == "failed" and "✘" in view.to_html()
    with pytest.raises(ValueError, match="usage"):
        login_command("")
    with pytest.raises(ValueError, match="not 'openai'"):
        login_command("openai")
    assert isinstance(LoginView("x").to_text(), str)


def test_a_sign_in_can_be_cancelled_and_saves_nothing(agent: Path) -> None:
    with FakeOAuthServer(pending_polls=1000) as server, redirect_to(server.url):
        view = login_command("github-copilot")
        for _ in range(100):
            if view.events:
                break
            view._done.wait(0.05)
        view.cancel()
        assert view.wait(10) == "cancelled"
    assert "Login cancelled" in view.to_html()
    assert not (agent / "auth.json").exists()
