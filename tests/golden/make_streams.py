"""Golden file for the provider streams: what pi-ai 0.85.0 makes of real recorded provider bodies.

Run by hand when the cases or fixtures change (needs ../shared/pi-oracle installed, i.e. Node and
pi-ai under ``~/.cache/pi-oracle``):

    PYTHONPATH=$PWD /work/venv/bin/python tests/golden/make_streams.py

Every case serves one body of ``tests/fixtures/streams/`` (real recordings from public test suites
and cassettes, see ``SOURCES.md``) from the local replay server (``tests/replay_server.py``) and
runs pi-ai's own provider stream function (``openai-completions``, ``openai-responses``,
``anthropic-messages``, through the ``openai`` / ``@anthropic-ai/sdk`` JavaScript SDKs) against it
in Node (``_pi_streams.mjs``). ``tests/golden/streams.json`` records, per case, pi-ai's final
assistant message, its event sequence (run-length encoded ``[type, contentIndex, count]``) and
``isContextOverflow(message, contextWindow)``; pi-ai's ``shortHash`` of a few ids; and, for the
``NEXT_TURN`` cases, the request body pi-ai sends for the turn after its own answer (how history
goes back to each API: reasoning fields, ``reasoning_details``, signed and redacted thinking,
Responses reasoning items); ``parseStreamingJson`` of every prefix of a few tool-argument texts.

It also records pi-ai's ``isContextOverflow`` verdict on each real error message of
``tests/fixtures/overflow/error_messages.json`` (``tests/golden/overflow_corpus.json``), which
``tests/test_overflow.py`` compares with pi_nb's.

``tests/test_provider_streams.py`` replays the same bytes through pi_nb's providers (the Python
SDKs) and compares. The case table lives here so that both sides read the same thing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from replay_server import ReplayServer, load_fixture  # noqa: E402

GOLDEN = TESTS / "golden" / "streams.json"
OVERFLOW_CORPUS = TESTS / "fixtures" / "overflow" / "error_messages.json"
OVERFLOW_GOLDEN = TESTS / "golden" / "overflow_corpus.json"
CONTEXT_WINDOW = 131_072
SUFFIX = {
    "openai-completions": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic-messages": "/v1/messages",
}


@dataclass(frozen=True)
class Case:
    """One recorded body, the API that reads it and the model that answered."""

    name: str
    api: str
    fixture: str
    provider: str
    model: str
    reasoning: bool = False
    status: int = 200
    transform: str | None = None  # "drop_finish": the stream as a connection cut before its last chunk
    tools: bool = False
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def content_type(self) -> str:
        return "application/json" if self.fixture.endswith(".json") else "text/event-stream"

    def body(self) -> bytes:
        data = load_fixture(self.fixture)
        if self.transform == "drop_finish":
            events = [e for e in data.decode().split("\n\n") if e.strip()]
            assert events[-1] == "data: [DONE]" and '"finish_reason":"stop"' in events[-2]
            data = ("\n\n".join(events[:-2]) + "\n\n").encode()
        return data


C, R, A = "openai-completions", "openai-responses", "anthropic-messages"
CASES: tuple[Case, ...] = (
    Case("openai_chat_text", C, "openai_chat_text.sse", "openai", "gpt-4.1-nano"),
    Case(
        "deepseek_reasoning_content",
        C,
        "deepseek_reasoning_content.sse",
        "deepseek",
        "deepseek-reasoner",
        True,
    ),
    Case(
        "deepseek_reasoning_tool_call",
        C,
        "deepseek_reasoning_tool_call.sse",
        "deepseek",
        "deepseek-reasoner",
        True,
        tools=True,
    ),
    Case("groq_reasoning_field", C, "groq_reasoning_field.sse", "groq", "qwen/qwen3-32b", True),
    Case(
        "openrouter_reasoning_encrypted",
        C,
        "openrouter_reasoning_encrypted.sse",
        "openrouter",
        "openai/o3",
        True,
    ),
    Case(
        "openrouter_reasoning_text_length",
        C,
        "openrouter_reasoning_text_length.sse",
        "openrouter",
        "minimax/minimax-m2:free",
        True,
    ),
    Case("mistral_list_content", C, "mistral_list_content.sse", "mistral", "magistral-medium-2507", True),
    Case(
        "deepseek_cut_before_finish",
        C,
        "deepseek_reasoning_content.sse",
        "deepseek",
        "deepseek-reasoner",
        True,
        transform="drop_finish",
    ),
    Case("error_lmstudio_string", C, "error_lmstudio_string.json", "lmstudio", "qwen3-coder", status=400),
    Case("error_lmstudio_in_stream", C, "error_lmstudio_in_stream.sse", "lmstudio", "qwen3-coder"),
    Case("error_gemini_array", C, "error_gemini_array.json", "google", "gemini-2.5-pro", status=400),
    Case(
        "error_groq_context_length",
        C,
        "error_groq_context_length.json",
        "groq",
        "llama3-70b-8192",
        status=400,
    ),
    Case(
        "error_llamacpp_context_size", C, "error_llamacpp_context_size.json", "llama.cpp", "local", status=400
    ),
    Case(
        "anthropic_thinking_signature",
        A,
        "anthropic_thinking_signature.sse",
        "anthropic",
        "claude-sonnet-4-5-20250929",
        True,
    ),
    Case(
        "anthropic_redacted_thinking",
        A,
        "anthropic_redacted_thinking.sse",
        "anthropic",
        "claude-sonnet-4-5-20250929",
        True,
    ),
    Case(
        "error_anthropic_prompt_too_long",
        A,
        "error_anthropic_prompt_too_long.json",
        "anthropic",
        "claude-sonnet-4-5",
        status=400,
    ),
    Case(
        "error_anthropic_rate_limit",
        A,
        "error_anthropic_rate_limit.json",
        "anthropic",
        "claude-sonnet-4",
        status=429,
    ),
    Case(
        "responses_reasoning_encrypted_tool_call",
        R,
        "responses_reasoning_encrypted_tool_call.sse",
        "openai",
        "gpt-5.1-codex-max",
        True,
        tools=True,
    ),
    Case("responses_reasoning_summary", R, "responses_reasoning_summary.sse", "openai", "o3-mini", True),
    Case("responses_error_event", R, "responses_error_event.sse", "openai", "gpt-5", True),
    Case(
        "responses_context_length_event", R, "responses_context_length_event.sse", "openai", "gpt-5.2", True
    ),
)

SYSTEM_PROMPT = "be brief"
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "hi", "timestamp": 1}]
TOOLS: list[dict[str, Any]] = [
    {
        "name": "calculator",
        "description": "A minimal calculator",
        "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
    }
]
API_KEY = "sk-test-not-a-real-key"
# inputs for pi-ai's shortHash (the id it gives foreign or too-long Responses item ids)
HASH_INPUTS = (
    "",
    "abc",
    "fc_0a1b2c",
    "msg_" + "x" * 80,
    "call_üñï|fc_🙈",
    "rs_01830d662ab3856501693c321405c88190be3ab04d5782d5f9",
)


# cases whose answer (pi-ai's own message) becomes the history of a next turn: the request pi-ai
# sends for that turn is recorded, so both sides convert the very same history
NEXT_TURN = (
    "deepseek_reasoning_tool_call",
    "groq_reasoning_field",
    "openrouter_reasoning_encrypted",
    "mistral_list_content",
    "anthropic_thinking_signature",
    "anthropic_redacted_thinking",
    "responses_reasoning_encrypted_tool_call",
    "responses_reasoning_summary",
)


# tool-argument texts whose every prefix goes through pi-ai's parseStreamingJson (what a tool call's
# arguments look like while they stream), plus malformed ones its repair step handles
PARTIAL_JSON_TEXTS = (
    '{"location":"San Francisco"}',
    '{"a":12,"b":7,"op":"add"}',
    '{"command": "printf \'a\\tb\\n\' | grep -c \\"x\\"", "timeout": 1.5e3, '
    '"flags": [true, false, null], "nested": {"k": [-1, 2.25, "\\u00e9"]}}',
    '{"path": "ünï/✓ 🙈.txt", "content": "line 1\\nline 2"}',
)
MALFORMED_JSON = (
    '{"a": "raw\ncontrol\tchars"}',
    '{"a": "bad \\q escape"}',
    '{"a": 1,}',
    "not json",
    '"just a string',
    '{"n": 1e5}',
    '{"a": [1, 2], "b": {"c"',
)


def partial_json_inputs() -> list[str]:
    texts = [t[:i] for t in PARTIAL_JSON_TEXTS for i in range(1, len(t) + 1)]
    return [*dict.fromkeys([*texts, *MALFORMED_JSON])]


def next_turn_messages(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The history of the turn after ``answer``: its tool calls answered, then a new user message."""
    results = [
        {
            "role": "toolResult",
            "toolCallId": block["id"],
            "toolName": block["name"],
            "content": [{"type": "text", "text": "19"}],
            "isError": False,
            "timestamp": 2,
        }
        for block in answer["content"]
        if block["type"] == "toolCall"
    ]
    return [*MESSAGES, answer, *results, {"role": "user", "content": "and then?", "timestamp": 3}]


