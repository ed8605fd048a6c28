"""Summary generation and ``compact``: the only part of compaction that calls a model.

Every summary request has the same shape: the summarisation system prompt, **one** user message
(``<conversation>`` + serialised text + the instructions), **no tools**, ``cacheRetention: "none"``
(a one-off request should not write a prompt cache), a session id (the caller's, or a fresh UUIDv7
per call), and the retry policy for transient errors. Output limits follow Pi: the history summary
may use ``floor(0.8 * reserve_tokens)`` tokens, a turn prefix ``floor(0.5 * reserve_tokens)``, both
capped by the model's own ``max_tokens``. ``reasoning`` is only sent to reasoning models, and only
when the thinking level is not ``"off"``.

A response that stopped with an error, **hit the token cap** (``length``: the summary is
incomplete) or called a tool is a failure: :class:`~pi_nb.errors.SummarizationError` with Pi's
text, and nothing is returned that a caller could persist by mistake.

The model is always passed in; nothing here constructs one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

import uuid6

from pi_nb.compaction._types import CompactionResultDict
from pi_nb.compaction.preparation import CompactionPreparation
from pi_nb.compaction.prompts import (
    SUMMARIZATION_PROMPT,
    TURN_PREFIX_SUMMARIZATION_PROMPT,
    UPDATE_SUMMARIZATION_PROMPT,
)
from pi_nb.compaction.retry import RetryCallbacks, SleepFn, retry_assistant_call
from pi_nb.compaction.serialization import (
    SUMMARIZATION_SYSTEM_PROMPT,
    compute_file_lists,
    content_text,
    format_file_operations,
    serialize_conversation,
)
from pi_nb.compaction.settings import RetrySettings
from pi_nb.errors import SummarizationError
from pi_nb.messages import AgentMessage, AssistantMessage, Usage, convert_to_llm
from pi_nb.providers.base import Context, Model, StreamOptions, SupportsAbort, now_ms

__all__ = [
    "CompactionResult",
    "SummaryResult",
    "compact",
    "complete_summarization",
    "generate_summary",
    "generate_summary_with_usage",
    "generate_turn_prefix_summary",
    "get_summarization_failure",
    "summary_max_tokens",
]


@dataclass(frozen=True)
class SummaryResult:
    """A summary's text and the provider usage of the call that produced it."""

    text: str
    usage: Usage


@dataclass(frozen=True)
class CompactionResult:
    """Pi's ``CompactionResult``: what a ``compaction`` entry is made from.

    ``estimated_tokens_after`` is filled in by the session after the entry is appended (the
    estimate of the rebuilt context); ``None`` until then.
    """

    summary: str
    first_kept_entry_id: str
    tokens_before: int
    usage: Usage | None = None
    details: dict[str, Any] | None = None
    """``{readFiles, modifiedFiles}`` for a summary pi_nb made; a hook's details are its own (open JSON)."""
    estimated_tokens_after: int | None = None

    def to_dict(self) -> CompactionResultDict:
        out: CompactionResultDict = {
            "summary": self.summary,
            "firstKeptEntryId": self.first_kept_entry_id,
            "tokensBefore": self.tokens_before,
        }
        if self.estimated_tokens_after is not None:
            out["estimatedTokensAfter"] = self.estimated_tokens_after
        if self.usage is not None:
            out["usage"] = self.usage
        if self.details is not None:
            out["details"] = self.details
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CompactionResult:
        """Read Pi's camelCase shape (e.g. a hook's ``compaction`` result)."""
        try:
            summary = data["summary"]
            first_kept = data["firstKeptEntryId"]
            tokens_before = data["tokensBefore"]
        except KeyError as exc:
            raise SummarizationError(f"a compaction result needs {exc.args[0]!r}") from None
        if not isinstance(summary, str) or not isinstance(first_kept, str):
            raise SummarizationError("a compaction result needs string 'summary' and 'firstKeptEntryId'")
        if isinstance(tokens_before, bool) or not isinstance(tokens_before, int):
            raise SummarizationError("a compaction result needs an integer 'tokensBefore'")
        usage = data.get("usage")
        details = data.get("details")
        est = data.get("estimatedTokensAfter")
        return cls(
            summary=summary,
            first_kept_entry_id=first_kept,
            tokens_before=tokens_before,
            # a hook's usage is taken as given once it is an object (Pi does not check it either)
            usage=cast(Usage, dict(usage)) if isinstance(usage, Mapping) else None,
            details=dict(details) if isinstance(details, Mapping) else None,
            estimated_tokens_after=est if isinstance(est, int) and not isinstance(est, bool) else None,
        )


def get_summarization_failure(response: AssistantMessage, label: str) -> str | None:
    """Pi's ``getSummarizationFailure``: why a summary response must not be persisted, or ``None``.

    An ``error`` stop (``"{label} failed: {errorMessage}"``) or a ``length`` stop (the text is
    cut off, so the summary is incomplete). Tool calls are checked separately by the callers.
    """
    stop_reason = response.get("stopReason")
    if stop_reason == "error":
        return f"{label} failed: {response.get('errorMessage') or 'Unknown error'}"
    if stop_reason == "length":
        return f"{label} failed: generation hit the token cap and the summary is incomplete"
    return None


