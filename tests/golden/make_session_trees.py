"""Record golden session-context answers from the real Pi 0.85.0 (via ../shared/pi-oracle).

Usage (from the repo root; needs the oracle installed, takes a few minutes):

    .venv/bin/python tests/golden/make_session_trees.py

Writes (compact JSON, one case per line inside each file):

* ``tests/golden/session_trees_{0,1,2}.json`` -- 330 random session trees (fixed seed). For each
  tree: the entries; per entry Pi's ``sessionEntryToContextMessages(entry)`` and the
  ``convertToLlm`` of those messages; per leaf (every entry id, plus leafId absent, ``null``,
  ``""`` and an unknown id) Pi's ``buildContextEntries`` (as indices into the entries) and the
  ``thinkingLevel``/``model`` of ``buildSessionContext``; ``getLatestCompactionEntry``.
  Storage is factored, but only after checking, for every leaf, that Pi's full
  ``buildSessionContext(...).messages`` equals the per-entry messages of the context entries
  concatenated, and that Pi's ``convertToLlm`` of the whole context equals the per-entry
  conversions concatenated (the script stops if either differs). ``ctx`` is omitted where Pi's
  answer is exactly ``[entry.message]``; ``llm`` is omitted where it equals ``ctx``.
* ``tests/golden/session_trees_fixture.json`` -- the oracle's ``fixtures/session.jsonl`` (copied
  to ``tests/fixtures/pi_session.jsonl``): full ``buildSessionContext``/``buildContextEntries``/
  ``convertToLlm`` answers for every leaf, unfactored.
* ``tests/golden/session_trees_messages.json`` -- message-level vectors: ``convertToLlm``,
  ``bashExecutionToText``, ``messageConstants``, ``sessionEntryToContextMessages`` edge cases,
  ISO timestamp parsing (also under two fixed time zones), and failures (``ok:false`` answers).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ORACLE_DIR = ROOT.parent / "shared" / "pi-oracle"
sys.path.insert(0, str(ORACLE_DIR))

from oracle_client import Oracle  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"
SEED = 20260901
N_TREES = 330
N_FILES = 3
ABSENT = "__absent__"


def dumps(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


# ----------------------------------------------------------------------------------------------
# Random session trees
# ----------------------------------------------------------------------------------------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
PROVIDERS = [
    ("anthropic", "claude-sonnet-4-5", "anthropic-messages"),
    ("openai", "gpt-5", "openai-responses"),
    ("google", "gemini-2.5-pro", "google-generative-ai"),
    ("ollama", "qwen3:8b", "openai-completions"),
]
WORDS = "alpha beta gamma delta fix bug read file test run édition 😀 日本 x=1 \\n `code` <tag>".split()


class TreeGen:
    def __init__(self, rng: random.Random, size: int, style: dict[str, Any]) -> None:
        self.rng = rng
        self.size = size
        self.style = style
        self.entries: list[dict[str, Any]] = []
        self.leaf: str | None = None
        self.ids: list[str] = []
        self.t = 1767225600000 + rng.randrange(0, 10**9)

    # -- helpers -------------------------------------------------------------------------------
    def text(self, lo: int = 1, hi: int = 8) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo, hi)))

    def new_id(self) -> str:
        if self.ids and self.rng.random() < self.style["dup_ids"]:
            return self.rng.choice(self.ids)
        while True:
            i = f"{self.rng.getrandbits(32):08x}"
            if i not in self.ids:
                return i

    def iso(self) -> Any:
        r = self.rng.random()
        if not self.style["equal_ts"]:
            self.t += self.rng.randint(1, 90_000)
        ms = self.t
        from datetime import datetime, timedelta, timezone

        d = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
        fmt = self.style["ts_format"]
        if r < self.style["bad_ts"]:
            return self.rng.choice(["garbage", "", "2026-13-45T00:00:00Z", None, 12345, "__missing__"])
        if fmt == "ms" or (fmt == "mixed" and r < 0.5):
            return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"
        if fmt == "s" or (fmt == "mixed" and r < 0.7):
            return d.strftime("%Y-%m-%dT%H:%M:%SZ")
        if fmt == "offset" or (fmt == "mixed" and r < 0.85):
            d2 = d + timedelta(hours=2)
            return d2.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d2.microsecond // 1000:03d}+02:00"
        return d.strftime("%Y-%m-%d")

    def msg_ts(self) -> Any:
        return self.rng.choice([self.t, self.t, self.t, self.t + 1, 0])

    def add(self, body: dict[str, Any], *, parent: Any = "__leaf__", order: str = "common_first") -> str:
        eid = self.new_id()
        if parent == "__leaf__":
            parent = self.leaf
        ts = self.iso()
        common = {"id": eid, "parentId": parent, "timestamp": ts}
        if ts == "__missing__":
            del common["timestamp"]
        etype = body.pop("type")
        if order == "common_last":
            entry = {"type": etype, **body, **common}
        else:
            entry = {"type": etype, **common, **body}
        self.entries.append(entry)
        if eid not in self.ids:
            self.ids.append(eid)
        self.leaf = eid
        return eid

    def path_ids(self) -> list[str]:
        index = {e["id"]: e for e in self.entries}
        out: list[str] = []
        cur = index.get(self.leaf) if self.leaf else None
        seen: set[int] = set()
        while cur is not None and id(cur) not in seen:
            seen.add(id(cur))
            out.append(cur["id"])
            cur = index.get(cur["parentId"]) if cur.get("parentId") else None
        return out[::-1]

    def usage(self) -> dict[str, Any]:
        i, o = self.rng.randint(1, 90000), self.rng.randint(1, 4000)
        cr = self.rng.choice([0, 0, self.rng.randint(0, 5000)])
        return {
            "input": i,
            "output": o,
            "cacheRead": cr,
            "cacheWrite": 0,
            "totalTokens": i + o + cr,
            "cost": {"input": 0.001, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.003},
        }

    def blocks(self, images: bool) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(1, 4)):
            if images and self.rng.random() < 0.4:
                out.append({"type": "image", "data": PNG, "mimeType": "image/png"})
            else:
                out.append({"type": "text", "text": self.text()})
        return out

    # -- entry kinds -------------------------------------------------------------------------
    def user(self) -> None:
        r = self.rng.random()
        msg: dict[str, Any] = {"role": "user"}
        if r < 0.45:
            msg["content"] = self.text()
        elif r < 0.8:
            msg["content"] = self.blocks(images=True)
        elif r < 0.87:
            msg["content"] = None
        elif r < 0.92:
            pass  # content missing
        else:
            msg["content"] = self.rng.choice(["", []])
        msg["timestamp"] = self.msg_ts()
        self.add({"type": "message", "message": msg})

    def assistant(self) -> None:
        prov, model, api = self.rng.choice(PROVIDERS)
        content: Any = []
        for _ in range(self.rng.randint(1, 3)):
            k = self.rng.random()
            if k < 0.5:
                content.append({"type": "text", "text": self.text()})
            elif k < 0.7:
                content.append({"type": "thinking", "thinking": self.text(), "thinkingSignature": "sig"})
            else:
                content.append(
                    {
                        "type": "toolCall",
                        "id": f"call_{self.rng.getrandbits(20):x}",
                        "name": self.rng.choice(["read", "bash", "edit", "write"]),
                        "arguments": {"path": f"{self.rng.choice(WORDS)}.py"},
                    }
                )
        if self.rng.random() < 0.05:
            content = None
        msg: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "api": api,
            "provider": prov,
            "model": model,
        }
        if self.rng.random() < 0.03:
            del msg["provider"]
        if self.rng.random() < 0.1:
            msg["responseId"] = "resp_1"
        msg["usage"] = self.usage()
        msg["stopReason"] = self.rng.choice(["stop", "toolUse", "length", "error", "aborted"])
        if msg["stopReason"] == "error":
            msg["errorMessage"] = "boom"
        msg["timestamp"] = self.msg_ts()
        self.add({"type": "message", "message": msg})

    def tool_result(self) -> None:
        msg: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": f"call_{self.rng.getrandbits(20):x}",
            "toolName": self.rng.choice(["read", "bash", "grep"]),
            "content": self.blocks(images=True),
        }
        if self.rng.random() < 0.08:
            msg["content"] = None
        if self.rng.random() < 0.3:
            msg["details"] = {"truncation": {"truncated": self.rng.random() < 0.5}}
        msg["isError"] = self.rng.random() < 0.2
        msg["timestamp"] = self.msg_ts()
        self.add({"type": "message", "message": msg})

    def bash(self) -> None:
        msg: dict[str, Any] = {
            "role": "bashExecution",
            "command": self.rng.choice(["ls", "npm test", "echo `hi`", "cat a.txt | head", ""]),
            "output": self.rng.choice(["", "a\nb", "ok\n", "line 😀", "```nested```"]),
        }
        ec = self.rng.random()
        if ec < 0.55:
            msg["exitCode"] = 0
        elif ec < 0.8:
            msg["exitCode"] = self.rng.choice([1, 2, 127, -1])
        elif ec < 0.9:
            msg["exitCode"] = None
        # else: missing (undefined when killed)
        msg["cancelled"] = self.rng.random() < 0.15
        msg["truncated"] = self.rng.random() < 0.3
        if self.rng.random() < 0.5:
            msg["fullOutputPath"] = self.rng.choice(["/tmp/pi-bash-0123456789abcdef.log", ""])
        msg["timestamp"] = self.msg_ts()
        if self.rng.random() < 0.3:
            msg["excludeFromContext"] = self.rng.random() < 0.7
        self.add({"type": "message", "message": msg})

    def odd_message(self) -> None:
        r = self.rng.random()
        if r < 0.4:
            msg: dict[str, Any] = {
                "role": "custom",
                "customType": "ext",
                "content": self.rng.choice([self.text(), self.blocks(images=True)]),
                "display": True,
                "timestamp": self.msg_ts(),
            }
        elif r < 0.6:
            msg = {
                "role": "hookMessage",
                "customType": "old",
                "content": "v2 hook",
                "display": True,
                "timestamp": 1,
            }
        elif r < 0.8:
            msg = {
                "role": "branchSummary",
                "summary": self.text(),
                "fromId": "abc",
                "timestamp": self.msg_ts(),
            }
        else:
            msg = {
                "role": "compactionSummary",
                "summary": self.text(),
                "tokensBefore": 5,
                "timestamp": self.msg_ts(),
            }
        self.add({"type": "message", "message": msg})

    def thinking(self) -> None:
        body: dict[str, Any] = {
            "type": "thinking_level_change",
            "thinkingLevel": self.rng.choice(["off", "minimal", "low", "medium", "high", "xhigh"]),
        }
        self.add(body)

    def model_change(self) -> None:
        prov, model, _ = self.rng.choice(PROVIDERS)
        self.add({"type": "model_change", "provider": prov, "modelId": model})

    def compaction(self) -> None:
        path = self.path_ids()
        r = self.rng.random()
        if path and r < 0.7:
            first = self.rng.choice(path)
        elif self.ids and r < 0.85:
            first = self.rng.choice(self.ids)
        else:
            first = "ffffffff"
        body: dict[str, Any] = {
            "type": "compaction",
            "summary": self.rng.choice(["## Goal\n" + self.text(), self.text(), ""]),
            "firstKeptEntryId": first,
            "tokensBefore": self.rng.randint(1000, 200000),
        }
        if self.rng.random() < 0.5:
            body["details"] = {"readFiles": ["a.py"], "modifiedFiles": []}
        if self.rng.random() < 0.3:
            body["usage"] = self.usage()
        if self.rng.random() < 0.2:
            body["fromHook"] = self.rng.random() < 0.5
        self.add(body)

    def branch_summary(self) -> None:
        # branchWithSummary(target, ...): parent = target (or null), fromId = old leaf (or "root")
        target = self.rng.choice([*self.ids, None]) if self.ids else None
        from_id = self.leaf if self.leaf is not None else "root"
        body: dict[str, Any] = {
            "type": "branch_summary",
            "fromId": from_id,
            "summary": self.rng.choice(
                ["", self.text(), "The user explored a different branch.\n" + self.text()]
            ),
        }
        if self.rng.random() < 0.4:
            body["details"] = {"readFiles": [], "modifiedFiles": ["b.py"]}
        if self.rng.random() < 0.2:
            body["usage"] = self.usage()
        if self.rng.random() < 0.2:
            body["fromHook"] = True
        self.add(body, parent=target)

    def custom(self) -> None:
        body: dict[str, Any] = {"type": "custom", "customType": self.rng.choice(["state", "todo"])}
        if self.rng.random() < 0.7:
            body["data"] = {"n": self.rng.randint(0, 9)}
        self.add(body, order="common_last")

    def custom_message(self) -> None:
        r = self.rng.random()
        content: Any
        if r < 0.5:
            content = self.text()
        elif r < 0.85:
            content = self.blocks(images=True)
        elif r < 0.93:
            content = None
        else:
            content = "__missing__"
        body: dict[str, Any] = {"type": "custom_message", "customType": self.rng.choice(["note", "ctx"])}
        if content != "__missing__":
            body["content"] = content
        body["display"] = self.rng.random() < 0.6
        if self.rng.random() < 0.4:
            body["details"] = {"k": "v"}
        self.add(body, order="common_last")

    def label(self) -> None:
        if not self.ids:
            return
        body: dict[str, Any] = {"type": "label", "targetId": self.rng.choice(self.ids)}
        if self.rng.random() < 0.7:
            body["label"] = self.rng.choice(["checkpoint", "try-2", ""])
        self.add(body)

    def session_info(self) -> None:
        body: dict[str, Any] = {"type": "session_info"}
        if self.rng.random() < 0.8:
            body["name"] = self.text(1, 3)
        self.add(body)

    def move(self) -> None:
        r = self.rng.random()
        if r < 0.75 and self.ids:
            self.leaf = self.rng.choice(self.ids)  # branch(id)
        elif r < 0.85:
            self.leaf = None  # resetLeaf(): next append is a new root
        elif r < 0.95:
            self.leaf = "0rphan" + f"{self.rng.getrandbits(8):02x}"  # orphan: parent not in session
        else:
            self.leaf = ""  # empty parent id: falsy, the walk stops

    def build(self) -> list[dict[str, Any]]:
        kinds = [
            (self.user, 18),
            (self.assistant, 18),
            (self.tool_result, 10),
            (self.bash, 5),
            (self.odd_message, 1),
            (self.thinking, 3),
            (self.model_change, 3),
            (self.compaction, self.style["compactions"]),
            (self.branch_summary, self.style["branches"]),
            (self.custom, 2),
            (self.custom_message, 4),
            (self.label, 2),
            (self.session_info, 1),
            (self.move, self.style["moves"]),
        ]
        fns = [k for k, _ in kinds]
        weights = [w for _, w in kinds]
        while len(self.entries) < self.size:
            self.rng.choices(fns, weights)[0]()
        return self.entries


def has_cycle(entries: list[dict[str, Any]]) -> bool:
    index = {e["id"]: e for e in entries}
    for start in [*index.values(), entries[-1]]:
        seen: set[int] = set()
        cur: dict[str, Any] | None = start
        while cur is not None:
            if id(cur) in seen:
                return True
            seen.add(id(cur))
            cur = index.get(cur["parentId"]) if cur.get("parentId") else None
    return False


def random_tree(rng: random.Random, n: int) -> list[dict[str, Any]]:
    while True:
        style = {
            "dup_ids": 0.03 if n % 23 == 0 else 0.0,
            "equal_ts": n % 11 == 0,
            "ts_format": rng.choice(["ms", "ms", "ms", "s", "offset", "date", "mixed"]),
            "bad_ts": 0.05 if n % 13 == 0 else 0.0,
            "compactions": rng.choice([0, 2, 4, 8]),
            "branches": rng.choice([0, 2, 4]),
            "moves": rng.choice([1, 3, 6]),
        }
        size = rng.choice([3, 8, 15, 25, 40, 60]) if n % 37 else rng.choice([90, 120])
        entries = TreeGen(rng, size, style).build()
        if not has_cycle(entries):
            return entries


# ----------------------------------------------------------------------------------------------
# Recording
# ----------------------------------------------------------------------------------------------


def leaf_args(entries: list[dict[str, Any]], leaf: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"entries": entries}
    if leaf != ABSENT:
        args["leafId"] = leaf
    return args


def index_of(entries: list[dict[str, Any]], returned: list[dict[str, Any]]) -> list[int]:
    """Positions of Pi's returned entries in the tree (the last of fully identical entries)."""
    last: dict[str, int] = {dumps(e): i for i, e in enumerate(entries)}
    return [last[dumps(r)] for r in returned]


