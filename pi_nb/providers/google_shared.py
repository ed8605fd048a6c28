"""What pi-ai 0.85.0's two Gemini providers (``google-generative-ai``, ``google-vertex``) share:
its ``google-shared`` module, plus the parts of the ``@google/genai`` JavaScript SDK that shape
the wire (the request body's field order, the server-sent-event reader, the error texts).

- Messages: Pi messages -> Gemini ``contents`` (``convertMessages``): user text and
  ``inlineData`` images; assistant turns as ``model`` parts, thinking as ``thought: true`` parts
  only for the same provider and model (else plain text), thought signatures kept only when they
  are the same model's and valid base64; tool calls as ``functionCall`` (with ``id`` for Gemini
  3+, Claude and gpt-oss), tool results as ``functionResponse`` (``output``/``error``; images
  nested for Gemini 3+, else a following ``Tool result image:`` user turn), consecutive results
  merged into one user turn.
- Tools: ``functionDeclarations`` with ``parametersJsonSchema``; the function-calling mode
  (``VALIDATED`` when a tool asks for strict sampling on Gemini 3+).
- Wire: the SDK's converters rebuild every object in their own field order (``contents``,
  ``systemInstruction``, ``tools``, ``toolConfig``, ``generationConfig``; a Gemini API
  ``functionCall`` as ``id, args, name``, a Vertex function declaration as ``description, name,
  parameters, parametersJsonSchema``...): :func:`wire_body` does the same.
- Stream: ``data:`` events split on the SDK's delimiters; each parsed as ``Response.json()``
  parses it; a raw network chunk that is a JSON ``{"error": ...}`` fails the stream with the
  SDK's ``got status: ...`` text.
- Errors: the SDK's ``ApiError`` text, the error body re-serialised (``JSON.stringify`` of the
  parsed body, or ``{"error":{"message","code","status"}}`` for a body that is not JSON).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from pi_nb._js import js_json_parse_v8, js_stringify, js_trim
from pi_nb.messages import StopReason
from pi_nb.providers._pi_ai_util import (
    get_json_schema_tool_parameters,
    resolve_json_schema_strict_sampling,
    sanitize_surrogates,
)
from pi_nb.providers.transform_messages import transform_messages

__all__ = [
    "GOOGLE_GENAI_SDK_VERSION",
    "GoogleApiError",
    "convert_messages",
    "convert_tools",
    "is_thinking_part",
    "map_stop_reason",
    "requires_tool_call_id",
    "resolve_google_function_calling_mode",
    "resolve_google_thinking_level",
    "retain_thought_signature",
    "supports_google_strict_tool_sampling",
    "wire_body",
]

# Typing: Gemini's wire JSON (contents, parts, streamed chunks) and pi-ai's model dict are open
# JSON (``dict[str, Any]``), not modelled here.

#: The @google/genai release pi-ai 0.85.0 ships; its label is in every request's
#: ``x-goog-api-client`` header.
GOOGLE_GENAI_SDK_VERSION = "1.52.0"

_BASE64_SIGNATURE = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")
_GEMINI_MAJOR = re.compile(r"^gemini(?:-live)?-(\d+)")
_NON_ID = re.compile(r"[^a-zA-Z0-9_-]")


class GoogleApiError(Exception):
    """The SDK's ``ApiError``: its message and the HTTP status (no headers: the SDK keeps none)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class GoogleStreamError(Exception):
    """A failure with pi-ai's or the SDK's own text."""


def resolve_google_thinking_level(model: Mapping[str, Any], level: str) -> str:
    """pi-ai's ``resolveGoogleThinkingLevel``: the model's level map applied (lower-cased)."""
    if level == "off":
        return "high"
    level_map = model.get("thinkingLevelMap") or {}
    mapped = level_map.get(level)
    resolved = mapped.lower() if isinstance(mapped, str) else level
    if resolved in ("minimal", "low", "medium", "high"):
        return resolved
    shown = ("null" if mapped is None else str(mapped)) if level in level_map else "undefined"
    raise GoogleStreamError(
        f"Unsupported Google thinking level mapping for {model.get('provider')}/{model.get('id')}: {level} -> {shown}"
    )


def is_thinking_part(part: Mapping[str, Any]) -> bool:
    """A streamed part is thinking only when it says ``thought: true``."""
    return part.get("thought") is True


