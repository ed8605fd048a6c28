"""pi-ai's provider-independent request options: output-token ceilings, thinking budgets, levels.

Ports of ``api/simple-options`` (the ``maxTokens`` every API sends, clamped to the context window
that is left; thinking budgets per level), ``utils/estimate`` (the chars/4 context estimate that
clamp reads), the thinking-level helpers of ``models`` (levels a model supports, clamping a
requested level) and ``utils/pi-user-agent`` (the ``User-Agent`` pi-ai sends).

Numbers follow JavaScript: string lengths are UTF-16 code units and ``JSON.stringify`` output is
what gets measured.
"""

from __future__ import annotations

import math
import os
import platform
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pi_nb._js import js_stringify, utf16_len
from pi_nb.messages import Message, Usage
from pi_nb.providers.base import THINKING_LEVELS

__all__ = [
    "CONTEXT_SAFETY_TOKENS",
    "DEFAULT_THINKING_BUDGETS",
    "EXTENDED_THINKING_LEVELS",
    "MIN_ANSWER_TOKENS",
    "MIN_MAX_TOKENS",
    "adjust_max_tokens_for_thinking",
    "build_base_options",
    "calculate_context_tokens",
    "clamp_max_tokens_to_context",
    "clamp_reasoning",
    "clamp_thinking_budget_to_answer_room",
    "clamp_thinking_level",
    "estimate_context_tokens",
    "estimate_message_tokens",
    "estimate_text_tokens",
    "get_supported_thinking_levels",
    "pi_user_agent",
    "simple_stream_options",
    "thinking_budget_for_level",
]

CONTEXT_SAFETY_TOKENS: Final = 4096
MIN_MAX_TOKENS: Final = 1
MIN_ANSWER_TOKENS: Final = 1024
"""Tokens always left for the answer when a thinking budget shares the response ceiling."""

DEFAULT_THINKING_BUDGETS: Final[Mapping[str, int]] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
}

#: Every thinking level, in order (:data:`pi_nb.providers.base.THINKING_LEVELS`, the one definition).
EXTENDED_THINKING_LEVELS: Final = THINKING_LEVELS

_CHARS_PER_TOKEN: Final = 4
_ESTIMATED_IMAGE_CHARS: Final = 4800


# ---------------------------------------------------------------- utils/estimate


def _js_number(value: Any) -> float:
    """``Number(value)`` for what a message field can hold (``undefined`` -> NaN, ``null`` -> 0)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return math.nan


def _js_max(a: float, b: float) -> float:
    """``Math.max(a, b)``: NaN when either is NaN."""
    if math.isnan(a) or math.isnan(b):
        return math.nan
    return max(a, b)


def _as_count(x: float) -> int | float:
    return int(x) if x.is_integer() else x


def calculate_context_tokens(usage: Usage) -> int | float:
    """``usage.totalTokens || input + output + cacheRead + cacheWrite`` (a missing count makes it
    NaN, as ``undefined`` does in JavaScript)."""
    raw: Mapping[str, Any] = usage
    total = raw.get("totalTokens")
    if total and _js_number(total) == _js_number(total):
        return total  # type: ignore[no-any-return]
    parts = [raw.get(k, _MISSING) for k in ("input", "output", "cacheRead", "cacheWrite")]
    if any(p is _MISSING for p in parts):
        return math.nan
    return _as_count(sum(_js_number(p) for p in parts))


_MISSING: Final = object()


def _safe_stringify_len(value: Any) -> int:
    try:
        return utf16_len(js_stringify(value))
    except (TypeError, ValueError):
        return len("[unserializable]")


def _content_chars(content: Any) -> int:
    if isinstance(content, str):
        return utf16_len(content)
    chars = 0
    for block in content:
        chars += utf16_len(block["text"]) if block.get("type") == "text" else _ESTIMATED_IMAGE_CHARS
    return chars


def estimate_text_tokens(text: str) -> int:
    """``ceil(text.length / 4)``."""
    return math.ceil(utf16_len(text) / _CHARS_PER_TOKEN)


def estimate_message_tokens(message: Message) -> int:
    """pi-ai's ``estimateMessageTokens`` for one LLM message (user, assistant or toolResult)."""
    return _message_tokens(message)


