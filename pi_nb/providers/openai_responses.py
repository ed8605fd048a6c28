"""``OpenAIResponsesProvider``: OpenAI's own models through the Responses API (``openai-responses``).

This is how Pi talks to OpenAI (pi-ai's ``openai-responses`` provider): ``POST {base_url}/responses``
with ``stream: true`` and ``store: false``, through the ``openai`` SDK. What makes it differ from
Chat Completions:

- reasoning arrives as ``reasoning`` output items (summary text, ``encrypted_content``); the whole
  item is kept, JSON-encoded, as the thinking block's ``thinkingSignature`` and sent back verbatim
  as an input item on the next turn, so a reasoning model continues its own reasoning;
- text items keep their item id (and ``phase``) in ``textSignature``; tool calls have the id
  ``"{call_id}|{item_id}"``;
- history goes in as Responses input items (``message``/``function_call``/``function_call_output``,
  ``input_text``/``input_image`` parts), converted the way pi-ai's ``convertResponsesMessages`` does.

Stop reasons come from the terminal response's ``status`` (``completed`` -> ``stop``, or ``toolUse``
when the answer calls tools; ``incomplete`` because of ``max_output_tokens`` -> ``length``); a
stream with no terminal event, an ``error`` event or ``response.failed`` is an ``error`` message
with the provider's text.

The key comes from ``$OPENAI_API_KEY`` (or ``api_key_env``) only; it is never stored.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from pi_nb.errors import MissingDependencyError
from pi_nb.messages import (
    AssistantContent,
    ErrorEvent,
    ErrorReason,
    TextDeltaEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingStartEvent,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallStartEvent,
)
from pi_nb.providers._stream_common import (
    BlockDelta,
    BlockStart,
    CostFunction,
    StreamProtocolError,
    apply_cost,
    block_delta_event,
    block_start_event,
    open_json_stream,
    parse_tool_arguments,
    stream_failure,
)
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    RemoteModel,
    StreamOptions,
    make_assistant_message,
    make_usage,
    snapshot_message,
)

__all__ = ["OpenAIResponsesProvider", "short_hash", "to_responses_input"]

# Typing: the Responses API wire JSON (the request body, its input items, each streamed event) is
# ``dict[str, Any]``: open JSON, not modelled here. The session's messages are read as JSON too
# (``Mapping[str, Any]``, and ``dict[str, Any]`` once ``_transform`` has copied them, some made up
# there without a timestamp): they reach the provider unvalidated and are read field by field,
# with Pi's tolerance of missing or odd fields. What the stream produces is typed: the
# ``AssistantMessage``, its content blocks and the events.

_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
_MIN_OUTPUT_TOKENS = 16  # the Responses API rejects max_output_tokens below 16
_PROMPT_CACHE_KEY_MAX = 64
_LEVELS = ("minimal", "low", "medium", "high", "xhigh")


def _require_openai() -> Any:
    try:
        import openai
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise MissingDependencyError(
            "The OpenAI Responses provider needs the openai SDK: pip install 'pi_nb[openai]'"
        ) from error
    return openai


def _imul(a: int, b: int) -> int:
    """JavaScript ``Math.imul``: 32-bit signed multiplication."""
    result = (a * b) & 0xFFFFFFFF
    return result - 0x100000000 if result & 0x80000000 else result


def _to_base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if n == 0:
        return "0"
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = digits[r] + out
    return out


def short_hash(text: str) -> str:
    """pi-ai's ``shortHash`` (the id it gives a too-long or foreign item id), bit for bit.

    JavaScript strings are UTF-16: characters outside the BMP count as two code units.
    """
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        ch = units[i] | (units[i + 1] << 8)
        h1 = _imul(h1 ^ ch, 2654435761)
        h2 = _imul(h2 ^ ch, 1597334677)
    h1 = _imul(h1 ^ ((h1 & 0xFFFFFFFF) >> 16), 2246822507) ^ _imul(h2 ^ ((h2 & 0xFFFFFFFF) >> 13), 3266489909)
    h2 = _imul(h2 ^ ((h2 & 0xFFFFFFFF) >> 16), 2246822507) ^ _imul(h1 ^ ((h1 & 0xFFFFFFFF) >> 13), 3266489909)
    return _to_base36(h2 & 0xFFFFFFFF) + _to_base36(h1 & 0xFFFFFFFF)


def _js_json(value: Any) -> str:
    """``JSON.stringify(value)``: no spaces, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _normalize_id_part(part: str) -> str:
    sanitized = re.sub(r"[^a-zA-Z0-9_-]", "_", part)[:64]
    return re.sub(r"_+$", "", sanitized)