def retain_thought_signature(existing: str | None, incoming: Any) -> str | None:
    """The last non-empty signature of a block (a later delta without one keeps it)."""
    if isinstance(incoming, str) and incoming:
        return incoming
    return existing


def _valid_signature(signature: Any) -> bool:
    if not signature or not isinstance(signature, str):
        return False
    if len(signature) % 4 != 0:
        return False
    return bool(_BASE64_SIGNATURE.match(signature))


def _resolve_signature(same: bool, signature: Any) -> str | None:
    return signature if same and _valid_signature(signature) else None


def _gemini_major(model_id: str) -> int | None:
    match = _GEMINI_MAJOR.match(model_id.lower())
    return int(match.group(1)) if match else None


def requires_tool_call_id(model_id: str) -> bool:
    """Models that need the tool call's id echoed in calls and responses."""
    major = _gemini_major(model_id)
    return model_id.startswith(("claude-", "gpt-oss-")) or (major is not None and major >= 3)


def _multimodal_function_response(model_id: str) -> bool:
    major = _gemini_major(model_id)
    return major >= 3 if major is not None else True


def _blank(text: Any) -> bool:
    return not text or js_trim(str(text)) == ""


def convert_messages(model: Mapping[str, Any], context: Mapping[str, Any]) -> list[dict[str, Any]]:
    """pi-ai's ``convertMessages``: Pi messages -> Gemini ``Content`` list (pi-ai's field order)."""
    model_id = str(model.get("id"))
    needs_id = requires_tool_call_id(model_id)

    def normalize(call_id: str, *_: Any) -> str:
        if not needs_id:
            return call_id
        return _NON_ID.sub("_", call_id)[:64]

    contents: list[dict[str, Any]] = []
    messages = transform_messages(list(context.get("messages") or []), model, normalize)
    for msg in messages:
        role = msg.get("role")
        content: Any = msg.get("content")
        if role == "user":
            if isinstance(content, str):
                contents.append({"role": "user", "parts": [{"text": sanitize_surrogates(content)}]})
                continue
            parts: list[dict[str, Any]] = []
            for item in content or []:
                if item.get("type") == "text":
                    parts.append({"text": sanitize_surrogates(str(item.get("text", "")))})
                else:
                    parts.append({"inlineData": {"mimeType": item.get("mimeType"), "data": item.get("data")}})
            if parts:
                contents.append({"role": "user", "parts": parts})
        elif role == "assistant":
            parts = []
            same = msg.get("provider") == model.get("provider") and msg.get("model") == model.get("id")
            for block in content or []:
                kind = block.get("type")
                if kind == "text":
                    signature = _resolve_signature(same, block.get("textSignature"))
                    if _blank(block.get("text")) and not signature:
                        continue
                    part: dict[str, Any] = {"text": sanitize_surrogates(str(block.get("text", "")))}
                    if signature:
                        part["thoughtSignature"] = signature
                    parts.append(part)
                elif kind == "thinking":
                    if same:
                        signature = _resolve_signature(same, block.get("thinkingSignature"))
                        if _blank(block.get("thinking")) and not signature:
                            continue
                        part = {"thought": True, "text": sanitize_surrogates(str(block.get("thinking", "")))}
                        if signature:
                            part["thoughtSignature"] = signature
                        parts.append(part)
                    else:
                        if _blank(block.get("thinking")):
                            continue
                        parts.append({"text": sanitize_surrogates(str(block.get("thinking", "")))})
                elif kind == "toolCall":
                    signature = _resolve_signature(same, block.get("thoughtSignature"))
                    args = block.get("arguments")
                    call: dict[str, Any] = {"name": block.get("name"), "args": {} if args is None else args}
                    if needs_id:
                        call["id"] = block.get("id")
                    part = {"functionCall": call}
                    if signature:
                        part["thoughtSignature"] = signature
                    parts.append(part)
            if parts:
                contents.append({"role": "model", "parts": parts})
        elif role == "toolResult":
            blocks = list(content or [])
            text = "\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            images = (
                [b for b in blocks if b.get("type") == "image"]
                if "image" in (model.get("input") or [])
                else []
            )
            has_text = len(text) > 0
            has_images = len(images) > 0
            multimodal = _multimodal_function_response(model_id)
            value = sanitize_surrogates(text) if has_text else ("(see attached image)" if has_images else "")
            image_parts = [
                {"inlineData": {"mimeType": b.get("mimeType"), "data": b.get("data")}} for b in images
            ]
            response: dict[str, Any] = {
                "name": msg.get("toolName"),
                "response": {"error": value} if msg.get("isError") else {"output": value},
            }
            if has_images and multimodal:
                response["parts"] = image_parts
            if needs_id:
                response["id"] = msg.get("toolCallId")
            function_part = {"functionResponse": response}
            last = contents[-1] if contents else None
            if (
                last is not None
                and last.get("role") == "user"
                and any("functionResponse" in p for p in last.get("parts") or [])
            ):
                last["parts"].append(function_part)
            else:
                contents.append({"role": "user", "parts": [function_part]})
            if has_images and not multimodal:
                contents.append({"role": "user", "parts": [{"text": "Tool result image:"}, *image_parts]})
    return contents


