"""The wire cases both sides run: pi-ai 0.85.0 (``tests/golden/make_wire.py``, in Node) and pi_nb
(``tests/test_wire_requests.py``, in Python, no Node).

A case is one catalog model x one conversation x one thinking level. The conversations are Pi
``Message`` lists (what Pi's agent hands its stream function after ``convertToLlm``):

* ``tools``: a system prompt, one user prompt, Pi's four coding tools (read, bash, edit, write);
* ``history``: an earlier answer of the *same* model with a signed thinking block, text and a tool
  call, its tool result with text and an image, a user image, then a new prompt;
* ``foreign``: the same history answered by *another* model (thinking turns into text or is
  dropped, tool-call ids are normalised per provider);
* ``broken``: an error turn and an aborted turn in the history, an unanswered tool call (Pi inserts
  "No result provided"), an empty tool result ("(no tool output)").

Levels: ``off``, ``medium`` and the model's highest (``xhigh``/``max`` where its level map has
them, else ``high``). Every request is answered with a canned minimal stream of the model's API.
The comparison (:func:`comparable`) drops only what differs by runtime, not by pi_nb's choice:
the SDKs' ``x-stainless-*`` telemetry headers (``lang: js`` vs ``python``...), transport headers
(``host``, ``connection``, ``accept-encoding``, ``content-length``) and the kernel release inside
Pi's user agent (checked separately); for Bedrock, the AWS SDKs' own names (``user-agent``,
``x-amz-user-agent``: ``aws-sdk-js/...`` vs ``Botocore/...``), HTTP/2's ``:authority`` and the
call's random ``amz-sdk-invocation-id`` (a UUID v4 on both sides).
"""

from __future__ import annotations

import json
import re
from typing import Any

SESSION_ID = "0b9c7c9e-7a43-4f6e-9d1e-2d7c2b3f4a51"
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
SYSTEM = "You are an expert coding assistant operating inside pi, a coding agent harness.\n\nCurrent working directory: /tmp/project"

# the APIs pi_nb runs, and the providers that sign in (OAuth) instead of taking a key
#: the APIs of the first golden file (wire_requests.jsonl.gz); an API added later has its own
#: golden, wire_requests_<api>.jsonl.gz (make_wire.py --api API)
FIRST_APIS = ("openai-completions", "anthropic-messages", "openai-responses", "mistral-conversations")
#: every API whose catalog models the wire test runs
RUN_APIS: tuple[str, ...] = (
    *FIRST_APIS,
    "azure-openai-responses",
    "openai-codex-responses",
    "google-generative-ai",
    "google-vertex",
    "bedrock-converse-stream",
)
#: providers whose models the wire test leaves out (none now: both sign-ins run)
SIGN_IN_PROVIDERS: tuple[str, ...] = ()
#: the APIs that read the Responses API's events and ids (the same canned answer, signatures, ids)
RESPONSES_APIS = ("openai-responses", "azure-openai-responses", "openai-codex-responses")
#: providers whose cases have their own golden (make_wire.py --provider P writes
#: wire_requests_<P>.jsonl.gz; the other goldens leave them out)
OWN_GOLDEN_PROVIDERS = ("github-copilot",)
#: the GitHub Copilot sign-in of both sides' auth.json (pi_auth_json): a token valid for years (no
#: refresh) naming a business proxy (the base URL comes from the token, not the catalog)
FAKE_AUTH_JSON = {
    "github-copilot": {
        "type": "oauth",
        "refresh": "gho_fake0123456789abcdefghij",
        "access": "tid=fake0123456789;exp=4102444800;sku=copilot_business;proxy-ep=proxy.business.githubcopilot.com;8kp=1",
        "expires": 4102444500000,
    }
}


def _b64(data: dict[str, Any]) -> str:
    import base64

    return base64.b64encode(json.dumps(data, separators=(",", ":")).encode()).decode().rstrip("=")