def _message_tokens(message: Mapping[str, Any]) -> int:
    if message.get("role") in ("user", "toolResult"):
        return math.ceil(_content_chars(message["content"]) / _CHARS_PER_TOKEN)
    chars = 0
    for block in message["content"]:
        kind = block.get("type")
        if kind == "text":
            chars += utf16_len(block["text"])
        elif kind == "thinking":
            chars += utf16_len(block["thinking"])
        elif "arguments" not in block:
            chars += utf16_len(block["name"]) + len("undefined")  # JSON.stringify(undefined) ?? "undefined"
        else:
            chars += utf16_len(block["name"]) + _safe_stringify_len(block["arguments"])
    return math.ceil(chars / _CHARS_PER_TOKEN)


def _last_assistant_usage(messages: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], int] | None:
    # JavaScript comparisons: a missing timestamp is NaN (never >=, and it poisons the running
    # Math.max), a null one is 0. A missing usage (pi-ai throws reading it) counts as no usage.
    latest_prefix = -math.inf
    found: tuple[Mapping[str, Any], int] | None = None
    for i, message in enumerate(messages):
        timestamp = _js_number(message.get("timestamp", _MISSING))
        if message.get("role") == "assistant":
            usage = message.get("usage")
            if (
                timestamp >= latest_prefix
                and message.get("stopReason") not in ("aborted", "error")
                and isinstance(usage, Mapping)
                and calculate_context_tokens(usage) > 0  # type: ignore[arg-type]
            ):
                found = (usage, i)
        latest_prefix = _js_max(latest_prefix, timestamp)
    return found