def convert_tools(
    tools: Sequence[Mapping[str, Any]], supports_strict_mode: bool = True
) -> list[dict[str, Any]] | None:
    """pi-ai's ``convertTools`` (``parametersJsonSchema``; ``None`` for no tools)."""
    if not tools:
        return None
    declarations = []
    for tool in tools:
        strict = resolve_json_schema_strict_sampling(tool, supports_strict_mode)
        declarations.append(
            {
                "name": tool.get("name"),
                "description": tool.get("description"),
                "parametersJsonSchema": get_json_schema_tool_parameters(tool, strict),
            }
        )
    return [{"functionDeclarations": declarations}]


def supports_google_strict_tool_sampling(model_id: str) -> bool:
    """Gemini 3+ enforces required parameters in its validated tool-calling mode."""
    major = _gemini_major(model_id)
    return major is not None and major >= 3


def _map_tool_choice(choice: str) -> str:
    return {"auto": "AUTO", "none": "NONE", "any": "ANY"}.get(choice, "AUTO")


def resolve_google_function_calling_mode(
    tools: Sequence[Mapping[str, Any]], tool_choice: str | None, supports_strict_mode: bool
) -> str | None:
    """pi-ai's ``resolveGoogleFunctionCallingMode``."""
    strict = any(resolve_json_schema_strict_sampling(t, supports_strict_mode) is True for t in tools)
    if tool_choice in ("none", "any"):
        return _map_tool_choice(tool_choice)
    if strict:
        return "VALIDATED"
    return _map_tool_choice(tool_choice) if tool_choice else None


_ERROR_REASONS = frozenset(
    {
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "SAFETY",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "IMAGE_OTHER",
        "RECITATION",
        "FINISH_REASON_UNSPECIFIED",
        "OTHER",
        "LANGUAGE",
        "MALFORMED_FUNCTION_CALL",
        "UNEXPECTED_TOOL_CALL",
        "NO_IMAGE",
    }
)


def map_stop_reason(reason: str) -> StopReason:
    """pi-ai's ``mapStopReason`` (a reason the SDK does not know is pi-ai's ``Unhandled stop reason``)."""
    if reason == "STOP":
        return "stop"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in _ERROR_REASONS:
        return "error"
    raise GoogleStreamError(f"Unhandled stop reason: {reason}")


# ------------------------------------------------------------------ the SDK's converters


def _pick(source: Mapping[str, Any], keys: Sequence[str]) -> dict[str, Any]:
    """The SDK's ``setValueByPath`` copies: the keys in this order, each when not null."""
    return {k: source[k] for k in keys if source.get(k) is not None}


_PART_KEYS = (
    "mediaResolution",
    "codeExecutionResult",
    "executableCode",
    "fileData",
    "functionCall",
    "functionResponse",
    "inlineData",
    "text",
    "thought",
    "thoughtSignature",
    "videoMetadata",
)


def _part(part: Mapping[str, Any], vertex: bool) -> dict[str, Any]:
    out = _pick(part, _PART_KEYS)
    if not vertex:
        if "functionCall" in out:
            out["functionCall"] = _pick(out["functionCall"], ("id", "args", "name"))
        if "inlineData" in out:
            out["inlineData"] = _pick(out["inlineData"], ("data", "mimeType"))
    return out