def record_tree(o: Oracle, entries: list[dict[str, Any]]) -> dict[str, Any]:
    per_entry: list[dict[str, Any]] = []
    for e in entries:
        ctx = o.call("sessionEntryToContextMessages", entry=e)
        llm = o.call("convertToLlm", messages=ctx)
        row: dict[str, Any] = {}
        if not (e.get("type") == "message" and ctx == [e.get("message")]):
            row["ctx"] = ctx
        if llm != ctx:
            row["llm"] = llm
        per_entry.append(row)

    def ctx_of(i: int) -> list[Any]:
        return per_entry[i].get("ctx", [entries[i].get("message")])

    def llm_of(i: int) -> list[Any]:
        return per_entry[i].get("llm", ctx_of(i))

    ids = list(dict.fromkeys(e["id"] for e in entries))
    leaves: list[dict[str, Any]] = []
    for leaf in [*ids, ABSENT, None, "", "nonexistent"]:
        args = leaf_args(entries, leaf)
        sc = o.call("buildSessionContext", **args)
        ce = o.call("buildContextEntries", **args)
        idx = index_of(entries, ce)
        flat = [m for i in idx for m in ctx_of(i)]
        if flat != sc["messages"]:
            raise SystemExit(f"factoring check failed (messages) for leaf {leaf!r}")
        llm_full = o.call("convertToLlm", messages=sc["messages"])
        if [m for i in idx for m in llm_of(i)] != llm_full:
            raise SystemExit(f"factoring check failed (convertToLlm) for leaf {leaf!r}")
        settings = {k: v for k, v in sc.items() if k != "messages"}
        row = {"leafId": leaf, "ctx": idx, "settings": settings}
        if leaf == ABSENT:
            row = {"absent": True, "ctx": idx, "settings": settings}
        leaves.append(row)
    latest = o.call("getLatestCompactionEntry", entries=entries)
    return {
        "entries": entries,
        "perEntry": per_entry,
        "leaves": leaves,
        "latestCompaction": None if latest is None else index_of(entries, [latest])[0],
    }


