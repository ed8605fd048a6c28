"""Record golden answers from the real Pi 0.85.0 for the notebook views (via ../shared/pi-oracle).

Usage (from the repo root; needs the oracle installed; about 10 s):

    .venv/bin/python tests/golden/make_notebook.py

Writes ``tests/golden/notebook.json`` (compact JSON, one case per line):

* ``sessions``: session trees (the oracle's fixture session at several leaves, plus seeded
  random sessions with tool calls, usage, branches and compactions). Per case: the file entries,
  the leaf, and Pi's answers for what the views and the token budget show:
  ``SessionManager.inspect`` (branch, context entries, tree), ``buildSessionContext`` messages,
  ``estimateContextTokens`` of them, ``getLastAssistantUsage`` of the branch,
  ``prepareCompaction`` of the branch (first kept entry for the keep-recent window),
  ``shouldCompact`` of the estimate.
* ``tools``: real ``read``/``bash``/``grep`` results that truncate (by lines, by bytes, first line
  over the limit, a partial last line cut at a UTF-8 boundary), with the full output each one
  cut from: the scratch files for read/grep, the ``fullOutputPath`` file for bash (recorded
  before the temp dir goes; its random path is masked as ``$TMPDIR/pi-bash-MASKED.log``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
from oracle_client import Oracle  # noqa: E402

OUT = ROOT / "tests" / "golden" / "notebook.json"
FIXTURE = ROOT / "tests" / "fixtures" / "pi_session.jsonl"
T0 = 1767225600000


def iso(ms: int) -> str:
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def usage(total: int) -> dict[str, Any]:
    return {
        "input": total - 40,
        "output": 40,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


class Builder:
    """Random session entries (Pi's v3 shapes), built without pi_nb."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.entries: list[dict[str, Any]] = [
            {"type": "session", "version": 3, "id": f"sess-{seed}", "timestamp": iso(T0), "cwd": "/tmp/proj"}
        ]
        self.t = T0
        self.n = 0
        self.leaf: str | None = None
        self.ctx = 500

    def add(self, entry: dict[str, Any], parent: Any = "leaf") -> str:
        self.n += 1
        self.t += 1000
        eid = f"x{self.n:04d}"
        full = {
            "type": entry.pop("type"),
            "id": eid,
            "parentId": self.leaf if parent == "leaf" else parent,
            "timestamp": iso(self.t),
            **entry,
        }
        self.entries.append(full)
        self.leaf = eid
        return eid

    def text(self, lo: int, hi: int) -> str:
        words = ["alpha", "beta", "gamma", "delta", "é", "naïve", "日本", "🙂", "x=1;", "\n"]
        return " ".join(self.rng.choice(words) for _ in range(self.rng.randint(lo, hi)))

    def turn(self) -> None:
        self.add(
            {"type": "message", "message": {"role": "user", "content": self.text(3, 60), "timestamp": self.t}}
        )
        for _ in range(self.rng.randint(0, 3)):
            cid = f"call_{self.n}"
            self.ctx += self.rng.randint(50, 900)
            self.add(
                {
                    "type": "message",
                    "message": {
                        "role": "assistant",
                        "content": [
                            {"type": "thinking", "thinking": self.text(0, 20)},
                            {
                                "type": "toolCall",
                                "id": cid,
                                "name": "read",
                                "arguments": {"path": f"f{self.n}.py"},
                            },
                        ],
                        "api": "anthropic-messages",
                        "provider": "anthropic",
                        "model": "claude-sonnet-4-5",
                        "usage": usage(self.ctx),
                        "stopReason": "toolUse",
                        "timestamp": self.t,
                    },
                }
            )
            self.add(
                {
                    "type": "message",
                    "message": {
                        "role": "toolResult",
                        "toolCallId": cid,
                        "toolName": "read",
                        "content": [{"type": "text", "text": self.text(10, 400)}],
                        "isError": False,
                        "timestamp": self.t,
                    },
                }
            )
        self.ctx += self.rng.randint(50, 500)
        stop = self.rng.choice(["stop", "stop", "stop", "aborted", "error"])
        self.add(
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [{"type": "text", "text": self.text(2, 80)}],
                    "api": "anthropic-messages",
                    "provider": "anthropic",
                    "model": "claude-sonnet-4-5",
                    "usage": usage(self.ctx) if stop == "stop" else usage(0),
                    "stopReason": stop,
                    "timestamp": self.t,
                },
            }
        )

    def ids(self) -> list[str]:
        return [e["id"] for e in self.entries[1:]]