def _content(content: Mapping[str, Any], vertex: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if content.get("parts") is not None:
        out["parts"] = [_part(p, vertex) for p in content["parts"]]
    if content.get("role") is not None:
        out["role"] = content["role"]
    return out


def _tool(tool: Mapping[str, Any], vertex: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    declarations = tool.get("functionDeclarations")
    if declarations is not None:
        if vertex:
            keys = (
                "description",
                "name",
                "parameters",
                "parametersJsonSchema",
                "response",
                "responseJsonSchema",
            )
            out["functionDeclarations"] = [_pick(d, keys) for d in declarations]
        else:
            out["functionDeclarations"] = list(declarations)
    return out


def wire_body(params: Mapping[str, Any], vertex: bool) -> dict[str, Any]:
    """pi-ai's ``GenerateContentParameters`` as @google/genai 1.52.0 sends them (its
    ``generateContentParametersTo{Mldev,Vertex}``): the body of ``:streamGenerateContent``."""
    contents = params.get("contents") or []
    if not contents:
        raise GoogleStreamError("contents are required")
    body: dict[str, Any] = {"contents": [_content(c, vertex) for c in contents]}
    config: Mapping[str, Any] = params.get("config") or {}
    generation: dict[str, Any] = {}
    if config.get("systemInstruction") is not None:
        body["systemInstruction"] = _content(
            {"role": "user", "parts": [{"text": config["systemInstruction"]}]}, vertex
        )
    for key in ("temperature", "maxOutputTokens"):
        if config.get(key) is not None:
            generation[key] = config[key]
    if config.get("tools") is not None:
        body["tools"] = [_tool(t, vertex) for t in config["tools"]]
    if config.get("toolConfig") is not None:
        calling = config["toolConfig"].get("functionCallingConfig")
        body["toolConfig"] = (
            {"functionCallingConfig": _pick(calling, ("allowedFunctionNames", "mode"))}
            if calling is not None
            else {}
        )
    if config.get("thinkingConfig") is not None:
        generation["thinkingConfig"] = config["thinkingConfig"]
    body["generationConfig"] = generation
    return body


# ------------------------------------------------------------------ the SDK's stream reader

_DELIMITERS = ("\n\n", "\r\r", "\r\n\r\n")


def _chunk_api_error(text: str) -> GoogleApiError | None:
    """The SDK parses each raw network chunk as JSON; one that is an error object ends the stream."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or "error" not in parsed:
        return None
    error = parsed["error"]
    status = error.get("status") if isinstance(error, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(code, (int, float)) and not isinstance(code, bool) and 400 <= code < 600:
        shown = (
            "undefined" if status is None and not (isinstance(error, dict) and "status" in error) else status
        )
        status_text = js_stringify(shown) if not isinstance(shown, str) else shown
        return GoogleApiError(f"got status: {status_text}. {js_stringify(parsed)}", int(code))
    return None


async def iter_gemini_sse(response: Any) -> AsyncIterator[Any]:
    """The SDK's ``processStreamResponse`` + ``chunk.json()``: each ``data:`` event parsed."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")("replace")
    buffer = ""
    async for raw in response.aiter_bytes():
        text = decoder.decode(raw)
        api_error = _chunk_api_error(text)
        if api_error is not None:
            raise api_error
        buffer += text
        while True:
            index = -1
            length = 0
            for delimiter in _DELIMITERS:
                found = buffer.find(delimiter)
                if found != -1 and (index == -1 or found < index):
                    index = found
                    length = len(delimiter)
            if index == -1:
                break
            event = js_trim(buffer[:index])
            buffer = buffer[index + length :]
            if event.startswith("data:"):
                yield js_json_parse_v8(js_trim(event[len("data:") :]))
    buffer += decoder.decode(b"", final=True)
    if js_trim(buffer):
        raise GoogleStreamError("Incomplete JSON segment at the end")


def http_error(status: int, content_type: str, body: bytes, status_text: str) -> Exception:
    """The SDK's ``throwErrorIfNotOK``: an ``ApiError`` whose message is the error body as JSON."""
    text = codecs.getincrementaldecoder("utf-8-sig")("replace").decode(body, final=True)
    if "application/json" in content_type:
        parsed = js_json_parse_v8(text)
        message = js_stringify(parsed)
    else:
        message = js_stringify({"error": {"message": text, "code": status, "status": status_text}})
    if 400 <= status < 600:
        return GoogleApiError(message, status)
    return GoogleStreamError(message)