def record_fixture(o: Oracle) -> None:
    src = ORACLE_DIR / "fixtures" / "session.jsonl"
    dst = ROOT / "tests" / "fixtures" / "pi_session.jsonl"
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    rows = [json.loads(line) for line in dst.read_text().splitlines() if line.strip()]
    entries = rows[1:]
    cases = []
    for leaf in [*(e["id"] for e in entries), ABSENT, None, "", "nonexistent"]:
        args = leaf_args(entries, leaf)
        sc = o.request("buildSessionContext", args)
        ce = o.request("buildContextEntries", args)
        llm = o.request("convertToLlm", {"messages": sc["result"]["messages"]})
        cases.append(
            {"leaf": leaf, "buildSessionContext": sc, "buildContextEntries": ce, "convertToLlm": llm}
        )
    write_lines(GOLDEN / "session_trees_fixture.json", {"source": "pi-oracle fixtures/session.jsonl"}, cases)


def message_vectors(o: Oracle) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []

    def rec(fn: str, args: dict[str, Any], env: dict[str, str] | None = None) -> None:
        resp = o.request(fn, args, env=env)
        resp.pop("id", None)
        case: dict[str, Any] = {"fn": fn, "args": args, "response": resp}
        if env:
            case["env"] = env
        cases.append(case)

    rec("messageConstants", {})
    bash_variants = []
    for output in ["", "a\nb", "x"]:
        for exit_code in [0, 1, -2, None, "__missing__", "0", 1.5]:
            for cancelled in [False, True]:
                for truncated, path in [
                    (False, None),
                    (True, "/tmp/f.log"),
                    (True, None),
                    (True, ""),
                    (False, "/x"),
                ]:
                    m: dict[str, Any] = {"role": "bashExecution", "command": "ls -la", "output": output}
                    if exit_code != "__missing__":
                        m["exitCode"] = exit_code
                    m["cancelled"] = cancelled
                    m["truncated"] = truncated
                    if path is not None:
                        m["fullOutputPath"] = path
                    m["timestamp"] = 5
                    bash_variants.append(m)
    for m in bash_variants:
        rec("bashExecutionToText", {"message": m})
    odd_bash = [
        {"role": "bashExecution", "timestamp": 1},
        {
            "role": "bashExecution",
            "command": None,
            "output": 0,
            "exitCode": 3,
            "cancelled": 1,
            "truncated": "yes",
        },
        {
            "role": "bashExecution",
            "command": ["a", "b"],
            "output": {"o": 1},
            "exitCode": False,
            "cancelled": "",
        },
        {
            "role": "bashExecution",
            "command": 1.5,
            "output": "o",
            "exitCode": 0.0,
            "cancelled": 0,
            "truncated": 1,
            "fullOutputPath": 7,
        },
    ]
    for m in odd_bash:
        rec("bashExecutionToText", {"message": m})
    # §12 vectors and friends, one call each and all together
    conv = [
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "a\nb",
            "exitCode": 1,
            "cancelled": False,
            "truncated": True,
            "fullOutputPath": "/tmp/f.log",
            "timestamp": 1,
        },
        {
            "role": "bashExecution",
            "command": "echo",
            "output": "",
            "exitCode": None,
            "cancelled": True,
            "truncated": False,
            "timestamp": 2,
        },
        {
            "role": "bashExecution",
            "command": "secret",
            "output": "x",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 3,
            "excludeFromContext": True,
        },
        {
            "role": "bashExecution",
            "command": "kept",
            "output": "x",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
            "timestamp": 3,
            "excludeFromContext": False,
        },
        {
            "role": "bashExecution",
            "command": "nots",
            "output": "x",
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        },
        {"role": "custom", "customType": "n", "content": "note", "display": True, "timestamp": 4},
        {
            "role": "custom",
            "customType": "n",
            "content": [
                {"type": "text", "text": "t"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
            ],
            "display": False,
            "details": {"a": 1},
            "timestamp": 5,
        },
        {"role": "custom", "customType": "n", "display": False, "timestamp": 5},
        {"role": "custom", "customType": "n", "content": None, "display": False, "timestamp": 5},
        {"role": "branchSummary", "summary": "BS", "fromId": "x", "timestamp": 6},
        {"role": "branchSummary", "summary": "", "fromId": "x", "timestamp": 6},
        {"role": "branchSummary", "fromId": "x"},
        {"role": "compactionSummary", "summary": "CS", "tokensBefore": 10, "timestamp": 7},
        {"role": "compactionSummary", "summary": None, "tokensBefore": 10, "timestamp": 7},
        {"role": "user", "content": "hi", "timestamp": 8},
        {
            "role": "user",
            "content": [{"type": "image", "data": PNG, "mimeType": "image/png"}],
            "timestamp": 8,
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "yo"}],
            "api": "a",
            "provider": "p",
            "model": "m",
            "usage": {},
            "stopReason": "stop",
            "timestamp": 9,
        },
        {
            "role": "toolResult",
            "toolCallId": "c",
            "toolName": "read",
            "content": [],
            "isError": False,
            "timestamp": 10,
        },
        {"role": "hookMessage", "content": "old", "timestamp": 11},
        {"content": "no role"},
        {"role": "system", "content": "nope"},
    ]
    for m in conv:
        rec("convertToLlm", {"messages": [m]})
    rec("convertToLlm", {"messages": conv})
    rec("convertToLlm", {"messages": []})
    rec("convertToLlm", {"messages": [None]})
    rec("convertToLlm", {"messages": ["just a string", 5]})

    # sessionEntryToContextMessages edge cases
    base = {"id": "e", "parentId": None, "timestamp": "2026-01-01T00:00:00.000Z"}
    entries = [
        {**base, "type": "message", "message": {"role": "user", "content": None, "timestamp": 1}},
        {**base, "type": "message", "message": {"role": "user", "timestamp": 1}},
        {
            **base,
            "type": "message",
            "message": {"role": "assistant", "content": None, "provider": "p", "model": "m", "timestamp": 1},
        },
        {
            **base,
            "type": "message",
            "message": {
                "role": "toolResult",
                "content": None,
                "toolCallId": "c",
                "toolName": "t",
                "isError": False,
                "timestamp": 1,
            },
        },
        {**base, "type": "message", "message": {"role": "bashExecution", "command": "ls", "timestamp": 1}},
        {**base, "type": "message", "message": {"role": "custom", "content": None, "timestamp": 1}},
        {**base, "type": "message", "message": {"role": "user", "content": "", "timestamp": 1}},
        {**base, "type": "message", "message": {"role": "user", "content": [], "timestamp": 1}},
        {**base, "type": "message", "message": None},
        {**base, "type": "message"},
        {"type": "custom_message", "customType": "c", "content": "x", "display": True, **base},
        {
            "type": "custom_message",
            "customType": "c",
            "content": None,
            "display": False,
            "details": None,
            **base,
        },
        {"type": "custom_message", **base},
        {**base, "type": "branch_summary", "fromId": "a", "summary": "S"},
        {**base, "type": "branch_summary", "fromId": "a", "summary": ""},
        {**base, "type": "branch_summary", "summary": "S"},
        {**base, "type": "branch_summary", "fromId": "a", "summary": 7},
        {**base, "type": "branch_summary", "fromId": "a"},
        {**base, "type": "compaction", "summary": "C", "firstKeptEntryId": "x", "tokensBefore": 5},
        {**base, "type": "compaction"},
        {**base, "type": "compaction", "summary": "", "firstKeptEntryId": "x", "tokensBefore": 0},
        {**base, "type": "model_change", "provider": "p", "modelId": "m"},
        {**base, "type": "thinking_level_change", "thinkingLevel": "high"},
        {"type": "custom", "customType": "s", "data": 1, **base},
        {**base, "type": "label", "targetId": "x", "label": "l"},
        {**base, "type": "session_info", "name": "n"},
        {**base, "type": "unknown_type"},
        {"id": "x"},
    ]
    for e in entries:
        rec("sessionEntryToContextMessages", {"entry": e})

    # ISO timestamp -> ms (zone-independent forms; plus local-time forms under fixed zones)
    stamps = [
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00Z",
        "2026-01-01T00:00Z",
        "2026-01-01T12:34:56.789Z",
        "2026-01-01T00:00:00.1234567Z",
        "2026-01-01T00:00:00.5Z",
        "2026-01-01T00:00:00.12Z",
        "2026-01-01",
        "2026-01",
        "2026",
        "2026-01-01T00:00:00+02:00",
        "2026-01-01T00:00:00-05:30",
        "2026-01-01T00:00:00+23:59",
        "2026-01-01T00:00:00+24:00",
        "2026-01-01T00:00:00+05:60",
        "2026-02-31T00:00:00Z",
        "2026-02-30",
        "2026-04-31",
        "2026-01-32",
        "2026-13-01",
        "2026-00-01",
        "2026-01-00",
        "2026-01-01T24:00:00Z",
        "2026-01-01T24:00:00.000Z",
        "2026-01-01T24:00:01Z",
        "2026-01-01T24:00Z",
        "2026-01-01T00:60Z",
        "2026-01-01T00:00:60Z",
        "2026-01-01T25:00Z",
        "+002026-01-01T00:00:00Z",
        "-000001-01-01T00:00:00Z",
        "-000000-01-01T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "+275760-09-13T00:00:00.000Z",
        "+275760-09-13T00:00:00.001Z",
        "-271821-04-20T00:00:00Z",
        "-271821-04-19T23:59:59.999Z",
        "1970-01-01T00:00:00.000Z",
        "1969-12-31T23:59:59.999Z",
        "0001-01-01T00:00:00Z",
        "0099-06-15",
        "1900-02-29",
        "2024-02-29",
        "2000-02-29T12:00:00Z",
        "2026-01-01t00:00:00z",
        "2026-01-01T00:00:00z",
        "2026-01-01Z",
        "2026-01-01z",
        "2026-02-31Z",
        "2026-01-01 00:00:00Z",
        "2026-01-01 00:00Z",
        "2026-01-01  00:00:00Z",
        "2026-01-01\t00:00:00Z",
        "2026-01-01T00:00:00+0200",
        "2026-01-01 00:00:00+0200",
        "2026-01-01 00:00:00 Z",
        "2026-01-01 00:00:00 +02:00",
        "2026-01-01 00:00 GMT",
        "2026-01-01 00:00 UTC",
        "2026-01-01 00:00+2400",
        "2026-01-01 1:00Z",
        "2026-01-01 01:00:5Z",
        "2026-1-1 00:00Z",
        "2026-1-1Z",
        "99999-01-01 00:00Z",
        "12026-01-01 00:00Z",
        "2026-01-01T00:00:00.Z",
        "2026-01-01T00:00:00,5Z",
        "20260101",
        "2026-01-01T",
        "2026-01-01T00",
        "2026-01-01T1:00:00Z",
        "2026-01-01T00:00:00Z ",
        " 2026-01-01T00:00:00Z",
        "2026-01-01T00:00:00+02",
        "2026-01-01+02:00",
        "2026-01-01T00:00:00 Z",
        "2026-1-1T00:00Z",
        "99999-01-01T00:00:00Z",
        "garbage",
        "",
        "Jan 1 2026",
    ]
    for ts in stamps:
        rec(
            "sessionEntryToContextMessages",
            {
                "entry": {
                    "type": "compaction",
                    "id": "c",
                    "parentId": None,
                    "timestamp": ts,
                    "summary": "s",
                    "tokensBefore": 1,
                }
            },
        )
    for ts in [None, True, False, 0, 1.5, -1.5, 8.64e15, 8.64e15 + 2, 1e300, [], ["2026-01-01"], {}]:
        rec(
            "sessionEntryToContextMessages",
            {
                "entry": {
                    "type": "compaction",
                    "id": "c",
                    "parentId": None,
                    "timestamp": ts,
                    "summary": "s",
                    "tokensBefore": 1,
                }
            },
        )
    local_stamps = [
        "2026-01-01T00:00:00",
        "2026-01-01T00:00",
        "2026-07-01T12:00:00.250",
        "2026-03-08T02:30:00",
        "2026-03-08T01:59:59",
        "2026-03-08T03:00:00",
        "2026-11-01T01:30:00",
        "2026-11-01T00:59:59",
        "2026-11-01T02:00:00",
        "2026-01-01 00:00",
        "2026-1-1",
        " 2026-01-01",
        "2026-01-01t00:00:00",
        "1969-07-20T20:17:40",
        "2026-03-29T02:30:00",
        "2026-10-25T02:30:00",
        "2026-01-01T00:00:00Z",
    ]
    for tz in ["America/New_York", "Asia/Kolkata", "Europe/Berlin"]:
        for ts in local_stamps:
            rec(
                "sessionEntryToContextMessages",
                {
                    "entry": {
                        "type": "compaction",
                        "id": "c",
                        "parentId": None,
                        "timestamp": ts,
                        "summary": "s",
                        "tokensBefore": 1,
                    }
                },
                env={"TZ": tz},
            )
    return cases