#: a ChatGPT sign-in access token of the shape OpenAI issues (a JWT whose claims carry the ChatGPT
#: account id); not signed by anyone: only its claims are read
CODEX_ACCOUNT_ID = "acct-test-0123"
CODEX_JWT = ".".join(
    (
        _b64({"alg": "RS256", "typ": "JWT"}),
        _b64({"https://api.openai.com/auth": {"chatgpt_account_id": CODEX_ACCOUNT_ID}, "exp": 4102444800}),
        "c2lnbmF0dXJl",
    )
)
#: the variable pi_nb's Codex provider reads that token from (Pi reads it from auth.json)
CODEX_TOKEN_ENV = "OPENAI_CODEX_ACCESS_TOKEN"

# fake credentials for every provider variable, Cloudflare's account/gateway placeholders, Azure's
# resource (pi-ai builds https://<resource>.openai.azure.com/openai/v1 from it) and the Codex token
FAKE_ENV_VALUE = "test-key-0123456789"
# (Bedrock: a bearer token, so the request carries no SigV4 signature; tests/test_bedrock_provider.py
# checks the signed requests)
EXTRA_ENV = {
    "CLOUDFLARE_ACCOUNT_ID": "acct123",
    "CLOUDFLARE_GATEWAY_ID": "gw123",
    "AZURE_OPENAI_RESOURCE_NAME": "pi-test",
    CODEX_TOKEN_ENV: CODEX_JWT,
    "AWS_BEARER_TOKEN_BEDROCK": FAKE_ENV_VALUE,
}


def pi_auth_json() -> dict[str, Any]:
    """The agent dir's ``auth.json`` both sides read in the wire cases: the Codex sign-in (its
    access token is :data:`CODEX_JWT`; expiring in 2100, so neither side refreshes it) and the
    GitHub Copilot sign-in of :data:`FAKE_AUTH_JSON`."""
    return {
        "openai-codex": {
            "type": "oauth",
            "access": CODEX_JWT,
            "refresh": "rt-test-0123456789",
            "expires": 4102444800000,
            "accountId": CODEX_ACCOUNT_ID,
        },
        **FAKE_AUTH_JSON,
    }


def pi_settings(api: str) -> dict[str, Any]:
    """Pi's settings for a case: Codex over its SSE transport (``transport: "sse"``; pi_nb does not
    speak Codex's WebSocket transport, which Pi tries first by default)."""
    return {"transport": "sse"} if api == "openai-codex-responses" else {}


# transport headers (HTTP/2's :authority is the AWS SDK's host), and the body's content-encoding:
# Codex's request body is zstd-compressed where the runtime has zstd (Node 22 has, this Python has
# not: pi_nb sends the JSON as pi-ai does where it has no zstd); the body is compared decompressed
UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
DROP_HEADERS = frozenset(
    {"host", ":authority", "connection", "accept-encoding", "content-length", "content-encoding"}
)


def tool_schemas() -> list[dict[str, Any]]:
    """Pi's read, bash, edit, write tools as Pi's agent hands them to pi-ai (``{name, label, description,
    parameters}``; pi_nb's schemas equal Pi's: golden-tested)."""
    from pi_nb.tools.registry import create_coding_tools

    return [dict(t.to_tool_schema()) for t in create_coding_tools("/tmp/project")]


