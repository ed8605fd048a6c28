"""The per-turn shortcuts give what the full computations give.

A turn asks for the known secrets, the compaction settings, the LLM conversion and JSON
stringification several times; each now reuses work (the environment scan while the environment is
unchanged, the checked settings while the raw values are unchanged, a plain-dict fast path). These
tests change what the caches depend on between calls and compare with the full computations.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb import _js, redaction
from pi_nb.errors import CompactionError
from pi_nb.messages import convert_to_llm
from pi_nb.resources.settings import SettingsManager


def test_known_secrets_follow_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PI_NB_TEST_API_KEY", "sk-first-secret-value-123")
    assert redaction.known_secrets()["sk-first-secret-value-123"] == "PI_NB_TEST_API_KEY"
    monkeypatch.setenv("PI_NB_TEST_API_KEY", "sk-second-secret-value-456")
    found = redaction.known_secrets()
    assert "sk-first-secret-value-123" not in found
    assert found["sk-second-secret-value-456"] == "PI_NB_TEST_API_KEY"
    monkeypatch.delenv("PI_NB_TEST_API_KEY")
    assert "sk-second-secret-value-456" not in redaction.known_secrets()
    # a name registered after a scan counts at once
    monkeypatch.setenv("PI_NB_TEST_ODD_NAME", "an-odd-credential-value-789")
    assert "an-odd-credential-value-789" not in redaction.known_secrets()
    redaction.register_secret_env("PI_NB_TEST_ODD_NAME")
    assert redaction.known_secrets()["an-odd-credential-value-789"] == "PI_NB_TEST_ODD_NAME"
    # the same table as a scan of a copy of the environment (which is never cached)
    assert redaction.known_secrets() == redaction.known_secrets(dict(os.environ))


def test_compaction_settings_follow_changes() -> None:
    sm = SettingsManager.in_memory({"compaction": {"keepRecentTokens": 1000}})
    first = sm.get_compaction_settings()
    assert first.keep_recent_tokens == 1000 and sm.get_compaction_settings() is first
    sm.set_compaction_settings(keepRecentTokens=2000)
    assert sm.get_compaction_settings().keep_recent_tokens == 2000
    sm.set_compaction_settings(enabled=False)
    assert sm.get_compaction_settings().enabled is False


def test_compaction_settings_check_each_new_value() -> None:
    good = SettingsManager.in_memory({"compaction": {"enabled": True}})
    good.get_compaction_settings()
    for bad_value in (1, "yes"):  # equal to True for the cache key or not: checked again
        bad = SettingsManager.in_memory({"compaction": {"enabled": bad_value}})
        try:
            expected: Any = bad.get_compaction_settings().to_dict()
        except CompactionError as exc:
            expected = str(exc)
        bad._settings["compaction"]["enabled"] = True
        bad.get_compaction_settings()
        bad._settings["compaction"]["enabled"] = bad_value
        try:
            again: Any = bad.get_compaction_settings().to_dict()
        except CompactionError as exc:
            again = str(exc)
        assert again == expected


def _needs_slow_path_reference(value: Any) -> bool:
    """The previous, plain implementation."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            return True
        if isinstance(v, int):
            if abs(v) > 2**53 - 1:
                return True
        elif isinstance(v, dict):
            if any(_js.is_array_index(str(k)) for k in v):
                return True
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return False


keys = st.one_of(
    st.sampled_from(["a", "0", "12", "01", "4294967295", "4294967294", "\u0663", "-1", ""]),
    st.text(max_size=4),
)
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**60), max_value=2**60),
        st.floats(allow_nan=False),
        st.text(max_size=5),
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(keys, children, max_size=4),
        st.tuples(children, children),
    ),
    max_leaves=20,
)


@settings(max_examples=600, deadline=None)
@given(json_values)
def test_stringify_fast_path_test_is_unchanged(value: Any) -> None:
    assert _js._needs_slow_path(value) == _needs_slow_path_reference(value)
    out = _js.js_stringify(value)
    assert json.loads(out) == json.loads(_js._stringify_slow(value))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.fixed_dictionaries(
                {"role": st.sampled_from(["user", "assistant", "toolResult", "custom", "other"])},
                optional={
                    "content": st.one_of(st.text(max_size=3), st.just([])),
                    "timestamp": st.integers(0, 9),
                },
            ),
        ),
        max_size=6,
    )
)
def test_convert_to_llm_plain_dicts(messages: list[dict[str, Any]]) -> None:
    out = convert_to_llm(messages)
    expected = []
    for m in messages:
        if m["role"] in ("user", "assistant", "toolResult"):
            expected.append(dict(m))
        elif m["role"] == "custom":
            content = m.get("content")
            converted: dict[str, Any] = {"role": "user"}
            if "content" in m:
                converted["content"] = (
                    [{"type": "text", "text": content}] if isinstance(content, str) else content
                )
            if "timestamp" in m:
                converted["timestamp"] = m["timestamp"]
            expected.append(converted)
    assert out == expected
    assert not any(o is m for o in out for m in messages)  # new top-level dicts


def test_daemon_workers_are_reused_and_a_blocked_call_keeps_its_own() -> None:
    import asyncio
    import threading

    from pi_nb.tools.base import run_in_daemon_thread

    release = threading.Event()

    async def main() -> tuple[set[int], str]:
        names = set()
        for _ in range(5):  # one after another: the same worker thread
            names.add(await run_in_daemon_thread(threading.get_ident))
        blocked = run_in_daemon_thread(release.wait, 10)
        # while one call is blocked, others still run (on another thread)
        other = await asyncio.wait_for(run_in_daemon_thread(lambda: "done"), 5)
        assert not blocked.done()
        release.set()
        assert await blocked is True
        with pytest.raises(ZeroDivisionError):
            await run_in_daemon_thread(lambda: 1 / 0)
        return names, other

    names, other = asyncio.run(main())
    assert len(names) == 1 and other == "done"
    assert all(t.daemon for t in threading.enumerate() if t.name == "pi-nb-tool-io")


def test_read_tool_rejects_on_abort_while_reading(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio
    import threading

    from pi_nb.errors import ToolError
    from pi_nb.tools.base import AbortSignal
    from pi_nb.tools.read import ReadTool

    (tmp_path / "a.txt").write_text("one\ntwo\n")
    tool = ReadTool(str(tmp_path))
    release = threading.Event()
    real = ReadTool._read

    def slow(self: ReadTool, params: dict[str, Any], ctx: Any, signal: Any = None) -> Any:
        if params["path"] == "slow.txt":
            release.wait(10)
            params = {"path": "a.txt"}
        return real(self, params, ctx, signal)

    monkeypatch.setattr(ReadTool, "_read", slow)

    async def main() -> None:
        signal = AbortSignal()
        result = await tool.execute("c1", {"path": "a.txt"}, signal)  # the read wins
        assert "two" in result.content[0]["text"]
        task = asyncio.ensure_future(tool.execute("c2", {"path": "slow.txt"}, signal))
        await asyncio.sleep(0.05)
        assert not task.done()
        threading.Thread(target=signal.abort).start()  # from another thread
        with pytest.raises(ToolError, match="Operation aborted"):
            await asyncio.wait_for(task, 5)
        release.set()
        with pytest.raises(ToolError, match="Operation aborted"):
            await tool.execute("c3", {"path": "a.txt"}, signal)  # already aborted

    asyncio.run(main())
