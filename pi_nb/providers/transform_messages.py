"""pi-ai's ``transformMessages``: the history every API converter sends, made fit for one model.

Run before a converter turns pi messages into a request body. It

- replaces images with a text placeholder when the model takes text only (one placeholder for a
  run of images: ``(image omitted: model does not support images)`` in user messages,
  ``(tool image omitted: model does not support images)`` in tool results);
- rewrites assistant turns written by another model (provider, api or model id differ): thinking
  becomes plain text (empty thinking and redacted thinking are dropped), text blocks lose their
  signatures, tool calls lose ``thoughtSignature`` and get their id normalised by the caller's
  callback; the tool results that answer a renamed call follow the new id;
- keeps the same model's thinking as it is (signed or redacted), dropping only empty unsigned
  thinking;
- skips assistant turns that ended in ``error`` or ``aborted``;
- answers every tool call left without a result with an error result ``No result provided``,
  placed before the next user or assistant message (or at the end).

Messages whose ``content`` is ``None`` or missing get an empty content list first.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from pi_nb._js import js_trim
from pi_nb.messages import Message

__all__ = [
    "NON_VISION_TOOL_IMAGE_PLACEHOLDER",
    "NON_VISION_USER_IMAGE_PLACEHOLDER",
    "NormalizeToolCallId",
    "transform_messages",
]

NON_VISION_USER_IMAGE_PLACEHOLDER = "(image omitted: model does not support images)"
NON_VISION_TOOL_IMAGE_PLACEHOLDER = "(tool image omitted: model does not support images)"

NormalizeToolCallId = Callable[[str, Mapping[str, Any], Mapping[str, Any]], str]
"""``(tool call id, target model, the assistant message the call is in) -> id to send``."""


def _now_ms() -> int:
    return int(time.time() * 1000)


def _replace_images(content: Sequence[Any], placeholder: str) -> list[Any]:
    result: list[Any] = []
    previous_was_placeholder = False
    for block in content:
        if not isinstance(block, Mapping):  # a string's characters, as JavaScript iterates one
            result.append(block)
            previous_was_placeholder = False
            continue
        if block.get("type") == "image":
            if not previous_was_placeholder:
                result.append({"type": "text", "text": placeholder})
            previous_was_placeholder = True
            continue
        result.append(block)
        previous_was_placeholder = block.get("text") == placeholder
    return result


def _downgrade_unsupported_images(
    messages: list[dict[str, Any]], model: Mapping[str, Any]
) -> list[dict[str, Any]]:
    if "image" in (model.get("input") or []):
        return messages
    out: list[dict[str, Any]] = []
    for msg in messages:
        role = msg.get("role")
        if role == "user" and isinstance(msg.get("content"), list):
            out.append({**msg, "content": _replace_images(msg["content"], NON_VISION_USER_IMAGE_PLACEHOLDER)})
        elif role == "toolResult":
            out.append({**msg, "content": _replace_images(msg["content"], NON_VISION_TOOL_IMAGE_PLACEHOLDER)})
        else:
            out.append(msg)
    return out


def _js_trim_empty(text: str) -> bool:
    return js_trim(text) == ""


def _transform_assistant(
    msg: dict[str, Any],
    model: Mapping[str, Any],
    normalize_tool_call_id: NormalizeToolCallId | None,
    id_map: dict[str, str],
) -> dict[str, Any]:
    same_model = (
        msg.get("provider") == model.get("provider")
        and msg.get("api") == model.get("api")
        and msg.get("model") == model.get("id")
    )
    content: list[Any] = []
    for block in msg["content"]:
        kind = block.get("type")
        if kind == "thinking":
            if block.get("redacted"):
                if same_model:
                    content.append(block)
                continue
            if same_model and block.get("thinkingSignature"):
                content.append(block)
                continue
            thinking = block.get("thinking")
            if not thinking or _js_trim_empty(thinking):
                continue
            content.append(block if same_model else {"type": "text", "text": thinking})
        elif kind == "text":
            content.append(block if same_model else {"type": "text", "text": block.get("text")})
        elif kind == "toolCall":
            call = block
            if not same_model and block.get("thoughtSignature"):
                call = {k: v for k, v in block.items() if k != "thoughtSignature"}
            if not same_model and normalize_tool_call_id is not None:
                new_id = normalize_tool_call_id(block["id"], model, msg)
                if new_id != block["id"]:
                    id_map[block["id"]] = new_id
                    call = {**call, "id": new_id}
            content.append(call)
        else:
            content.append(block)
    return {**msg, "content": content}


def transform_messages(
    messages: Sequence[Message],
    model: Mapping[str, Any],
    normalize_tool_call_id: NormalizeToolCallId | None = None,
) -> list[Message]:
    """The messages as pi-ai's ``transformMessages`` hands them to a converter for ``model``.

    ``model`` is a pi-ai Model dict (``provider``, ``api``, ``id``, ``input``). The input is not
    modified; unchanged messages and blocks are returned as the same objects.
    """
    id_map: dict[str, str] = {}
    # the given mappings are passed on as they are (no copy) unless a rule changes them
    # messages are read as open dicts: untyped callers (old session files) may hold anything
    raw = cast("Sequence[dict[str, Any]]", messages)
    normalized: list[dict[str, Any]] = [
        {**msg, "content": []} if msg.get("content") is None else msg for msg in raw
    ]
    image_aware = _downgrade_unsupported_images(normalized, model)

    transformed: list[dict[str, Any]] = []
    for msg in image_aware:
        role = msg.get("role")
        if role == "toolResult":
            new_id = id_map.get(msg.get("toolCallId"))  # type: ignore[arg-type]
            if new_id and new_id != msg.get("toolCallId"):
                transformed.append({**msg, "toolCallId": new_id})
            else:
                transformed.append(msg)
        elif role == "assistant":
            transformed.append(_transform_assistant(msg, model, normalize_tool_call_id, id_map))
        else:
            transformed.append(msg)

    result: list[dict[str, Any]] = []
    pending: list[Mapping[str, Any]] = []
    existing: set[Any] = set()

    def insert_synthetic() -> None:
        nonlocal pending, existing
        if pending:
            for call in pending:
                if call.get("id") not in existing:
                    result.append(
                        {
                            "role": "toolResult",
                            "toolCallId": call.get("id"),
                            "toolName": call.get("name"),
                            "content": [{"type": "text", "text": "No result provided"}],
                            "isError": True,
                            "timestamp": _now_ms(),
                        }
                    )
            pending = []
            existing = set()

    for msg in transformed:
        role = msg.get("role")
        if role == "assistant":
            insert_synthetic()
            if msg.get("stopReason") in ("error", "aborted"):
                continue
            calls = [b for b in msg["content"] if b.get("type") == "toolCall"]
            if calls:
                pending = calls
                existing = set()
            result.append(msg)
        elif role == "toolResult":
            existing.add(msg.get("toolCallId"))
            result.append(msg)
        elif role == "user":
            insert_synthetic()
            result.append(msg)
        else:
            result.append(msg)
    insert_synthetic()
    return cast("list[Message]", result)
