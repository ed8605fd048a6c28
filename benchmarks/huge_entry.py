"""A turn on a session that holds one huge tool result (200 MB by default).

pi_nb must stay usable when a session holds one enormous entry (a tool result that captured a
whole log, say): opening the session, counting the request's tokens and running a turn on the
offline model should take seconds, and a second turn should reuse the counts of the first.

    python benchmarks/huge_entry.py [--mb 200]

Prints the time to write the session, to open it, the first and the second turn (compaction
off: both overflow, the second reuses the first's counts), and a turn with Pi's default
compaction on a freshly opened copy (overflow, compaction, retry; includes opening the file). Pi has no
counterpart run here: its TUI does not run with the offline model.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the huge tool result (MB)")
    args = parser.parse_args(argv)

    from pi_nb.agent import AgentSession
    from pi_nb.providers.offline import OfflineModel
    from pi_nb.resources.settings import SettingsManager
    from pi_nb.session.manager import SessionManager

    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp) / "proj"
        cwd.mkdir()
        line = "0123456789 abcdefghij klmnopqrst uvwxyz ABCDEFGHIJ KLMNOPQRST\n"
        huge = line * (args.mb * 1_000_000 // len(line))
        model = OfflineModel()
        t = time.perf_counter()
        sm = SessionManager.create(str(cwd), str(Path(tmp) / "sessions"))
        sm.append_message(
            {"role": "user", "content": [{"type": "text", "text": "read the log"}], "timestamp": 1}
        )
        sm.append_message(
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "log"}}
                ],
                "api": "offline",
                "provider": "pi_nb",
                "model": "offline",
                "usage": {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15},
                "stopReason": "toolUse",
                "timestamp": 2,
            }
        )
        sm.append_message(
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "read",
                "content": [{"type": "text", "text": huge}],
                "isError": False,
                "timestamp": 3,
            }
        )
        path = sm.get_session_file()
        assert path is not None
        del huge, sm
        out["write_s"] = time.perf_counter() - t
        out["file_mb"] = os.path.getsize(path) / 1e6

        t = time.perf_counter()
        sm2 = SessionManager.open(path)
        settings = SettingsManager.in_memory({"compaction": {"enabled": False}})
        session = AgentSession(
            sm2, model, settings=settings, agent_dir=str(Path(tmp) / "agent"), project_trusted=True
        )
        out["open_s"] = time.perf_counter() - t

        for n in (1, 2):
            t = time.perf_counter()
            result = asyncio.run(session.prompt("hello"))
            out[f"turn{n}_s"] = time.perf_counter() - t
            out[f"turn{n}_status_error"] = float(result.status == "error")
        # the same file with Pi's default compaction: the turn overflows, compacts the huge
        # result away and retries
        t = time.perf_counter()
        sm3 = SessionManager.open(path)
        compacting = AgentSession(
            sm3,
            model,
            agent_dir=str(Path(tmp) / "agent"),
            project_trusted=True,
            settings=SettingsManager.in_memory({}),
        )
        result = asyncio.run(compacting.prompt("hello"))
        out["compacting_turn_s"] = time.perf_counter() - t
        out["compacting_turn_compactions"] = float(len(result.compactions))
        out["compacting_turn_status_error"] = float(result.status == "error")
        out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for key, value in out.items():
        print(f"{key:>22}: {value:10.2f}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
