"""The tool framework: abort signals, results, tool metadata parity with Pi, validation, paths."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_nb.errors import ToolError, ToolValidationError, UnknownToolError
from pi_nb.tools import (
    ALL_TOOL_NAMES,
    DEFAULT_ACTIVE_TOOLS,
    AbortController,
    AbortSignal,
    AgentToolResult,
    ToolOutcome,
    create_all_tools,
    create_bash_tool,
    create_builtin_tools,
    create_coding_tools,
    create_read_only_tools,
    create_tool,
    detect_supported_image_mime_type,
    resolve_read_path,
    resolve_to_cwd,
    run_tool,
    validate_tool_arguments,
)
from pi_nb.tools._collate import collation_key
from pi_nb.tools._node import js_slice
from pi_nb.tools.validation import js_string_to_number, js_stringify_pretty

GOLDEN = Path(__file__).parent / "golden"
INFO = json.loads((GOLDEN / "tools_info.json").read_text(encoding="utf-8"))["tools"]


# --- abort signal -----------------------------------------------------------------------------------


def test_abort_signal_runs_listeners_once_and_keeps_the_first_reason() -> None:
    signal = AbortSignal()
    calls: list[str] = []
    signal.add_listener(lambda: calls.append("a"))
    remove_b = signal.add_listener(lambda: calls.append("b"))
    remove_b()
    assert not signal.aborted and signal.reason is None
    signal.abort("first")
    signal.abort("second")
    assert signal.aborted and signal.reason == "first"
    assert calls == ["a"]


def test_listener_added_after_abort_runs_at_once() -> None:
    signal = AbortSignal()
    signal.abort()
    calls: list[int] = []
    signal.add_listener(lambda: calls.append(1))
    assert calls == [1]
    with pytest.raises(ToolError, match=r"^Operation aborted$"):
        signal.throw_if_aborted()


def test_wait_wakes_up_on_abort_from_another_thread() -> None:
    controller = AbortController()

    async def main() -> Any:
        threading.Timer(0.05, lambda: controller.abort("stop")).start()
        return await asyncio.wait_for(controller.signal.wait(), timeout=5)

    assert asyncio.run(main()) == "stop"


def test_wait_returns_at_once_when_already_aborted() -> None:
    signal = AbortSignal()
    signal.abort(7)
    assert asyncio.run(signal.wait()) == 7


# --- results ----------------------------------------------------------------------------------------


def test_result_shapes() -> None:
    r = AgentToolResult(content=[{"type": "text", "text": "x"}])
    assert r.to_dict() == {"content": [{"type": "text", "text": "x"}]}
    assert AgentToolResult(content=[], details={"a": 1}, terminate=True).to_dict() == {
        "content": [],
        "details": {"a": 1},
        "terminate": True,
    }
    o = ToolOutcome(is_error=True, content=[{"type": "text", "text": "boom"}], details={}, stage="execute")
    assert o.to_dict() == {"isError": True, "content": [{"type": "text", "text": "boom"}], "details": {}}
    assert o.text == "boom"


# --- metadata parity with Pi's toolInfo -----------------------------------------------------------


@pytest.mark.parametrize("name", ALL_TOOL_NAMES)
def test_schema_snippet_and_guidelines_are_pis(name: str, tmp_path: Path) -> None:
    tool = create_tool(name, str(tmp_path))
    pi = INFO[name]
    assert tool.name == pi["name"] and tool.label == pi["label"]
    assert tool.parameters == pi["parameters"]
    assert json.dumps(tool.parameters) == json.dumps(pi["parameters"])  # key order too
    assert tool.prompt_snippet == pi["promptSnippet"]
    assert (list(tool.prompt_guidelines) if tool.prompt_guidelines is not None else None) == pi.get(
        "promptGuidelines"
    )
    assert tool.has_prepare_arguments == pi["hasPrepareArguments"]
    assert tool.execution_mode is None


@pytest.mark.parametrize(
    ("name", "limits"),
    [
        ("read", ["2000", "50KB", "offset"]),
        ("bash", ["2000", "50KB", "temp file", "timeout"]),
        ("grep", ["100", "50KB", "500", ".gitignore"]),
        ("find", ["1000", "50KB", ".gitignore"]),
        ("ls", ["500", "50KB", "'/'", "dotfiles"]),
        ("edit", ["edits[].oldText", "overlap"]),
        ("write", ["parent directories"]),
    ],
)
def test_descriptions_are_our_own_words_with_pis_facts(name: str, limits: list[str], tmp_path: Path) -> None:
    tool = create_tool(name, str(tmp_path))
    assert tool.description != INFO[name]["description"]
    for fact in limits:
        assert fact in tool.description
    schema = tool.to_tool_schema()
    assert list(schema) == ["name", "label", "description", "parameters"]  # Pi's AgentTool key order
    assert schema == {
        "name": name,
        "label": tool.label,
        "description": tool.description,
        "parameters": tool.parameters,
    }


def test_bash_guideline_only_with_session_environment(tmp_path: Path) -> None:
    assert create_bash_tool(str(tmp_path)).prompt_guidelines == tuple(INFO["bash"]["promptGuidelines"])
    assert create_bash_tool(str(tmp_path), expose_session_environment=False).prompt_guidelines is None


def test_tool_sets(tmp_path: Path) -> None:
    cwd = str(tmp_path)
    assert DEFAULT_ACTIVE_TOOLS == ("read", "bash", "edit", "write")
    assert [t.name for t in create_coding_tools(cwd)] == list(DEFAULT_ACTIVE_TOOLS)
    assert [t.name for t in create_read_only_tools(cwd)] == ["read", "grep", "find", "ls"]
    assert list(create_all_tools(cwd)) == list(ALL_TOOL_NAMES)
    assert list(create_builtin_tools(cwd, names=["ls", "read"])) == ["ls", "read"]
    with pytest.raises(UnknownToolError, match=r"^Unknown tool name: powershell$"):
        create_tool("powershell", cwd)


def test_run_tool_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("hi\n")

    async def inside() -> ToolOutcome:
        return run_tool("read", str(tmp_path), {"path": "f.txt"})

    assert asyncio.run(inside()).text == "hi\n"


# --- validation -------------------------------------------------------------------------------------


def test_validation_coerces_a_copy_and_reports_pis_text(tmp_path: Path) -> None:
    read = create_tool("read", str(tmp_path))
    args = {"path": 5, "offset": "2", "limit": None}
    assert validate_tool_arguments(read, args) == {"path": "5", "offset": 2}
    assert args == {"path": 5, "offset": "2", "limit": None}
    with pytest.raises(ToolValidationError) as err:
        validate_tool_arguments(read, {"offset": "abc", "limit": [1.5]})
    assert str(err.value) == (
        'Validation failed for tool "read":\n'
        "  - path: must have required properties path\n"
        "  - offset: must be number\n"
        "  - limit: must be number\n\n"
        'Received arguments:\n{\n  "offset": "abc",\n  "limit": [\n    1.5\n  ]\n}'
    )


def test_validation_of_nested_edits(tmp_path: Path) -> None:
    edit = create_tool("edit", str(tmp_path))
    with pytest.raises(ToolValidationError) as err:
        validate_tool_arguments(edit, {"path": "x", "edits": [{}, {"oldText": []}]})
    assert "  - edits.0.oldText: must have required properties oldText, newText\n" in str(err.value)
    assert (
        "  - edits.1.newText: must have required properties newText\n  - edits.1.oldText: must be string\n"
        in str(err.value)
    )
    assert validate_tool_arguments(edit, {"path": "x", "edits": {"oldText": "a", "newText": 1}}) == {
        "path": "x",
        "edits": [{"oldText": "a", "newText": "1"}],
    }


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("", 0),
        ("  ", 0),
        (" 12 ", 12),
        ("0x1F", 31),
        ("0b101", 5),
        ("0o17", 15),
        ("1e3", 1000),
        (".5", 0.5),
        ("5.", 5),
        ("+5", 5),
        ("-0x10", None),
        ("1_000", None),
        ("inf", None),
        ("Infinity", float("inf")),
        ("\u00a012\ufeff", 12),
        ("abc", None),
        ("1e", None),
    ],
)
def test_js_string_to_number(text: str, value: float | None) -> None:
    got = js_string_to_number(text)
    if value is None:
        assert got != got  # NaN
    else:
        assert got == value


def test_pretty_json_matches_javascript() -> None:
    assert js_stringify_pretty({"b": 1.0, "1": [], "a": {}, "0": [True, None, 1e21, 0.1]}) == (
        '{\n  "0": [\n    true,\n    null,\n    1e+21,\n    0.1\n  ],\n  "1": [],\n  "b": 1,\n  "a": {}\n}'
    )
    assert js_stringify_pretty("\ud83d") == '"\\ud83d"'


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers(-5, 5)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(["path", "offset", "limit", "x"]), inner, max_size=3)
        ),
        max_leaves=8,
    )
)
def test_validation_never_crashes_and_either_passes_or_raises_pis_error(args: Any) -> None:
    read = create_tool("read", ".")
    try:
        out = validate_tool_arguments(read, args)
    except ToolValidationError as exc:
        assert str(exc).startswith('Validation failed for tool "read":\n  - ')
    else:
        assert isinstance(out, dict) and isinstance(out["path"], str)
        assert all(
            isinstance(out[k], (int, float)) and not isinstance(out[k], bool)
            for k in ("offset", "limit")
            if k in out
        )


# --- JS helpers -------------------------------------------------------------------------------------


def test_js_slice() -> None:
    xs = [0, 1, 2, 3]
    assert js_slice(xs, 0.5) == xs
    assert js_slice(xs, 0, 1.5) == [0]
    assert js_slice(xs, 0, -1) == [0, 1, 2]
    assert js_slice(xs, -2) == [2, 3]
    assert js_slice(xs, 3, 1) == []


def test_ls_order_matches_icu_for_ascii_and_accents() -> None:
    # Node 22 (ICU, en-US): sorted(..., key=lower().localeCompare)
    node = [
        "_x",
        "-x",
        ".hidden",
        "~x",
        "a",
        "ä",
        "a b",
        "a_b",
        "a-b",
        "a-txt",
        "a.b",
        "a.txt",
        "a1",
        "a10",
        "a2",
        "ab",
        "b",
        "e",
        "é",
        "ea",
        "éa",
        "eb",
        "f",
        "Z",
        "z",
    ]
    shuffled = sorted(node, key=lambda s: s.encode())
    ordered = sorted(shuffled, key=lambda s: collation_key(s.lower()))
    assert ordered == node  # "Z" and "z" tie: readdir's byte order decides, as in Node's stable sort
    ascii_order = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
    assert sorted(ascii_order, key=collation_key) == list(ascii_order)


# --- paths ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.txt", "/base/dir/a.txt"),
        ("./a/../b.txt", "/base/dir/b.txt"),
        ("@a.txt", "/base/dir/a.txt"),
        ("@@a.txt", "/base/dir/@a.txt"),
        ("a\u00a0b\u2003c\u3000d", "/base/dir/a b c d"),
        ("/abs//x/", "/abs/x"),
        ("//double", "/double"),
        ("..", "/base"),
        ("", "/base/dir"),
        ("file:///x/y%20z", "/x/y z"),
        ("file://localhost/x/../y", "/y"),
        ("~", "HOME"),
        ("~/", "HOME"),
        ("~/a/../b", "HOME/b"),
        ("~user/x", "/base/dir/~user/x"),
    ],
)
def test_resolve_to_cwd(path: str, expected: str) -> None:
    home = os.path.expanduser("~")
    assert resolve_to_cwd(path, "/base/dir") == expected.replace("HOME", home)


def test_file_url_errors_carry_nodes_text() -> None:
    with pytest.raises(ToolError, match=r'^File URL host must be "localhost" or empty on linux$'):
        resolve_to_cwd("file://host/x", "/")
    with pytest.raises(ToolError, match=r"^File URL path must not include encoded / characters$"):
        resolve_to_cwd("file:///a%2fb", "/")


def test_read_path_macos_variants(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "caf\u00e9.txt")
    (tmp_path / nfd).write_text("nfd")
    (tmp_path / "Shot at 9.41.02\u202fPM.png").write_text("ampm")
    (tmp_path / "it\u2019s.txt").write_text("curly")
    (tmp_path / unicodedata.normalize("NFD", "d\u2019\u00e9t\u00e9.txt")).write_text("both")
    cwd = str(tmp_path)
    assert resolve_read_path("caf\u00e9.txt", cwd) == str(tmp_path / nfd)
    assert resolve_read_path("Shot at 9.41.02 PM.png", cwd).endswith("\u202fPM.png")
    assert resolve_read_path("it's.txt", cwd).endswith("it\u2019s.txt")
    assert resolve_read_path("d'\u00e9t\u00e9.txt", cwd) == str(
        tmp_path / unicodedata.normalize("NFD", "d\u2019\u00e9t\u00e9.txt")
    )
    assert resolve_read_path("missing'.txt", cwd) == str(tmp_path / "missing'.txt")


# --- image sniffing ---------------------------------------------------------------------------------


def _png(chunks: list[tuple[bytes, bytes]]) -> bytes:
    out = b"\x89PNG\r\n\x1a\n"
    for kind, data in chunks:
        out += len(data).to_bytes(4, "big") + kind + data + b"\0\0\0\0"
    return out


def test_image_sniffing() -> None:
    ihdr = (b"IHDR", b"\0" * 13)
    assert detect_supported_image_mime_type(_png([ihdr, (b"IDAT", b"x")])) == "image/png"
    assert detect_supported_image_mime_type(_png([ihdr, (b"acTL", b"\0" * 8), (b"IDAT", b"x")])) is None
    assert detect_supported_image_mime_type(b"\xff\xd8\xff\xe0") == "image/jpeg"
    assert detect_supported_image_mime_type(b"\xff\xd8\xff\xf7") is None
    assert detect_supported_image_mime_type(b"GIF89a") == "image/gif"
    assert detect_supported_image_mime_type(b"RIFF\0\0\0\0WEBPVP8 ") == "image/webp"
    bmp = bytearray(54)
    bmp[0:2] = b"BM"
    bmp[2:6] = (54 + 16).to_bytes(4, "little")
    bmp[10:14] = (54).to_bytes(4, "little")
    bmp[14:18] = (40).to_bytes(4, "little")
    bmp[26:28] = (1).to_bytes(2, "little")
    bmp[28:30] = (24).to_bytes(2, "little")
    assert detect_supported_image_mime_type(bytes(bmp)) == "image/bmp"
    bmp[28:30] = (3).to_bytes(2, "little")
    assert detect_supported_image_mime_type(bytes(bmp)) is None
    assert detect_supported_image_mime_type(b"BM") is None
    assert detect_supported_image_mime_type(b"") is None


def test_read_abort_before_start(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    signal = AbortSignal()
    signal.abort()
    out = run_tool("read", str(tmp_path), {"path": "f.txt"}, signal=signal)
    assert out.is_error and out.text == "Operation aborted"


def test_write_and_edit_on_one_file_are_serialised(tmp_path: Path) -> None:
    """Ten parallel edits of distinct lines of one file: every one lands (the mutation queue)."""
    (tmp_path / "f.txt").write_text("".join(f"line {i}\n" for i in range(10)))
    edit = create_tool("edit", str(tmp_path))

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(
                edit.execute(
                    f"c{i}",
                    {"path": "f.txt", "edits": [{"oldText": f"line {i}\n", "newText": f"LINE {i}\n"}]},
                )
                for i in range(10)
            )
        )

    results = asyncio.run(main())
    assert all(r.content[0]["text"] == "Successfully replaced 1 block(s) in f.txt." for r in results)
    assert (tmp_path / "f.txt").read_text() == "".join(f"LINE {i}\n" for i in range(10))