def _usage() -> dict[str, Any]:
    return {
        "input": 120,
        "output": 40,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 160,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def _assistant(provider: str, api: str, model: str, signature: str | None, call_id: str) -> dict[str, Any]:
    thinking: dict[str, Any] = {
        "type": "thinking",
        "thinking": "The user wants the file list. I will run ls.",
    }
    if signature is not None:
        thinking["thinkingSignature"] = signature
    return {
        "role": "assistant",
        "content": [
            thinking,
            {"type": "text", "text": "Let me look at the files."},
            {"type": "toolCall", "id": call_id, "name": "bash", "arguments": {"command": "ls -la"}},
        ],
        "api": api,
        "provider": provider,
        "model": model,
        "usage": _usage(),
        "stopReason": "toolUse",
        "timestamp": 1767225600000,
    }


def _signature_for(api: str) -> str:
    """A thinking signature of the shape the API itself produces."""
    if api == "anthropic-messages":
        return "EqQBCkYIBxgCKkDsig" + "A" * 40
    if api in RESPONSES_APIS:
        return json.dumps(
            {
                "type": "reasoning",
                "id": "rs_0123456789abcdef",
                "summary": [{"type": "summary_text", "text": "Plan: run ls."}],
                "encrypted_content": "gAAAAABenc",
            },
            separators=(",", ":"),
        )
    if api == "openai-completions":
        return "reasoning_content"
    if api == "bedrock-converse-stream":
        return "ErcBCkgIBxABGAIiQJ4sig" + "B" * 40
    if api in ("google-generative-ai", "google-vertex"):
        return "Q2lJQmpHOXp0aG91Z2h0c2lnbmF0dXJl"  # base64, as Gemini's thoughtSignature
    return "reasoning"


def _call_id(api: str) -> str:
    if api in RESPONSES_APIS:
        return "call_abc123|fc_0123456789abcdef"
    if api == "anthropic-messages":
        return "toolu_01A09q90qw90lq917835lq9"
    if api == "mistral-conversations":
        return "D681PevKs"
    if api == "bedrock-converse-stream":
        return "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q"
    if api in ("google-generative-ai", "google-vertex"):
        return "bash_1767225600000_1"  # pi-ai's own id for a call Gemini sent without one
    return "call_abc123"


def conversations(model: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The conversations for one pi-ai model dict (``provider``, ``api``, ``id``)."""
    provider, api, mid = model["provider"], model["api"], model["id"]
    same_call = _call_id(api)
    # the "other model" is on another API than this one, with that API's id shapes
    other_api = "openai-responses" if api != "openai-responses" else "anthropic-messages"
    other_call = (
        "call_xyz789|fc_fedcba9876543210" if other_api == "openai-responses" else "toolu_01XYZ" + "b" * 20
    )
    prompt = {
        "role": "user",
        "content": "List the files here and summarise them.",
        "timestamp": 1767225600000,
    }
    image_user = {
        "role": "user",
        "content": [
            {"type": "text", "text": "And what is in this picture?"},
            {"type": "image", "data": PNG_1PX, "mimeType": "image/png"},
        ],
        "timestamp": 1767225660000,
    }

    def result(call_id: str, text: str, image: bool, error: bool = False) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        if image:
            content.append({"type": "image", "data": PNG_1PX, "mimeType": "image/png"})
        return {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": "bash",
            "content": content,
            "isError": error,
            "timestamp": 1767225630000,
        }

    history = [
        prompt,
        _assistant(provider, api, mid, _signature_for(api), same_call),
        result(same_call, "total 8\n-rw-r--r-- 1 u u 12 notes.txt\n-rw-r--r-- 1 u u 40 logo.png", True),
        image_user,
    ]
    foreign = [
        prompt,
        _assistant("other-provider", other_api, "other-model", _signature_for(other_api), other_call),
        result(other_call, "total 8\n-rw-r--r-- 1 u u 12 notes.txt", True),
        image_user,
    ]
    error_turn = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Partial answer before the failure"}],
        "api": api,
        "provider": provider,
        "model": mid,
        "usage": _usage(),
        "stopReason": "error",
        "errorMessage": "500: upstream failure",
        "timestamp": 1767225700000,
    }
    aborted = _assistant(provider, api, mid, None, same_call + "2")
    aborted["stopReason"] = "aborted"
    aborted["errorMessage"] = "Request was aborted"
    orphan = _assistant(provider, api, mid, None, same_call + "3")
    orphan["content"] = [
        {"type": "toolCall", "id": same_call + "3", "name": "bash", "arguments": {"command": "sleep 20"}}
    ]
    empty_call = same_call + "4"
    empty = _assistant(provider, api, mid, None, empty_call)
    empty["content"] = [
        {"type": "toolCall", "id": empty_call, "name": "read", "arguments": {"path": "empty.txt"}}
    ]
    broken = [
        prompt,
        error_turn,
        {"role": "user", "content": "Try again.", "timestamp": 1767225710000},
        aborted,
        {"role": "user", "content": "Run sleep 20.", "timestamp": 1767225720000},
        orphan,
        {"role": "user", "content": "Never mind. Read empty.txt.", "timestamp": 1767225740000},
        empty,
        {**result(empty_call, "", False), "toolName": "read"},
        {"role": "user", "content": "Thanks.", "timestamp": 1767225760000},
    ]
    # the rules the other conversations do not reach: unsigned / signature-only / redacted /
    # whitespace thinking of the same model, a text signature, a tool call's thought signature,
    # three calls in one turn (an error result, an image result, one left unanswered), and a
    # foreign turn that is empty once transformed
    replay = [
        prompt,
        {
            **_assistant(provider, api, mid, None, same_call + "5"),
            "content": [
                {"type": "thinking", "thinking": "Unsigned plan."},
                {"type": "thinking", "thinking": "", "thinkingSignature": _signature_for(api)},
                {
                    "type": "thinking",
                    "thinking": "",
                    "thinkingSignature": "EmwKAhgBEgy-redacted",
                    "redacted": True,
                },
                {"type": "thinking", "thinking": "  \n"},
                {
                    "type": "text",
                    "text": "Two commands.",
                    "textSignature": '{"v":1,"id":"msg_0123","phase":"commentary"}',
                },
                {
                    "type": "toolCall",
                    "id": same_call + "5",
                    "name": "bash",
                    "arguments": {"command": "ls"},
                    "thoughtSignature": "c2lnbmF0dXJl",
                },
                {"type": "toolCall", "id": same_call + "6", "name": "read", "arguments": {"path": "a.png"}},
                {"type": "toolCall", "id": same_call + "7", "name": "bash", "arguments": {"command": "pwd"}},
            ],
        },
        result(same_call + "5", "a.png\nb.txt", False),
        {**result(same_call + "6", "Read image file [image/png]", True, error=True), "toolName": "read"},
        {
            **_assistant("other-provider", other_api, "other-model", None, other_call),
            "content": [
                {"type": "thinking", "thinking": "", "thinkingSignature": "x", "redacted": True},
                {"type": "thinking", "thinking": ""},
            ],
            "stopReason": "stop",
        },
        image_user,
    ]
    return {"tools": [prompt], "history": history, "foreign": foreign, "broken": broken, "replay": replay}


def levels(model: dict[str, Any]) -> list[str]:
    """off, medium and the model's highest level (its map's xhigh/max, else high)."""
    top = "high"
    level_map = model.get("thinkingLevelMap") or {}
    for level in ("max", "xhigh"):
        if level_map.get(level) is not None:
            top = level
            break
    return ["off", "medium", top] if model.get("reasoning") else ["off"]


def context_for(model: dict[str, Any], name: str) -> dict[str, Any]:
    messages = conversations(model)[name]
    ctx: dict[str, Any] = {"systemPrompt": SYSTEM, "messages": messages}
    if name in ("tools", "history", "broken", "replay"):
        ctx["tools"] = tool_schemas()
    return ctx


def canned_response(api: str) -> dict[str, Any]:
    """A minimal valid streamed answer of ``api`` (text "ok", stop); Bedrock's is binary (an AWS
    event stream: ``body`` is bytes, :func:`for_node` sends it to Node as base64)."""
    if api == "bedrock-converse-stream":
        import aws_eventstream

        binary = aws_eventstream.stream(
            [
                ("messageStart", {"role": "assistant"}),
                ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "ok"}}),
                ("contentBlockStop", {"contentBlockIndex": 0}),
                ("messageStop", {"stopReason": "end_turn"}),
                (
                    "metadata",
                    {
                        "usage": {"inputTokens": 10, "outputTokens": 1, "totalTokens": 11},
                        "metrics": {"latencyMs": 5},
                    },
                ),
            ]
        )
        return {
            "status": 200,
            "headers": {"content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "req-1"},
            "body": binary,
        }
    if api == "anthropic-messages":
        events = [
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "m",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
            {"type": "message_stop"},
        ]
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    elif api in RESPONSES_APIS:
        events = [
            {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "in_progress",
                    "content": [],
                },
            },
            {
                "type": "response.content_part.added",
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "part": {"type": "output_text", "text": ""},
            },
            {
                "type": "response.output_text.delta",
                "item_id": "msg_1",
                "output_index": 0,
                "content_index": 0,
                "delta": "ok",
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": "ok"}],
                },
            },
            {
                "type": "response.completed",
                "response": {
                    "id": "resp_1",
                    "status": "completed",
                    "usage": {
                        "input_tokens": 10,
                        "output_tokens": 1,
                        "total_tokens": 11,
                        "input_tokens_details": {"cached_tokens": 0},
                    },
                },
            },
        ]
        body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    elif api in ("google-generative-ai", "google-vertex"):
        chunk = {
            "candidates": [
                {"content": {"parts": [{"text": "ok"}], "role": "model"}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
            "modelVersion": "m",
            "responseId": "r1",
        }
        body = f"data: {json.dumps(chunk)}\r\n\r\n"
    else:  # Chat Completions and Mistral's chat stream
        chunks = [
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [
                    {"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}
                ],
            },
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "m",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
            },
        ]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return {"status": 200, "headers": {"content-type": "text/event-stream"}, "body": body}


def for_node(response: dict[str, Any]) -> dict[str, Any]:
    """A canned response as JSON for ``_pi_wire.mjs`` (a binary body as ``bodyB64``)."""
    if isinstance(response.get("body"), bytes):
        import base64

        return {
            **{k: v for k, v in response.items() if k != "body"},
            "bodyB64": base64.b64encode(response["body"]).decode(),
        }
    return response


def runnable_models() -> list[dict[str, Any]]:
    """Every catalog model on an API pi_nb runs, from a provider that takes a key."""
    from pi_nb.providers.catalog import list_models

    return [
        m.raw for m in list_models() if m.raw.get("api") in RUN_APIS and m.provider not in SIGN_IN_PROVIDERS
    ]


def case_name(model: dict[str, Any], conversation: str, level: str) -> str:
    return f"{model['provider']}/{model['id']}|{conversation}|{level}"


def all_cases() -> list[tuple[str, dict[str, Any], str, str]]:
    """``(name, model, conversation, level)`` for the whole runnable catalog."""
    out = []
    for model in runnable_models():
        for conversation in ("tools", "history", "foreign", "broken", "replay"):
            for level in levels(model):
                out.append((case_name(model, conversation, level), model, conversation, level))
    return out


def fake_env(providers_env: dict[str, list[str]]) -> dict[str, str]:
    env = {name: FAKE_ENV_VALUE for names in providers_env.values() for name in names}
    env.update(EXTRA_ENV)
    # Anthropic: an API key, not the bearer sign-in variables
    for name in ("ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN"):
        env.pop(name, None)
    return env


def comparable(request: dict[str, Any], user_agent: str | None = None) -> dict[str, Any]:
    """A captured request as compared: url, method, headers without runtime telemetry, body as JSON."""
    headers = {
        k.lower(): v
        for k, v in request["headers"].items()
        if not k.lower().startswith("x-stainless-") and k.lower() not in DROP_HEADERS
    }
    if user_agent is not None and headers.get("user-agent") == user_agent:
        headers["user-agent"] = "<pi user agent>"
    if headers.get("accept") == "*/*":  # fetch's default (undici adds it on the wire, as httpx does)
        del headers["accept"]
    if "x-goog-api-client" in headers:  # @google/genai's label names the runtime (gl-node/v22...)
        headers["x-goog-api-client"] = re.sub(
            r" gl-(node|python)/\S+", " <runtime>", headers["x-goog-api-client"]
        )
    if "x-amz-user-agent" in headers:
        # the AWS SDKs name themselves (aws-sdk-js/3.x ... vs Botocore/1.x ...: runtime telemetry, as
        # x-stainless-*), and a fresh UUID v4 names each call
        headers["user-agent"] = headers["x-amz-user-agent"] = "<aws sdk user agent>"
        if re.fullmatch(UUID4, headers.get("amz-sdk-invocation-id", "")):
            headers["amz-sdk-invocation-id"] = "<uuid4>"
    body_text = request.get("body")
    try:
        body: Any = json.loads(body_text) if body_text else None
    except ValueError:
        body = body_text
    return {
        "url": request["url"],
        "method": request["method"],
        "headers": dict(sorted(headers.items())),
        "body": body,
    }