def failure_vectors(o: Oracle) -> list[dict[str, Any]]:
    def m(i: str, parent: Any) -> dict[str, Any]:
        return {
            "type": "message",
            "id": i,
            "parentId": parent,
            "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        }

    cases = []
    for name, args in [
        ("self-parent", {"entries": [m("a", "a")]}),
        ("two-cycle", {"entries": [m("a", "b"), m("b", "a")]}),
        (
            "null message",
            {
                "entries": [
                    {
                        "type": "message",
                        "id": "a",
                        "parentId": None,
                        "timestamp": "2026-01-01T00:00:00Z",
                        "message": None,
                    }
                ]
            },
        ),
    ]:
        resp = o.request("buildSessionContext", args)
        resp.pop("id", None)
        cases.append({"name": name, "fn": "buildSessionContext", "args": args, "response": resp})
    return cases


def write_lines(path: Path, meta: dict[str, Any], cases: list[Any]) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.write('{"meta":' + dumps(meta) + ',"cases":[\n')
        f.write(",\n".join(dumps(c) for c in cases))
        f.write("\n]}\n")


def main() -> None:
    n_trees = int(sys.argv[1]) if len(sys.argv) > 1 else N_TREES  # fewer for a quick look
    rng = random.Random(SEED)
    with Oracle() as o:
        version = o.call("version")
        meta = {
            "generator": "tests/golden/make_session_trees.py",
            "seed": SEED,
            "pi": {k: v for k, v in version.items() if "pi" in k.lower() or "packages" in k.lower()},
        }
        record_fixture(o)
        write_lines(
            GOLDEN / "session_trees_messages.json",
            meta,
            message_vectors(o) + [{"failure": c} for c in failure_vectors(o)],
        )
        trees = []
        for n in range(n_trees):
            entries = random_tree(rng, n)
            trees.append(record_tree(o, entries))
            if n % 30 == 0:
                print(f"tree {n}: {len(entries)} entries", flush=True)
    per_file = (len(trees) + N_FILES - 1) // N_FILES
    for k in range(N_FILES):
        part = trees[k * per_file : (k + 1) * per_file]
        write_lines(GOLDEN / f"session_trees_{k}.json", {**meta, "part": k, "trees": len(part)}, part)
    print(f"wrote {len(trees)} trees")


if __name__ == "__main__":
    main()
