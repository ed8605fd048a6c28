"""Record Pi 0.85.0's token maths into tests/golden/tokens.json (run by hand; needs the oracle).

    .venv/bin/python tests/golden/make_tokens.py

Covers ``estimateTokens`` on every message kind (hand-picked edge cases + seeded random messages:
unicode, astral characters, lone surrogates, escapes, tool-call arguments with floats such as 1.0,
1e21, 1e-7, -0, integers past 2**53, array-index keys), ``calculateContextTokens``,
``estimateContextTokens`` (aborted/error/zero-usage assistants) and ``getLastAssistantUsage`` over
entry lists. Each case keeps the request and Pi's raw answer (``ok:false`` answers included).

Cases named ``deviation: ...`` are inputs where Pi returns a number for malformed data and pi_nb
deliberately raises InvalidMessageError instead (tests/test_tokens.py asserts exactly that).
The output is deterministic for a given oracle (fixed seed).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
from oracle_client import Oracle  # noqa: E402

OUT = ROOT / "tests" / "golden" / "tokens.json"

# ---------------------------------------------------------------------------------------------
# building blocks
# ---------------------------------------------------------------------------------------------

PIECES = [
    "a",
    "b",
    "Z",
    "0",
    "9",
    " ",
    "  ",
    "\n",
    "\t",
    "\r",
    '"',
    "\\",
    "/",
    "'",
    "<",
    ">",
    "&",
    "é",
    "ß",
    "ñ",
    "中",
    "文",
    "ж",
    "π",
    "€",
    "😀",
    "👍🏽",
    "🚀",
    "𝄞",
    "\u2028",
    "\u2029",
    "\x00",
    "\x1f",
    "\x7f",
    "\u0085",
    "\ufeff",
    "\ud800",
    "\udfff",
    "\udbff",
    "\ud83d",
    "\ude00",
    "word",
    "hello world",
    "<|endoftext|>",
    "\\u0041",
    "{",
    "}",
    "[",
    "]",
]

SPECIAL_FLOATS = [
    1.0,
    -1.0,
    0.0,
    -0.0,
    0.5,
    0.1,
    1e21,
    1e20,
    1e-7,
    1e-6,
    1.5e-7,
    123456789.125,
    1e300,
    -1.7976931348623157e308,
    5e-324,
    2.2250738585072014e-308,
    100.0,
    1e16,
    1.23e-10,
    3.14159,
    9007199254740993.0,
    0.000001,
    1234567890123456789012.0,
]
SPECIAL_INTS = [
    0,
    1,
    -1,
    42,
    2**31,
    2**53 - 1,
    2**53,
    2**53 + 1,
    12345678901234567891,
    9999999999999999999,
    10**21,
    10**22,
    -(10**25),
    123,
]
KEYS = [
    "path",
    "command",
    "oldText",
    "a",
    "b",
    "0",
    "1",
    "10",
    "2",
    "01",
    "-1",
    "1.5",
    "4294967294",
    "4294967295",
    "é",
    "😀",
    "key with space",
    "",
    "\ud800",
    "\n",
    '"q"',
]


def rand_str(rng: random.Random, max_pieces: int = 12) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, max_pieces)))


def rand_number(rng: random.Random) -> int | float:
    r = rng.random()
    if r < 0.3:
        return rng.choice(SPECIAL_FLOATS)
    if r < 0.5:
        return rng.choice(SPECIAL_INTS)
    if r < 0.7:
        return rng.randint(-(10**6), 10**6)
    if r < 0.85:
        return rng.uniform(-1000, 1000)
    return rng.random() * 10 ** rng.randint(-30, 30) * rng.choice([1, -1])


def rand_json(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth < 3 and r < 0.25:
        return {
            rng.choice(KEYS) if rng.random() < 0.6 else rand_str(rng, 3): rand_json(rng, depth + 1)
            for _ in range(rng.randint(0, 4))
        }
    if depth < 3 and r < 0.4:
        return [rand_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if r < 0.6:
        return rand_str(rng, 8)
    if r < 0.85:
        return rand_number(rng)
    return rng.choice([True, False, None])


def rand_args(rng: random.Random) -> Any:
    if rng.random() < 0.9:
        return {rng.choice(KEYS): rand_json(rng, 1) for _ in range(rng.randint(0, 5))}
    return rand_json(rng)  # Pi only stringifies: a list, a string or null works too


def image(rng: random.Random) -> dict[str, Any]:
    return {"type": "image", "data": "iVBORw0KGgo=" * rng.randint(0, 3), "mimeType": "image/png"}


def text_block(rng: random.Random) -> dict[str, Any]:
    return {"type": "text", "text": rand_str(rng)}


def user_content(rng: random.Random) -> Any:
    if rng.random() < 0.35:
        return rand_str(rng, 30)
    blocks: list[Any] = []
    for _ in range(rng.randint(0, 4)):
        r = rng.random()
        if r < 0.6:
            blocks.append(text_block(rng))
        elif r < 0.85:
            blocks.append(image(rng))
        elif r < 0.9:
            blocks.append({"type": "text", "text": ""})
        elif r < 0.95:
            blocks.append({"type": "text"})  # Pi skips a missing text in user content
        else:
            blocks.append({"type": "thinking", "thinking": rand_str(rng)})  # not counted for users
    return blocks


def usage(rng: random.Random) -> dict[str, Any]:
    r = rng.random()
    parts = {
        k: rng.choice([0, 0, rng.randint(1, 200000)]) for k in ("input", "output", "cacheRead", "cacheWrite")
    }
    if r < 0.15:
        total = 0
    elif r < 0.3:
        total = rng.randint(1, 300000)  # a total that disagrees with the parts: the total wins
    else:
        total = sum(parts.values())
    u: dict[str, Any] = {
        **parts,
        "totalTokens": total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }
    if rng.random() < 0.05:
        u = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    return u


def assistant(rng: random.Random, ts: int = 1) -> dict[str, Any]:
    content: list[Any] = []
    for _ in range(rng.randint(0, 5)):
        r = rng.random()
        if r < 0.35:
            content.append(text_block(rng))
        elif r < 0.55:
            content.append({"type": "thinking", "thinking": rand_str(rng), "thinkingSignature": "sig"})
        elif r < 0.95:
            content.append(
                {
                    "type": "toolCall",
                    "id": f"call_{rng.randint(0, 999)}",
                    "name": rng.choice(["read", "bash", "edit", "write", "grep", "😀tool", ""]),
                    "arguments": rand_args(rng),
                }
            )
        else:
            content.append(image(rng))  # assistant images are not counted by Pi
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": "openai-responses",
        "provider": "openai",
        "model": "gpt-test",
        "usage": usage(rng),
        "stopReason": rng.choice(
            ["stop", "stop", "toolUse", "length", "error", "aborted", "pending", "deferred"]
        ),
        "timestamp": ts,
    }
    r = rng.random()
    if r < 0.05:
        del msg["usage"]
    elif r < 0.08:
        msg["usage"] = None
    return msg


def rand_message(rng: random.Random, ts: int = 1) -> dict[str, Any]:
    kind = rng.choice(
        [
            "user",
            "assistant",
            "assistant",
            "toolResult",
            "bashExecution",
            "custom",
            "branchSummary",
            "compactionSummary",
            "unknown",
        ]
    )
    if kind == "user":
        return {"role": "user", "content": user_content(rng), "timestamp": ts}
    if kind == "assistant":
        return assistant(rng, ts)
    if kind == "toolResult":
        content = user_content(rng)
        if isinstance(content, str) and rng.random() < 0.5:
            content = [{"type": "text", "text": content}]
        return {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": content,
            "isError": rng.random() < 0.2,
            "timestamp": ts,
        }
    if kind == "bashExecution":
        return {
            "role": "bashExecution",
            "command": rand_str(rng, 6),
            "output": rand_str(rng, 30),
            "exitCode": rng.choice([0, 1, None]),
            "cancelled": False,
            "truncated": False,
            "timestamp": ts,
        }
    if kind == "custom":
        return {
            "role": "custom",
            "customType": "note",
            "content": user_content(rng),
            "display": True,
            "timestamp": ts,
        }
    if kind == "branchSummary":
        return {"role": "branchSummary", "summary": rand_str(rng, 30), "fromId": "abc", "timestamp": ts}
    if kind == "compactionSummary":
        return {
            "role": "compactionSummary",
            "summary": rand_str(rng, 30),
            "tokensBefore": 1000,
            "timestamp": ts,
        }
    return {"role": rng.choice(["system", "tool", "", "User"]), "content": rand_str(rng), "timestamp": ts}


def entry(rng: random.Random, i: int) -> dict[str, Any]:
    base = {"id": f"e{i}", "parentId": f"e{i - 1}" if i else None, "timestamp": "2026-01-01T00:00:00.000Z"}
    r = rng.random()
    if r < 0.7:
        return {"type": "message", **base, "message": rand_message(rng, i)}
    if r < 0.8:
        return {"type": "compaction", **base, "summary": "s", "firstKeptEntryId": "e0", "tokensBefore": 5}
    if r < 0.85:
        return {"type": "model_change", **base, "provider": "openai", "modelId": "gpt-test"}
    if r < 0.9:
        return {"type": "thinking_level_change", **base, "thinkingLevel": "high"}
    if r < 0.95:
        # not a `message` entry: its usage must be ignored even though it looks like an assistant
        return {
            "type": "custom_message",
            **base,
            "customType": "x",
            "content": "c",
            "display": True,
            "message": assistant(rng, i),
        }
    return {"type": "label", **base, "targetId": "e0", "label": "L"}


# ---------------------------------------------------------------------------------------------
# hand-picked cases
# ---------------------------------------------------------------------------------------------

U = {
    "input": 0,
    "output": 0,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 0,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def mock_usage(i: int, o: int, cr: int = 0, cw: int = 0) -> dict[str, Any]:
    return {**U, "input": i, "output": o, "cacheRead": cr, "cacheWrite": cw, "totalTokens": i + o + cr + cw}


def asst(content: list[Any], u: dict[str, Any] | None = None, stop: str = "stop") -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": u or mock_usage(0, 0),
        "stopReason": stop,
        "timestamp": 1,
    }


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, "timestamp": 1}


IMG = {"type": "image", "data": "AAAA", "mimeType": "image/png"}


def tc(name: str, args: Any) -> dict[str, Any]:
    return {"type": "toolCall", "id": "c1", "name": name, "arguments": args}


ESTIMATE_CASES: list[tuple[str, Any]] = [
    # Pi's derived vectors (spec §12)
    ("§12 user plain", user("plain user")),
    ("§12 user text+image", user([{"type": "text", "text": "abcd"}, IMG])),
    (
        "§12 assistant thinking+toolCall",
        asst([{"type": "thinking", "thinking": "thinking"}, tc("read", {"path": "file.ts"})]),
    ),
    (
        "§12 toolResult text+image",
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",
            "content": [{"type": "text", "text": "tool text"}, IMG],
            "isError": False,
            "timestamp": 1,
        },
    ),
    (
        "§12 bashExecution",
        {
            "role": "bashExecution",
            "command": "npm run check",
            "output": "ok",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 1,
        },
    ),
    (
        "§12 custom",
        {"role": "custom", "customType": "x", "content": "custom text", "display": True, "timestamp": 1},
    ),
    (
        "§12 compactionSummary",
        {"role": "compactionSummary", "summary": "compact", "tokensBefore": 1, "timestamp": 1},
    ),
    (
        "branchSummary",
        {"role": "branchSummary", "summary": "branch summary text", "fromId": "a", "timestamp": 1},
    ),
    # harness assertions (spec §11.5)
    (
        "harness toolResult text+image > 1000",
        {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "read",
            "content": [{"type": "text", "text": "x" * 100}, IMG],
            "isError": False,
            "timestamp": 1,
        },
    ),
    ("harness unknown role", {"role": "unknownRole", "content": "x" * 1000, "timestamp": 1}),
    # lengths are UTF-16 code units
    ("empty user string", user("")),
    ("one char", user("a")),
    ("four chars", user("abcd")),
    ("five chars", user("abcde")),
    ("astral emoji counts 2", user("😀")),
    ("two emoji", user("😀😀")),
    ("flag + skin tone", user("👍🏽🇫🇷")),
    ("BMP non-ASCII counts 1", user("éééé")),
    ("lone high surrogate", user("\ud800abc")),
    ("lone low surrogate", user("\udfff")),
    ("surrogate pair written as two code points", user("\ud83d\ude00")),
    ("CJK", user("中文字符测试")),
    (
        "user blocks: empty text skipped",
        user([{"type": "text", "text": ""}, {"type": "text", "text": "abc"}]),
    ),
    ("user blocks: missing text skipped", user([{"type": "text"}, {"type": "text", "text": "abcdefgh"}])),
    ("user blocks: null text skipped", user([{"type": "text", "text": None}])),
    ("user blocks: text 0 skipped", user([{"type": "text", "text": 0}])),
    ("user blocks: numeric text is NaN", user([{"type": "text", "text": 5}])),
    ("user blocks: object text is NaN", user([{"type": "text", "text": {"a": 1}}])),
    ("user blocks: only images", user([IMG, IMG, IMG])),
    ("user blocks: unknown block type", user([{"type": "video", "text": "abcdefgh"}])),
    ("user blocks: thinking not counted", user([{"type": "thinking", "thinking": "abcdefgh"}])),
    ("user blocks: a string item is ignored", user(["abcdefgh", {"type": "text", "text": "abc"}])),
    ("user blocks: a number item is ignored", user([5, {"type": "text", "text": "abc"}])),
    ("user blocks: empty list", user([])),
    ("user blocks: null item throws", user([None])),
    ("user: null content throws", user(None)),
    ("user: missing content throws", {"role": "user", "timestamp": 1}),
    ("user: object content throws", user({"type": "text", "text": "abc"})),
    ("user: number content throws", user(5)),
    (
        "toolResult string content",
        {
            "role": "toolResult",
            "content": "abcdefghi",
            "toolCallId": "c",
            "toolName": "bash",
            "isError": True,
            "timestamp": 1,
        },
    ),
    (
        "toolResult null content throws",
        {
            "role": "toolResult",
            "content": None,
            "toolCallId": "c",
            "toolName": "bash",
            "isError": False,
            "timestamp": 1,
        },
    ),
    (
        "custom blocks with image",
        {
            "role": "custom",
            "customType": "x",
            "display": False,
            "content": [{"type": "text", "text": "note"}, IMG],
            "timestamp": 1,
        },
    ),
    (
        "custom null content throws",
        {"role": "custom", "customType": "x", "display": False, "content": None, "timestamp": 1},
    ),
    # assistant
    ("assistant empty", asst([])),
    ("assistant text", asst([{"type": "text", "text": "Hello there, how can I help?"}])),
    ("assistant empty text ok", asst([{"type": "text", "text": ""}])),
    ("assistant missing text throws", asst([{"type": "text"}])),
    ("assistant null text throws", asst([{"type": "text", "text": None}])),
    ("assistant numeric text is NaN", asst([{"type": "text", "text": 12}])),
    ("assistant missing thinking throws", asst([{"type": "thinking"}])),
    (
        "assistant redacted thinking",
        asst([{"type": "thinking", "thinking": "ENCRYPTED==", "redacted": True}]),
    ),
    ("assistant image block not counted", asst([IMG])),
    ("assistant unknown block", asst([{"type": "weird", "text": "abcdefgh"}])),
    ("assistant string content counts 0", asst("abcdefgh")),  # type: ignore[arg-type]
    ("assistant null content throws", {**asst([]), "content": None}),
    ("assistant missing content throws", {k: v for k, v in asst([]).items() if k != "content"}),
    ("assistant null block throws", asst([None])),
    ("assistant string block ignored", asst(["abcdefgh"])),
    ("toolCall empty args", asst([tc("bash", {})])),
    ("toolCall null args", asst([tc("bash", None)])),
    ("toolCall string args", asst([tc("bash", "ls -la")])),
    ("toolCall list args", asst([tc("bash", [1, 2.5, "x"])])),
    ("toolCall number args", asst([tc("bash", 1.0)])),
    ("toolCall missing args throws", asst([{"type": "toolCall", "id": "c", "name": "bash"}])),
    ("toolCall missing name throws", asst([{"type": "toolCall", "id": "c", "arguments": {}}])),
    (
        "toolCall floats",
        asst(
            [
                tc(
                    "calc",
                    {
                        "a": 1.0,
                        "b": 1e21,
                        "c": 1e-7,
                        "d": -0.0,
                        "e": 0.1,
                        "f": 1e20,
                        "g": 1e-6,
                        "h": 5e-324,
                        "i": 1.7976931348623157e308,
                    },
                )
            ]
        ),
    ),
    (
        "toolCall big ints",
        asst(
            [
                tc(
                    "calc",
                    {
                        "a": 2**53 + 1,
                        "b": 10**21,
                        "c": 9999999999999999999,
                        "d": -(10**30),
                        "e": 12345678901234567891,
                    },
                )
            ]
        ),
    ),
    (
        "toolCall escapes",
        asst([tc("write", {"content": 'line1\nline2\t"q" \\ / \x00 \x1f \x7f \u2028 é 😀'})]),
    ),
    ("toolCall lone surrogates", asst([tc("write", {"content": "a\ud800b\udc00c", "\udbff": "\ud83d"})])),
    ("toolCall unicode keys", asst([tc("edit", {"😀": "中", "é": [True, False, None]})])),
    ("toolCall array-index keys", asst([tc("x", {"b": 1, "10": 2, "2": 3, "01": 4})])),
    (
        "toolCall nested",
        asst(
            [
                tc(
                    "edit",
                    {
                        "path": "a.ts",
                        "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "x\ny", "newText": ""}],
                    },
                )
            ]
        ),
    ),
    (
        "assistant everything",
        asst(
            [
                {"type": "thinking", "thinking": "let me think 🤔"},
                {"type": "text", "text": "I'll read it."},
                tc("read", {"path": "src/main.py", "offset": 10, "limit": 2.0}),
                tc("bash", {"command": 'ls -la | grep "x"', "timeout": 30}),
            ]
        ),
    ),
    ("bashExecution empty", {"role": "bashExecution", "command": "", "output": "", "timestamp": 1}),
    (
        "bashExecution excluded still counted",
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a\nb",
            "excludeFromContext": True,
            "timestamp": 1,
        },
    ),
    ("bashExecution missing output throws", {"role": "bashExecution", "command": "ls", "timestamp": 1}),
    (
        "bashExecution numeric output is NaN",
        {"role": "bashExecution", "command": "ls", "output": 5, "timestamp": 1},
    ),
    (
        "compactionSummary missing summary throws",
        {"role": "compactionSummary", "tokensBefore": 1, "timestamp": 1},
    ),
    ("branchSummary empty", {"role": "branchSummary", "summary": "", "fromId": "x", "timestamp": 1}),
    ("branchSummary emoji", {"role": "branchSummary", "summary": "😀😀a", "fromId": "x", "timestamp": 1}),
    ("no role", {"content": "abcdefgh"}),
    ("null role", {"role": None, "content": "abcdefgh"}),
    ("numeric role", {"role": 1, "content": "abcdefgh"}),
    ("system role", {"role": "system", "content": "abcdefgh"}),
    ("long ascii", user("x" * 100_001)),
    ("long non-ascii", user("é😀" * 5001)),
    ("null message throws", None),
    ("deviation: string message", "abcdefgh"),
    ("deviation: list text in user block", user([{"type": "text", "text": ["a", "b", "c"]}])),
]

CALC_CASES: list[tuple[str, Any]] = [
    ("§11.5 usage 1000/500/200/100", mock_usage(1000, 500, 200, 100)),
    ("§11.5 all zero", mock_usage(0, 0)),
    ("total wins over parts", {**mock_usage(1, 2, 3, 4), "totalTokens": 99}),
    ("total 0 falls back to parts", {**mock_usage(1, 2, 3, 4), "totalTokens": 0}),
    ("missing total falls back", {"input": 5, "output": 6, "cacheRead": 7, "cacheWrite": 8}),
    (
        "null total falls back",
        {"input": 5, "output": 6, "cacheRead": 7, "cacheWrite": 8, "totalTokens": None},
    ),
    ("negative total wins", {**mock_usage(1, 2), "totalTokens": -5}),
    ("null part counts 0", {"input": 5, "output": None, "cacheRead": 7, "cacheWrite": 8, "totalTokens": 0}),
    ("missing part is NaN", {"input": 5, "output": 6, "cacheRead": 7, "totalTokens": 0}),
    ("empty usage is NaN", {}),
    ("integral floats", {"input": 5.0, "output": 6.0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}),
    ("float total", {**mock_usage(1, 2), "totalTokens": 3.0}),
    (
        "cacheWrite1h and reasoning ignored",
        {**mock_usage(10, 20), "totalTokens": 0, "cacheWrite1h": 50, "reasoning": 7},
    ),
    ("huge", mock_usage(10**12, 10**12, 10**12, 10**12)),
    (
        "all parts null",
        {"input": None, "output": None, "cacheRead": None, "cacheWrite": None, "totalTokens": None},
    ),
    ("usage null throws", None),
    ("usage number is NaN", 5),
    ("usage string is NaN", "abc"),
    ("deviation: fractional total", {**mock_usage(1, 2), "totalTokens": 10.5}),
    ("deviation: string total", {**mock_usage(1, 2), "totalTokens": "5"}),
    (
        "deviation: boolean part",
        {"input": True, "output": 6, "cacheRead": 7, "cacheWrite": 8, "totalTokens": 0},
    ),
]


def ectx(*msgs: Any) -> list[Any]:
    return list(msgs)


ESTIMATE_CONTEXT_CASES: list[tuple[str, Any]] = [
    (
        "§11.5 estimateContextTokens",
        ectx(
            user("Hello"),
            asst([{"type": "text", "text": "Hi"}], mock_usage(100, 50)),
            user("continue"),
            asst([{"type": "text", "text": "ok"}], mock_usage(0, 0)),
        ),
    ),
    ("harness usage 20 then user", ectx(asst([], mock_usage(10, 10)), user("what next?"))),
    ("empty", ectx()),
    ("no usage at all", ectx(user("abc"), user("defgh"))),
    (
        "aborted skipped",
        ectx(asst([], mock_usage(100, 0)), user("x" * 40), asst([], mock_usage(500, 0), "aborted")),
    ),
    (
        "error skipped",
        ectx(asst([], mock_usage(100, 0)), asst([], mock_usage(500, 0), "error"), user("abcd")),
    ),
    ("length counts", ectx(asst([], mock_usage(100, 0)), asst([], mock_usage(700, 0), "length"))),
    (
        "zero usage skipped",
        ectx(asst([], mock_usage(100, 0)), asst([{"type": "text", "text": "abcdefgh"}], mock_usage(0, 0))),
    ),
    ("usage null skipped", ectx(asst([], mock_usage(100, 0)), {**asst([]), "usage": None})),
    (
        "usage missing skipped",
        ectx(asst([], mock_usage(100, 0)), {k: v for k, v in asst([]).items() if k != "usage"}),
    ),
    ("usage without parts is NaN, skipped", ectx(asst([], mock_usage(100, 0)), {**asst([]), "usage": {}})),
    (
        "negative total skipped",
        ectx(asst([], mock_usage(100, 0)), {**asst([]), "usage": {**U, "totalTokens": -3}}),
    ),
    (
        "toolResult after usage",
        ectx(
            asst([tc("read", {"path": "a"})], mock_usage(300, 20), "toolUse"),
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": "x" * 4001}],
                "isError": False,
                "timestamp": 2,
            },
        ),
    ),
    (
        "no stopReason counts",
        ectx(
            asst([], mock_usage(100, 0)),
            {k: v for k, v in asst([], mock_usage(9, 0)).items() if k != "stopReason"},
        ),
    ),
    ("string usage skipped", ectx(asst([], mock_usage(100, 0)), {**asst([]), "usage": "abc"})),
    ("numeric usage skipped", ectx(asst([], mock_usage(100, 0)), {**asst([]), "usage": 7})),
    (
        "usage with null total and parts",
        ectx(
            asst([], mock_usage(100, 0)),
            {
                **asst([]),
                "usage": {"input": 3, "output": None, "cacheRead": 0, "cacheWrite": 0, "totalTokens": None},
            },
        ),
    ),
    ("null message throws", ectx(asst([], mock_usage(100, 0)), None)),
    ("trailing message throws", ectx(asst([], mock_usage(100, 0)), user(None))),
    ("a bad message before the usage is never estimated", ectx(user(None), asst([], mock_usage(100, 0)))),
]

ENTRY_CASES: list[tuple[str, Any]] = []


def msg_entry(i: int, message: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": f"test-id-{i}",
        "parentId": f"test-id-{i - 1}" if i else None,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": message,
    }


ENTRY_CASES += [
    (
        "§11.5 last non-aborted",
        [
            msg_entry(0, user("Hello")),
            msg_entry(1, asst([], mock_usage(100, 50))),
            msg_entry(2, user("more")),
            msg_entry(3, asst([], mock_usage(200, 100))),
        ],
    ),
    (
        "§11.5 skips aborted",
        [
            msg_entry(0, user("Hello")),
            msg_entry(1, asst([], mock_usage(100, 50))),
            msg_entry(2, user("more")),
            msg_entry(3, asst([], mock_usage(300, 150), "aborted")),
        ],
    ),
    (
        "§11.5 skips all-zero",
        [msg_entry(0, asst([], mock_usage(100, 50))), msg_entry(1, asst([], mock_usage(0, 0)))],
    ),
    ("§11.5 none", [msg_entry(0, user("Hello"))]),
    ("empty", []),
    (
        "skips error",
        [msg_entry(0, asst([], mock_usage(7, 0))), msg_entry(1, asst([], mock_usage(9, 0), "error"))],
    ),
    (
        "non-message entries ignored",
        [
            msg_entry(0, asst([], mock_usage(7, 0))),
            {
                "type": "custom_message",
                "id": "x",
                "parentId": "test-id-0",
                "timestamp": "2026-01-01T00:00:00.000Z",
                "message": asst([], mock_usage(99, 0)),
            },
            {
                "type": "compaction",
                "id": "y",
                "parentId": "x",
                "summary": "s",
                "firstKeptEntryId": "test-id-0",
                "tokensBefore": 5,
                "timestamp": "2026-01-01T00:00:00.000Z",
            },
        ],
    ),
    (
        "message entry without message throws",
        [
            msg_entry(0, asst([], mock_usage(7, 0))),
            {"type": "message", "id": "z", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z"},
        ],
    ),
    ("null entry throws", [msg_entry(0, asst([], mock_usage(7, 0))), None]),
    ("deviation: string message", [msg_entry(0, asst([], mock_usage(7, 0))), msg_entry(1, "hello")]),
]


# ---------------------------------------------------------------------------------------------


def main() -> None:
    rng = random.Random(20250904)
    requests: list[tuple[str, str, dict[str, Any]]] = []
    for name, message in ESTIMATE_CASES:
        requests.append((name, "estimateTokens", {"message": message}))
    for i in range(420):
        requests.append((f"random message {i}", "estimateTokens", {"message": rand_message(rng, i)}))
    for name, u in CALC_CASES:
        requests.append((name, "calculateContextTokens", {"usage": u}))
    for i in range(60):
        requests.append((f"random usage {i}", "calculateContextTokens", {"usage": usage(rng)}))
    for name, msgs in ESTIMATE_CONTEXT_CASES:
        requests.append((name, "estimateContextTokens", {"messages": msgs}))
    for i in range(80):
        msgs = [rand_message(rng, j) for j in range(rng.randint(0, 12))]
        requests.append((f"random messages {i}", "estimateContextTokens", {"messages": msgs}))
    for name, entries in ENTRY_CASES:
        requests.append((name, "getLastAssistantUsage", {"entries": entries}))
    for i in range(80):
        entries = [entry(rng, j) for j in range(rng.randint(0, 12))]
        requests.append((f"random entries {i}", "getLastAssistantUsage", {"entries": entries}))

    cases = []
    with Oracle() as o:
        version = o.call("version")
        for name, fn, args in requests:
            response = o.request(fn, args)
            response.pop("id", None)
            cases.append({"name": name, "fn": fn, "args": args, "response": response})

    lines = [json.dumps(c, ensure_ascii=True, separators=(",", ":")) for c in cases]
    header = {
        "source": "Pi 0.85.0 via pi-oracle (pi-coding-agent dist/core/compaction/compaction.js)",
        "generator": "tests/golden/make_tokens.py",
        "versions": {k: v for k, v in version.items() if k != "node"}
        if isinstance(version, dict)
        else version,
    }
    text = json.dumps(header, ensure_ascii=True)[:-1] + ',"cases":[\n' + ",\n".join(lines) + "\n]}\n"
    OUT.write_text(text, encoding="ascii")
    by_fn: dict[str, int] = {}
    for c in cases:
        by_fn[c["fn"]] = by_fn.get(c["fn"], 0) + 1
    print(f"wrote {OUT} ({len(text)} bytes): {len(cases)} cases {by_fn}")


if __name__ == "__main__":
    main()