def summary_max_tokens(model: Model, reserve_tokens: int, fraction: float) -> int:
    """``min(floor(fraction * reserve_tokens), model.max_tokens)`` (no cap when the model has none)."""
    limit = math.floor(fraction * reserve_tokens)
    model_max = getattr(model, "max_tokens", 0) or 0
    return min(limit, model_max) if model_max > 0 else limit


def _summary_options(
    model: Model,
    max_tokens: int,
    signal: SupportsAbort | None,
    thinking_level: str | None,
    session_id: str | None,
) -> StreamOptions:
    reasoning = thinking_level if model.reasoning and thinking_level and thinking_level != "off" else None
    return StreamOptions(max_tokens=max_tokens, reasoning=reasoning, signal=signal, session_id=session_id)


def _summary_context(prompt_text: str) -> Context:
    return Context(
        system_prompt=SUMMARIZATION_SYSTEM_PROMPT,
        messages=[
            {"role": "user", "content": [{"type": "text", "text": prompt_text}], "timestamp": now_ms()}
        ],
    )


async def complete_summarization(
    model: Model,
    context: Context,
    options: StreamOptions,
    retry: RetrySettings | Mapping[str, Any] | None = None,
    callbacks: RetryCallbacks | None = None,
    *,
    sleep: SleepFn | None = None,
) -> AssistantMessage:
    """Pi's ``completeSummarization``: one summary call with ``cacheRetention: "none"``, retried.

    The caller's ``session_id`` is kept (provider routing); without one each call gets a fresh
    UUIDv7. Transient errors are retried per ``retry``; the final response is returned as is.
    """
    request = replace(
        options,
        cache_retention="none",
        session_id=options.session_id if options.session_id is not None else str(uuid6.uuid7()),
    )

    async def produce() -> AssistantMessage:
        # (Model.complete returns the final assistant message; typed as one here until the
        # provider layer says so itself)
        return await model.complete(context, request)

    return await retry_assistant_call(produce, retry, request.signal, callbacks, sleep=sleep)


def _check_response(response: AssistantMessage, label: str) -> SummaryResult:
    failure = get_summarization_failure(response, label)
    if failure:
        raise SummarizationError(failure)
    content = response.get("content")
    blocks = content if isinstance(content, list) else []
    if any(isinstance(b, Mapping) and b.get("type") == "toolCall" for b in blocks):
        raise SummarizationError(f"{label} attempted to call a tool")
    usage = response.get("usage")
    # a copy of the provider's usage; {} for a malformed response without one (its cost unknown)
    return SummaryResult(
        text=content_text(blocks), usage=cast(Usage, dict(usage) if isinstance(usage, Mapping) else {})
    )


async def generate_summary_with_usage(
    current_messages: Sequence[AgentMessage],
    model: Model,
    reserve_tokens: int,
    signal: SupportsAbort | None = None,
    custom_instructions: str | None = None,
    previous_summary: str | None = None,
    thinking_level: str | None = None,
    retry: RetrySettings | Mapping[str, Any] | None = None,
    callbacks: RetryCallbacks | None = None,
    session_id: str | None = None,
    *,
    sleep: SleepFn | None = None,
) -> SummaryResult:
    """Pi's ``generateSummaryWithUsage``: summarise (or, with a previous summary, update) history.

    Raises:
        SummarizationError: ``Summarization failed: ...`` (error or length stop) or
            ``Summarization attempted to call a tool``.
    """
    max_tokens = summary_max_tokens(model, reserve_tokens, 0.8)
    instructions = UPDATE_SUMMARIZATION_PROMPT if previous_summary else SUMMARIZATION_PROMPT
    if custom_instructions:
        instructions = f"{instructions}\n\nAdditional focus: {custom_instructions}"
    conversation = serialize_conversation(convert_to_llm(current_messages))
    prompt = f"<conversation>\n{conversation}\n</conversation>\n\n"
    if previous_summary:
        prompt += f"<previous-summary>\n{previous_summary}\n</previous-summary>\n\n"
    prompt += instructions
    response = await complete_summarization(
        model,
        _summary_context(prompt),
        _summary_options(model, max_tokens, signal, thinking_level, session_id),
        retry,
        callbacks,
        sleep=sleep,
    )
    return _check_response(response, "Summarization")


async def generate_summary(
    current_messages: Sequence[AgentMessage],
    model: Model,
    reserve_tokens: int,
    signal: SupportsAbort | None = None,
    custom_instructions: str | None = None,
    previous_summary: str | None = None,
    thinking_level: str | None = None,
    retry: RetrySettings | Mapping[str, Any] | None = None,
    callbacks: RetryCallbacks | None = None,
    session_id: str | None = None,
    *,
    sleep: SleepFn | None = None,
) -> str:
    """Pi's ``generateSummary``: :func:`generate_summary_with_usage` without the usage."""
    result = await generate_summary_with_usage(
        current_messages,
        model,
        reserve_tokens,
        signal,
        custom_instructions,
        previous_summary,
        thinking_level,
        retry,
        callbacks,
        session_id,
        sleep=sleep,
    )
    return result.text


