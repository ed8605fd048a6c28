"""Record Pi 0.85.0's compaction answers over generated session paths (run by hand; needs the oracle).

    .venv/bin/python tests/golden/make_compaction.py [--paths 320] [--seed 5]

Writes under tests/golden/:

* ``compaction_paths_1.jsonl``, ``compaction_paths_2.jsonl`` - one JSON object per line (first
  line: a header with the source and the generator's arguments), one line per generated path: its
  entries and Pi's answers to ``findValidCutPoints`` (whole path and sub-ranges), ``findCutPoint``
  (tiny/small/mid/large/huge keep budgets and sub-ranges), ``findTurnStartIndex``,
  ``prepareCompaction`` (tiny, small, default and large keep budgets), ``estimateContextTokens`` and
  ``shouldCompact`` over the path's context, and ``serializeConversation`` (over Pi's
  ``convertToLlm`` of that context) and ``computeFileLists``;
* ``compaction_cases.json`` - handpicked cases: the spec's section-12 vectors, the scenarios of
  Pi's compaction.test.ts / compaction-serialization.test.ts, and edges (emoji at the 2000-unit
  cut, integer-like argument keys, JavaScript sort order, ranges past the end...).

Every call is stored as ``{"fn", "args", "response"}`` with the oracle's raw answer (``ok:false``
kept). In the path files ``args`` omits the path's ``entries`` (stored once per line) and a message
that *is* ``entries[k]["message"]`` is written ``{"$entry": k}`` (checked lossless here). The
tests (tests/test_compaction_golden.py, tests/test_compaction_core.py) replay them without Node.

The session generator (``SessionGen``) is shared with make_branch_summary.py and
benchmarks/compaction.py: long turns, many tool calls, custom messages, bash executions, earlier
compactions (kept ids found / missing, from hooks or not), branch summaries (empty or not),
metadata entries, images, astral characters and integer-like argument keys.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"

WORDS = (
    "the fix bug in module parse value return error test file line code user asks why "
    "it fails again after build npm run check ok done tokens context window summary "
    'café naïve 日本語 😀 🚀 "quoted" back\\slash tab\there new\nline <tag> & é'
).split(" ")
PATHS = (
    "src/a.ts",
    "src/b.ts",
    "README.md",
    "z.ts",
    "A.ts",
    "src/ä.py",
    "src/日本.ts",
    "docs/😀.md",
    "docs/\ufb01le.md",
    "lib/deep/nested/path/to/file.js",
    "pkg/main.go",
    "tests/test_x.py",
)
PROVIDERS = (("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-5"), ("scripted", "scripted"))


class SessionGen:
    """Deterministic random session entries (Pi v3 shapes), built as a tree."""

    def __init__(self, seed: int, *, size_scale: float = 1.0) -> None:
        self.rng = random.Random(seed)
        self.size_scale = size_scale
        self.entries: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.leaf: str | None = None
        self.t0 = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=self.rng.randint(0, 300))
        self.tick = 0
        self.call_no = 0

    # ---- basics -----------------------------------------------------------------------
    def new_id(self) -> str:
        while True:
            i = f"{self.rng.getrandbits(32):08x}"
            if i not in self.by_id:
                return i

    def now(self) -> tuple[str, int]:
        self.tick += self.rng.randint(1, 4000)
        t = self.t0 + timedelta(milliseconds=self.tick)
        iso = t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
        return iso, int(t.timestamp() * 1000)

    def add(self, type_: str, fields: dict[str, Any], *, parent: str | bool | None = True) -> dict[str, Any]:
        iso, _ = self.now()
        parent_id = self.leaf if parent is True else (None if parent is False else parent)
        entry = {"type": type_, "id": self.new_id(), "parentId": parent_id, "timestamp": iso, **fields}
        self.entries.append(entry)
        self.by_id[entry["id"]] = entry
        self.leaf = entry["id"]
        return entry

    def text(self, lo: int, hi: int) -> str:
        n = max(0, int(self.rng.randint(lo, hi) * self.size_scale))
        out: list[str] = []
        size = 0
        while size < n:
            w = self.rng.choice(WORDS)
            out.append(w)
            size += len(w) + 1
        return " ".join(out)[: max(n, 0)] if n else ""

    def sized_text(self, big_ok: bool = False) -> str:
        r = self.rng.random()
        if r < 0.78:
            return self.text(3, 30)
        if r < 0.975 or not big_ok:
            return self.text(40, 160)
        return self.text(1990, 2300)  # around the 2000-character cut of serialised tool results

    def ms(self) -> int:
        return self.now()[1]

    def usage(self) -> dict[str, Any]:
        r = self.rng.random()
        if r < 0.08:
            i = o = cr = cw = 0
        else:
            i = self.rng.randint(10, 150000)
            o = self.rng.randint(1, 4000)
            cr = self.rng.choice([0, 0, self.rng.randint(0, 50000)])
            cw = self.rng.choice([0, self.rng.randint(0, 2000)])
        total = i + o + cr + cw if self.rng.random() < 0.9 else 0
        usage: dict[str, Any] = {
            "input": i,
            "output": o,
            "cacheRead": cr,
            "cacheWrite": cw,
            "totalTokens": total,
        }
        if self.rng.random() < 0.2:
            usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        return usage

    # ---- messages -----------------------------------------------------------------------
    def user_content(self) -> Any:
        r = self.rng.random()
        if r < 0.6:
            return self.sized_text()
        blocks: list[dict[str, Any]] = [{"type": "text", "text": self.sized_text()}]
        if self.rng.random() < 0.3:
            blocks.append({"type": "text", "text": self.text(0, 30)})
        if self.rng.random() < 0.15:
            blocks.append({"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"})
        return blocks

    def tool_args(self, name: str) -> dict[str, Any]:
        rng = self.rng
        p = rng.choice(PATHS)
        if name == "read":
            args: dict[str, Any] = {"path": p}
            if rng.random() < 0.3:
                args["offset"] = rng.randint(1, 500)
            if rng.random() < 0.2:
                args["limit"] = rng.randint(1, 200)
            return args
        if name == "write":
            return {"path": p, "content": self.text(5, 60)}
        if name == "edit":
            return {"path": p, "edits": [{"oldText": self.text(1, 20), "newText": self.text(1, 20)}]}
        if name == "bash":
            return {"command": rng.choice(["ls -la", "npm test", "rg foo", 'echo "hi"', "cat 日本.txt"])}
        if name == "grep":
            return {"pattern": "TODO", "path": p, "ignoreCase": rng.random() < 0.5}
        # odd shapes: integer-like keys, floats, non-string and empty paths, nested objects
        choice = rng.randint(0, 6)
        if choice == 0:
            return {"b": 1, "10": "ten", "2": {"z": 1, "1": 0.5}, "a": [1.5, 2.0, 1e21, -3]}
        if choice == 1:
            return {"path": 123}
        if choice == 2:
            return {"path": ""}
        if choice == 3:
            return {}
        if choice == 4:
            return {"path": p, "nested": {"deep": {"x": None, "y": True, "s": "é😀\n"}}}
        if choice == 5:
            return {"query": "x" * rng.randint(0, 50), "n": 1.25}
        return {"path": p, "extra": "\u2028\u00a0"}

    def assistant(self, n_calls: int, *, text: bool = True) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        rng = self.rng
        content: list[dict[str, Any]] = []
        if rng.random() < 0.25:
            content.append({"type": "thinking", "thinking": self.sized_text(), "thinkingSignature": "sig"})
        if text or rng.random() < 0.3:
            content.append({"type": "text", "text": self.sized_text() if rng.random() < 0.95 else ""})
        calls: list[tuple[str, str]] = []
        for _ in range(n_calls):
            name = rng.choice(["read", "read", "write", "edit", "bash", "grep", "odd"])
            if name == "odd":
                name = rng.choice(["read", "write", "edit", "my_tool"])
                args = self.tool_args("odd")
            else:
                args = self.tool_args(name)
            self.call_no += 1
            cid = f"call_{self.call_no}"
            content.append({"type": "toolCall", "id": cid, "name": name, "arguments": args})
            calls.append((cid, name))
        stop = "toolUse" if n_calls else "stop"
        r = rng.random()
        extra: dict[str, Any] = {}
        if r < 0.04:
            stop = "aborted"
        elif r < 0.08:
            stop = "error"
            extra["errorMessage"] = rng.choice(["prompt is too long: 300000 tokens", "overloaded", ""])
        elif r < 0.1:
            stop = "length"
        provider, model = rng.choice(PROVIDERS)
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": "anthropic-messages",
            "provider": provider,
            "model": model,
            "usage": self.usage(),
            "stopReason": stop,
            **extra,
            "timestamp": self.ms(),
        }
        return msg, calls

    def tool_result(self, cid: str, name: str) -> dict[str, Any]:
        rng = self.rng
        r = rng.random()
        content: list[dict[str, Any]]
        if r < 0.05:
            content = []
        elif r < 0.1:
            content = [{"type": "text", "text": ""}]
        else:
            content = [{"type": "text", "text": self.sized_text(big_ok=True)}]
            if rng.random() < 0.1:
                content.append({"type": "image", "data": "aGk=", "mimeType": "image/png"})
            if rng.random() < 0.1:
                content.append({"type": "text", "text": self.text(1, 20)})
        return {
            "role": "toolResult",
            "toolCallId": cid,
            "toolName": name,
            "content": content,
            "isError": rng.random() < 0.1,
            "timestamp": self.ms(),
        }

    # ---- entries ------------------------------------------------------------------------
    def metadata(self) -> None:
        rng = self.rng
        k = rng.randint(0, 5)
        if k == 0:
            provider, model = rng.choice(PROVIDERS)
            self.add("model_change", {"provider": provider, "modelId": model})
        elif k == 1:
            self.add("thinking_level_change", {"thinkingLevel": rng.choice(["off", "low", "high"])})
        elif k == 2:
            self.add("custom", {"customType": "ext-state", "data": {"n": rng.randint(0, 9)}})
        elif k == 3 and self.entries:
            target = rng.choice(self.entries)["id"]
            fields: dict[str, Any] = {"targetId": target}
            if rng.random() < 0.8:
                fields["label"] = self.text(1, 12)
            self.add("label", fields)
        elif k == 4:
            self.add("session_info", {"name": self.text(1, 20)})
        else:
            self.add("custom", {"customType": "other"})

    def maybe_metadata(self, p: float = 0.08) -> None:
        while self.rng.random() < p:
            self.metadata()

    def turn_start(self) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.8:
            self.add(
                "message",
                {"message": {"role": "user", "content": self.user_content(), "timestamp": self.ms()}},
            )
        elif r < 0.88:
            msg: dict[str, Any] = {
                "role": "bashExecution",
                "command": rng.choice(["ls", "npm test", "git status"]),
                "output": self.sized_text(big_ok=True) if rng.random() < 0.85 else "",
                "exitCode": rng.choice([0, 0, 1, 2]),
                "cancelled": rng.random() < 0.1,
                "truncated": rng.random() < 0.2,
                "timestamp": self.ms(),
            }
            if msg["truncated"] and rng.random() < 0.7:
                msg["fullOutputPath"] = "/tmp/pi-bash-0123456789abcdef.log"
            if rng.random() < 0.15:
                msg["excludeFromContext"] = True
            self.add("message", {"message": msg})
        elif r < 0.96:
            fields: dict[str, Any] = {
                "customType": rng.choice(["note", "reminder"]),
                "content": self.sized_text()
                if rng.random() < 0.5
                else [{"type": "text", "text": self.sized_text()}],
                "display": rng.random() < 0.5,
            }
            if rng.random() < 0.3:
                fields["details"] = {"k": 1}
            self.add("custom_message", fields)
        else:
            self.branch_summary_here()

    def branch_summary_here(self, parent: str | bool | None = True) -> dict[str, Any]:
        rng = self.rng
        fields: dict[str, Any] = {
            "fromId": self.leaf or "root",
            "summary": self.sized_text() if rng.random() < 0.85 else "",
        }
        if rng.random() < 0.6:
            fields["details"] = {
                "readFiles": rng.sample(PATHS, rng.randint(0, 3)),
                "modifiedFiles": rng.sample(PATHS, rng.randint(0, 2)),
            }
        if rng.random() < 0.2:
            fields["fromHook"] = True
        return self.add("branch_summary", fields, parent=parent)

    def turn(self, long: bool = False) -> None:
        rng = self.rng
        self.turn_start()
        self.maybe_metadata()
        steps = rng.randint(8, 16) if long else rng.choice([0, 0, 1, 1, 2, 3, 4])
        for _ in range(steps):
            n_calls = rng.choice([1, 1, 1, 2, 3])
            msg, calls = self.assistant(n_calls, text=rng.random() < 0.4)
            self.add("message", {"message": msg})
            if msg["stopReason"] in ("aborted", "error"):
                return
            for cid, name in calls:
                self.add("message", {"message": self.tool_result(cid, name)})
                self.maybe_metadata(0.04)
        if rng.random() < 0.92:
            msg, _ = self.assistant(0)
            self.add("message", {"message": msg})
        self.maybe_metadata()

    def path_ids(self, leaf: str | None = None) -> list[str]:
        out: list[str] = []
        cur = self.leaf if leaf is None else leaf
        while cur is not None:
            out.append(cur)
            cur = self.by_id[cur]["parentId"]
        return out[::-1]

    def compaction_here(self) -> None:
        rng = self.rng
        path = [self.by_id[i] for i in self.path_ids()]
        prev = max((k for k, e in enumerate(path) if e["type"] == "compaction"), default=-1)
        candidates = path[prev + 1 :]
        r = rng.random()
        if r < 0.1 or not candidates:
            first_kept = "deadbeef"
        elif r < 0.2 and prev >= 0:
            first_kept = path[max(0, prev - 1)]["id"]  # points before the previous compaction
        else:
            first_kept = rng.choice(candidates)["id"]
        fields: dict[str, Any] = {
            "summary": "## Goal\n" + self.sized_text(),
            "firstKeptEntryId": first_kept,
            "tokensBefore": rng.randint(1000, 200000),
        }
        if rng.random() < 0.7:
            fields["details"] = {
                "readFiles": rng.sample(PATHS, rng.randint(0, 3)),
                "modifiedFiles": rng.sample(PATHS, rng.randint(0, 3)),
            }
        if rng.random() < 0.2:
            fields["fromHook"] = True
        self.add("compaction", fields)

    def linear_session(self, turns: int) -> None:
        rng = self.rng
        if rng.random() < 0.7:
            self.metadata()
        for t in range(turns):
            if t > 0 and rng.random() < 0.1:
                self.compaction_here()
                self.maybe_metadata(0.2)
            self.turn(long=rng.random() < 0.1)
        if rng.random() < 0.05:
            self.compaction_here()  # path ending in a compaction


def make_path(seed: int) -> list[dict[str, Any]]:
    """One generated root->leaf path (a linear session)."""
    rng = random.Random(seed)
    kind = rng.random()
    g = SessionGen(seed, size_scale=rng.choice([0.5, 1.0, 1.0]))
    if kind < 0.03:
        return []
    if kind < 0.08:
        g.metadata()
        if rng.random() < 0.5:
            g.turn_start()
        return g.entries
    turns = rng.choice([1, 2, 3, 4, 5, 6, 8])
    g.linear_session(turns)
    return g.entries


def estimate_chars(entries: list[dict[str, Any]]) -> int:
    return len(json.dumps(entries, ensure_ascii=False)) // 8


def keep_budgets(rng: random.Random, entries: list[dict[str, Any]]) -> list[int | None]:
    t = max(estimate_chars(entries), 1)
    return [1, max(1, t // 20), max(1, t // 4), max(1, t * 2 // 3), t * 3, None, 10**9, rng.randint(1, t)]


_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any) -> str:
    """Compact-ish JSON, non-ASCII raw, lone surrogates (Pi can produce them) escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def record(o: Any, fn: str, args: dict[str, Any], entries: list[dict[str, Any]] | None) -> dict[str, Any]:
    full = dict(args)
    if entries is not None:
        full["entries"] = entries
    resp = o.request(fn, full)
    resp.pop("id", None)
    return {"fn": fn, "args": args, "response": resp}