def base_url(server_url: str, case: Case) -> str:
    """Where the SDKs of both sides send this case's request (one route per case)."""
    prefix = f"{server_url}/{case.name}"
    return prefix if case.api == A else prefix + "/v1"


def route(case: Case) -> str:
    return f"/{case.name}{SUFFIX[case.api]}"


def serve(server: ReplayServer) -> None:
    for case in CASES:
        server.routes[route(case)] = (case.status, case.content_type, case.body())


def _pi_job(case: Case, server_url: str) -> dict[str, Any]:
    model = {
        "id": case.model,
        "name": case.model,
        "api": case.api,
        "provider": case.provider,
        "baseUrl": base_url(server_url, case),
        "reasoning": case.reasoning,
        "input": ["text", "image"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": CONTEXT_WINDOW,
        "maxTokens": 8192,
    }
    context: dict[str, Any] = {"systemPrompt": SYSTEM_PROMPT, "messages": MESSAGES}
    if case.tools:
        context["tools"] = TOOLS
    return {
        "name": case.name,
        "api": case.api,
        "model": model,
        "context": context,
        "options": {"apiKey": API_KEY, "maxRetries": 0},
    }


def _node(home: Path, payload: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        ["node", str(Path(__file__).parent / "_pi_streams.mjs")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PI_ORACLE_HOME": str(home)},
        timeout=300,
    )
    if proc.returncode != 0:
        raise SystemExit(f"node failed ({proc.returncode}):\n{proc.stderr}")
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def main() -> None:
    home = Path(os.environ.get("PI_ORACLE_HOME", Path.home() / ".cache" / "pi-oracle"))
    if not (home / "node_modules" / "@earendil-works" / "pi-ai").is_dir():
        raise SystemExit(f"pi-ai is not installed under {home} (install ../shared/pi-oracle first)")
    server = ReplayServer()
    requests: dict[str, Any] = {}
    try:
        serve(server)
        jobs = [_pi_job(case, server.url) for case in CASES]
        texts = [row["text"] for row in json.loads(OVERFLOW_CORPUS.read_text("utf-8"))]
        partial = partial_json_inputs()
        results = _node(
            home,
            {"jobs": jobs, "hashes": list(HASH_INPUTS), "overflowTexts": texts, "partialJson": partial},
        )
        # the next turn of some answers: record the body pi-ai sends for it
        for name in NEXT_TURN:
            case = next(c for c in CASES if c.name == name)
            job = _pi_job(case, server.url)
            job["context"]["messages"] = next_turn_messages(results["cases"][name]["message"])
            server.requests.clear()
            _node(home, {"jobs": [job], "hashes": [], "overflowTexts": []})
            sent = [r for r in server.requests if r["path"].split("?")[0] == route(case)]
            requests[name] = sent[-1]["body"]
    finally:
        server.shutdown()
    golden = {
        "pi_ai_version": "0.85.0",
        "context_window": CONTEXT_WINDOW,
        "cases": {case.name: results["cases"][case.name] for case in CASES},
        "short_hash": results["shortHash"],
        "next_turn_requests": requests,
        "parse_streaming_json": [[t, r] for t, r in zip(partial, results["partialJson"], strict=True)],
    }
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", "utf-8")
    verdicts = {
        "pi_ai_version": "0.85.0",
        "verdicts": [{"text": t, "pi": v} for t, v in zip(texts, results["overflow"], strict=True)],
    }
    OVERFLOW_GOLDEN.write_text(json.dumps(verdicts, indent=1, ensure_ascii=False) + "\n", "utf-8")
    for case in CASES:
        msg = results["cases"][case.name]["message"]
        print(f"{case.name:42} {msg['stopReason']:8} {(msg.get('errorMessage') or '')[:70]}")


if __name__ == "__main__":
    main()