def random_sessions() -> list[tuple[str, list[dict[str, Any]], list[Any]]]:
    out = []
    for seed in range(8):
        b = Builder(seed)
        for _ in range(b.rng.randint(3, 9)):
            b.turn()
            if b.rng.random() < 0.15:
                b.add({"type": "model_change", "provider": "openai", "modelId": "gpt-4.1"})
        if seed % 2 == 0:
            # a compaction that keeps the second half
            ids = b.ids()
            kept = ids[len(ids) // 2]
            b.add(
                {
                    "type": "compaction",
                    "summary": b.text(20, 120),
                    "firstKeptEntryId": kept,
                    "tokensBefore": b.ctx,
                    "details": {"readFiles": ["a.py"], "modifiedFiles": []},
                }
            )
            after_compaction = b.leaf
            if seed % 4 == 0:
                b.turn()
        else:
            after_compaction = None
        if seed % 3 == 0:
            # a branch: go back a few entries and summarise
            ids = b.ids()
            back = ids[len(ids) // 3]
            old = b.leaf
            b.leaf = back
            b.add({"type": "branch_summary", "fromId": old, "summary": b.text(5, 40)})
            b.turn()
        if seed % 5 == 1:
            b.add({"type": "label", "targetId": b.ids()[1], "label": "start"})
        leaves: list[Any] = ["<absent>"]
        if after_compaction:
            leaves.append(after_compaction)
        ids = b.ids()
        leaves.append(ids[len(ids) // 2])
        out.append((f"random seed {seed}", b.entries, leaves))
    return out


def session_cases(o: Oracle) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    fixture = [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    sources = [
        ("fixture session.jsonl", fixture, ["<absent>", "e15", "e12", "e11", "e10", "b6", "e4"]),
        *random_sessions(),
    ]
    cases = []
    for name, entries, leaves in sources:
        for leaf in leaves:
            leaf_args: dict[str, Any] = {} if leaf == "<absent>" else {"leafId": leaf}
            inspect = o.request(
                "SessionManager.inspect", {"entries": entries, "includeTree": True, **leaf_args}
            )
            assert inspect["ok"], inspect
            r = inspect["result"]
            body = [e for e in entries if e.get("type") != "session"]
            ctx = o.request("buildSessionContext", {"entries": body, **leaf_args})
            assert ctx["ok"], ctx
            messages = ctx["result"]["messages"]
            est = o.request("estimateContextTokens", {"messages": messages})
            last = o.request("getLastAssistantUsage", {"entries": r["branch"]})
            budgets = []
            for window, reserve, keep in ((200000, 16384, 20000), (4000, 600, 300), (3000, 200, 60)):
                settings = {"enabled": True, "reserveTokens": reserve, "keepRecentTokens": keep}
                prep = o.request("prepareCompaction", {"entries": r["branch"], "settings": settings})
                should = o.request(
                    "shouldCompact",
                    {"contextTokens": est["result"]["tokens"], "contextWindow": window, "settings": settings},
                )
                budgets.append(
                    {
                        "contextWindow": window,
                        "settings": settings,
                        "prepareCompaction": {
                            "ok": prep["ok"],
                            **(
                                {
                                    "firstKeptEntryId": prep["result"]["firstKeptEntryId"],
                                    "tokensBefore": prep["result"]["tokensBefore"],
                                    "isSplitTurn": prep["result"]["isSplitTurn"],
                                }
                                if prep["ok"] and prep["result"]
                                else {"result": prep.get("result"), "error": prep.get("error")}
                            ),
                        },
                        "shouldCompact": should,
                    }
                )
            cases.append(
                {
                    "name": f"{name} @ {leaf}",
                    "source": name,
                    "leaf": leaf,
                    "inspect": {
                        "leafId": r["leafId"],
                        "branch": [e["id"] for e in r["branch"]],
                        "contextEntries": [e["id"] for e in r["contextEntries"]],
                        "tree": [_tree_ids(n) for n in r["tree"]],
                    },
                    "messages": messages,
                    "estimateContextTokens": est,
                    "getLastAssistantUsage": last,
                    "budgets": budgets,
                }
            )
    return [{"name": n, "entries": e} for n, e, _ in sources], cases


def _tree_ids(node: dict[str, Any]) -> list[Any]:
    """Pi's tree node as ``[id, label or null, [children...]]`` (the entries are stored once)."""
    return [node["entry"]["id"], node.get("label"), [_tree_ids(c) for c in node["children"]]]


def scratch_files() -> dict[str, str]:
    rng = random.Random(7)
    return {
        "big.txt": "".join(f"line {i}\n" for i in range(1, 3001)),
        "wide.txt": "".join(("w" * 999) + "\n" for _ in range(100)),
        "longline.txt": "L" * 60000 + "\nshort\n",
        "utf8.txt": "".join("".join(rng.choice("aé日🙂") for _ in range(300)) + "\n" for _ in range(150)),
        "nonl.txt": "\n".join(f"row {i}" for i in range(2500)),
        "matches.txt": "".join(f"match {i} " + "m" * 120 + "\n" for i in range(800)),
    }


TOOL_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("read 3000 lines (lines)", "read", {"path": "big.txt"}),
    ("read offset/limit (lines)", "read", {"path": "big.txt", "offset": 10, "limit": 2500}),
    ("read offset near the end (complete)", "read", {"path": "big.txt", "offset": 2990}),
    ("read wide lines (bytes)", "read", {"path": "wide.txt"}),
    ("read first line over the limit", "read", {"path": "longline.txt"}),
    ("read multibyte (bytes)", "read", {"path": "utf8.txt"}),
    ("read no trailing newline (lines)", "read", {"path": "nonl.txt"}),
    ("bash seq 3000 (lines)", "bash", {"command": "seq 1 3000"}),
    ("bash wide lines (bytes)", "bash", {"command": "for i in $(seq 1 200); do printf '%0500d\\n' $i; done"}),
    ("bash one long ascii line (partial)", "bash", {"command": "head -c 60000 /dev/zero | tr '\\0' 'x'"}),
    (
        "bash one long multibyte line (partial, UTF-8 boundary)",
        "bash",
        {"command": "for i in $(seq 1 30000); do printf 'é'; done; printf x"},
    ),
    (
        "bash emoji line (partial, 4-byte boundary)",
        "bash",
        {"command": "printf 'head\\n'; for i in $(seq 1 13000); do printf '🙂'; done; printf ab"},
    ),
    ("bash small (complete)", "bash", {"command": "printf 'one\\ntwo\\n'"}),
    ("grep many matches (bytes)", "grep", {"pattern": "match", "path": "matches.txt", "limit": 1000}),
]


def tool_cases(o: Oracle) -> dict[str, Any]:
    files = scratch_files()
    cwd = tempfile.mkdtemp(prefix="pinb-nb-")
    tmp = tempfile.mkdtemp(prefix="pinb-nb-tmp-")
    try:
        for name, text in files.items():
            Path(cwd, name).write_text(text, encoding="utf-8")
        cases = []
        for name, tool, params in TOOL_CALLS:
            resp = o.request(
                "tool",
                {"name": tool, "cwd": cwd, "params": params, "toolCallId": "call_x"},
                env={"TMPDIR": tmp},
            )
            assert resp["ok"], resp
            result = resp["result"]
            full_text = None
            details = result.get("details") or {}
            path = details.get("fullOutputPath")
            if path:
                full_text = Path(path).read_bytes().decode("utf-8", "replace")
                masked = "$TMPDIR/pi-bash-MASKED.log"
                details["fullOutputPath"] = masked
                for block in result["content"]:
                    if block.get("type") == "text":
                        block["text"] = block["text"].replace(path, masked)
            cases.append(
                {
                    "name": name,
                    "tool": tool,
                    "params": params,
                    "result": result,
                    "fullOutput": full_text,
                }
            )
        return {"files": files, "cases": cases}
    finally:
        shutil.rmtree(cwd, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    with Oracle() as o:
        version = o.call("version")
        sources, sessions = session_cases(o)
        tools = tool_cases(o)
    lines = [
        json.dumps({"source": "Pi 0.85.0 via pi-oracle", "version": version}, ensure_ascii=False),
        json.dumps({"files": tools["files"]}, ensure_ascii=False, separators=(",", ":")),
    ]
    lines += [json.dumps({"sessionSource": c}, ensure_ascii=False, separators=(",", ":")) for c in sources]
    lines += [json.dumps({"session": c}, ensure_ascii=False, separators=(",", ":")) for c in sessions]
    lines += [json.dumps({"tool": c}, ensure_ascii=False, separators=(",", ":")) for c in tools["cases"]]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(
        f"wrote {OUT} ({OUT.stat().st_size} bytes): {len(sessions)} session cases, {len(tools['cases'])} tool cases"
    )
    os.sync()


if __name__ == "__main__":
    main()
