"""Project trust: the store (Pi's trust.json), what needs trust, and the resolution order.

Ports Pi's trust-manager.test.ts, the trust parts of args.test.ts / package-command-paths.test.ts,
and checks Pi's file format and error texts (recorded from Pi 0.85.0's ProjectTrustStore).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_nb.errors import TrustStoreError
from pi_nb.resources.paths import pi_file_lock
from pi_nb.resources.trust import (
    TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES,
    ProjectTrustOption,
    ProjectTrustStore,
    ProjectTrustUpdate,
    TrustPrompt,
    answer_trust_prompt,
    decide_project_trust,
    format_project_trust_prompt,
    get_project_trust_options,
    get_project_trust_parent_path,
    has_trust_requiring_project_resources,
    resolve_project_trust,
    resolve_project_trusted,
)


@pytest.fixture
def tmp(tmp_path: Path) -> Path:
    return Path(os.path.realpath(tmp_path))


@pytest.fixture
def home(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    return h


# --- the store


def test_child_inherits_parent_decision_and_null_clears(tmp: Path) -> None:
    store = ProjectTrustStore(str(tmp / "agent"))
    parent, child = tmp / "parent", tmp / "parent" / "child"
    child.mkdir(parents=True)
    assert store.get(str(child)) is None
    store.set(str(parent), True)
    assert store.get(str(child)) is True
    store.set(str(child), False)
    assert store.get(str(child)) is False
    store.set(str(child), None)
    assert store.get(str(child)) is True


def test_get_entry_returns_nearest_saved_ancestor(tmp: Path) -> None:
    store = ProjectTrustStore(str(tmp / "agent"))
    (tmp / "a" / "b" / "c").mkdir(parents=True)
    store.set(str(tmp / "a"), True)
    entry = store.get_entry(str(tmp / "a" / "b" / "c"))
    assert entry is not None and entry.to_dict() == {"path": str(tmp / "a"), "decision": True}
    store.set(str(tmp / "a" / "b"), False)
    entry = store.get_entry(str(tmp / "a" / "b" / "c"))
    assert entry is not None and (entry.path, entry.decision) == (str(tmp / "a" / "b"), False)
    assert store.get_entry(str(tmp)) is None


def test_file_format_matches_pi(tmp: Path) -> None:
    """Pi 0.85.0 wrote exactly this for the same calls (set a, set a/b/c, set a/./b/ false,
    setMany [z true, a/b null])."""
    agent = tmp / "agent"
    store = ProjectTrustStore(str(agent))
    (tmp / "a" / "b" / "c").mkdir(parents=True)
    store.set(str(tmp / "a"), True)
    store.set(str(tmp / "a" / "b" / "c"), False)
    store.set(f"{tmp}/a/./b/", False)
    store.set_many([ProjectTrustUpdate(str(tmp / "z"), True), (str(tmp / "a" / "b"), None)])
    text = (agent / "trust.json").read_text(encoding="utf-8")
    assert text == f'{{\n  "{tmp}/a": true,\n  "{tmp}/a/b/c": false,\n  "{tmp}/z": true\n}}\n'
    # nothing else is left in the agent dir: no lock file, no temp file
    assert sorted(os.listdir(agent)) == ["trust.json"]


def test_keys_are_canonical_and_sorted_by_utf16(tmp: Path) -> None:
    agent = tmp / "agent"
    store = ProjectTrustStore(str(agent))
    real = tmp / "real"
    real.mkdir()
    (tmp / "link").symlink_to(real)
    store.set(str(tmp / "link"), True)
    assert json.loads((agent / "trust.json").read_text()) == {str(real): True}
    # JS sorts by UTF-16 code units: U+1F600 (0xD83D 0xDE00) comes before U+FF5E, unlike code points
    store.set_many([(f"{tmp}/\uff5e", True), (f"{tmp}/\U0001f600", False)])
    keys = list(json.loads((agent / "trust.json").read_text()))
    assert keys == [str(real), f"{tmp}/\U0001f600", f"{tmp}/\uff5e"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "Failed to read trust store {path}: "),
        ("[]", "Invalid trust store {path}: expected an object"),
        ("null", "Invalid trust store {path}: expected an object"),
        ('"x"', "Invalid trust store {path}: expected an object"),
        ('{"x": 1}', 'Invalid trust store {path}: value for "x" must be true, false, or null'),
        (
            '{"\\u00e9\\"q": "yes"}',
            'Invalid trust store {path}: value for "é\\"q" must be true, false, or null',
        ),
        ("NaN", "Failed to read trust store {path}: "),
    ],
)
def test_invalid_store_raises_pi_text_and_is_never_overwritten(tmp: Path, content: str, message: str) -> None:
    agent = tmp / "agent"
    agent.mkdir()
    path = agent / "trust.json"
    path.write_text(content, encoding="utf-8")
    store = ProjectTrustStore(str(agent))
    expected = message.format(path=path)
    for call in (
        lambda: store.get(str(tmp)),
        lambda: store.set(str(tmp), True),
        lambda: store.get_entry(str(tmp)),
    ):
        with pytest.raises(TrustStoreError) as info:
            call()
        assert str(info.value).startswith(expected)
        if expected.endswith(": "):
            assert len(str(info.value)) > len(expected)
        else:
            assert str(info.value) == expected
    assert path.read_text(encoding="utf-8") == content
    assert sorted(os.listdir(agent)) == ["trust.json"]


def test_bom_and_null_values_are_accepted_on_read(tmp: Path) -> None:
    agent = tmp / "agent"
    agent.mkdir()
    (agent / "trust.json").write_text(
        '\ufeff{"' + str(tmp) + '": null, "/elsewhere": false}', encoding="utf-8"
    )
    store = ProjectTrustStore(str(agent))
    assert store.get(str(tmp)) is None
    store.set(str(tmp / "x"), True)  # rewrites without the BOM; null survives as null
    assert json.loads((agent / "trust.json").read_text(encoding="utf-8")) == {
        "/elsewhere": False,
        str(tmp): None,
        str(tmp / "x"): True,
    }


def test_lock_contention_raises_after_retries(tmp: Path) -> None:
    agent = tmp / "agent"
    agent.mkdir()
    store = ProjectTrustStore(str(agent))
    with pi_file_lock(str(agent / "trust.json.lock")):
        t0 = time.monotonic()
        with pytest.raises(TrustStoreError, match="Lock file is already being held"):
            store.get(str(tmp))
        elapsed = time.monotonic() - t0
    assert elapsed >= 9 * 0.020 * 0.9  # nine 20 ms waits between ten attempts
    assert store.get(str(tmp)) is None  # released: works again
    assert not (agent / "trust.json.lock").exists()


def test_lock_held_by_pi_as_directory(tmp: Path) -> None:
    """proper-lockfile (Pi) locks by creating the lock path as a directory."""
    agent = tmp / "agent"
    (agent / "trust.json.lock").mkdir(parents=True)
    store = ProjectTrustStore(str(agent))
    with pytest.raises(TrustStoreError):
        store.set(str(tmp), True)
    assert not (agent / "trust.json").exists()
    # a Pi lock older than proper-lockfile's 10 s stale limit is abandoned: break it, as Pi would
    old = time.time() - 60
    os.utime(agent / "trust.json.lock", (old, old))
    store.set(str(tmp), True)
    assert store.get(str(tmp)) is True
    assert not (agent / "trust.json.lock").exists()


def test_waits_for_a_short_lock(tmp: Path) -> None:
    agent = tmp / "agent"
    agent.mkdir()
    store = ProjectTrustStore(str(agent))
    lock = pi_file_lock(str(agent / "trust.json.lock"))
    lock.__enter__()
    timer = threading.Timer(0.05, lambda: lock.__exit__(None, None, None))
    timer.start()
    try:
        store.set(str(tmp), True)  # retries until the holder lets go (within 10 x 20 ms)
    finally:
        timer.join()
    assert store.get(str(tmp)) is True


def test_concurrent_writers_do_not_lose_updates(tmp: Path) -> None:
    agent = tmp / "agent"
    store = ProjectTrustStore(str(agent))
    dirs = [tmp / f"d{i}" for i in range(8)]
    errors: list[BaseException] = []

    def work(d: Path) -> None:
        for _ in range(20):
            try:
                store.set(str(d), True)
                return
            except TrustStoreError:
                time.sleep(0.01)
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)
                return

    threads = [threading.Thread(target=work, args=(d,)) for d in dirs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert json.loads((agent / "trust.json").read_text()) == {str(d): True for d in dirs}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ops=st.lists(
        st.tuples(st.sampled_from(["", "a", "a/b", "a/b/c", "x"]), st.sampled_from([True, False, None])),
        max_size=8,
    )
)
def test_nearest_ancestor_property(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, bool | None]]
) -> None:
    root = Path(os.path.realpath(tmp_path_factory.mktemp("trustprop")))
    store = ProjectTrustStore(str(root / "agent"))
    model: dict[str, bool] = {}
    for rel, decision in ops:
        p = str(root / rel) if rel else str(root)
        store.set(p, decision)
        if decision is None:
            model.pop(p, None)
        else:
            model[p] = decision
    for rel in ["", "a", "a/b", "a/b/c", "a/b/c/d", "x/y"]:
        p = str(root / rel) if rel else str(root)
        expected = None
        cur = p
        while True:
            if cur in model:
                expected = model[cur]
                break
            if cur == str(root) or cur == os.path.dirname(cur):
                break
            cur = os.path.dirname(cur)
        assert store.get(p) is expected


# --- what needs trust


def test_home_agents_skills_and_pi_agent_do_not_require_trust(
    tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp))
    (tmp / ".pi" / "agent").mkdir(parents=True)
    (tmp / ".agents" / "skills").mkdir(parents=True)
    child = tmp / "child"
    child.mkdir()
    assert has_trust_requiring_project_resources(str(tmp)) is False
    assert has_trust_requiring_project_resources(str(child)) is False
    (tmp / ".pi" / "settings.json").write_text("{}")
    assert has_trust_requiring_project_resources(str(tmp)) is True
    assert has_trust_requiring_project_resources(str(child)) is False  # only cwd's own .pi counts


def test_project_resources_require_trust(tmp: Path, home: Path) -> None:
    cwd = tmp / "proj"
    cwd.mkdir()
    assert has_trust_requiring_project_resources(str(cwd)) is False
    (cwd / "AGENTS.md").write_text("x")
    (cwd / "CLAUDE.md").write_text("x")
    (cwd / ".pi" / "agent").mkdir(parents=True)
    assert has_trust_requiring_project_resources(str(cwd)) is False
    for entry in TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES:
        target = cwd / ".pi" / entry
        if entry.endswith((".json", ".md")):
            target.write_text("x")
        else:
            target.mkdir()
        assert has_trust_requiring_project_resources(str(cwd)) is True, entry
        target.unlink() if target.is_file() else target.rmdir()
    assert has_trust_requiring_project_resources(str(cwd)) is False


def test_agents_skills_in_cwd_or_any_ancestor(tmp: Path, home: Path) -> None:
    deep = tmp / "w" / "x" / "y"
    deep.mkdir(parents=True)
    assert has_trust_requiring_project_resources(str(deep)) is False
    (tmp / "w" / ".agents" / "skills").mkdir(parents=True)
    assert has_trust_requiring_project_resources(str(deep)) is True
    assert has_trust_requiring_project_resources(str(tmp / "w")) is True
    assert has_trust_requiring_project_resources(str(tmp)) is False


def test_explicit_home_dir_argument(tmp: Path) -> None:
    (tmp / ".agents" / "skills").mkdir(parents=True)
    assert has_trust_requiring_project_resources(str(tmp), home_dir=str(tmp)) is False
    assert has_trust_requiring_project_resources(str(tmp), home_dir=str(tmp / "elsewhere")) is True


# --- the question


def test_prompt_text_and_options(tmp: Path) -> None:
    cwd = tmp / "proj"
    cwd.mkdir()
    prompt = TrustPrompt.for_cwd(str(cwd))
    assert prompt.message == (
        f"Trust project folder?\n{cwd}\n\nThis allows pi to load .pi settings and resources, install missing "
        "project packages, and execute project extensions."
    )
    assert prompt.message == format_project_trust_prompt(str(cwd))
    assert prompt.labels == [
        "Trust",
        f"Trust parent folder ({tmp})",
        "Trust (this session only)",
        "Do not trust",
        "Do not trust (this session only)",
    ]
    by_label = {o.label: o for o in prompt.options}
    assert by_label["Trust"].to_dict() == {
        "label": "Trust",
        "trusted": True,
        "updates": [{"path": str(cwd), "decision": True}],
        "savedPath": str(cwd),
    }
    assert [u.to_dict() for u in by_label[f"Trust parent folder ({tmp})"].updates] == [
        {"path": str(tmp), "decision": True},
        {"path": str(cwd), "decision": None},
    ]
    assert by_label["Trust (this session only)"].updates == ()
    assert by_label["Do not trust"].updates == (ProjectTrustUpdate(str(cwd), False),)
    assert by_label["Do not trust (this session only)"].trusted is False
    assert prompt.to_dict()["options"][0]["label"] == "Trust"
    assert prompt.option("nope") is None and prompt.option(None) is None
    assert prompt.option(prompt.options[2]) is prompt.options[2]


def test_options_without_session_only_and_at_root() -> None:
    assert [o.label for o in get_project_trust_options("/")] == ["Trust", "Do not trust"]
    assert get_project_trust_parent_path("/") is None
    assert [o.label for o in get_project_trust_options("/usr")] == [
        "Trust",
        "Trust parent folder (/)",
        "Do not trust",
    ]


# --- resolution order


@pytest.fixture
def project(tmp: Path, home: Path) -> Path:
    cwd = tmp / "proj"
    (cwd / ".pi").mkdir(parents=True)
    (cwd / ".pi" / "settings.json").write_text("{}")
    return cwd


def _never(_prompt: TrustPrompt) -> Any:  # pragma: no cover - must not be asked
    raise AssertionError("asked")


def test_override_wins_over_everything(project: Path, tmp: Path) -> None:
    store = ProjectTrustStore(str(tmp / "agent"))
    store.set(str(project), False)
    assert resolve_project_trusted(str(project), store, trust_override=True, ask=_never) is True
    store.set(str(project), True)
    assert resolve_project_trusted(str(project), store, trust_override=False, ask=_never) is False
    assert store.get(str(project)) is True  # overrides are never persisted


def test_no_trust_requiring_resources_is_trusted(tmp: Path, home: Path) -> None:
    cwd = tmp / "plain"
    cwd.mkdir()
    (cwd / "AGENTS.md").write_text("x")
    store = ProjectTrustStore(str(tmp / "agent"))
    store.set(str(cwd), False)  # a saved "no" does not matter: nothing to gate
    assert resolve_project_trusted(str(cwd), store, default_project_trust="never", ask=_never) is True


def test_hooks_come_before_saved_decision_and_remember(project: Path, tmp: Path) -> None:
    store = ProjectTrustStore(str(tmp / "agent"))
    store.set(str(project), False)
    seen: list[dict[str, Any]] = []

    def undecided(event: dict[str, Any]) -> dict[str, Any]:
        seen.append(event)
        return {"trusted": "undecided"}

    def silent(event: dict[str, Any]) -> None:
        seen.append(event)

    def yes(event: dict[str, Any]) -> dict[str, Any]:
        seen.append(event)
        return {"trusted": "yes"}

    assert (
        resolve_project_trusted(str(project), store, project_trust=[undecided, silent, yes], ask=_never)
        is True
    )
    assert seen == [{"type": "project_trust", "cwd": str(project)}] * 3
    assert store.get(str(project)) is False  # not remembered

    assert resolve_project_trusted(
        str(project), store, project_trust=lambda e: {"trusted": "yes", "remember": True}
    )
    assert store.get(str(project)) is True
    assert not resolve_project_trusted(
        str(project), store, project_trust=lambda e: {"trusted": "no", "remember": True}
    )
    assert store.get(str(project)) is False
    # all hooks undecided: fall through to the saved decision
    assert resolve_project_trusted(str(project), store, project_trust=silent, ask=_never) is False


def test_hook_errors_propagate_or_are_reported(project: Path, tmp: Path) -> None:
    store = ProjectTrustStore(str(tmp / "agent"))

    def boom(event: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("kaput")

    with pytest.raises(RuntimeError, match="kaput"):
        resolve_project_trusted(str(project), store, project_trust=boom)
    with pytest.raises(ValueError, match="trusted='maybe'"):
        resolve_project_trusted(str(project), store, project_trust=lambda e: {"trusted": "maybe"})

    messages: list[str] = []
    trusted = resolve_project_trusted(
        str(project), store, project_trust=[boom, lambda e: {"trusted": "yes"}], on_hook_error=messages.append
    )
    assert trusted is True
    assert len(messages) == 1
    assert messages[0].startswith('Extension "') and messages[0].endswith('boom" project_trust error: kaput')


def test_saved_decision_then_default_then_ask(project: Path, tmp: Path) -> None:
    store = ProjectTrustStore(str(tmp / "agent"))
    # saved decision beats defaultProjectTrust
    store.set(str(tmp), True)  # an ancestor
    assert resolve_project_trusted(str(project), store, default_project_trust="never", ask=_never) is True
    store.set(str(tmp), None)
    assert resolve_project_trusted(str(project), store, default_project_trust="always", ask=_never) is True
    assert resolve_project_trusted(str(project), store, default_project_trust="never", ask=_never) is False
    # ask with no way to ask: untrusted (Pi's print/json/rpc modes)
    assert resolve_project_trusted(str(project), store) is False
    assert resolve_project_trusted(str(project), store, default_project_trust="bogus") is False
    assert store.get(str(project)) is None


@pytest.mark.parametrize(
    ("answer", "trusted", "saved"),
    [
        ("Trust", True, {"proj": True}),
        ("parent", True, {"": True}),
        ("Trust (this session only)", True, {}),
        ("Do not trust", False, {"proj": False}),
        ("Do not trust (this session only)", False, {}),
        (None, False, {}),
        ("not an offered label", False, {}),
    ],
)
def test_ask_options_and_their_effects(
    project: Path, tmp: Path, answer: str | None, trusted: bool, saved: dict[str, bool]
) -> None:
    agent = tmp / "agent"
    store = ProjectTrustStore(str(agent))
    store.set(str(project), None)  # make sure the store file exists (and is empty)
    asked: list[TrustPrompt] = []

    def ask(prompt: TrustPrompt) -> str | ProjectTrustOption | None:
        asked.append(prompt)
        if answer == "parent":
            return prompt.options[1]
        return answer

    assert resolve_project_trust(str(project), store, ask=ask) is trusted
    assert len(asked) == 1 and asked[0].cwd == str(project)
    data = json.loads((agent / "trust.json").read_text())
    assert data == {str(tmp / k) if k else str(tmp): v for k, v in saved.items()}


def test_trust_parent_clears_the_child_entry(project: Path, tmp: Path) -> None:
    store = ProjectTrustStore(str(tmp / "agent"))
    store.set(str(project), False)
    # a saved "no" is answered before asking: clear it, then ask and trust the parent
    store.set(str(project), None)
    store.set(str(project / "sub"), False)
    assert resolve_project_trusted(str(project), store, ask=lambda p: p.options[1]) is True
    assert json.loads((tmp / "agent" / "trust.json").read_text()) == {
        str(tmp): True,
        str(project / "sub"): False,
    }


def test_two_phase_decision_for_notebooks(project: Path, tmp: Path) -> None:
    store = ProjectTrustStore(str(tmp / "agent"))
    pending = decide_project_trust(str(project), store)
    assert isinstance(pending, TrustPrompt) and pending.cwd == str(project)
    # deciding again before an answer is side-effect free
    assert isinstance(decide_project_trust(str(project), store), TrustPrompt)
    assert decide_project_trust(str(project), store, trust_override=True) is True
    assert decide_project_trust(str(project), store, default_project_trust="never") is False
    assert answer_trust_prompt(pending, None, store) is False and store.get(str(project)) is None
    assert answer_trust_prompt(pending, "Trust", store) is True
    assert store.get(str(project)) is True
    assert decide_project_trust(str(project), store) is True  # saved: no prompt any more
