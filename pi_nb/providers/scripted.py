"""``ScriptedModel``: a queue of canned assistant responses, recording every request.

The test seam of pi_nb (like ``httpx.MockTransport`` or simonw/llm's mock model): a real
:class:`~pi_nb.providers.base.Model` subclass, so the agent loop, compaction and branch summaries
run their production paths against it. Each queued item is one response:

* an assistant message dict (``make_assistant_message`` or one of the builders below);
* a callable ``(context, options) -> message`` for responses that depend on the request;
* an ``Exception``: the stream ends with an ``error`` event whose ``errorMessage`` is its text
  (how provider failures such as context overflow reach the caller).

An empty queue is an ``error`` response too (``ScriptedModel: no response queued``), never a hang.
"""

from __future__ import annotations

import asyncio
import copy
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pi_nb.messages import AssistantContent, AssistantMessage, StopReason, Usage
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    Model,
    StreamOptions,
    make_assistant_message,
    make_usage,
    now_ms,
)

__all__ = ["ScriptedModel", "ScriptedRequest"]

ScriptedItem = AssistantMessage | Callable[[Context, StreamOptions], AssistantMessage] | BaseException


@dataclass(frozen=True)
class ScriptedRequest:
    """One request the model received (deep copies: later mutation of the session cannot change it)."""

    context: Context
    options: StreamOptions


class ScriptedModel(Model):
    """A model that answers from a queue. ``enqueue()`` responses, then run the code under test."""

    api = "scripted"

    def __init__(
        self,
        responses: Iterable[ScriptedItem] = (),
        *,
        id: str = "scripted",
        provider: str = "scripted",
        context_window: int = 128_000,
        max_tokens: int = 16_384,
        reasoning: bool = False,
        input: Iterable[str] = ("text", "image"),
        delay: float = 0.0,
    ) -> None:
        super().__init__(
            id=id,
            provider=provider,
            context_window=context_window,
            max_tokens=max_tokens,
            reasoning=reasoning,
            input=tuple(input),
        )
        self._queue: deque[ScriptedItem] = deque(responses)
        self.requests: list[ScriptedRequest] = []
        self.delay = delay

    # -- queue -----------------------------------------------------------------------------
    def enqueue(self, *items: ScriptedItem) -> ScriptedModel:
        self._queue.extend(items)
        return self

    @property
    def pending(self) -> int:
        return len(self._queue)

    # -- builders --------------------------------------------------------------------------
    def message(
        self,
        content: list[AssistantContent],
        *,
        stop_reason: StopReason = "stop",
        usage: Usage | None = None,
        error_message: str | None = None,
    ) -> AssistantMessage:
        return make_assistant_message(
            content,
            api=self.api,
            provider=self.provider,
            model=self.id,
            usage=usage,
            stop_reason=stop_reason,
            error_message=error_message,
        )

    def text(
        self, text: str, *, usage: Usage | None = None, stop_reason: StopReason = "stop"
    ) -> AssistantMessage:
        return self.message([{"type": "text", "text": text}], usage=usage, stop_reason=stop_reason)

    def tool_call(
        self,
        name: str,
        arguments: dict[str, Any],  # the tool's arguments: open JSON
        *,
        id: str | None = None,
        text: str | None = None,
        usage: Usage | None = None,
        stop_reason: StopReason = "toolUse",
    ) -> AssistantMessage:
        content: list[AssistantContent] = []
        if text:
            content.append({"type": "text", "text": text})
        content.append(
            {
                "type": "toolCall",
                "id": id or f"call_{name}_{len(self.requests) + self.pending}",
                "name": name,
                "arguments": arguments,
            }
        )
        return self.message(content, usage=usage, stop_reason=stop_reason)

    def error(self, error_message: str, *, usage: Usage | None = None) -> AssistantMessage:
        return self.message([], stop_reason="error", usage=usage, error_message=error_message)

    @staticmethod
    def usage(input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0) -> Usage:
        return make_usage(input, output, cache_read, cache_write)

    # -- Model -----------------------------------------------------------------------------
    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        opts = options or StreamOptions()
        self.requests.append(ScriptedRequest(copy.deepcopy(context), opts))
        if not self._queue:
            item: ScriptedItem = self.error("ScriptedModel: no response queued")
        else:
            item = self._queue.popleft()
        if isinstance(item, BaseException):
            final = self.error(str(item) or type(item).__name__)
        elif callable(item):
            final = item(context, opts)
        else:
            final = copy.deepcopy(item)
        # like a real provider, answer a little later than the request and stamp the message then
        # (so a response is always younger than anything the session wrote before the request)
        await asyncio.sleep(max(self.delay, 0.002))
        final["timestamp"] = now_ms()

        partial = make_assistant_message(
            [],
            api=final.get("api", self.api),
            provider=final.get("provider", self.provider),
            model=final.get("model", self.id),
        )
        yield {"type": "start", "partial": copy.deepcopy(partial)}
        for index, block in enumerate(final.get("content") or []):
            if opts.signal is not None and opts.signal.aborted:
                aborted: AssistantMessage = {
                    **partial,
                    "stopReason": "aborted",
                    "errorMessage": "Request was aborted",
                }
                yield {"type": "error", "reason": "aborted", "error": aborted}
                return
            if self.delay:
                await asyncio.sleep(self.delay)
            # a queued response is a test's plain dict, taken as given: ``kind`` is read with get();
            # each branch's second test is the same one, written so that mypy narrows ``block``
            kind = block.get("type")
            partial["content"].append(copy.deepcopy(block))
            if kind == "text" and block["type"] == "text":
                yield {"type": "text_start", "contentIndex": index, "partial": copy.deepcopy(partial)}
                yield {
                    "type": "text_delta",
                    "contentIndex": index,
                    "delta": block.get("text", ""),
                    "partial": copy.deepcopy(partial),
                }
                yield {
                    "type": "text_end",
                    "contentIndex": index,
                    "content": block.get("text", ""),
                    "partial": copy.deepcopy(partial),
                }
            elif kind == "thinking" and block["type"] == "thinking":
                yield {"type": "thinking_start", "contentIndex": index, "partial": copy.deepcopy(partial)}
                yield {
                    "type": "thinking_delta",
                    "contentIndex": index,
                    "delta": block.get("thinking", ""),
                    "partial": copy.deepcopy(partial),
                }
                yield {
                    "type": "thinking_end",
                    "contentIndex": index,
                    "content": block.get("thinking", ""),
                    "partial": copy.deepcopy(partial),
                }
            elif kind == "toolCall" and block["type"] == "toolCall":
                yield {"type": "toolcall_start", "contentIndex": index, "partial": copy.deepcopy(partial)}
                yield {
                    "type": "toolcall_end",
                    "contentIndex": index,
                    "toolCall": copy.deepcopy(block),
                    "partial": copy.deepcopy(partial),
                }
        if opts.signal is not None and opts.signal.aborted:
            yield {
                "type": "error",
                "reason": "aborted",
                "error": {**final, "stopReason": "aborted", "errorMessage": "Request was aborted"},
            }
            return
        stop = final.get("stopReason")
        if stop == "error" or stop == "aborted":
            yield {"type": "error", "reason": stop, "error": final}
        else:
            yield {"type": "done", "reason": final.get("stopReason", "stop"), "message": final}
