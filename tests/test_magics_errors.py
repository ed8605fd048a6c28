"""Mistakes in a magic's input are one UsageError line; a failed turn fails its cell.

On a real IPython ``InteractiveShell`` (each error, each refused value, the session left as it was)
and on a real kernel through nbclient ("Run All" stops at the failing cell).
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError

from pi_nb.notebook.magics import THINKING_LEVELS
from pi_nb.notebook.turn import TurnFailedError, TurnResult
from pi_nb.providers import ScriptedModel

ROOT = Path(__file__).resolve().parents[1]
PI_CLI_ARGS = Path.home() / ".cache/pi-oracle/node_modules/@earendil-works/pi-coding-agent/dist/cli/args.js"


def _usage(shell: Any, line: str, cell: str | None = None) -> str:
    """The UsageError text of one magic call (it must raise one, and only one line)."""
    with pytest.raises(UsageError) as info:
        if cell is None:
            shell.run_line_magic("pi", line)
        else:
            shell.run_cell_magic("pi", line, cell)
    text = str(info.value)
    assert "\n" not in text, text
    assert "Traceback" not in text and len(text) < 900, text
    return text


def _turn(shell: Any) -> TurnResult:
    r = shell.run_cell_magic("pi", "--no-render", "read notes.txt")
    assert isinstance(r, TurnResult)
    return r


# -- every PiNbError / ValueError / OSError of an input is one line ------------------------------


def test_unknown_entry_ids_are_one_line_and_change_nothing(shell: Any) -> None:
    _turn(shell)
    magics = shell.user_ns["_pi_magics"]
    entries = len(magics.session.session_manager.get_entries())
    leaf = magics.session.session_manager.get_leaf_id()
    for line in ("navigate nosuchid", "navigate nosuchid --summarize", "label nosuchid x"):
        text = _usage(shell, line)
        assert "nosuchid" in text and "%pi entries" in text, text
    assert len(magics.session.session_manager.get_entries()) == entries
    assert magics.session.session_manager.get_leaf_id() == leaf


def test_navigate_and_label_accept_a_label(shell: Any) -> None:
    _turn(shell)
    magics = shell.user_ns["_pi_magics"]
    first = next(e["id"] for e in magics.session.session_manager.get_entries() if e["type"] == "message")
    shell.run_line_magic("pi", f"label {first} start-here")
    assert shell.run_line_magic("pi", "navigate start-here")["editorText"] == "read notes.txt"
    shell.run_line_magic("pi", "label start-here")  # cleared through its label
    assert magics.session.session_manager.get_label(first) is None


def test_open_a_folder_a_text_file_a_missing_file(shell: Any, tmp_path: Path) -> None:
    r = _turn(shell)
    magics = shell.user_ns["_pi_magics"]
    before = magics.session
    folder = tmp_path / "somedir.jsonl"
    folder.mkdir()
    text = _usage(shell, f"open {folder}")
    assert "folder" in text and str(folder) in text
    notes = Path("notes.txt")
    content = notes.read_bytes()
    text = _usage(shell, "open notes.txt")
    assert "not a valid pi session" in text and "%pi list" in text, text
    assert notes.read_bytes() == content  # the file is untouched
    text = _usage(shell, f"open {tmp_path / 'nope.jsonl'}")
    assert "no such session file" in text
    assert magics.session is before  # a failed open keeps the session
    assert "entries" in shell.run_line_magic("pi", f"open {r.session_file}")


def test_unreadable_session_file_is_one_line(shell: Any, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    r = _turn(shell)
    path = Path(r.session_file)
    path.chmod(0)
    try:
        text = _usage(shell, f"open {path}")
        assert "Permission denied" in text and "permissions" in text
    finally:
        path.chmod(0o644)


def test_open_a_session_symlinked_to_a_folder_and_a_fifo(shell: Any, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(tmp_path)
    assert "folder" in _usage(shell, f"open {link}")
    follow_folder = _usage(shell, f"follow {tmp_path}")
    assert "folder" in follow_folder


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("settings reserveTokens=abc", "whole number"),
        ("settings reserveTokens=-10", "0 or more"),
        ("settings keepRecentTokens=-1", "0 or more"),
        ("settings keepRecentTokens=1.5", "whole number"),
        ("settings enabled=maybe", "true or false"),
        ("settings reserveTokens", "key=value"),
        ("settings bogus=1", "unknown key"),
        ("model --context-window -5", "positive"),
        ("model --context-window 0", "positive"),
        ("model --context-window abc", "whole number"),
        ("model --max-tokens 0", "positive"),
        ("model offline --context-window 0", "positive"),
        ("model nosuchprovider/some-model", "unknown provider"),
        ("model gpt4", "provider/model-id"),
        ("tree --bogus", "unrecognized arguments: --bogus"),
        ("budget extra", "unrecognized arguments"),
        ("status --verbose", "unrecognized arguments"),
        ("entries --all", "unrecognized arguments"),
        ("trust maybe", "invalid choice"),
        ("turns -3", "turns"),
        ("turns zero", "whole number"),
        ("navigate", "the following arguments are required: ID"),
        ("label", "the following arguments are required: ID"),
        ("open", "give a session file"),
        ("follow", "give a session file"),
        ("follow --stop", "nothing is being followed"),
        ("new --cwd /no/such/folder", "no such folder"),
        ("list /no/such/folder", "no such folder"),
        ("frobnicate", "unknown command"),
        ("open 'unclosed", "quotation"),
        ("compact", "Nothing to compact"),
        ("help --bogus", "unrecognized arguments"),
        ("help frobnicate", "invalid choice"),
    ],
)
def test_refused_line_inputs(shell: Any, line: str, expected: str) -> None:
    text = _usage(shell, line)
    assert expected in text, text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("--context-window -5", "positive"),
        ("--context-window 0", "positive"),  # 0 is a value, not "not given"
        ("--reserve -1", "0 or more"),
        ("--keep-recent -1", "0 or more"),
        ("--cells -2", "0 or more"),
        ("--thinking ultra", "invalid choice: 'ultra'"),
        ("--bogus-flag", "unrecognized arguments"),
        ("--tools read,frob", "unknown tool(s) frob"),
        ("--model nosuchprovider/x", "unknown provider"),
        ("--vars missing_var", "no variable named 'missing_var'"),
        ("--interpolate", "no variable named 'nothing_here'"),
        ("--session /no/such/dir/s.jsonl", "no such session file"),
    ],
)
def test_refused_cell_options_leave_the_session_as_it_was(shell: Any, line: str, expected: str) -> None:
    _turn(shell)
    magics = shell.user_ns["_pi_magics"]
    s = magics.session
    entries, window = len(s.session_manager.get_entries()), s.model.context_window
    tools = s.get_active_tool_names()
    text = _usage(shell, line, "read {nothing_here}")
    assert expected in text, text
    assert magics.session is s and len(s.session_manager.get_entries()) == entries
    assert s.model.context_window == window and s.get_active_tool_names() == tools


def test_thinking_levels_are_pis(shell: Any) -> None:
    if PI_CLI_ARGS.exists():  # the real Pi's list, where the oracle is installed
        text = PI_CLI_ARGS.read_text(encoding="utf-8")
        line = next(x for x in text.splitlines() if "VALID_THINKING_LEVELS =" in x)
        assert (
            line.split("=", 1)[1].strip().rstrip(";")
            == "[" + ", ".join(f'"{t}"' for t in THINKING_LEVELS) + "]"
        )
    assert THINKING_LEVELS[0] == "off" and "xhigh" in THINKING_LEVELS
    r = shell.run_cell_magic("pi", "--no-render --thinking xhigh", "read notes.txt")
    assert r.text
    # Pi's setThinkingLevel clamps to the model: the offline model does not reason
    assert shell.user_ns["_pi_magics"].session.thinking_level == "off"


# -- a window not above the reserve -----------------------------------------------------------------


def test_window_below_the_reserve_is_refused_with_the_fix(shell: Any) -> None:
    _turn(shell)
    magics = shell.user_ns["_pi_magics"]
    text = _usage(shell, "model --context-window 6000")
    assert "not above the compaction reserve (16,384 tokens)" in text
    assert "%pi settings reserveTokens=1500 keepRecentTokens=1500" in text
    assert magics.session.model.context_window != 6000
    # the fix works, in either order
    shell.run_line_magic("pi", "settings reserveTokens=1500 keepRecentTokens=1500")
    assert "context_window=6000" in shell.run_line_magic("pi", "model --context-window 6000")
    text = _usage(shell, "settings reserveTokens=6000")
    assert "6,000" in text and "reserve" in text
    # in one %%pi line: refused alone, accepted with --reserve
    shell.run_line_magic("pi", "new")
    text = _usage(shell, "--context-window 8000", "hi")
    assert "--reserve 2000 --keep-recent 2000" in text
    r = shell.run_cell_magic(
        "pi", "--no-render --context-window 8000 --reserve 2000 --keep-recent 2000", "hi"
    )
    assert r.text and magics.session.model.context_window == 8000


def test_config_window_below_the_reserve_is_refused_at_first_use(shell: Any) -> None:
    shell.run_line_magic("config", "PiMagics.context_window = 8000")
    text = _usage(shell, "new")
    assert "%config PiMagics.reserve_tokens = 2000" in text and "keep_recent_tokens" in text
    shell.run_line_magic("config", "PiMagics.reserve_tokens = 2000")
    shell.run_line_magic("config", "PiMagics.keep_recent_tokens = 2000")
    assert shell.run_line_magic("pi", "new").startswith("new session")
    shell.run_line_magic("config", "PiMagics.context_window = 0")
    assert "positive" in _usage(shell, "new")


# -- a model is checked when chosen --------------------------------------------------------------------


def test_choosing_a_model_without_its_sdk_says_which_extra(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-123456")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key-123456")
    _turn(shell)
    magics = shell.user_ns["_pi_magics"]
    model = magics.session.model
    monkeypatch.setitem(sys.modules, "openai", None)  # "import openai" raises ImportError
    text = _usage(shell, "model openai/gpt-4o")
    assert text == (
        "%pi model: openai/gpt-4o needs the openai package, which is not installed — "
        "pip install 'pi_nb[openai]', then restart the kernel"
    )
    monkeypatch.setitem(sys.modules, "httpx", None)  # Anthropic and Mistral send over plain httpx
    assert "pip install 'pi_nb[anthropic]'" in _usage(shell, "model anthropic/claude-sonnet-4-5")
    monkeypatch.setenv("MISTRAL_API_KEY", "mistral-test-not-a-real-key-123456")
    assert "pip install 'pi_nb[mistral]'" in _usage(shell, "model mistral/devstral-medium-latest")
    assert "pip install 'pi_nb[openai]'" in _usage(shell, "--model openai/gpt-4o", "hi")
    assert magics.session.model is model


def test_choosing_a_model_without_its_key_says_which_variable(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    _turn(shell)
    text = _usage(shell, "model openai/gpt-4o")
    assert text == (
        "%pi model: openai/gpt-4o needs an API key in $OPENAI_API_KEY, which is not set — "
        "set it (%env OPENAI_API_KEY=... or os.environ['OPENAI_API_KEY'] = ...), then choose the model again"
    )
    assert "$ANTHROPIC_API_KEY" in _usage(shell, "model anthropic/claude-sonnet-4-5")
    shell.run_line_magic("config", "PiMagics.model = 'openai/gpt-4o'")
    assert "$OPENAI_API_KEY" in _usage(shell, "new")
    # a local server needs no key
    shell.run_line_magic("config", "PiMagics.model = 'offline'")
    assert "id='llama3.1'" in shell.run_line_magic("pi", "model ollama/llama3.1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-123456")
    assert "gpt-4o" in shell.run_line_magic("pi", "model openai/gpt-4o")


# -- a turn that ends in an error fails its cell -----------------------------------------------------


def _failing_model(message: str = "401 Incorrect API key provided") -> ScriptedModel:
    model = ScriptedModel(context_window=128_000)
    model.enqueue(model.error(message))
    return model


def test_a_failed_turn_fails_the_cell_with_one_line(shell: Any) -> None:
    from IPython.utils.capture import capture_output

    shell.run_line_magic("pi", "new")
    magics = shell.user_ns["_pi_magics"]
    magics.session.set_model(_failing_model())
    with capture_output() as cap, pytest.raises(TurnFailedError) as info:
        shell.run_cell_magic("pi", "", "hello")
    text = str(info.value)
    assert "\n" not in text and "401 Incorrect API key provided" in text and "--no-raise" in text
    assert info.value._render_traceback_() == [f"TurnFailedError: {text}"]
    turn = info.value.turn
    assert turn is not None and turn.error and turn.entry_ids  # the session kept the turn
    last = cap.outputs[-1].data
    assert "error · model scripted" in last["text/plain"] and "done ·" not in last["text/plain"]
    assert "error · model scripted" in last["text/html"]
    assert cap.outputs[-1].metadata["pi_nb"]["error"] == turn.error


def test_no_raise_and_the_config_keep_going(shell: Any) -> None:
    shell.run_line_magic("pi", "new")
    magics = shell.user_ns["_pi_magics"]
    # (not a transient error: Pi's agent would retry "Connection error." before the turn fails)
    magics.session.set_model(_failing_model("400 invalid tool schema"))
    r = shell.run_cell_magic("pi", "--no-raise --no-render", "hello")
    assert isinstance(r, TurnResult) and r.error == "400 invalid tool schema" and "error" in repr(r)
    shell.run_line_magic("config", "PiMagics.raise_on_error = False")
    magics.session.set_model(_failing_model("prompt is too long: 300000 tokens > 200000 maximum"))
    r = shell.run_cell_magic("pi", "--no-render", "hello")
    # an overflow that compaction cannot fix: the agent says so, and what to do (not the bare provider text)
    assert r.error and "overflows" in r.error and "compaction cannot run" in r.error
    shell.run_line_magic("config", "PiMagics.raise_on_error = True")
    magics.session.set_model(_failing_model("prompt is too long: 300000 tokens > 200000 maximum"))
    with pytest.raises(TurnFailedError) as info:
        shell.run_cell_magic("pi", "--no-render", "hello")
    assert "--context-window" in str(info.value) and "keepRecentTokens" in str(info.value)


def test_a_turn_that_ends_well_is_done(shell: Any) -> None:
    from IPython.utils.capture import capture_output

    with capture_output() as cap:
        r = shell.run_cell_magic("pi", "", "read notes.txt")
    assert r.error is None
    assert "done · model" in cap.outputs[-1].data["text/plain"]


# -- a real kernel: Run All stops at the failing cell ------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(cells: list[str], tmp_path: Path) -> tuple[Any, BaseException | None]:
    import nbformat
    from nbclient import NotebookClient

    sys.path.insert(0, str(ROOT / "tools"))
    import run_notebooks

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    scratch = tempfile.mkdtemp(prefix="pi_nb-magics-", dir=tmp_path)
    env = {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(tmp_path / "agent"),
        "OPENAI_API_KEY": "sk-test-123456789",
    }
    env.pop("JPY_PARENT_PID", None)
    client = NotebookClient(
        nb,
        km=run_notebooks._kernel_manager(scratch),
        timeout=120,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    error: BaseException | None = None
    try:
        client.execute(env=env)
    except Exception as exc:  # CellExecutionError
        error = exc
    return nb, error


def test_run_all_stops_at_a_failed_turn_and_at_a_usage_error(tmp_path: Path) -> None:
    pytest.importorskip("nbclient")
    port = _closed_port()
    nb, error = _run(
        [
            "%load_ext pi_nb",
            "from pi_nb.providers import get_model\n"
            "from pi_nb.notebook import current_session\n"
            f"current_session().set_model(get_model('openai/gpt-4o', base_url='http://127.0.0.1:{port}/v1', max_retries=0, timeout=5))",
            "%%pi\nhello",
            "print('this cell must not run')",
        ],
        tmp_path,
    )
    assert error is not None and "TurnFailedError" in str(error)
    failing, after = nb.cells[2], nb.cells[3]
    assert after.execution_count is None and not after.outputs
    errors = [o for o in failing.outputs if o.output_type == "error"]
    assert len(errors) == 1 and errors[0].ename == "TurnFailedError"
    assert len(errors[0].traceback) == 1 and "the turn ended with an error" in errors[0].traceback[0]
    streamed = [o for o in failing.outputs if o.output_type == "display_data"]
    assert streamed and "text/plain" in streamed[-1].data and "text/html" in streamed[-1].data
    assert any(x.startswith("error · ") for x in streamed[-1].data["text/plain"].splitlines())

    nb, error = _run(
        ["%load_ext pi_nb", "%pi navigate nosuchid", "print('this cell must not run')"], tmp_path
    )
    assert error is not None
    assert nb.cells[2].execution_count is None
    shown = "".join(o.get("text", "") for o in nb.cells[1].outputs)
    assert shown.strip().startswith("UsageError: %pi navigate: no entry 'nosuchid'")
    assert "Traceback" not in shown and len(shown.strip().splitlines()) == 1


def test_config_refuses_a_thinking_level_outside_pis(shell: Any) -> None:
    from traitlets import TraitError

    magics = shell.user_ns["_pi_magics"]
    with pytest.raises(TraitError):
        magics.thinking_level = "ultra"
    magics.thinking_level = "max"
    shell.run_line_magic("pi", "new --in-memory")
    # Pi clamps the level to the model: the offline model does not reason, so "off"
    assert magics.session.thinking_level == "off"
    magics.thinking_level = None
    shell.run_line_magic("pi", "new --in-memory")
    assert magics.session.thinking_level == "off"
