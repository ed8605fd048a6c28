"""Context-overflow and truncated-response detection (pi-ai ``utils/overflow.ts``, made stricter).

Providers report an over-long prompt in three ways, and :func:`is_context_overflow` checks all
three: an error whose text matches one of the known provider messages (and none of the
rate-limit/throttling messages that happen to share words with them); a *successful* response
whose reported input exceeds the window (providers that truncate silently); and a ``length`` stop
with no output at all from an input that filled the window (a server that cut the input to fit and
had no room left to answer).

The patterns are Pi's 25, in Pi's order (:func:`get_overflow_patterns`), plus a few pi_nb adds for
overflow texts real servers send that Pi misses (Anthropic's "exceed context limit", vLLM's "too
long to fit into the model", llama.cpp's "Context size has been exceeded", LM Studio's "context
length of only N tokens" and ``n_keep >= n_ctx``, "exceeds context length", "exceeds maximum
context length" without a number). The exclusions are Pi's three plus throttle and quota wording
anywhere in the text: Bedrock's ``ThrottlingException`` says "Too many tokens, please wait before
trying again." with no prefix, which Pi's ``too many tokens`` pattern takes for an overflow (it then
compacts instead of backing off). Every one of these was checked on real error messages collected
from public issues and recorded fixtures (``tests/fixtures/overflow/error_messages.json``).

``is_recoverable_length`` says whether a ``length`` stop ended *below* the output limit the caller
wanted: such a stop is caused by context pressure, so one compact-and-retry can help.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pi_nb.compaction._jsre import compile_js_regex
from pi_nb.messages import AssistantMessage, Usage

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

# Overflow texts of real servers that Pi's patterns miss (pi_nb only; each seen in a public issue).
_EXTRA_OVERFLOW_SOURCES: tuple[str, ...] = (
    r"exceeds? (?:the )?context limit",  # Anthropic: "input length and `max_tokens` exceed context limit"
    r"is too long to fit into the model",  # vLLM: "The prompt (total length N) is too long to fit into the model"
    r"context size has been exceeded",  # llama.cpp server (HTTP 500)
    r"context length of only [\d,]+ tokens",  # LM Studio: "... loaded with context length of only N tokens"
    r"n_keep \(\d+\) >= n_ctx",  # LM Studio / llama.cpp: "Cannot truncate prompt with n_keep (N) >= n_ctx (M)"
    r"exceeds? (?:the )?context length",  # LM Studio (older): "Input length N exceeds context length M"
    r"exceeds (?:the )?(?:model'?s )?maximum context length",  # mlx-serve and others, with no number
)

# Throttle and quota wording anywhere in the text (pi_nb only): these are never overflows.
_EXTRA_NON_OVERFLOW_SOURCES: tuple[str, ...] = (
    r"please wait before trying again",  # Bedrock ThrottlingException, any SDK's formatting
    r"throttl",  # ThrottlingException / throttlingException / throttled
    r"rate[_-]?limit",  # rate_limit_error, RateLimitError, rate-limits
    r"tokens per (?:min|minute|hour|day)\b|\bTPM\b",  # per-minute/day token quotas
    r"exceeded your current quota|insufficient_quota|RESOURCE_EXHAUSTED",  # billing / Gemini quota
    r"within a given time frame",  # Llama API 429
)

_OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(compile_js_regex(s) for s in _OVERFLOW_SOURCES)
_NON_OVERFLOW_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    compile_js_regex(s) for s in _NON_OVERFLOW_SOURCES
)
_ALL_OVERFLOW: tuple[re.Pattern[str], ...] = _OVERFLOW_PATTERNS + tuple(
    compile_js_regex(s) for s in _EXTRA_OVERFLOW_SOURCES
)
_ALL_NON_OVERFLOW: tuple[re.Pattern[str], ...] = _NON_OVERFLOW_PATTERNS + tuple(
    compile_js_regex(s) for s in _EXTRA_NON_OVERFLOW_SOURCES
)


def get_overflow_patterns(*, include_pi_nb: bool = False) -> list[re.Pattern[str]]:
    """The compiled overflow patterns: Pi's 25 in Pi's order, then (``include_pi_nb=True``) the ones
    pi_nb adds (a copy; for tests and inspection)."""
    return list(_ALL_OVERFLOW if include_pi_nb else _OVERFLOW_PATTERNS)


def _usage_number(usage: Usage, key: Literal["input", "output", "cacheRead"]) -> float:
    value: object = usage.get(key, 0)  # a malformed usage may hold anything
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return value


def _is_zero(value: object) -> bool:
    # Pi compares with ``=== 0``: a missing output count is not zero.
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0


def is_context_overflow(message: AssistantMessage, context_window: int | None = None) -> bool:
    """Pi's ``isContextOverflow(message, contextWindow?)`` for an assistant message dict, with
    pi_nb's extra overflow texts and throttle exclusions (see the module docstring).

    ``context_window`` enables the two usage-based checks (silent overflow, length stop with zero
    output); ``None`` or ``0`` disables them, as a missing/zero window does in Pi.
    """
    stop_reason = message.get("stopReason")
    error_message = message.get("errorMessage")
    if stop_reason == "error" and isinstance(error_message, str) and error_message:
        non_overflow = any(p.search(error_message) for p in _ALL_NON_OVERFLOW)
        if not non_overflow and any(p.search(error_message) for p in _ALL_OVERFLOW):
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


def is_recoverable_length(message: AssistantMessage, desired_max_output: int) -> bool:
    """Pi's ``isRecoverableLength``: a ``length`` stop whose output stayed below the wanted limit.

    ``desired_max_output`` is the model's own ``max_tokens`` (before any clamping to the context),
    as the session passes it; ``0`` means "unknown" and never counts as recoverable.
    """
    if message.get("stopReason") != "length" or not desired_max_output > 0:
        return False
    usage = message.get("usage")
    output = _usage_number(usage, "output") if isinstance(usage, Mapping) else 0
    return output < desired_max_output