def _estimate_messages(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    info = _last_assistant_usage(messages)
    if info is not None:
        usage_tokens = calculate_context_tokens(info[0])  # type: ignore[arg-type]
        trailing = sum(_message_tokens(m) for m in messages[info[1] + 1 :])
        return {
            "tokens": usage_tokens + trailing,
            "usageTokens": usage_tokens,
            "trailingTokens": trailing,
            "lastUsageIndex": info[1],
        }
    tokens = sum(_message_tokens(m) for m in messages)
    return {"tokens": tokens, "usageTokens": 0, "trailingTokens": tokens, "lastUsageIndex": None}


def _tools_tokens(tools: Sequence[Any] | None) -> int:
    if not tools:
        return 0
    try:
        text = js_stringify(list(tools))
    except (TypeError, ValueError):
        text = "[unserializable]"
    return estimate_text_tokens(text)


def estimate_context_tokens(context: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """pi-ai's ``estimateContextTokens``: ``{tokens, usageTokens, trailingTokens, lastUsageIndex}``.

    ``context`` is a pi-ai Context (``systemPrompt``, ``messages``, ``tools``) or a message list.
    The last successful assistant usage that still describes the prefix counts as measured; what
    follows it is estimated at chars/4 (plus the tools a later tool result added). Without such a
    usage, the system prompt and all tools are estimated too.
    """
    if not isinstance(context, Mapping):
        return _estimate_messages(context)
    messages = context["messages"]
    estimate = _estimate_messages(messages)
    tools = context.get("tools")
    if estimate["lastUsageIndex"] is not None:
        added: set[str] = set()
        for message in messages[estimate["lastUsageIndex"] + 1 :]:
            if message.get("role") == "toolResult":
                added.update(message.get("addedToolNames") or [])
        added_tokens = _tools_tokens([t for t in tools if t["name"] in added] if tools is not None else None)
        return {
            "tokens": estimate["tokens"] + added_tokens,
            "usageTokens": estimate["usageTokens"],
            "trailingTokens": estimate["trailingTokens"] + added_tokens,
            "lastUsageIndex": estimate["lastUsageIndex"],
        }
    system_prompt = context.get("systemPrompt")
    prefix = (estimate_text_tokens(system_prompt) if system_prompt else 0) + _tools_tokens(tools)
    return {
        "tokens": estimate["tokens"] + prefix,
        "usageTokens": estimate["usageTokens"],
        "trailingTokens": estimate["trailingTokens"] + prefix,
        "lastUsageIndex": estimate["lastUsageIndex"],
    }


# ---------------------------------------------------------------- api/simple-options


def clamp_max_tokens_to_context(model: Mapping[str, Any], context: Mapping[str, Any], max_tokens: int) -> int:
    """``maxTokens`` lowered so the estimated context plus 4096 safety tokens fits the window (>= 1)."""
    window = model.get("contextWindow") or 0
    if window <= 0:
        return max(MIN_MAX_TOKENS, max_tokens)
    available = window - estimate_context_tokens(context)["tokens"] - CONTEXT_SAFETY_TOKENS
    return min(max_tokens, max(MIN_MAX_TOKENS, available))  # type: ignore[no-any-return]


_BASE_OPTION_KEYS: Final = (
    "signal",
    "telemetryContext",
    "apiKey",
    "fetch",
    "transport",
    "cacheRetention",
    "sessionId",
    "headers",
    "onPayload",
    "onResponse",
    "timeoutMs",
    "websocketConnectTimeoutMs",
    "maxRetries",
    "maxRetryDelayMs",
    "metadata",
    "env",
)


def simple_stream_options(opts: Any) -> dict[str, Any]:
    """The ``SimpleStreamOptions`` pi-ai's ``streamSimple`` receives from Pi's agent, out of a
    :class:`~pi_nb.providers.base.StreamOptions`: ``maxTokens``, ``temperature``, ``sessionId``,
    ``cacheRetention``, each only when set."""
    simple: dict[str, Any] = {}
    for key, value in (
        ("maxTokens", opts.max_tokens),
        ("temperature", opts.temperature),
        ("sessionId", opts.session_id),
        ("cacheRetention", opts.cache_retention),
    ):
        if value is not None:
            simple[key] = value
    return simple


def build_base_options(
    model: Mapping[str, Any],
    context: Mapping[str, Any],
    options: Mapping[str, Any] | None = None,
    api_key: str | None = None,
) -> dict[str, Any]:
    """pi-ai's ``buildBaseOptions``: the StreamOptions every ``streamSimple*`` starts from.

    Keys whose value is ``undefined`` in pi-ai are left out (``None`` is not used for them).
    ``maxTokens`` is the caller's (or the model's) clamped to the context window.
    """
    opts = options or {}
    out: dict[str, Any] = {}
    if "temperature" in opts and opts["temperature"] is not None:
        out["temperature"] = opts["temperature"]
    model_sampling = model.get("samplingParams")
    option_sampling = opts.get("samplingParams")
    if model_sampling is not None or option_sampling is not None:  # {} is truthy in JavaScript
        out["samplingParams"] = {**(model_sampling or {}), **(option_sampling or {})}
    max_tokens = opts.get("maxTokens")
    if max_tokens is None:
        max_tokens = model["maxTokens"]
    out["maxTokens"] = clamp_max_tokens_to_context(model, context, max_tokens)
    for name in _BASE_OPTION_KEYS:
        value = (api_key or opts.get("apiKey")) if name == "apiKey" else opts.get(name)
        if value is not None:
            out[name] = value
    return out


def clamp_reasoning(effort: str | None) -> str | None:
    """``xhigh`` and ``max`` become ``high``; other levels (and ``None``) stay."""
    return "high" if effort in ("xhigh", "max") else effort


def thinking_budget_for_level(level: str, custom_budgets: Mapping[str, int] | None = None) -> int:
    """The thinking budget of a level (the defaults overridden by ``custom_budgets``)."""
    budgets = {**DEFAULT_THINKING_BUDGETS, **(custom_budgets or {})}
    return budgets[clamp_reasoning(level)]  # type: ignore[index]


def clamp_thinking_budget_to_answer_room(thinking_budget: int, ceiling: int) -> int:
    """Cap a thinking budget so at least :data:`MIN_ANSWER_TOKENS` remain under ``ceiling``."""
    return min(thinking_budget, max(0, ceiling - MIN_ANSWER_TOKENS))


def adjust_max_tokens_for_thinking(
    base_max_tokens: int | None,
    model_max_tokens: int,
    level: str,
    custom_budgets: Mapping[str, int] | None = None,
) -> tuple[int, int]:
    """``(maxTokens, thinkingBudget)``: the ceiling raised by the budget (capped at the model's).

    ``base_max_tokens=None`` (no caller cap) uses the model's cap and fits thinking inside it.
    """
    budget = thinking_budget_for_level(level, custom_budgets)
    max_tokens = (
        model_max_tokens if base_max_tokens is None else min(base_max_tokens + budget, model_max_tokens)
    )
    if max_tokens <= budget:
        budget = clamp_thinking_budget_to_answer_room(budget, max_tokens)
    return max_tokens, budget


# ---------------------------------------------------------------- models (thinking levels)


def get_supported_thinking_levels(model: Mapping[str, Any]) -> list[str]:
    """The levels a model takes: ``["off"]`` without reasoning; else the extended list minus the
    levels its ``thinkingLevelMap`` maps to ``null``; ``xhigh``/``max`` only when mapped."""
    if not model.get("reasoning"):
        return ["off"]
    level_map = model.get("thinkingLevelMap") or {}
    levels = []
    for level in EXTENDED_THINKING_LEVELS:
        if level in level_map and level_map[level] is None:
            continue
        if level in ("xhigh", "max") and level not in level_map:
            continue
        levels.append(level)
    return levels


def clamp_thinking_level(model: Mapping[str, Any], level: str) -> str:
    """The requested level if supported, else the next supported one up, else the next down."""
    available = get_supported_thinking_levels(model)
    if level in available:
        return level
    if level not in EXTENDED_THINKING_LEVELS:
        return available[0] if available else "off"
    index = EXTENDED_THINKING_LEVELS.index(level)
    for candidate in EXTENDED_THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(EXTENDED_THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


# ---------------------------------------------------------------- utils/pi-user-agent

# Python's platform names as Node's os.platform() / os.arch() spell them
_NODE_PLATFORM: Final = {"linux": "linux", "darwin": "darwin", "windows": "win32", "freebsd": "freebsd"}
_NODE_ARCH: Final = {
    "x86_64": "x64",
    "amd64": "x64",
    "aarch64": "arm64",
    "arm64": "arm64",
    "i386": "ia32",
    "i686": "ia32",
    "x86": "ia32",
    "armv7l": "arm",
    "armv6l": "arm",
    "ppc64le": "ppc64",
    "ppc64": "ppc64",
    "s390x": "s390x",
    "riscv64": "riscv64",
    "loongarch64": "loong64",
}


def _node_platform() -> str:
    system = platform.system().lower()
    if system.startswith(("cygwin", "msys", "mingw")):
        return "win32"
    return _NODE_PLATFORM.get(system, system)


def _node_release() -> str:
    if hasattr(os, "uname"):
        return os.uname().release
    return platform.release()  # pragma: no cover - Windows: Node prints the kernel version there


def _node_arch() -> str:
    machine = platform.machine().lower()
    return _NODE_ARCH.get(machine, machine)


def pi_user_agent() -> str:
    """``pi (<os.platform()> <os.release()>; <os.arch()>)`` as Node prints it on this machine."""
    return f"pi ({_node_platform()} {_node_release()}; {_node_arch()})"
