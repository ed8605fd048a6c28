"""Context-overflow and truncated-response detection (pi-ai ``utils/overflow.ts``).

Providers report an over-long prompt in three ways, and :func:`is_context_overflow` checks all
three: an error whose text matches one of the known provider messages (and none of the
rate-limit/throttling messages that happen to share words with them, e.g. Bedrock's
``Throttling error: Too many tokens``); a *successful* response whose reported input exceeds the
window (providers that truncate silently); and a ``length`` stop with no output at all from an
input that filled the window (a server that cut the input to fit and had no room left to answer).

``is_recoverable_length`` says whether a ``length`` stop ended *below* the output limit the caller
wanted: such a stop is caused by context pressure, so one compact-and-retry can help.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pi_nb.compaction._jsre import compile_js_regex

__all__ = [
    "get_overflow_patterns",
    "is_context_overflow",
    "is_recoverable_length",
]

# pi-ai 0.85.0 OVERFLOW_PATTERNS, in Pi's order (JavaScript syntax; compiled with JS semantics).
_OVERFLOW_SOURCES: tuple[str, ...] = (
    r"prompt is too long",  # Anthropic token overflow
    r"request_too_large",  # Anthropic request byte-size overflow (HTTP 413)
    r"input is too long for requested model",  # Amazon Bedrock
    r"exceeds the context window",  # OpenAI (Completions & Responses API)
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",  # LiteLLM
    r"input token count.*exceeds the maximum",  # Google (Gemini)
    r"maximum prompt length is \d+",  # xAI (Grok)
    r"reduce the length of the messages",  # Groq
    r"maximum context length is \d+ tokens",  # OpenRouter (most backends)
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",  # OpenRouter/Poolside
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",  # Together AI
    r"exceeds the limit of \d+",  # GitHub Copilot
    r"exceeds the available context size",  # llama.cpp server
    r"greater than the context length",  # LM Studio
    r"context window exceeds limit",  # MiniMax
    r"exceeded model token limit",  # Kimi For Coding
    r"too large for model with \d+ maximum context length",  # Mistral
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",  # DS4 server
    r"model_context_window_exceeded",  # z.ai finish_reason surfaced as error text
    r"prompt too long; exceeded (?:max )?context length",  # Ollama
    r"range of input length should be",  # DashScope / Qwen
    r"context[_ ]length[_ ]exceeded",  # generic
    r"too many tokens",  # generic
    r"token limit exceeded",  # generic
    r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)",  # Cerebras: 400/413 with no body
)

# Errors that share words with the overflow texts but are not overflows (throttling, 429s).
_NON_OVERFLOW_SOURCES: tuple[str, ...] = (
    r"^(Throttling error|Service unavailable):",  # AWS Bedrock human-readable prefixes
    r"rate limit",
    r"too many requests",
)

_OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(compile_js_regex(s) for s in _OVERFLOW_SOURCES)
_NON_OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    compile_js_regex(s) for s in _NON_OVERFLOW_SOURCES
)


def get_overflow_patterns() -> list[re.Pattern[str]]:
    """The compiled overflow patterns, in Pi's order (a copy; for tests and inspection)."""
    return list(_OVERFLOW_PATTERNS)


def _usage_number(usage: Mapping[str, Any], key: str) -> float:
    value = usage.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return value


def _is_zero(value: Any) -> bool:
    # Pi compares with ``=== 0``: a missing output count is not zero.
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0


def is_context_overflow(message: Mapping[str, Any], context_window: int | None = None) -> bool:
    """Pi's ``isContextOverflow(message, contextWindow?)`` for an assistant message dict.

    ``context_window`` enables the two usage-based checks (silent overflow, length stop with zero
    output); ``None`` or ``0`` disables them, as a missing/zero window does in Pi.
    """
    stop_reason = message.get("stopReason")
    error_message = message.get("errorMessage")
    if stop_reason == "error" and isinstance(error_message, str) and error_message:
        non_overflow = any(p.search(error_message) for p in _NON_OVERFLOW_PATTERNS)
        if not non_overflow and any(p.search(error_message) for p in _OVERFLOW_PATTERNS):
            return True

    if not context_window:
        return False
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return False
    input_tokens = _usage_number(usage, "input") + _usage_number(usage, "cacheRead")
    if stop_reason == "stop" and input_tokens > context_window:
        return True
    return bool(
        stop_reason == "length" and _is_zero(usage.get("output")) and input_tokens >= context_window * 0.99
    )


def is_recoverable_length(message: Mapping[str, Any], desired_max_output: int) -> bool:
    """Pi's ``isRecoverableLength``: a ``length`` stop whose output stayed below the wanted limit.

    ``desired_max_output`` is the model's own ``max_tokens`` (before any clamping to the context),
    as the session passes it; ``0`` means "unknown" and never counts as recoverable.
    """
    if message.get("stopReason") != "length" or not desired_max_output > 0:
        return False
    usage = message.get("usage")
    output = _usage_number(usage, "output") if isinstance(usage, Mapping) else 0
    return output < desired_max_output
