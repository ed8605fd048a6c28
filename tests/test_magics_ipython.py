"""The magics as an IPython citizen: help and the whole reference, tab completion, text/plain beside
HTML, a turn view that stays bounded, ``%pi models`` and ``%pi follow`` (a real InteractiveShell)."""

from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from pi_nb.notebook.magics import COMMANDS, HELP, REFERENCE, help_markdown
from pi_nb.notebook.turn import TurnView
from pi_nb.providers import ScriptedModel

# -- help ---------------------------------------------------------------------------------------------


def test_help_lists_every_command_and_every_cell_option(
    shell: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.run_line_magic("pi", "help")
    out = capsys.readouterr().out
    assert out.strip() == HELP.strip()
    for c in COMMANDS:
        assert re.search(rf"^%pi {c.name}\b", HELP, re.M), c.name
    for option in ("--model", "--thinking", "--context-window", "--no-raise", "--no-render", "--cells"):
        assert option in HELP.split("\n\n")[0]
    for name in ("models", "follow"):
        assert f"%pi {name}" in HELP


def test_pi_question_mark_shows_the_whole_reference(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("%pi", "%%pi"):
        text = shell.object_inspect_text(name)
        assert "pi_nb's magics" in text and "--summarize" in text and "--no-raise" in text
    shell.run_cell("%pi?")
    out = capsys.readouterr().out
    # every command, and every option of every command with its meaning
    for c in COMMANDS:
        assert f"usage: %pi {c.name}" in out, c.name
        parser = c.parser()
        for action in parser._actions:
            if action.help and action.option_strings and action.option_strings[0] != "-h":
                assert action.option_strings[-1] in out
                assert action.help.split()[0] in out
    assert "usage: %%pi" in out and "raise_on_error" in out
    assert out.count("\n") > 100 and REFERENCE.splitlines()[0] in out


@pytest.mark.parametrize("command", [c.name for c in COMMANDS if c.name != "help"])
def test_every_command_has_its_help(shell: Any, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    magics = shell.user_ns["_pi_magics"]
    assert shell.run_line_magic("pi", f"{command} --help") is None
    out = capsys.readouterr().out
    assert out.startswith(f"usage: %pi {command}") and "options:" in out
    assert magics.session is None  # --help ran nothing (no session was even created)
    assert shell.run_line_magic("pi", f"help {command}") is None
    assert capsys.readouterr().out == out


def test_cell_help(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert shell.run_cell_magic("pi", "--help", "anything") is None
    out = capsys.readouterr().out
    assert out.startswith("usage: %%pi") and "--keep-recent N" in out
    assert shell.user_ns["_pi_magics"].session is None


def test_readme_table_is_the_help(shell: Any) -> None:
    table = help_markdown()
    rows = [r for r in table.splitlines() if r.startswith("| `%pi ")]
    assert len(rows) == len(COMMANDS)
    for row, c in zip(rows, COMMANDS, strict=True):
        assert c.meaning.replace("|", "\\|") in row
        assert f"%pi {c.name}" in row


# -- completion -------------------------------------------------------------------------------------


def _complete(shell: Any, line: str) -> list[str]:
    """What Tab offers at the end of ``line`` (the texts IPython would insert), through the same
    API the kernel's ``complete_request`` uses."""
    from IPython.core.completer import provisionalcompleter

    with provisionalcompleter():
        found = list(shell.Completer.completions(line, len(line)))
    assert all(c.end == len(line) for c in found)
    return [c.text for c in found]


def test_completes_commands_options_ids_labels_models_paths(shell: Any, tmp_path: Path) -> None:
    assert {c.name for c in COMMANDS} <= set(_complete(shell, "%pi "))
    assert {"navigate", "new"} <= set(_complete(shell, "%pi n"))
    assert "models" in _complete(shell, "%pi mod") and "model" in _complete(shell, "%pi mod")
    r = shell.run_cell_magic("pi", "--no-render", "read notes.txt")
    shell.run_line_magic("pi", f"label {r.entry_ids[0]} the-start")
    ids = _complete(shell, "%pi navigate ")
    assert set(r.entry_ids) <= set(ids) and "the-start" in ids
    assert r.entry_ids[1] in _complete(shell, f"%pi label {r.entry_ids[1][:5]}")
    assert r.entry_ids[0] not in _complete(shell, f"%pi label {r.entry_ids[1][:5]}")
    assert "the-start" in _complete(shell, "%pi navigate the-")
    assert "--summarize" in _complete(shell, f"%pi navigate {r.entry_ids[0]} --su")
    assert "openai/gpt-4o" in _complete(shell, "%pi model openai/gpt-4")
    assert "offline" in _complete(shell, "%pi model off")
    assert "openai/gpt-4o" in _complete(shell, "%%pi --model openai/gpt-4")
    assert "anthropic/claude-sonnet-4-5" in _complete(shell, "%%pi --no-tools --model anthropic/claude-so")
    assert "--thinking" in _complete(shell, "%%pi --thi")
    assert "xhigh" in _complete(shell, "%%pi --thinking x")
    # session paths: the file of this session, typed or from Pi's layout, and folders on the way
    session_file = r.session_file
    assert session_file in _complete(shell, "%pi open ")
    folder = os.path.dirname(session_file)
    assert session_file in _complete(shell, f"%pi open {folder}/")
    assert folder + "/" in _complete(shell, f"%pi open {folder[:-3]}")
    assert session_file in _complete(shell, f"%%pi --session {folder}/")
    assert "once-no" in _complete(shell, "%pi trust once")
    assert "reserveTokens=" in _complete(shell, "%pi settings res")


# -- text/plain beside HTML ----------------------------------------------------------------------------


def test_streamed_turn_and_replay_carry_text_plain(shell: Any) -> None:
    with capture_output() as cap:
        shell.run_cell_magic("pi", "", "read notes.txt")
    assert cap.outputs
    for out in cap.outputs:
        assert {"text/plain", "text/html"} <= set(out.data)
        assert "<IPython.core.display.HTML object>" not in out.data["text/plain"]
    final = cap.outputs[-1].data["text/plain"]
    assert final.startswith("» read notes.txt") and "✓ read notes.txt" in final and "done · model" in final
    with capture_output() as cap:
        shell.run_line_magic("pi", "turns all")
    (out,) = cap.outputs
    assert {"text/plain", "text/html"} <= set(out.data)
    assert "✓ read notes.txt" in out.data["text/plain"] and "recorded" in out.data["text/plain"]
    assert out.metadata["pi_nb"]["turns"] is True
    # the old name still works for one release, and says the new one
    with capture_output() as cap:
        shell.run_line_magic("pi", "replay")
    assert "%pi replay is now %pi turns" in cap.stdout and cap.outputs


# -- a turn view stays bounded --------------------------------------------------------------------------


def _many_tools(n: int) -> ScriptedModel:
    model = ScriptedModel(context_window=10_000_000)
    for i in range(n):
        model.enqueue(model.tool_call("read", {"path": "notes.txt"}, id=f"call_{i}", text=f"step {i}"))
    model.enqueue(model.text("all done"))
    return model


def _streamed(shell: Any, steps: int) -> tuple[int, int, str]:
    """(largest update, final size, final text) of a streamed turn of ``steps`` tool calls."""
    shell.run_line_magic("pi", "new --in-memory")
    magics = shell.user_ns["_pi_magics"]
    magics.session.set_model(_many_tools(steps))
    with capture_output() as cap:
        r = shell.run_cell_magic("pi", "", "go")
    assert r.text == "all done" and len(r.messages) == 2 * steps + 2
    sizes = [len(o.data["text/html"]) + len(o.data["text/plain"]) for o in cap.outputs]
    return max(sizes), sizes[-1], cap.outputs[-1].data["text/plain"]


def test_streamed_view_is_bounded_whatever_the_number_of_steps(shell: Any) -> None:
    small_max, small_final, _ = _streamed(shell, 10)
    big_max, big_final, text = _streamed(shell, 500)
    # 500 tool calls + 501 answers with text: all but the last steps collapse into a count
    hidden = int(re.search(r"… ([\d,]+) earlier steps \(the session holds them\)", text)[1].replace(",", ""))  # type: ignore[index]
    assert hidden == 1001 - TurnView.max_steps
    assert "all done" in text and "step 499" in text and "step 100" not in text
    assert big_max < 60_000 and big_final < 60_000, (big_max, big_final)
    assert big_max < 3 * small_max  # bounded: does not grow with the number of steps
    print(f"10 steps: {small_max:,} chars; 500 steps: {big_max:,} chars (largest update)")


def test_one_huge_answer_is_capped_in_the_view() -> None:
    view = TurnView(prompt="x" * 50_000)
    view.feed(
        {
            "type": "message_end",
            "message": {
                "role": "assistant",
                "content": [{"type": "text", "text": "y" * 1_000_000}],
                "timestamp": 1,
            },
        }
    )
    for i in range(100):
        view.notes.append(f"note {i}")
    bundle = view.bundle()
    assert len(bundle["text/plain"]) < 30_000 and len(bundle["text/html"]) < 30_000
    assert "more characters; the session holds them" in bundle["text/plain"]
    assert "note 99" in bundle["text/plain"] and "note 3 " not in bundle["text/plain"]


# -- %pi models ---------------------------------------------------------------------------------------


def test_models_frame_says_whether_each_key_is_set_never_its_value(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-this-value-must-not-show-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    frame = shell.run_line_magic("pi", "models")
    assert {"model", "provider", "context_window", "max_tokens", "key_env", "key_set"} <= set(frame.columns)
    by_provider = frame.groupby("provider")["key_set"].first()
    assert bool(by_provider["openai"]) is True and bool(by_provider["anthropic"]) is False
    assert set(frame.loc[frame.provider == "openai", "key_env"]) == {"OPENAI_API_KEY"}
    shown = frame.to_string() + frame.to_html() + repr(frame.attrs)
    assert secret not in shown
    only = shell.run_line_magic("pi", "models anthropic")
    assert set(only.provider) == {"anthropic"} and len(only) >= 1
    found = shell.run_line_magic("pi", "models GPT-4O")
    assert "openai/gpt-4o" in set(found.model)
    assert str(frame.dtypes["context_window"]) == "Int64" and str(frame.dtypes["key_set"]) == "boolean"
    with pytest.raises(UsageError, match="no model matches 'zzz-no-such-model'"):
        shell.run_line_magic("pi", "models zzz-no-such-model")


def test_models_lists_the_whole_catalog(shell: Any) -> None:
    import pi_nb

    specs = pi_nb.list_models()
    frame = shell.run_line_magic("pi", "models")
    assert len(frame) == len(specs) == 1336 and frame.attrs["source"] == "catalog"
    assert frame.provider.nunique() == len(pi_nb.list_providers()) == 39


# -- %pi follow ---------------------------------------------------------------------------------------


class _Follower:
    def __init__(self, path: str) -> None:
        self.path = path
        self.stopped = 0

    def stop(self) -> None:
        self.stopped += 1

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": f"following {self.path}", "text/html": f"<b>following {self.path}</b>"}


@pytest.fixture
def follow_module(monkeypatch: pytest.MonkeyPatch) -> list[_Follower]:
    """``pi_nb.notebook.following`` reduced to its interface: ``follow(path)`` returns a displayable
    object with ``.stop()`` (the live views are tested with that module)."""
    made: list[_Follower] = []
    module = types.ModuleType("pi_nb.notebook.following")

    def follow(path: str) -> _Follower:
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", path)
        made.append(_Follower(path))
        return made[-1]

    module.follow = follow  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pi_nb.notebook.following", module)
    return made


def test_follow_and_stop(shell: Any, follow_module: list[_Follower], tmp_path: Path) -> None:
    r = shell.run_cell_magic("pi", "--no-render", "read notes.txt")
    follower = shell.run_line_magic("pi", f"follow {r.session_file}")
    assert follower is follow_module[0] and follower.path == r.session_file
    with capture_output() as cap:
        shell.run_cell(f"%pi follow {r.session_file}")  # displayed as the cell's result
    shown = cap.stdout + "".join(o.data.get("text/plain", "") for o in cap.outputs)
    assert f"following {r.session_file}" in shown
    assert follow_module[0].stopped == 1  # one followed file at a time
    recent = shell.run_line_magic("pi", "follow --recent")
    assert recent.path == r.session_file and follow_module[1].stopped == 1
    assert shell.run_line_magic("pi", "follow --stop") == f"stopped following {r.session_file}"
    assert recent.stopped == 1
    with pytest.raises(UsageError, match="nothing is being followed"):
        shell.run_line_magic("pi", "follow --stop")
    with pytest.raises(
        UsageError, match=r"^%pi follow: No such file or directory: .*missing\.jsonl — check the path"
    ):
        shell.run_line_magic("pi", f"follow {tmp_path / 'missing.jsonl'}")


def test_follow_with_the_real_module(shell: Any) -> None:
    r = shell.run_cell_magic("pi", "--no-render", "read notes.txt")
    follower = shell.run_line_magic("pi", f"follow {r.session_file}")
    try:
        assert hasattr(follower, "stop")
    finally:
        assert "stopped following" in shell.run_line_magic("pi", "follow --stop")


# -- %pi list --------------------------------------------------------------------------------------


def test_list_has_snake_case_columns_and_datetimes_even_when_empty(shell: Any, tmp_path: Path) -> None:
    empty = shell.run_line_magic("pi", f"list {tmp_path}")
    assert len(empty) == 0
    r = shell.run_cell_magic("pi", "--no-render", "read notes.txt")
    frame = shell.run_line_magic("pi", "list")
    assert list(frame.columns) == list(empty.columns)
    assert {"session_id", "message_count", "first_message", "modified", "session_file"} <= set(frame.columns)
    row = frame.iloc[0]
    assert row["session_id"] == r.session_id and row["session_file"] == r.session_file
    assert row["message_count"] >= 2
    assert str(frame.dtypes["modified"]).startswith("datetime64") and str(
        empty.dtypes["modified"]
    ).startswith("datetime64")
    assert str(frame.dtypes["message_count"]) == "Int64" and str(frame.dtypes["session_id"]) == "string"


def test_completion_on_the_first_line_of_a_cell(shell: Any) -> None:
    from IPython.core.completer import provisionalcompleter

    cell = "%%pi --model openai/gpt-4\nread notes.txt"
    with provisionalcompleter():
        found = [c.text for c in shell.Completer.completions(cell, len("%%pi --model openai/gpt-4"))]
        in_body = [c.text for c in shell.Completer.completions(cell, len(cell))]
    assert "openai/gpt-4o" in found
    assert "openai/gpt-4o" not in in_body  # the prompt itself is not a magic line


# -- the same through a real kernel (what Jupyter's front ends ask) --------------------------------------


def test_a_real_kernel_completes_inspects_and_refuses_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("jupyter_client")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    import run_notebooks

    km = run_notebooks._kernel_manager(str(tmp_path))
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent")}
    env.pop("JPY_PARENT_PID", None)
    km.start_kernel(env=env, cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        assert kc.execute_interactive("%load_ext pi_nb", timeout=60)["content"]["status"] == "ok"

        def complete(code: str) -> list[str]:
            return list(kc.complete(code, len(code), reply=True, timeout=30)["content"]["matches"])

        assert "navigate" in complete("%pi navi")
        assert "openai/gpt-4o" in complete("%%pi --model openai/gpt-4")
        assert "--summarize" in complete("%pi navigate x --summ")
        info = kc.inspect("%pi", 3, detail_level=0, reply=True, timeout=30)["content"]
        assert info["found"] and "--instructions" in info["data"]["text/plain"]

        streams: list[str] = []
        reply = kc.execute_interactive(
            "%pi tree --bogus",
            timeout=60,
            output_hook=lambda m: (
                streams.append(m["content"].get("text", "")) if m["header"]["msg_type"] == "stream" else None
            ),
        )
        assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "UsageError"
        shown = "".join(streams).strip()
        assert shown == "UsageError: %pi tree: unrecognized arguments: --bogus (see %pi tree --help)", shown
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