async def generate_turn_prefix_summary(
    messages: Sequence[AgentMessage],
    model: Model,
    reserve_tokens: int,
    signal: SupportsAbort | None = None,
    thinking_level: str | None = None,
    retry: RetrySettings | Mapping[str, Any] | None = None,
    callbacks: RetryCallbacks | None = None,
    session_id: str | None = None,
    *,
    sleep: SleepFn | None = None,
) -> SummaryResult:
    """Summarise the beginning of a split turn (half the reserve as output limit).

    Raises:
        SummarizationError: ``Turn prefix summarization failed: ...`` or ``... attempted to call a tool``.
    """
    max_tokens = summary_max_tokens(model, reserve_tokens, 0.5)
    conversation = serialize_conversation(convert_to_llm(messages))
    prompt = f"<conversation>\n{conversation}\n</conversation>\n\n{TURN_PREFIX_SUMMARIZATION_PROMPT}"
    response = await complete_summarization(
        model,
        _summary_context(prompt),
        _summary_options(model, max_tokens, signal, thinking_level, session_id),
        retry,
        callbacks,
        sleep=sleep,
    )
    return _check_response(response, "Turn prefix summarization")


def _num(value: object) -> int | float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def combine_usage(first: Usage, second: Usage) -> Usage:
    """Pi's ``combineUsage``: the field-wise sum of two usages (optional fields only when present)."""
    # built key by key, in Pi's order (the optional keys sit before totalTokens); each field is
    # read with .get and _num, so a usage lacking a number counts it as 0
    out: dict[str, Any] = {
        k: _num(first.get(k)) + _num(second.get(k)) for k in ("input", "output", "cacheRead", "cacheWrite")
    }
    for key in ("cacheWrite1h", "reasoning"):
        if key in first or key in second:
            out[key] = _num(first.get(key)) + _num(second.get(key))
    out["totalTokens"] = _num(first.get("totalTokens")) + _num(second.get("totalTokens"))
    c1: Mapping[str, object] = first.get("cost") if isinstance(first.get("cost"), Mapping) else {}
    c2: Mapping[str, object] = second.get("cost") if isinstance(second.get("cost"), Mapping) else {}
    assert isinstance(c1, Mapping) and isinstance(c2, Mapping)
    out["cost"] = {
        k: _num(c1.get(k)) + _num(c2.get(k)) for k in ("input", "output", "cacheRead", "cacheWrite", "total")
    }
    return cast(Usage, out)


async def compact(
    preparation: CompactionPreparation,
    model: Model,
    custom_instructions: str | None = None,
    signal: SupportsAbort | None = None,
    thinking_level: str | None = None,
    retry: RetrySettings | Mapping[str, Any] | None = None,
    callbacks: RetryCallbacks | None = None,
    session_id: str | None = None,
    *,
    sleep: SleepFn | None = None,
) -> CompactionResult:
    """Pi's ``compact``: generate the summary for a preparation and return the compaction result.

    A split turn gets two calls: the history (or the literal ``No prior history.`` when nothing
    precedes the turn; the previous summary is then not carried) and the turn prefix, merged as
    ``{history}\\n\\n---\\n\\n**Turn Context (split turn):**\\n\\n{prefix}`` with the usages summed.
    Otherwise one history call. The ``<read-files>``/``<modified-files>`` lists are appended and
    also returned as ``details``.

    Raises:
        SummarizationError: a call failed (error or length stop) or tried to call a tool.
    """
    p = preparation
    if p.is_split_turn and p.turn_prefix_messages:
        history_text = "No prior history."
        history_usage: Usage | None = None
        if p.messages_to_summarize:
            history = await generate_summary_with_usage(
                p.messages_to_summarize,
                model,
                p.settings.reserve_tokens,
                signal,
                custom_instructions,
                p.previous_summary,
                thinking_level,
                retry,
                callbacks,
                session_id,
                sleep=sleep,
            )
            history_text, history_usage = history.text, history.usage
        prefix = await generate_turn_prefix_summary(
            p.turn_prefix_messages,
            model,
            p.settings.reserve_tokens,
            signal,
            thinking_level,
            retry,
            callbacks,
            session_id,
            sleep=sleep,
        )
        summary = f"{history_text}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix.text}"
        usage = combine_usage(history_usage, prefix.usage) if history_usage is not None else prefix.usage
    else:
        result = await generate_summary_with_usage(
            p.messages_to_summarize,
            model,
            p.settings.reserve_tokens,
            signal,
            custom_instructions,
            p.previous_summary,
            thinking_level,
            retry,
            callbacks,
            session_id,
            sleep=sleep,
        )
        summary, usage = result.text, result.usage
    lists = compute_file_lists(p.file_ops)
    summary += format_file_operations(lists.read_files, lists.modified_files)
    if not p.first_kept_entry_id:
        raise SummarizationError("First kept entry has no UUID - session may need migration")
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=p.first_kept_entry_id,
        tokens_before=p.tokens_before,
        usage=usage,
        details={"readFiles": lists.read_files, "modifiedFiles": lists.modified_files},
    )