def _text_signature(item_id: str, phase: Any) -> str:
    payload: dict[str, Any] = {"v": 1, "id": item_id}
    if phase:
        payload["phase"] = phase
    return _js_json(payload)


def _parse_text_signature(signature: Any) -> tuple[str, str | None] | None:
    if not isinstance(signature, str) or not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = json.loads(signature)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("v") == 1 and isinstance(parsed.get("id"), str):
            phase = parsed.get("phase")
            return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _transform(
    messages: Sequence[Mapping[str, Any]], target: tuple[str, str, str], supports_images: bool
) -> list[dict[str, Any]]:
    """pi-ai's ``transformMessages`` for this API: other models' thinking becomes text, tool-call
    ids are normalised for OpenAI, failed turns are dropped, orphaned tool calls get a result."""
    provider, api, _model_id = target
    id_map: dict[str, str] = {}

    def normalize_call_id(call_id: str, source: Mapping[str, Any]) -> str:
        if provider not in _TOOL_CALL_PROVIDERS or "|" not in call_id:
            return _normalize_id_part(call_id)
        call, item = call_id.split("|", 2)[:2]
        foreign = source.get("provider") != provider or source.get("api") != api
        item_id = f"fc_{short_hash(item)}"[:64] if foreign else _normalize_id_part(item)
        if not item_id.startswith("fc_"):
            item_id = _normalize_id_part(f"fc_{item_id}")
        return f"{_normalize_id_part(call)}|{item_id}"

    def images_to_text(content: list[dict[str, Any]], placeholder: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        previous = False
        for block in content:
            if block.get("type") == "image":
                if not previous:
                    out.append({"type": "text", "text": placeholder})
                previous = True
                continue
            out.append(block)
            previous = block.get("text") == placeholder
        return out

    transformed: list[dict[str, Any]] = []
    for raw in messages:
        msg = dict(raw)
        if msg.get("content") is None:
            msg["content"] = []
        role = msg.get("role")
        if not supports_images and role == "user" and isinstance(msg["content"], list):
            msg["content"] = images_to_text(msg["content"], "(image omitted: model does not support images)")
        if not supports_images and role == "toolResult":
            msg["content"] = images_to_text(
                msg["content"], "(tool image omitted: model does not support images)"
            )
        if role == "toolResult":
            mapped = id_map.get(msg.get("toolCallId", ""))
            if mapped:
                msg["toolCallId"] = mapped
        elif role == "assistant":
            same = (msg.get("provider"), msg.get("api"), msg.get("model")) == target
            blocks: list[dict[str, Any]] = []
            for block in msg["content"]:
                kind = block.get("type")
                if kind == "thinking":
                    if block.get("redacted"):
                        if same:
                            blocks.append(block)
                    elif same and block.get("thinkingSignature"):
                        blocks.append(block)
                    elif not (block.get("thinking") or "").strip():
                        continue
                    elif same:
                        blocks.append(block)
                    else:
                        blocks.append({"type": "text", "text": block["thinking"]})
                elif kind == "text":
                    blocks.append(block if same else {"type": "text", "text": block.get("text", "")})
                elif kind == "toolCall":
                    call = dict(block)
                    if not same:
                        call.pop("thoughtSignature", None)
                        new_id = normalize_call_id(str(call.get("id", "")), msg)
                        if new_id != call.get("id"):
                            id_map[str(call.get("id", ""))] = new_id
                            call["id"] = new_id
                    blocks.append(call)
                else:
                    blocks.append(block)
            msg["content"] = blocks
        transformed.append(msg)

    result: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []
    answered: set[str] = set()

    def flush() -> None:
        for call in pending:
            if call.get("id") not in answered:
                result.append(
                    {
                        "role": "toolResult",
                        "toolCallId": call.get("id"),
                        "toolName": call.get("name"),
                        "content": [{"type": "text", "text": "No result provided"}],
                        "isError": True,
                    }
                )
        pending.clear()
        answered.clear()

    for msg in transformed:
        role = msg.get("role")
        if role == "assistant":
            flush()
            if msg.get("stopReason") in ("error", "aborted"):
                continue
            calls = [b for b in msg["content"] if b.get("type") == "toolCall"]
            if calls:
                pending[:] = calls
                answered.clear()
            result.append(msg)
        elif role == "toolResult":
            answered.add(msg.get("toolCallId", ""))
            result.append(msg)
        elif role == "user":
            flush()
            result.append(msg)
        else:
            result.append(msg)
    flush()
    return result


def _tool_output(content: list[dict[str, Any]], supports_images: bool) -> Any:
    text = "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    images = [b for b in content if b.get("type") == "image"]
    if not images or not supports_images:
        return text if text else ("(see attached image)" if images else "(no tool output)")
    out: list[dict[str, Any]] = []
    if text:
        out.append({"type": "input_text", "text": text})
    out.extend(
        {"type": "input_image", "detail": "auto", "image_url": f"data:{b['mimeType']};base64,{b['data']}"}
        for b in images
    )
    return out


def to_responses_input(
    context: Context,
    *,
    provider: str = "openai",
    api: str = "openai-responses",
    model_id: str = "",
    reasoning: bool = False,
    supports_images: bool = True,
    supports_developer_role: bool = True,
) -> list[dict[str, Any]]:
    """Pi ``Message`` dicts -> Responses API input items (pi-ai's ``convertResponsesMessages``).

    An assistant message of the same ``(provider, api, model_id)`` sends its reasoning items back
    (the JSON kept in ``thinkingSignature``) and its text items under their own ids.
    """
    target = (provider, api, model_id)
    items: list[dict[str, Any]] = []
    if context.system_prompt:
        system_role = "developer" if reasoning and supports_developer_role else "system"
        items.append({"role": system_role, "content": context.system_prompt})
    for msg_index, msg in enumerate(_transform(context.messages, target, supports_images)):
        role = msg.get("role")
        content = msg.get("content")
        if role == "user":
            if isinstance(content, str):
                items.append({"role": "user", "content": [{"type": "input_text", "text": content}]})
                continue
            parts = [
                {"type": "input_text", "text": b.get("text", "")}
                if b.get("type") == "text"
                else {
                    "type": "input_image",
                    "detail": "auto",
                    "image_url": f"data:{b.get('mimeType')};base64,{b.get('data')}",
                }
                for b in content or []
            ]
            if parts:
                items.append({"role": "user", "content": parts})
        elif role == "assistant":
            same_provider_api = (msg.get("provider"), msg.get("api")) == (provider, api)
            different_model = same_provider_api and msg.get("model") != model_id
            out: list[dict[str, Any]] = []
            text_index = 0
            for block in content or []:
                kind = block.get("type")
                if kind == "thinking":
                    if block.get("thinkingSignature"):
                        out.append(json.loads(block["thinkingSignature"]))
                elif kind == "text":
                    parsed = _parse_text_signature(block.get("textSignature"))
                    fallback = (
                        f"msg_pi_{msg_index}" if text_index == 0 else f"msg_pi_{msg_index}_{text_index}"
                    )
                    text_index += 1
                    msg_id = parsed[0] if parsed else ""
                    if not msg_id:
                        msg_id = fallback
                    elif len(msg_id) > 64:
                        msg_id = f"msg_{short_hash(msg_id)}"
                    item: dict[str, Any] = {
                        "type": "message",
                        "role": "assistant",
                        "content": [
                            {"type": "output_text", "text": block.get("text", ""), "annotations": []}
                        ],
                        "status": "completed",
                        "id": msg_id,
                    }
                    if parsed and parsed[1]:
                        item["phase"] = parsed[1]
                    out.append(item)
                elif kind == "toolCall":
                    call_id, _, item_id = str(block.get("id", "")).partition("|")
                    keep_id: str | None = item_id or None
                    if (different_model and keep_id and keep_id.startswith("fc_")) or not (
                        keep_id and keep_id.startswith("fc_")
                    ):
                        keep_id = None
                    call: dict[str, Any] = {"type": "function_call"}
                    if keep_id is not None:
                        call["id"] = keep_id
                    call.update(
                        call_id=call_id,
                        name=block.get("name"),
                        arguments=_js_json(block.get("arguments") or {}),
                    )
                    out.append(call)
            items.extend(out)
        elif role == "toolResult":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": str(msg.get("toolCallId", "")).split("|")[0],
                    "output": _tool_output(content or [], supports_images),
                }
            )
    return items


