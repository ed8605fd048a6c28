"""Record Pi 0.85.0's built-in tools (read, bash, edit, write, grep, ls) as golden files.

Run by hand when cases change (needs ../shared/pi-oracle installed):

    .venv/bin/python tests/golden/make_tools.py

It builds the fixture tree of tests/fixtures/tools/build.py in a fresh temp dir, sends every case to
the oracle's ``tool`` fn (prepareArguments -> validateToolArguments -> execute, as Pi's agent loop),
and writes tests/golden/tools_<group>.json: one case per line with the request and Pi's answer.

Masking, so the files do not depend on the machine: the temp dir becomes ``<CWD>``; bash's random
full-output file ``<CWD>/tmp/pi-bash-<16 hex>.log`` becomes ``<CWD>/tmp/pi-bash-<HEX>.log`` (its size
and sha256 are recorded in ``fullOutput``); a string longer than 20000 characters is replaced by
``{"__text__": {"sha256", "length", "head", "tail"}}``. Edit and write cases also record the file
afterwards (``fileAfter``: base64 of its bytes, or null when it does not exist).

``find`` is not recorded: the oracle cannot run Pi's find (no fd >= 8.7); its tests come from Pi's
source and test suite.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "tools"))
sys.path.insert(0, str(ROOT))

from build import build_tree  # noqa: E402
from oracle_client import Oracle  # noqa: E402

from pi_nb._js import js_stringify  # noqa: E402

BIG = 20000
CTX = {
    "sessionId": "sess-123",
    "sessionFile": "/sessions/s.jsonl",
    "model": {"provider": "prov", "id": "mod-1", "input": ["text"]},
    "thinkingLevel": "high",
}


def read_cases() -> list[dict[str, Any]]:
    c: list[dict[str, Any]] = []

    def add(name: str, params: Any, **extra: Any) -> None:
        c.append({"name": f"read: {name}", "tool": "read", "params": params, **extra})

    add("small file verbatim", {"path": "small.txt"})
    add("limit 1", {"path": "small.txt", "limit": 1})
    add("offset 2", {"path": "small.txt", "offset": 2})
    add("offset 2 limit 1", {"path": "small.txt", "offset": 2, "limit": 1})
    add("offset 4 is the empty last line", {"path": "small.txt", "offset": 4})
    add("offset 5 beyond end", {"path": "small.txt", "offset": 5})
    add("offset 100 beyond end", {"path": "small.txt", "offset": 100})
    add("offset 0", {"path": "small.txt", "offset": 0})
    add("offset -3", {"path": "small.txt", "offset": -3})
    add("limit 0", {"path": "small.txt", "limit": 0})
    add("limit -1", {"path": "small.txt", "limit": -1})
    add("limit 1.5", {"path": "small.txt", "limit": 1.5})
    add("offset 1.5", {"path": "small.txt", "offset": 1.5})
    add("limit past end", {"path": "small.txt", "limit": 10})
    add("limit exactly to end", {"path": "small.txt", "limit": 4})
    add("100 lines offset 51", {"path": "lines100.txt", "offset": 51})
    add("100 lines limit 10", {"path": "lines100.txt", "limit": 10})
    add("100 lines offset 41 limit 20", {"path": "lines100.txt", "offset": 41, "limit": 20})
    add("2500 lines (no trailing newline)", {"path": "lines2500.txt"})
    add("2500 lines with trailing newline", {"path": "lines2500nl.txt"})
    add("2500 lines offset 2001", {"path": "lines2500.txt", "offset": 2001})
    add("2500 lines offset 2400 limit 50", {"path": "lines2500.txt", "offset": 2400, "limit": 50})
    add("3000 lines limit 2500", {"path": "lines3000.txt", "limit": 2500})
    add("exactly 2000 lines", {"path": "lines2000.txt"})
    add("2001 lines", {"path": "lines2001.txt"})
    add("500 wide lines (byte limit)", {"path": "wide500.txt"})
    add("600x105 offset 10 (byte limit)", {"path": "lines600x105.txt", "offset": 10})
    add("600x105 offset 10 limit 100", {"path": "lines600x105.txt", "offset": 10, "limit": 100})
    add("60000-byte first line", {"path": "long_line.txt"})
    add("60000-byte first line with newline", {"path": "long_line_nl.txt"})
    add("long line in the middle", {"path": "long_middle.txt"})
    add("long line in the middle, offset 2", {"path": "long_middle.txt", "offset": 2})
    add("long line in the middle, offset 3", {"path": "long_middle.txt", "offset": 3})
    add("exactly 50KB", {"path": "exactly50k.txt"})
    add("50KB plus one byte", {"path": "over50k.txt"})
    add("multibyte at the 50KB cut", {"path": "multibyte.txt"})
    add("multibyte offset 300", {"path": "multibyte.txt", "offset": 300})
    add("CRLF kept", {"path": "crlf.txt"})
    add("CR only", {"path": "cr_only.txt"})
    add("BOM kept", {"path": "bom.txt"})
    add("empty file", {"path": "empty.txt"})
    add("empty file offset 1", {"path": "empty.txt", "offset": 1})
    add("empty file offset 2", {"path": "empty.txt", "offset": 2})
    add("only a newline", {"path": "only_newline.txt"})
    add("no trailing newline", {"path": "no_trailing.txt"})
    add("binary file", {"path": "binary.bin"})
    add("invalid UTF-8", {"path": "invalid_utf8.txt"})
    add("NUL bytes", {"path": "nul.txt"})
    add("tabs", {"path": "tabs.txt"})
    add("missing file", {"path": "missing.txt"})
    add("directory", {"path": "sub"})
    add("path through a file", {"path": "small.txt/x"})
    add("nested relative path", {"path": "sub/deeper/deep.txt"})
    add("dot segments", {"path": "./sub/../small.txt"})
    add("absolute path", {"path": "<CWD>/small.txt"})
    add("@ prefix", {"path": "@small.txt"})
    add("file URL", {"path": "file://<CWD>/small.txt"})
    add("file URL with localhost", {"path": "file://localhost<CWD>/small.txt"})
    add("file URL percent-encoded", {"path": "file://<CWD>/with%20space.txt"})
    add("file URL with a host", {"path": "file://example.com<CWD>/small.txt"})
    add("file URL with encoded slash", {"path": "file://<CWD>/sub%2Finner.txt"})
    add("unicode space in name (NBSP)", {"path": "with\u00a0space.txt"})
    add("unicode name", {"path": "unicode name \u00e9.txt"})
    add("macOS screenshot AM variant", {"path": "Screenshot 2024-01-01 at 10.00.00 AM.txt"})
    add("macOS curly apostrophe variant", {"path": "Capture d'\u00e9cran.txt"})
    add("png", {"path": "img/red.png"})
    add("bmp converted", {"path": "img/green.bmp"})
    add("gif", {"path": "img/blue.gif"})
    add("jpeg", {"path": "img/blue.jpg"})
    add("webp", {"path": "img/blue.webp"})
    add("wide png resized", {"path": "img/wide.png"})
    add("tall png resized", {"path": "img/tall.png"})
    add("wide png no resize", {"path": "img/wide.png"}, options={"read": {"autoResizeImages": False}})
    add("bmp no resize", {"path": "img/green.bmp"}, options={"read": {"autoResizeImages": False}})
    add("png bytes in .txt", {"path": "img/png_in.txt"})
    add("text in .png", {"path": "img/text.png"})
    add("png signature without IHDR", {"path": "img/fake_sig.png"})
    add("JPEG-LS is not an image", {"path": "img/jpeg_ls.jpg"})
    add("broken gif", {"path": "img/truncated.gif"})
    add(
        "image, model without image input",
        {"path": "img/red.png"},
        ctx={"model": {"provider": "p", "id": "m", "input": ["text"]}},
    )
    add(
        "image, model with image input",
        {"path": "img/red.png"},
        ctx={"model": {"provider": "p", "id": "m", "input": ["text", "image"]}},
    )
    add(
        "text, model without image input",
        {"path": "small.txt"},
        ctx={"model": {"provider": "p", "id": "m", "input": ["text"]}},
    )
    add("ctx cwd overrides", {"path": "inner.txt"}, ctx={"cwd": "<CWD>/sub"})
    add("offset as string", {"path": "small.txt", "offset": "2"})
    add("offset as hex string", {"path": "small.txt", "offset": "0x2"})
    add("limit as bigint string", {"path": "small.txt", "limit": "2n"})
    add("offset null", {"path": "small.txt", "offset": None})
    add("offset true", {"path": "small.txt", "offset": True})
    add("path as number", {"path": 5})
    add("path null", {"path": None})
    add("extra property ignored", {"path": "small.txt", "extra": 1})
    return c


def bash_cases() -> list[dict[str, Any]]:
    c: list[dict[str, Any]] = []

    def add(name: str, params: Any, **extra: Any) -> None:
        c.append({"name": f"bash: {name}", "tool": "bash", "params": params, **extra})

    add("echo", {"command": "echo hello"})
    add("no output", {"command": "true"})
    add("exit 1", {"command": "exit 1"})
    add("exit 3 no output", {"command": "exit 3"})
    add("output then exit 2", {"command": "echo oops; exit 2"})
    add("stderr only", {"command": "echo err >&2"})
    add("stderr merged in order", {"command": "exec 2>&1; echo a; echo b >&2; echo c"})
    add("stderr and exit code", {"command": "echo bad >&2; exit 5"})
    add("command not found", {"command": "definitely-not-a-command-xyz"})
    add("seq 5000", {"command": "seq 5000"})
    add("seq 3000", {"command": "seq 3000"})
    add("seq 2000 exactly", {"command": "seq 2000"})
    add("seq 2001", {"command": "seq 2001"})
    add("seq 3000 and fail", {"command": "seq 3000; exit 4"})
    add("700 lines of 104 chars", {"command": "for i in $(seq 1 700); do printf '%04d%0100d\\n' $i 0; done"})
    add("60000 z without newline", {"command": "head -c 60000 /dev/zero | tr '\\0' z"})
    add("60000 z with newline", {"command": "head -c 60000 /dev/zero | tr '\\0' z; echo"})
    add("51200 bytes exactly", {"command": "head -c 51200 /dev/zero | tr '\\0' q"})
    add("51201 bytes", {"command": "head -c 51201 /dev/zero | tr '\\0' q"})
    add(
        "multibyte over 50KB",
        {"command": "for i in $(seq 1 3000); do echo '\u00e9\u00e9\u00e9\u65e5\u65e5\U0001f600 line'; done"},
    )
    add("invalid UTF-8 output", {"command": "printf 'ok \\xff\\xfe end\\n'"})
    add("split UTF-8 sequence at the end", {"command": "printf 'abc\\xe2\\x82'"})
    add("CR and ANSI kept verbatim", {"command": "printf 'a\\r\\nb\\033[31mc'"})
    add("trailing newlines kept", {"command": "printf 'x\\n\\n\\n'"})
    add("empty lines only", {"command": "printf '\\n\\n'"})
    add("timeout", {"command": "echo before; sleep 5", "timeout": 0.3})
    add("timeout no output", {"command": "sleep 5", "timeout": 0.3})
    add("timeout 0 invalid", {"command": "echo hi", "timeout": 0})
    add("timeout negative invalid", {"command": "echo hi", "timeout": -1})
    add("timeout too large", {"command": "echo hi", "timeout": 1e10})
    add("timeout maximum accepted", {"command": "echo ok", "timeout": 2147483.647})
    add("timeout as string", {"command": "echo hi", "timeout": "5"})
    add("timeout as bad string", {"command": "echo hi", "timeout": "abc"})
    add("killed by a signal counts as success", {"command": "echo dying; kill -9 $$"})
    add("pwd is cwd", {"command": "pwd"})
    add("ctx cwd", {"command": "pwd"}, ctx={"cwd": "<CWD>/sub"})
    add("missing cwd", {"command": "echo hi"}, ctx={"cwd": "<CWD>/no-such-dir"})
    add(
        "session env exposed",
        {
            "command": 'echo "[$PI_SESSION_ID][$PI_SESSION_FILE][$PI_PROVIDER][$PI_MODEL][$PI_REASONING_LEVEL]"'
        },
        ctx=CTX,
    )
    add("session env without ctx", {"command": 'echo "[${PI_SESSION_ID-unset}][${PI_MODEL-unset}]"'})
    add(
        "session env not exposed",
        {"command": 'echo "[${PI_SESSION_ID-unset}][${PI_MODEL-unset}]"'},
        ctx=CTX,
        options={"bash": {"exposeSessionEnvironment": False}},
    )
    add(
        "command prefix export",
        {"command": "echo $TEST_VAR"},
        options={"bash": {"commandPrefix": "export TEST_VAR=hello"}},
    )
    add(
        "command prefix output",
        {"command": "echo command-output"},
        options={"bash": {"commandPrefix": "echo prefix-output"}},
    )
    add("background output after exit is kept", {"command": "(sleep 0.05; echo late) & echo early"})
    add("command null becomes the string null", {"command": None})
    add("command as number", {"command": 42})
    add("updates for one chunk", {"command": "echo hi"}, returnUpdates=True)
    add("updates for no output", {"command": "true"}, returnUpdates=True)
    add("stdin is closed", {"command": "cat; echo done"})
    add("4000 numbered lines", {"command": "for i in $(seq 1 4000); do printf 'line-%04d\\n' $i; done"})
    return c


def edit_cases() -> list[dict[str, Any]]:
    c: list[dict[str, Any]] = []

    def add(name: str, path: str, params: Any, **extra: Any) -> None:
        c.append({"name": f"edit: {name}", "tool": "edit", "params": params, "file": path, **extra})

    def e(old: str, new: str) -> dict[str, str]:
        return {"oldText": old, "newText": new}

    add("simple", "edit/simple.txt", {"path": "edit/simple.txt", "edits": [e("beta", "BETA")]})
    add(
        "two disjoint edits",
        "edit/multi.txt",
        {"path": "edit/multi.txt", "edits": [e("two", "2"), e("four", "4")]},
    )
    add(
        "edits given out of order",
        "edit/multi_ok.txt",
        {"path": "edit/multi_ok.txt", "edits": [e("row 30\n", "row thirty\n"), e("row 3\n", "row three\n")]},
    )
    add("CRLF preserved", "edit/crlf.txt", {"path": "edit/crlf.txt", "edits": [e("second", "SECOND")]})
    add(
        "CRLF multi-line oldText with LF",
        "edit/crlf.txt",
        {"path": "edit/crlf.txt", "edits": [e("first\nsecond", "1\n2")]},
    )
    add("BOM preserved", "edit/bom.txt", {"path": "edit/bom.txt", "edits": [e("change me", "changed")]})
    add("BOM and CRLF", "edit/bom_crlf.txt", {"path": "edit/bom_crlf.txt", "edits": [e("b", "B")]})
    add(
        "mixed endings become LF",
        "edit/mixed_endings.txt",
        {"path": "edit/mixed_endings.txt", "edits": [e("c", "C")]},
    )
    add("duplicate single", "edit/dupe.txt", {"path": "edit/dupe.txt", "edits": [e("x = 1", "x = 2")]})
    add(
        "duplicate in multi",
        "edit/dupe_multi.txt",
        {"path": "edit/dupe_multi.txt", "edits": [e("z", "Z"), e("k", "K")]},
    )
    add(
        "overlap", "edit/overlap.txt", {"path": "edit/overlap.txt", "edits": [e("abcd", "1"), e("cdef", "2")]}
    )
    add(
        "nested overlap",
        "edit/overlap.txt",
        {"path": "edit/overlap.txt", "edits": [e("bcdefg", "1"), e("de", "2")]},
    )
    add(
        "adjacent edits are fine",
        "edit/overlap.txt",
        {"path": "edit/overlap.txt", "edits": [e("abcd", "1"), e("efgh", "2")]},
    )
    add("no change single", "edit/nochange.txt", {"path": "edit/nochange.txt", "edits": [e("same", "same")]})
    add(
        "no change multi",
        "edit/multi.txt",
        {"path": "edit/multi.txt", "edits": [e("one", "one"), e("two", "two")]},
    )
    add("not found single", "edit/notfound.txt", {"path": "edit/notfound.txt", "edits": [e("absent", "x")]})
    add(
        "not found multi",
        "edit/notfound.txt",
        {"path": "edit/notfound.txt", "edits": [e("present", "here"), e("absent", "x")]},
    )
    add("empty oldText single", "edit/empty_old.txt", {"path": "edit/empty_old.txt", "edits": [e("", "x")]})
    add(
        "empty oldText multi",
        "edit/empty_old.txt",
        {"path": "edit/empty_old.txt", "edits": [e("content", "c"), e("", "x")]},
    )
    add("missing file", "edit/missing.txt", {"path": "edit/missing.txt", "edits": [e("a", "b")]})
    add("path through a file", "edit/simple.txt/x", {"path": "edit/simple.txt/x", "edits": [e("a", "b")]})
    add("directory", "edit", {"path": "edit", "edits": [e("a", "b")]})
    add("empty edits", "edit/simple.txt", {"path": "edit/simple.txt", "edits": []})
    add(
        "fuzzy quotes dash nbsp",
        "edit/fuzzy.txt",
        {"path": "edit/fuzzy.txt", "edits": [e('print("hello")', 'print("bye")'), e("a - b", "a + b")]},
    )
    add(
        "fuzzy trailing whitespace",
        "edit/fuzzy_trailing.txt",
        {"path": "edit/fuzzy_trailing.txt", "edits": [e("def f():\n    return 1", "def f():\n    return 2")]},
    )
    add(
        "fuzzy keeps other lines' bytes",
        "edit/fuzzy.txt",
        {"path": "edit/fuzzy.txt", "edits": [e("keep this", "kept")]},
    )
    add(
        "no trailing newline",
        "edit/no_trailing.txt",
        {"path": "edit/no_trailing.txt", "edits": [e("without", "WITHOUT")]},
    )
    add(
        "append at end without newline",
        "edit/append_end.txt",
        {"path": "edit/append_end.txt", "edits": [e("b", "b\nc\n")]},
    )
    add(
        "large file diff context",
        "edit/large.txt",
        {"path": "edit/large.txt", "edits": [e("line 0150\n", "line 150 changed\n")]},
    )
    add(
        "two far apart edits",
        "edit/two_far.txt",
        {"path": "edit/two_far.txt", "edits": [e("L3\n", "L3x\n"), e("L27\n", "L27x\n")]},
    )
    add(
        "two close edits",
        "edit/two_far.txt",
        {"path": "edit/two_far.txt", "edits": [e("L3\n", "L3x\n"), e("L9\n", "L9x\n")]},
    )
    add("delete a line", "edit/delete.txt", {"path": "edit/delete.txt", "edits": [e("remove me\n", "")]})
    add(
        "insert lines",
        "edit/insert.txt",
        {"path": "edit/insert.txt", "edits": [e("head\n", "head\nnew 1\nnew 2\n")]},
    )
    add(
        "unicode",
        "edit/unicode.txt",
        {
            "path": "edit/unicode.txt",
            "edits": [e("\U0001f600", "\U0001f389"), e("\u65e5\u672c", "\u4e2d\u6587")],
        },
    )
    add(
        "legacy top-level oldText/newText",
        "edit/legacy.txt",
        {"path": "edit/legacy.txt", "oldText": "old", "newText": "new"},
    )
    add(
        "legacy plus edits",
        "edit/legacy.txt",
        {"path": "edit/legacy.txt", "oldText": "old", "newText": "new", "edits": [e("legacy", "LEGACY")]},
    )
    add(
        "edits as JSON string",
        "edit/json_string.txt",
        {"path": "edit/json_string.txt", "edits": json.dumps([e("json", "JSON")])},
    )
    add(
        "edits as JSON string of one object",
        "edit/json_string.txt",
        {"path": "edit/json_string.txt", "edits": json.dumps(e("string", "STRING"))},
    )
    add(
        "edits as single object",
        "edit/single_object.txt",
        {"path": "edit/single_object.txt", "edits": e("single", "one")},
    )
    add("edits as non-JSON string", "edit/simple.txt", {"path": "edit/simple.txt", "edits": "not json"})
    add("edits null", "edit/simple.txt", {"path": "edit/simple.txt", "edits": None})
    add(
        "edit item missing newText",
        "edit/simple.txt",
        {"path": "edit/simple.txt", "edits": [{"oldText": "a"}]},
    )
    add(
        "edit item numbers coerced",
        "edit/simple.txt",
        {"path": "edit/simple.txt", "edits": [{"oldText": "alpha", "newText": 7}]},
    )
    add("CR-only file", "edit/cr_only.txt", {"path": "edit/cr_only.txt", "edits": [e("b", "B")]})
    add(
        "replace whole content",
        "edit/whole.txt",
        {"path": "edit/whole.txt", "edits": [e("entire\n", "replaced\n")]},
    )
    add(
        "invalid UTF-8 file",
        "edit/invalid_utf8.txt",
        {"path": "edit/invalid_utf8.txt", "edits": [e("second", "2nd")]},
    )
    add("tabs", "edit/tabs.txt", {"path": "edit/tabs.txt", "edits": [e("\t\tmore", "\t\tless")]})
    add(
        "regex characters are literal",
        "edit/regexy.txt",
        {"path": "edit/regexy.txt", "edits": [e("$1.00 (approx)", "$2.00 [exact]")]},
    )
    add(
        "oldText with blank line",
        "edit/newline_old.txt",
        {"path": "edit/newline_old.txt", "edits": [e("a\n\nb", "a\nb")]},
    )
    add(
        "oldText with CRLF matches LF file",
        "edit/simple.txt",
        {"path": "edit/simple.txt", "edits": [e("alpha\r\nbeta", "alpha beta")]},
    )
    add("uniqueness counted in fuzzy form", "edit/fuzzy_count.txt", {"path": "edit/fuzzy_count.txt", "edits": [e("line 1 ", "x")]})
    add("missing edits", "edit/simple.txt", {"path": "edit/simple.txt"})
    add("missing everything", "edit/simple.txt", {})
    return c


def write_cases() -> list[dict[str, Any]]:
    c: list[dict[str, Any]] = []

    def add(name: str, path: str, params: Any, **extra: Any) -> None:
        c.append({"name": f"write: {name}", "tool": "write", "params": params, "file": path, **extra})

    add("new file", "write/new.txt", {"path": "write/new.txt", "content": "hello\n"})
    add("overwrite", "write/existing.txt", {"path": "write/existing.txt", "content": "new content"})
    add(
        "nested directories created",
        "write/a/b/c/deep.txt",
        {"path": "write/a/b/c/deep.txt", "content": "deep"},
    )
    add("empty content", "write/empty.txt", {"path": "write/empty.txt", "content": ""})
    add(
        "unicode and CRLF kept",
        "write/u.txt",
        {"path": "write/u.txt", "content": "caf\u00e9\r\n\U0001f600\n"},
    )
    add("absolute path", "write/abs.txt", {"path": "<CWD>/write/abs.txt", "content": "abs"})
    add("@ prefix", "write/at.txt", {"path": "@write/at.txt", "content": "at"})
    add("parent is a file", "write/afile/x.txt", {"path": "write/afile/x.txt", "content": "x"})
    add(
        "parent path through a file",
        "write/afile/sub/x.txt",
        {"path": "write/afile/sub/x.txt", "content": "x"},
    )
    add("target is a directory", "write/adir", {"path": "write/adir", "content": "x"})
    add("content as number", "write/num.txt", {"path": "write/num.txt", "content": 12.5})
    add("missing content", "write/none.txt", {"path": "write/none.txt"})
    add("content null", "write/null.txt", {"path": "write/null.txt", "content": None})
    return c


def grep_cases() -> list[dict[str, Any]]:
    c: list[dict[str, Any]] = []

    def add(name: str, params: Any, unordered: bool = False, **extra: Any) -> None:
        c.append({"name": f"grep: {name}", "tool": "grep", "params": params, "unordered": unordered, **extra})

    add("single file", {"pattern": "match", "path": "grep/example.txt"})
    add("no matches", {"pattern": "zzz", "path": "grep/example.txt"})
    add("limit 1 context 1", {"pattern": "match", "path": "grep/context.txt", "limit": 1, "context": 1})
    add("context 1 both matches", {"pattern": "match", "path": "grep/context.txt", "context": 1})
    add("context 2", {"pattern": "match", "path": "grep/context.txt", "context": 2})
    add("context 0", {"pattern": "match", "path": "grep/context.txt", "context": 0})
    add("context negative", {"pattern": "match", "path": "grep/context.txt", "context": -2})
    add("adjacent matches not merged", {"pattern": "m", "path": "grep/adjacent.txt", "context": 1})
    add("long line truncated", {"pattern": "match", "path": "grep/long.txt"})
    add("long line truncated with context", {"pattern": "short", "path": "grep/long.txt", "context": 1})
    add("default limit 100", {"pattern": "hit", "path": "grep/many.txt"})
    add("limit 10", {"pattern": "hit", "path": "grep/many.txt", "limit": 10})
    add("limit 0 means 1", {"pattern": "hit", "path": "grep/many.txt", "limit": 0})
    add("limit 1.5", {"pattern": "hit", "path": "grep/many.txt", "limit": 1.5})
    add("limit 300 not reached", {"pattern": "hit 1", "path": "grep/many.txt", "limit": 300})
    add("50KB limit with long lines", {"pattern": "hit", "path": "grep/wide_hits.txt", "limit": 150})
    add("CRLF lines", {"pattern": "match", "path": "grep/crlf.txt"})
    add("CRLF with context", {"pattern": "match", "path": "grep/crlf.txt", "context": 1})
    add("case sensitive", {"pattern": "hello", "path": "grep/case.txt"})
    add("ignoreCase", {"pattern": "hello", "path": "grep/case.txt", "ignoreCase": True})
    add("ignoreCase as string", {"pattern": "hello", "path": "grep/case.txt", "ignoreCase": "true"})
    add("regex dot", {"pattern": "a.b", "path": "grep/regex.txt"})
    add("literal dot", {"pattern": "a.b", "path": "grep/regex.txt", "literal": True})
    add("literal paren", {"pattern": "(paren)", "path": "grep/regex.txt", "literal": True})
    # ripgrep's own error text differs between versions (13 prints "regex parse error", 14 adds "rg: ")
    add("bad regex", {"pattern": "(", "path": "grep/regex.txt"}, rgVersionDependent=True)
    add("unicode", {"pattern": "match", "path": "grep/unicode.txt"})
    add("pattern looks like an option", {"pattern": "--pre=evil", "path": "grep/dash.txt"})
    add("missing path", {"pattern": "x", "path": "grep/nope"})
    add("directory, one match", {"pattern": "import", "path": "grep/tree"})
    add("directory labels, several files", {"pattern": "one", "path": "grep/tree"}, unordered=True)
    add("glob filter", {"pattern": "one", "path": "grep/tree", "glob": "*.py"}, unordered=True)
    add("glob filter ts", {"pattern": "one", "path": "grep/tree", "glob": "*.ts"})
    # outside a git repository ripgrep does not apply .gitignore (Pi passes no --no-require-git)
    add("gitignore outside a repository", {"pattern": "ignored", "path": "grep/tree"}, unordered=True)
    add("hidden file searched", {"pattern": "hidden", "path": "grep/tree"})
    add("binary file", {"pattern": "match", "path": "grep/binary.bin"})
    add("invalid UTF-8 line", {"pattern": "match", "path": "grep/invalid_utf8.txt"})
    add("last line without newline", {"pattern": "match", "path": "grep/last_no_newline.txt"})
    add("CR inside a line", {"pattern": "match", "path": "grep/cr_inside.txt"})
    add("CR inside a line with context", {"pattern": "match", "path": "grep/cr_inside.txt", "context": 1})
    add("file in subdir via path", {"pattern": "one", "path": "grep/tree/sub/three.py"})
    add("missing pattern", {"path": "grep/example.txt"})
    return c


def ls_cases() -> list[dict[str, Any]]:
    c: list[dict[str, Any]] = []

    def add(name: str, params: Any, **extra: Any) -> None:
        c.append({"name": f"ls: {name}", "tool": "ls", "params": params, **extra})

    add("sorted, dotfiles, dirs", {"path": "lsdir"})
    add("limit 5", {"path": "lsdir", "limit": 5})
    add("limit 0", {"path": "lsdir", "limit": 0})
    add("limit 1.5", {"path": "lsdir", "limit": 1.5})
    add("limit equal to count", {"path": "lsmany", "limit": 12})
    add("limit one below count", {"path": "lsmany", "limit": 11})
    add("empty directory", {"path": "lsempty"})
    add("50KB limit", {"path": "lsbig"})
    add("50KB and entry limit", {"path": "lsbig", "limit": 220})
    add("not a directory", {"path": "small.txt"})
    add("missing", {"path": "nope"})
    add("default path", {}, ctx={"cwd": "<CWD>/sub"})
    add("empty string path", {"path": ""}, ctx={"cwd": "<CWD>/sub"})
    add("nested", {"path": "sub"})
    add("findtree", {"path": "findtree"})
    add("img", {"path": "img"})
    add("path null", {"path": None}, ctx={"cwd": "<CWD>/sub"})
    add("limit as string", {"path": "lsmany", "limit": "3"})
    return c


def validation_cases() -> list[dict[str, Any]]:
    """Seeded random arguments for pi-ai's coercion and error texts (cwd is a missing directory, so
    nothing is executed for real; an execute-stage error shows the coerced values)."""
    import random

    rnd = random.Random(20260904)
    atoms: list[Any] = ["2", " 3 ", "0x1f", "1e3", "abc", "", "true", "FALSE", "2n", "Infinity", "-1", "1.5", "0", "1",
                        "null", "0b11", "+5", ".5", "5.", 0, 1, 2, -1, 1.5, 100, 1e21, True, False, None]

    def val(depth: int = 0) -> Any:
        r = rnd.random()
        if r < 0.62:
            return rnd.choice(atoms)
        if r < 0.8 and depth < 2:
            return [val(depth + 1) for _ in range(rnd.randint(0, 2))]
        if depth < 2:
            return {rnd.choice(["oldText", "newText", "x", "path"]): val(depth + 1) for _ in range(rnd.randint(0, 2))}
        return "s"

    keys = {
        "read": ["path", "offset", "limit"],
        "grep": ["pattern", "path", "glob", "ignoreCase", "literal", "context", "limit"],
        "ls": ["path", "limit"],
        "edit": ["path", "edits", "oldText", "newText"],
    }
    out: list[dict[str, Any]] = []
    for i in range(80):
        name = rnd.choice(list(keys))
        params: Any
        if i % 20 == 0:
            params = val()
        else:
            params = {k: val() for k in keys[name] if rnd.random() < 0.6}
            if name == "edit" and rnd.random() < 0.5:
                params["edits"] = [{"oldText": val(), "newText": val()} for _ in range(rnd.randint(0, 2))]
        out.append({"name": f"validation {i}: {name}", "tool": name, "params": params, "ctx": {"cwd": "<CWD>/missing-dir"}})
    return out


GROUPS = {
    "read": read_cases,
    "bash": bash_cases,
    "edit_write": lambda: edit_cases() + write_cases(),
    "grep": grep_cases,
    "ls": ls_cases,
    "validation": validation_cases,
}


def substitute(value: Any, cwd: str) -> Any:
    if isinstance(value, str):
        return value.replace("<CWD>", cwd)
    if isinstance(value, list):
        return [substitute(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, cwd) for k, v in value.items()}
    return value


_LOG = re.compile(r"pi-bash-[0-9a-f]{16}\.log")


def mask(value: Any, cwd: str) -> Any:
    if isinstance(value, str):
        out = _LOG.sub("pi-bash-<HEX>.log", value.replace(cwd, "<CWD>"))
        if len(out) > BIG:
            return {
                "__text__": {
                    "sha256": hashlib.sha256(out.encode("utf-8", "surrogatepass")).hexdigest(),
                    "length": len(out),
                    "head": out[:2000],
                    "tail": out[-2000:],
                }
            }
        return out
    if isinstance(value, list):
        return [mask(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: mask(v, cwd) for k, v in value.items()}
    return value


def full_output_info(response: dict[str, Any]) -> dict[str, Any] | None:
    texts = json.dumps(response)
    m = re.search(r"(/[^\"\]]*pi-bash-[0-9a-f]{16}\.log)", texts)
    if not m:
        return None
    data = Path(m.group(1)).read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def run_case(o: Oracle, case: dict[str, Any], tmp: Path) -> dict[str, Any]:
    cwd = str(tmp)
    request: dict[str, Any] = {"name": case["tool"], "cwd": cwd, "params": substitute(case["params"], cwd)}
    for key in ("options", "ctx", "returnUpdates"):
        if key in case:
            request[key] = substitute(case[key], cwd)
    response = o.request("tool", request, env={"TMPDIR": str(tmp / "tmp")})
    record: dict[str, Any] = dict(case)
    if response.get("ok"):
        info = full_output_info(response["result"])
        if info:
            record["fullOutput"] = info
    if "file" in case:
        target = tmp / case["file"]
        record["fileAfter"] = base64.b64encode(target.read_bytes()).decode() if target.is_file() else None
    response.pop("id", None)  # the pipe's request counter: not part of Pi's answer
    record["response"] = mask(response, cwd)
    return record


def run_group(o: Oracle, cases: list[dict[str, Any]], fresh_tree_per_case: bool) -> list[dict[str, Any]]:
    out = []
    shared: Path | None = None
    try:
        for case in cases:
            if fresh_tree_per_case or shared is None:
                tmp = Path(tempfile.mkdtemp(prefix="pi-nb-tools-")).resolve()
                build_tree(tmp)
                if not fresh_tree_per_case:
                    shared = tmp
            else:
                tmp = shared
            try:
                out.append(run_case(o, case, tmp))
            finally:
                if fresh_tree_per_case:
                    shutil.rmtree(tmp, ignore_errors=True)
    finally:
        if shared is not None:
            shutil.rmtree(shared, ignore_errors=True)
    return out


def main() -> None:
    selected = sys.argv[1:] or list(GROUPS)
    total = 0
    with Oracle() as o:
        for group in selected:
            cases = run_group(o, GROUPS[group](), fresh_tree_per_case=group == "edit_write")
            path = ROOT / "tests" / "golden" / f"tools_{group}.json"
            with path.open("w", encoding="utf-8") as f:
                f.write(
                    '{"source": "Pi 0.85.0 via pi-oracle (tool fn); regenerate with tests/golden/make_tools.py", "cases": [\n'
                )
                f.write(",\n".join(js_stringify(c) for c in cases))
                f.write("\n]}\n")
            total += len(cases)
            print(f"{group}: {len(cases)} cases -> {path.relative_to(ROOT)} ({path.stat().st_size} bytes)")
        info = o.call("toolInfo")
    (ROOT / "tests" / "golden" / "tools_info.json").write_text(
        json.dumps({"source": "Pi 0.85.0 toolInfo", "tools": info}, ensure_ascii=False, indent=1) + "\n",
        encoding="utf-8",
    )
    print(f"total {total} cases")


if __name__ == "__main__":
    main()