def ref_messages(messages: list[Any], entries: list[dict[str, Any]]) -> list[Any]:
    """Replace each message that *is* a ``message`` entry's message by ``{"$entry": k}``.

    Keeps the golden files small (the path's entries are stored once per line); messages Pi built
    itself (summaries, custom messages, converted bash executions) stay inline. Lossless: the test
    expands ``{"$entry": k}`` to ``entries[k]["message"]``, and :func:`expand_refs` is checked here.
    """
    out: list[Any] = []
    k = 0
    for msg in messages:
        found = -1
        for j in [*range(k, len(entries)), *range(0, k)]:
            e = entries[j]
            if e["type"] == "message" and e["message"] == msg:
                found = j
                break
        if found < 0:
            out.append(msg)
        else:
            out.append({"$entry": found})
            k = found + 1
    assert expand_refs(out, entries) == messages
    return out


def expand_refs(messages: list[Any], entries: list[dict[str, Any]]) -> list[Any]:
    return [entries[m["$entry"]]["message"] if isinstance(m, dict) and "$entry" in m else m for m in messages]


def compress_preparation(resp: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    if not resp.get("ok") or resp.get("result") is None:
        return resp
    result = dict(resp["result"])
    for key in ("messagesToSummarize", "turnPrefixMessages"):
        result[key] = ref_messages(result[key], entries)
    return {**resp, "result": result}


def path_calls(o: Any, seed: int, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rng = random.Random(seed + 1)
    L = len(entries)
    calls: list[dict[str, Any]] = [record(o, "findValidCutPoints", {}, entries)]
    for _ in range(2):
        s = rng.randint(0, L)
        e = rng.randint(s, L)
        calls.append(record(o, "findValidCutPoints", {"startIndex": s, "endIndex": e}, entries))
    budgets = keep_budgets(rng, entries)
    for keep in budgets:
        args: dict[str, Any] = {} if keep is None else {"keepRecentTokens": keep}
        calls.append(record(o, "findCutPoint", args, entries))
    for _ in range(2):
        s = rng.randint(0, L)
        e = rng.randint(s, L)
        keep = rng.choice([1, 50, 400, 3000])
        calls.append(
            record(o, "findCutPoint", {"startIndex": s, "endIndex": e, "keepRecentTokens": keep}, entries)
        )
    if L:
        for _ in range(3):
            i = rng.randrange(L)
            s = rng.randint(0, i)
            calls.append(record(o, "findTurnStartIndex", {"entryIndex": i, "startIndex": s}, entries))

    # prepareCompaction: tiny, small, default (20000), large keep budgets
    for keep in (budgets[0], budgets[2], None, budgets[3]):
        settings = {} if keep is None else {"keepRecentTokens": keep}
        rec = record(o, "prepareCompaction", {"settings": settings}, entries)
        rec["response"] = compress_preparation(rec["response"], entries)
        calls.append(rec)

    messages = o.call("buildSessionContext", entries=entries)["messages"]
    est = record(o, "estimateContextTokens", {"messages": messages}, None)
    est["args"] = {"messages": ref_messages(messages, entries)}
    calls.append(est)
    if est["response"].get("ok"):
        tokens = est["response"]["result"]["tokens"]
        for window in (tokens + 16384, tokens + 16385, max(1, tokens // 2), 200000):
            calls.append(record(o, "shouldCompact", {"contextTokens": tokens, "contextWindow": window}, None))
        disabled = {"contextTokens": tokens, "contextWindow": 1, "settings": {"enabled": False}}
        calls.append(record(o, "shouldCompact", disabled, None))

    llm = o.call("convertToLlm", messages=messages)
    ser = record(o, "serializeConversation", {"messages": llm}, None)
    ser["args"] = {"messages": ref_messages(llm, entries)}
    calls.append(ser)
    fl = record(o, "computeFileLists", {"messages": messages}, None)
    fl["args"] = {"messages": ref_messages(messages, entries)}
    calls.append(fl)
    return calls


# ---- handpicked cases: spec 12 vectors, Pi's unit-test scenarios, edges ------------------------


def _entry(i: int, parent: str | None, type_: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": type_,
        "id": f"e{i}",
        "parentId": parent,
        "timestamp": f"2026-01-01T00:00:{i:02d}.000Z",
        **fields,
    }


def _chain(specs: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, (type_, fields) in enumerate(specs):
        out.append(_entry(i, out[-1]["id"] if out else None, type_, **fields))
    return out


def _u(text: Any, ts: int = 1) -> tuple[str, dict[str, Any]]:
    return ("message", {"message": {"role": "user", "content": text, "timestamp": ts}})


def _a(
    text: str | None = None, calls: list[tuple[str, dict[str, Any]]] = (), **extra: Any
) -> tuple[str, dict[str, Any]]:  # type: ignore[assignment]
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    for k, (name, args) in enumerate(calls):
        content.append({"type": "toolCall", "id": f"c{k}", "name": name, "arguments": args})
    msg = {
        "role": "assistant",
        "content": content,
        "api": "anthropic-messages",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
        "stopReason": "toolUse" if calls else "stop",
        "timestamp": 2,
        **extra,
    }
    return ("message", {"message": msg})


def _r(text: str, name: str = "read") -> tuple[str, dict[str, Any]]:
    return (
        "message",
        {
            "message": {
                "role": "toolResult",
                "toolCallId": "c0",
                "toolName": name,
                "content": [{"type": "text", "text": text}],
                "isError": False,
                "timestamp": 3,
            }
        },
    )


def spec_cut_entries() -> list[dict[str, Any]]:
    """Spec 12: [u(400)=100, a(400)=100, model_change, u(40)=10, a(40 + read)=16, toolResult(400)=100,
    a(40 + edit)=19, toolResult("ok")=1, a("done")=1]."""
    return _chain(
        [
            _u("u" * 400),
            _a("a" * 400),
            ("model_change", {"provider": "openai", "modelId": "gpt-5"}),
            _u("q" * 40),
            _a("b" * 40, [("read", {"path": "src/a.ts"})]),
            _r("r" * 400),
            _a("c" * 40, [("edit", {"path": "src/b.ts", "edits": []})]),
            _r("ok", "edit"),
            _a("done"),
        ]
    )


def custom_message_entries() -> list[dict[str, Any]]:
    """Pi compaction.test.ts: a 4000-char custom_message between "hello" and "ok"."""
    return _chain(
        [
            ("thinking_level_change", {"thinkingLevel": "off"}),
            _u("hello"),
            ("custom_message", {"customType": "note", "content": "x" * 4000, "display": True}),
            _a("ok"),
        ]
    )


def make_cases() -> list[tuple[str, str, dict[str, Any]]]:
    emoji_cut = "a" * 1999 + "😀" + "tail"  # the emoji's two code units straddle the 2000 cut
    llm_spec = [
        {"role": "user", "content": "hello", "timestamp": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm"},
                {"type": "text", "text": "ok"},
                {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a.ts", "offset": 5}},
                {"type": "toolCall", "id": "2", "name": "bash", "arguments": {"command": "ls"}},
            ],
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "1",
            "toolName": "read",
            "content": [{"type": "text", "text": "res"}],
            "isError": False,
            "timestamp": 3,
        },
        {
            "role": "user",
            "content": [{"type": "text", "text": "p1"}, {"type": "text", "text": "p2"}],
            "timestamp": 4,
        },
    ]

    def tool_result(text: str) -> dict[str, Any]:
        return {
            "role": "toolResult",
            "toolCallId": "x",
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
            "isError": False,
            "timestamp": 1,
        }

    def asst(content: list[dict[str, Any]]) -> dict[str, Any]:
        return {"role": "assistant", "content": content, "timestamp": 1}

    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("spec 12 serializeConversation", "serializeConversation", {"messages": llm_spec}),
        ("tool result 5000 chars", "serializeConversation", {"messages": [tool_result("x" * 5000)]}),
        ("tool result 1500 chars", "serializeConversation", {"messages": [tool_result("x" * 1500)]}),
        ("tool result exactly 2000", "serializeConversation", {"messages": [tool_result("y" * 2000)]}),
        ("tool result 2001", "serializeConversation", {"messages": [tool_result("y" * 2001)]}),
        (
            "tool result emoji inside the first 2000 units",
            "serializeConversation",
            {"messages": [tool_result("😀" * 1000 + "z")]},
        ),
        (
            "tool result emoji straddles the cut",
            "serializeConversation",
            {"messages": [tool_result(emoji_cut)]},
        ),
        (
            "long user and assistant text never cut",
            "serializeConversation",
            {
                "messages": [
                    {"role": "user", "content": "u" * 5000, "timestamp": 1},
                    asst([{"type": "text", "text": "v" * 5000}]),
                ]
            },
        ),
        (
            "assistant empty text block still labelled",
            "serializeConversation",
            {"messages": [asst([{"type": "text", "text": ""}])]},
        ),
        (
            "assistant two texts and two thinkings",
            "serializeConversation",
            {
                "messages": [
                    asst(
                        [
                            {"type": "thinking", "thinking": "t1"},
                            {"type": "text", "text": "a"},
                            {"type": "thinking", "thinking": "t2"},
                            {"type": "text", "text": "b"},
                        ]
                    )
                ]
            },
        ),
        (
            "tool call argument order and numbers",
            "serializeConversation",
            {
                "messages": [
                    asst(
                        [
                            {
                                "type": "toolCall",
                                "id": "1",
                                "name": "f",
                                "arguments": {
                                    "b": 1,
                                    "10": [1.5, 2.0, 1e21, 1e-7],
                                    "2": {"z": None, "1": "é😀\u2028"},
                                    "a": True,
                                },
                            }
                        ]
                    )
                ]
            },
        ),
        (
            "tool call with no arguments",
            "serializeConversation",
            {"messages": [asst([{"type": "toolCall", "id": "1", "name": "f", "arguments": {}}])]},
        ),
        (
            "empty user text skipped",
            "serializeConversation",
            {
                "messages": [
                    {"role": "user", "content": "", "timestamp": 1},
                    {"role": "user", "content": [], "timestamp": 1},
                ]
            },
        ),
        (
            "image-only tool result skipped",
            "serializeConversation",
            {
                "messages": [
                    {
                        "role": "toolResult",
                        "toolCallId": "x",
                        "toolName": "read",
                        "content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}],
                        "isError": False,
                        "timestamp": 1,
                    }
                ]
            },
        ),
        ("no messages", "serializeConversation", {"messages": []}),
        (
            "computeFileLists spec 12",
            "computeFileLists",
            {
                "messages": [
                    asst(
                        [
                            {"type": "toolCall", "id": str(k), "name": n, "arguments": {"path": p}}
                            for k, (n, p) in enumerate(
                                [("read", "z"), ("read", "a"), ("read", "m"), ("write", "m"), ("edit", "e")]
                            )
                        ]
                    )
                ]
            },
        ),
        (
            "computeFileLists js sort order (astral before U+FFxx)",
            "computeFileLists",
            {
                "messages": [
                    asst(
                        [
                            {"type": "toolCall", "id": str(k), "name": "read", "arguments": {"path": p}}
                            for k, p in enumerate(["\uff21.md", "😀.md", "b.md", "B.md", "é.md", "\ufb01.md"])
                        ]
                    )
                ]
            },
        ),
        (
            "computeFileLists odd paths ignored",
            "computeFileLists",
            {
                "messages": [
                    asst(
                        [
                            {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": ""}},
                            {"type": "toolCall", "id": "2", "name": "write", "arguments": {"path": 5}},
                            {"type": "toolCall", "id": "3", "name": "grep", "arguments": {"path": "g"}},
                            {"type": "toolCall", "id": "4", "name": "edit", "arguments": {"file": "x"}},
                        ]
                    ),
                    {"role": "user", "content": "read path a", "timestamp": 1},
                ]
            },
        ),
    ]
    spec = spec_cut_entries()
    for keep in (1, 10, 50, 120, 200, 300, 1000):
        cases.append(
            (f"spec 12 findCutPoint keep {keep}", "findCutPoint", {"entries": spec, "keepRecentTokens": keep})
        )
    cases.append(
        (
            "spec 12 prepareCompaction keep 120",
            "prepareCompaction",
            {"entries": spec, "settings": {"keepRecentTokens": 120}},
        )
    )
    cases.append(("spec 12 findValidCutPoints", "findValidCutPoints", {"entries": spec}))
    cm = custom_message_entries()
    for keep in (1, 2, 1000, 1001, 1002):
        cases.append(
            (
                f"custom_message 4000 chars keep {keep}",
                "findCutPoint",
                {"entries": cm, "keepRecentTokens": keep},
            )
        )
    alt = _chain(
        [
            _u(f"user message {k} " + "x" * 400) if k % 2 == 0 else _a(f"assistant {k} " + "y" * 400)
            for k in range(20)
        ]
    )
    cases.append(("alternating x10 keep 2500", "findCutPoint", {"entries": alt, "keepRecentTokens": 2500}))
    cases.append(("alternating x10 keep 50000", "findCutPoint", {"entries": alt, "keepRecentTokens": 50000}))
    one = _chain([_a("only")])
    cases.append(("single assistant", "findCutPoint", {"entries": one, "keepRecentTokens": 1}))
    cases.append(("empty path findCutPoint", "findCutPoint", {"entries": []}))
    cases.append(("empty path prepareCompaction", "prepareCompaction", {"entries": []}))
    cases.append(
        (
            "endIndex past the end",
            "findCutPoint",
            {"entries": one, "startIndex": 0, "endIndex": 3, "keepRecentTokens": 1},
        )
    )
    cases.append(
        (
            "findTurnStartIndex past the end",
            "findTurnStartIndex",
            {"entries": one, "entryIndex": 4, "startIndex": 0},
        )
    )
    cases.append(
        (
            "metadata only",
            "prepareCompaction",
            {
                "entries": _chain(
                    [
                        ("model_change", {"provider": "p", "modelId": "m"}),
                        ("label", {"targetId": "e0", "label": "x"}),
                    ]
                )
            },
        )
    )
    # repeated compaction (Pi compaction.test.ts): kept messages still fit -> undefined; keep 100 -> re-summarised
    rep = _chain(
        [
            _u("u1 " + "a" * 300),
            _a("a1 " + "b" * 300),
            _u("u2 " + "c" * 300),
            _a("a2 " + "d" * 300),
            (
                "compaction",
                {
                    "summary": "First summary",
                    "firstKeptEntryId": "e2",
                    "tokensBefore": 1000,
                    "details": {"readFiles": ["r.ts"], "modifiedFiles": ["m.ts"]},
                },
            ),
            _u("u3 " + "e" * 300),
            _a("a3 " + "f" * 300),
        ]
    )
    cases.append(("repeated compaction, kept still fits", "prepareCompaction", {"entries": rep}))
    cases.append(
        (
            "repeated compaction keep 100",
            "prepareCompaction",
            {"entries": rep, "settings": {"keepRecentTokens": 100}},
        )
    )
    hook = [dict(e) for e in rep]
    hook[4] = {**hook[4], "fromHook": True}
    cases.append(
        (
            "previous compaction from a hook: its files not carried",
            "prepareCompaction",
            {"entries": hook, "settings": {"keepRecentTokens": 100}},
        )
    )
    ends = [*rep, _entry(7, "e6", "compaction", summary="S2", firstKeptEntryId="e5", tokensBefore=5)]
    cases.append(
        (
            "path ends with a compaction",
            "prepareCompaction",
            {"entries": ends, "settings": {"keepRecentTokens": 1}},
        )
    )
    missing = [dict(e) for e in rep]
    missing[4] = {**missing[4], "firstKeptEntryId": "gone"}
    cases.append(
        (
            "previous firstKeptEntryId missing",
            "prepareCompaction",
            {"entries": missing, "settings": {"keepRecentTokens": 1}},
        )
    )
    for tokens, window, settings in (
        (95000, 100000, {"reserveTokens": 10000}),
        (89000, 100000, {"reserveTokens": 10000}),
        (90000, 100000, {"reserveTokens": 10000}),
        (95000, 100000, {"reserveTokens": 10000, "enabled": False}),
    ):
        cases.append(
            (
                f"shouldCompact {tokens}/{window}",
                "shouldCompact",
                {"contextTokens": tokens, "contextWindow": window, "settings": settings},
            )
        )
    return cases


def write_cases(o: Any) -> None:
    out = []
    for name, fn, args in make_cases():
        resp = o.request(fn, args)
        resp.pop("id", None)
        out.append({"name": name, "fn": fn, "args": args, "response": resp})
    path = GOLDEN / "compaction_cases.json"
    text = dumps(
        {"source": "Pi 0.85.0 via pi-oracle", "generator": "tests/golden/make_compaction.py", "cases": out}
    )
    path.write_text(text + "\n", encoding="utf-8")
    print(f"{path.relative_to(ROOT)}: {len(out)} cases")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paths", type=int, default=320)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--files", type=int, default=2, help="split the paths over this many files")
    ns = ap.parse_args()
    sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
    from oracle_client import Oracle

    header = {
        "source": "Pi 0.85.0 via pi-oracle",
        "generator": "tests/golden/make_compaction.py",
        "args": {"paths": ns.paths, "seed": ns.seed, "files": ns.files},
        "refs": '{"$entry": k} in args/results stands for entries[k]["message"] of the same line',
    }
    per_file = -(-ns.paths // ns.files)
    with Oracle() as o:
        write_cases(o)
        for f in range(ns.files):
            lines = [dumps({**header, "part": f + 1})]
            for n in range(f * per_file, min(ns.paths, (f + 1) * per_file)):
                seed = ns.seed * 100_000 + n
                entries = make_path(seed)
                calls = path_calls(o, seed, entries)
                lines.append(
                    dumps({"name": f"path{n:03d}", "seed": seed, "entries": entries, "calls": calls})
                )
            path = GOLDEN / f"compaction_paths_{f + 1}.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            print(f"{path.relative_to(ROOT)}: {len(lines) - 1} paths, {path.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
