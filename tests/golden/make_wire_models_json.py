"""Golden file for the wire of models defined in an agent dir's ``models.json``: the requests pi-ai
0.85.0 sends (as Pi's agent calls it, ``_pi_wire.mjs``) for custom providers and built-in
overrides (vLLM with env-var key and header templates, LM Studio, OpenRouter headers and
per-model overrides, an anthropic-messages proxy with a ``!command`` key and ``authHeader``, a
Responses proxy, a Mistral override), x the wire conversations x off/medium.

Run by hand (needs ../shared/pi-oracle installed):

    .venv/bin/python tests/golden/make_wire_models_json.py
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "golden")):
    if p not in sys.path:
        sys.path.insert(0, p)

import make_wire  # noqa: E402
import wire_cases  # noqa: E402

GOLDEN = Path(__file__).with_name("wire_models_json.json.gz")
ENV = {"VLLM_API_KEY": "vllm-key-0123456789", "TEAM_NAME": "nlp"}
MODELS_JSON = {
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
            },
            "models": [
                {
                    "id": "Qwen/Qwen3-32B",
                    "reasoning": True,
                    "contextWindow": 40960,
                    "maxTokens": 8192,
                    "headers": {"X-Model-Route": "qwen3"},
                    "compat": {"thinkingFormat": "qwen-chat-template"},
                },
                {"id": "meta-llama/Llama-3.3-70B-Instruct"},
            ],
        },
        "lmstudio": {
            "baseUrl": "http://localhost:1234/v1",
            "api": "openai-completions",
            "apiKey": "lm-studio",
            "models": [
                {"id": "google/gemma-3-27b", "input": ["text", "image"], "contextWindow": 131072},
                {
                    "id": "openai/gpt-oss-20b",
                    "reasoning": True,
                    "thinkingLevelMap": {"off": None, "minimal": None},
                },
            ],
        },
        "openrouter": {
            "headers": {"X-Title": "pi_nb tests", "HTTP-Referer": "https://example.org"},
            "modelOverrides": {
                "anthropic/claude-opus-4.5": {"maxTokens": 4096, "headers": {"X-Route": "opus"}},
            },
            "models": [{"id": "acme/new-model", "contextWindow": 64000, "reasoning": True}],
        },
        "corp-claude": {
            "baseUrl": "https://llm-proxy.corp.example/anthropic",
            "api": "anthropic-messages",
            "apiKey": "!printf proxy-secret",
            "authHeader": True,
            "headers": {"x-corp-team": "research"},
            "compat": {"supportsLongCacheRetention": False},
            "models": [
                {
                    "id": "claude-sonnet-4-5",
                    "reasoning": True,
                    "input": ["text", "image"],
                    "contextWindow": 200000,
                    "maxTokens": 64000,
                }
            ],
        },
        "corp-gpt": {
            "baseUrl": "https://llm-proxy.corp.example/openai/v1",
            "api": "openai-responses",
            "apiKey": "corp-gpt-key-0123456789",
            "headers": {"x-corp-team": "research"},
            "models": [
                {
                    "id": "gpt-5",
                    "reasoning": True,
                    "input": ["text", "image"],
                    "contextWindow": 400000,
                    "maxTokens": 128000,
                }
            ],
        },
        "mistral": {"baseUrl": "https://mistral-proxy.example/v1", "headers": {"X-Proxy": "eu"}},
    }
}
MODELS = [
    ("vllm", "Qwen/Qwen3-32B"),
    ("vllm", "meta-llama/Llama-3.3-70B-Instruct"),
    ("lmstudio", "google/gemma-3-27b"),
    ("lmstudio", "openai/gpt-oss-20b"),
    ("openrouter", "anthropic/claude-opus-4.5"),
    ("openrouter", "acme/new-model"),
    ("corp-claude", "claude-sonnet-4-5"),
    ("corp-gpt", "gpt-5"),
    ("mistral", "mistral-large-latest"),
]
CONVERSATIONS = ("tools", "history", "broken")
LEVELS = ("off", "medium")
API = {
    "corp-claude": "anthropic-messages",
    "corp-gpt": "openai-responses",
    "mistral": "mistral-conversations",
}


def cases() -> list[tuple[str, str, str, str, str]]:
    """``(name, provider, model id, conversation, level)``."""
    out = []
    for provider, mid in MODELS:
        for conversation in CONVERSATIONS:
            for level in LEVELS:
                out.append((f"{provider}/{mid}|{conversation}|{level}", provider, mid, conversation, level))
    return out


def api_of(provider: str, mid: str) -> str:
    if provider == "openrouter" and mid.startswith("anthropic/"):
        return "anthropic-messages"
    return API.get(provider, "openai-completions")


def context_model(provider: str, mid: str) -> dict:
    return {"provider": provider, "id": mid, "api": api_of(provider, mid)}


def main() -> None:
    env = make_wire.pi_env()
    env.update(ENV)
    lines = []
    with tempfile.TemporaryDirectory() as agent_dir:
        (Path(agent_dir) / "models.json").write_text(json.dumps(MODELS_JSON))
        jobs = [
            {
                "name": name,
                "provider": provider,
                "model": mid,
                "context": wire_cases.context_for(context_model(provider, mid), conversation),
                "level": level,
                "sessionId": wire_cases.SESSION_ID,
                "responses": [wire_cases.canned_response(api_of(provider, mid))],
            }
            for name, provider, mid, conversation, level in cases()
        ]
        result = make_wire.run_node(jobs, agent_dir, env)
    ua = json.loads(make_wire.UA_GOLDEN.read_text())["userAgent"]
    for name, *_ in cases():
        case = result["cases"][name]
        if case.get("missing"):
            raise SystemExit(f"Pi has no model for {name}")
        requests = [wire_cases.comparable(q, ua) for q in case["requests"]]
        lines.append(
            json.dumps(
                {"name": name, "requests": requests, "message": case["message"]}, separators=(",", ":")
            )
        )
    payload = {"modelsJson": MODELS_JSON, "env": ENV, "cases": [json.loads(line) for line in lines]}
    with gzip.open(GOLDEN, "wt", encoding="utf-8") as f:
        json.dump(payload, f, separators=(",", ":"))
    print(f"wrote {len(lines)} cases to {GOLDEN}")


if __name__ == "__main__":
    main()