def _as_dict(obj: Any) -> dict[str, Any]:
    """An SDK event as the JSON the server sent."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    out = to_dict(warnings=False) if callable(to_dict) else None
    return out if isinstance(out, dict) else {}


_StreamError = StreamProtocolError  # a failure reported inside the stream


def _num(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class OpenAIResponsesProvider(RemoteModel):
    """An OpenAI model over the Responses API (what Pi uses for ``openai/...`` models).

    Optional, beyond the common constructor arguments: ``cost_function`` (the final usage to its
    cost, ``usage["cost"]``), ``thinking_level_map`` (pi-ai's per-model map from thinking levels to
    the API's ``reasoning.effort`` values; ``None`` marks a level the model does not have, and
    ``"off": None`` means reasoning cannot be switched off), ``supports_developer_role`` and
    ``supports_strict_mode`` (pi-ai's ``compat`` flags of the catalog entry; with strict mode each
    tool says ``"strict": false``).
    """

    api = "openai-responses"
    default_provider = "openai"
    default_context_window = 128_000
    default_max_tokens = 16_384
    default_reasoning = False
    base_url_env = "OPENAI_BASE_URL"
    default_api_key_env = "OPENAI_API_KEY"
    cost_function: CostFunction | None = None

    def __init__(
        self,
        id: str,
        *,
        cost_function: CostFunction | None = None,
        thinking_level_map: Mapping[str, str | None] | None = None,
        supports_developer_role: bool = True,
        supports_strict_mode: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(id, **kwargs)
        self.cost_function = cost_function
        self.thinking_level_map: dict[str, str | None] | None = (
            dict(thinking_level_map) if thinking_level_map is not None else None
        )
        self.supports_developer_role = supports_developer_role
        self.supports_strict_mode = supports_strict_mode

    def _client(self) -> Any:
        openai = _require_openai()
        key = os.environ.get(self.api_key_env) or ("not-needed" if self.base_url else None)
        return openai.AsyncOpenAI(
            api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries
        )

    def _effort(self, level: str) -> str | None:
        """The ``reasoning.effort`` for a thinking level (the nearest level this model has)."""
        table = self.thinking_level_map
        if table is None:
            return level
        if level in table and table[level] is not None:
            return table[level]
        if level in _LEVELS:
            i = _LEVELS.index(level)
            for candidate in (*_LEVELS[i + 1 :], *reversed(_LEVELS[:i])):
                if table.get(candidate) is not None:
                    return table[candidate]
            return None
        return table.get(level, level)

    def build_request(self, context: Context, options: StreamOptions | None) -> dict[str, Any]:
        """The ``responses.create`` parameters (pi-ai's ``buildParams``)."""
        opts = options or StreamOptions()
        body: dict[str, Any] = {
            "model": self.id,
            "input": to_responses_input(
                context,
                provider=self.provider,
                api=self.api,
                model_id=self.id,
                reasoning=self.reasoning,
                supports_images="image" in self.input,
                supports_developer_role=self.supports_developer_role,
            ),
            "stream": True,
            "store": False,
        }
        if opts.cache_retention != "none" and opts.session_id:
            body["prompt_cache_key"] = opts.session_id[:_PROMPT_CACHE_KEY_MAX]
        if opts.cache_retention == "long":
            body["prompt_cache_retention"] = "24h"
        if opts.max_tokens:
            body["max_output_tokens"] = max(opts.max_tokens, _MIN_OUTPUT_TOKENS)
        if opts.temperature is not None:
            body["temperature"] = opts.temperature
        if context.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["parameters"],
                    **({"strict": False} if self.supports_strict_mode else {}),
                }
                for t in context.tools
            ]
        if self.reasoning:
            effort = self._effort(opts.reasoning) if opts.reasoning and opts.reasoning != "off" else None
            if effort is not None:
                body["reasoning"] = {"effort": effort, "summary": "auto"}
                body["include"] = ["reasoning.encrypted_content"]
            elif self.thinking_level_map is None or self.thinking_level_map.get("off", "none") is not None:
                off = self.thinking_level_map.get("off") if self.thinking_level_map else None
                body["reasoning"] = {"effort": off or "none"}
        body.update(opts.extra)
        return body

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """Pi's ``openai-responses`` stream (``processResponsesStream``)."""
        opts = options or StreamOptions()
        output = make_assistant_message([], api=self.api, provider=self.provider, model=self.id)
        output["stopReason"] = "pending"
        yield {"type": "start", "partial": snapshot_message(output)}
        blocks: list[AssistantContent] = output["content"]
        # output_index -> the block that item streams into (the item's kind is the block's type)
        slots: dict[int, AssistantContent] = {}
        reasoning_by_id: dict[str, ThinkingContent] = {}
        partial_json: dict[int, str] = {}  # id(block) -> streamed arguments
        terminal = False

        def index_of(block: AssistantContent) -> int:
            return next(i for i, b in enumerate(blocks) if b is block)

        def slot(output_index: Any) -> AssistantContent | None:
            return slots.get(output_index) if isinstance(output_index, int) else None

        def create(
            output_index: Any, item: Mapping[str, Any]
        ) -> TextStartEvent | ThinkingStartEvent | ToolCallStartEvent | None:
            kind = item.get("type")
            if kind == "message" and item.get("phase") == "final_answer":
                output["stopReason"] = "stop"
            block: AssistantContent
            start: BlockStart
            if kind == "reasoning":
                block = {"type": "thinking", "thinking": ""}
                start = "thinking_start"
            elif kind == "message":
                block = {"type": "text", "text": ""}
                start = "text_start"
            elif kind == "function_call":
                name: Any = item.get("name")  # as the server sent it (wire JSON, not checked)
                call: ToolCall = {
                    "type": "toolCall",
                    "id": f"{item.get('call_id')}|{item.get('id')}",
                    "name": name,
                    "arguments": {},
                }
                if item.get("namespace") is not None:
                    call["namespace"] = item["namespace"]
                partial_json[id(call)] = item.get("arguments") or ""
                block = call
                start = "toolcall_start"
            else:
                return None
            blocks.append(block)
            slots[output_index] = block
            return block_start_event(start, len(blocks) - 1, snapshot_message(output))

        def delta_event(
            kind: BlockDelta, block: AssistantContent, delta: str
        ) -> TextDeltaEvent | ThinkingDeltaEvent | ToolCallDeltaEvent:
            return block_delta_event(kind, index_of(block), delta, snapshot_message(output))

        def finalize(response: Mapping[str, Any]) -> None:
            nonlocal terminal
            terminal = True
            for item in response.get("output") or []:
                # Azure can leave encrypted_content out of output_item.done: take it from here
                if not isinstance(item, Mapping) or item.get("type") != "reasoning":
                    continue
                block = reasoning_by_id.get(str(item.get("id")))
                if not item.get("encrypted_content") or block is None or not block.get("thinkingSignature"):
                    continue
                stored = json.loads(block["thinkingSignature"])
                if not stored.get("encrypted_content"):
                    block["thinkingSignature"] = _js_json(
                        {**stored, "encrypted_content": item["encrypted_content"]}
                    )
            if response.get("id"):
                output["responseId"] = response["id"]
            u = response.get("usage")
            if isinstance(u, Mapping):
                details = u.get("input_tokens_details") or {}
                cached = _num(details.get("cached_tokens"))
                written = _num(details.get("cache_write_tokens"))
                usage = make_usage(
                    max(0, _num(u.get("input_tokens")) - cached - written),
                    _num(u.get("output_tokens")),
                    cached,
                    written,
                    total_tokens=_num(u.get("total_tokens")),
                )
                usage["reasoning"] = _num((u.get("output_tokens_details") or {}).get("reasoning_tokens"))
                output["usage"] = usage
            apply_cost(output["usage"], self.cost_function)
            status = response.get("status")
            incomplete = response.get("incomplete_details")
            reason = incomplete.get("reason") if isinstance(incomplete, Mapping) else None
            reason = reason if isinstance(reason, str) else None
            if status:
                output["rawStopReason"] = f"{status}.{reason}" if reason else status
            output.pop("errorMessage", None)
            if status == "incomplete":
                if reason == "max_output_tokens":
                    output["stopReason"] = "length"
                else:
                    output["stopReason"] = "error"
                    output["errorMessage"] = (
                        f"Response incomplete: {reason}"
                        if reason
                        else "Response incomplete without a provider reason"
                    )
            elif status in ("failed", "cancelled"):
                output["stopReason"] = "error"
            elif status in (None, "", "completed", "in_progress", "queued"):
                output["stopReason"] = "stop"
            else:
                raise _StreamError(f"Unhandled stop reason: {status}")
            if output["stopReason"] == "stop" and any(b["type"] == "toolCall" for b in blocks):
                output["stopReason"] = "toolUse"

        def fail(message: str, reason: ErrorReason = "error") -> ErrorEvent:
            output["stopReason"] = reason
            output["errorMessage"] = message
            apply_cost(output["usage"], self.cost_function)  # tokens already used are still paid for
            return {"type": "error", "reason": reason, "error": output}

        try:
            client = self._client()
            response = await open_json_stream(
                _require_openai(), client, "/responses", self.build_request(context, opts)
            )
            async for raw_event in response:
                if opts.signal is not None and opts.signal.aborted:
                    await response.close()
                    yield fail("Request was aborted", "aborted")
                    return
                event = _as_dict(raw_event)
                kind = event.get("type")
                at = event.get("output_index")
                if kind == "response.created":
                    response_id: Any = (event.get("response") or {}).get("id")  # wire JSON, as sent
                    output["responseId"] = response_id
                elif kind == "response.output_item.added":
                    started = create(at, event.get("item") or {})
                    if started is not None:
                        yield started
                elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                    block = slot(at)
                    if block is not None and block["type"] == "thinking":
                        block["thinking"] += event.get("delta", "")
                        yield delta_event("thinking_delta", block, event.get("delta", ""))
                elif kind == "response.reasoning_summary_part.done":
                    block = slot(at)
                    if block is not None and block["type"] == "thinking":
                        block["thinking"] += "\n\n"
                        yield delta_event("thinking_delta", block, "\n\n")
                elif kind in ("response.output_text.delta", "response.refusal.delta"):
                    block = slot(at)
                    if block is not None and block["type"] == "text":
                        block["text"] += event.get("delta", "")
                        yield delta_event("text_delta", block, event.get("delta", ""))
                elif kind == "response.function_call_arguments.delta":
                    block = slot(at)
                    if block is not None and block["type"] == "toolCall":
                        partial_json[id(block)] += event.get("delta", "")
                        block["arguments"] = parse_tool_arguments(partial_json[id(block)])
                        yield delta_event("toolcall_delta", block, event.get("delta", ""))
                elif kind == "response.function_call_arguments.done":
                    block = slot(at)
                    if block is not None and block["type"] == "toolCall":
                        previous = partial_json[id(block)]
                        final_args = event.get("arguments") or ""
                        partial_json[id(block)] = final_args
                        block["arguments"] = parse_tool_arguments(final_args)
                        if final_args.startswith(previous) and len(final_args) > len(previous):
                            yield delta_event("toolcall_delta", block, final_args[len(previous) :])
                elif kind == "response.output_item.done":
                    item = event.get("item") or {}
                    if item.get("type") == "message" and item.get("phase") == "final_answer":
                        output["stopReason"] = "stop"
                    if at not in slots:
                        started = create(at, item)
                        if started is not None:
                            yield started
                    found = slots.get(at) if isinstance(at, int) else None
                    if found is None or not isinstance(at, int):
                        continue
                    block = found
                    if item.get("type") == "reasoning" and block["type"] == "thinking":
                        summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
                        text = "\n\n".join(c.get("text", "") for c in item.get("content") or [])
                        block["thinking"] = summary or text or block["thinking"]
                        block["thinkingSignature"] = _js_json(item)
                        reasoning_by_id[str(item.get("id"))] = block
                        del slots[at]
                        yield {
                            "type": "thinking_end",
                            "contentIndex": index_of(block),
                            "content": block["thinking"],
                            "partial": snapshot_message(output),
                        }
                    elif item.get("type") == "message" and block["type"] == "text":
                        block["text"] = "".join(
                            (c.get("text") if c.get("type") == "output_text" else c.get("refusal")) or ""
                            for c in item.get("content") or []
                        )
                        block["textSignature"] = _text_signature(str(item.get("id")), item.get("phase"))
                        del slots[at]
                        yield {
                            "type": "text_end",
                            "contentIndex": index_of(block),
                            "content": block["text"],
                            "partial": snapshot_message(output),
                        }
                    elif item.get("type") == "function_call" and block["type"] == "toolCall":
                        block["arguments"] = parse_tool_arguments(
                            item.get("arguments") or partial_json[id(block)]
                        )
                        if item.get("namespace") is not None:
                            block["namespace"] = item["namespace"]
                        del slots[at]
                        yield {
                            "type": "toolcall_end",
                            "contentIndex": index_of(block),
                            "toolCall": block.copy(),
                            "partial": snapshot_message(output),
                        }
                elif kind in ("response.completed", "response.incomplete"):
                    finalize(event.get("response") or {})
                elif kind == "error":
                    raise _StreamError(f"Error Code {event.get('code')}: {event.get('message')}")
                elif kind == "response.failed":
                    terminal = True
                    failed = event.get("response") or {}
                    if failed.get("status"):
                        output["rawStopReason"] = failed["status"]
                    error = failed.get("error")
                    details = failed.get("incomplete_details")
                    if isinstance(error, Mapping) and error:
                        message = f"{error.get('code') or 'unknown'}: {error.get('message') or 'no message'}"
                    elif isinstance(details, Mapping) and details.get("reason"):
                        message = f"incomplete: {details['reason']}"
                    else:
                        message = "Unknown error (no error details in response)"
                    raise _StreamError(message)
            if not terminal:
                raise _StreamError("OpenAI Responses stream ended before a terminal response event")
        except Exception as error:  # provider failures are values (error messages), as in pi-ai
            yield fail(*stream_failure(error, opts.signal, os.environ.get(self.api_key_env)))
            return
        if output["stopReason"] == "pending":
            yield fail("OpenAI Responses stream ended without a stop reason")
            return
        if output["stopReason"] == "error":
            yield fail(output.get("errorMessage") or "An unknown error occurred")
            return
        yield {"type": "done", "reason": output["stopReason"], "message": output}
