"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``) read into Pi
file entries (read-only).

Two formats are read, told apart by the first record:

* the current one (Codex CLI from about 0.30, September 2025): every line is
  ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta``, ``response_item``,
  ``event_msg``, ``turn_context`` and ``compacted``;
* the older one (mid 2025): the first line is the session meta itself (``{id, timestamp,
  instructions, git}``), then bare response items (``{"type": "message", ...}``) and
  ``{"record_type": "state"}`` markers, with no timestamps.

What each record becomes (the full table is ``docs/other-agents-codex.md``):

* ``session_meta`` -> the session header (``harness: "codex"``, ``harnessVersion`` = the CLI
  version; the other fields in the header's ``raw``);
* the response items of one model call (``reasoning``, assistant ``message``, ``function_call``,
  ``custom_tool_call``, ``local_shell_call``, ``web_search_call``) -> ONE Pi assistant message
  (thinking / text / toolCall blocks); its usage is the ``last_token_usage`` of the
  ``token_count`` event of that call (Pi's ``input`` = Codex's ``input_tokens -
  cached_input_tokens``, ``cacheRead`` = ``cached_input_tokens``), its cost the bundled
  catalog's price of the model;
* ``function_call_output`` / ``custom_tool_call_output`` -> a Pi ``toolResult`` (the tool name
  from its call);
* user messages -> Pi user messages; developer / system messages and the user messages Codex
  writes itself (``<environment_context>``, ``<user_instructions>``, ``# AGENTS.md``) -> Pi
  ``custom_message`` entries (``display: False``): they reach the model as Pi's custom messages
  do, but are not the user's prompts;
* ``turn_context`` -> ``model_change`` / ``thinking_level_change`` when the model or the
  reasoning effort changes, else a ``custom`` entry;
* ``compacted`` -> a Pi ``compaction`` entry; the ``replacement_history`` Codex continues with
  follows it as entries, so that :func:`~pi_nb.session.context.build_session_context` gives what
  Codex kept;
* ``error`` / ``turn_aborted`` events -> a Pi assistant message with ``stopReason`` ``"error"`` /
  ``"aborted"`` (Pi's record of a failed call);
* every other record (the ``user_message`` / ``agent_message`` / ``agent_reasoning`` events that
  repeat response items, repeated ``token_count`` events, ``task_started``, ``ghost_snapshot``,
  ``state`` markers...) -> a Pi ``custom`` entry ``codex/<type>`` with the record as its data.

Every entry's ``raw`` mapping says which lines it maps (``raw["lines"]``) and keeps the fields
with no Pi counterpart. A line that is not JSON, or a record of the wrong shape, is a problem
``(line, reason)``; a record of the wrong shape is kept as a ``codex/invalid`` custom entry too.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any, cast

import orjson

from pi_nb.harness.types import ForeignSession
from pi_nb.messages import js_date_ms
from pi_nb.session.types import FileEntry

__all__ = ["HARNESS", "looks_like", "read"]

HARNESS = "codex"

#: The record types of the current format (``RolloutItem`` of codex-rs ``protocol.rs``).
_ENVELOPE_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
#: Response item types that are the model's output (one model call's items form one message).
_OUTPUT_ITEMS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
#: Response item types of the older format's bare lines.
_BARE_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
    }
)
#: Codex's own user-role messages (context it injects, not the user's prompt).
_INJECTED_PREFIXES = (
    ("<environment_context>", "environment_context"),
    ("<user_instructions>", "user_instructions"),
    ("# AGENTS.md instructions", "user_instructions"),
    ("<user_shell_command>", "user_shell_command"),
    ("<turn_aborted>", "turn_aborted"),
)
#: The text codex-rs puts before a local compaction's summary in the rebuilt history.
_SUMMARY_PREFIXES = (
    "Another language model started to solve this problem",
    "The conversation history before this point was compacted",
)
_EFFORT_TO_LEVEL = {
    "none": "off",
    "minimal": "minimal",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
}
_EXIT_CODE_RE = re.compile(r"(?:^|\n)(?:Exit code:|Process exited with code) (-?\d+)")
#: Failures Codex reports to the model as plain text (no exit code): seen in real rollouts.
_FAILURE_PREFIXES = ("apply_patch verification failed",)
_DATA_URL_RE = re.compile(r"^data:([^;,]+);base64,(.*)$", re.S)


# ---------------------------------------------------------------------------------------------
# detection


def _is_claude_code(record: Mapping[str, Any]) -> bool:
    return "uuid" in record or "parentUuid" in record or "sessionId" in record


def looks_like(records: list[Any]) -> bool:
    """True when the first records of a JSONL file are a Codex rollout's (either format)."""
    dicts = [r for r in records if isinstance(r, dict)]
    if not dicts or any(_is_claude_code(r) for r in dicts):
        return False
    first = dicts[0]
    if first.get("type") == "session":  # a Pi session
        return False
    if first.get("type") == "session_meta" and isinstance(first.get("payload"), dict):
        return True
    # a rollout whose first line was lost: envelope records all the way
    if all(r.get("type") in _ENVELOPE_TYPES and "payload" in r for r in dicts[:5]):
        return True
    # the older format: a bare meta {id, timestamp, ...} then items / state markers
    if isinstance(first.get("id"), str) and isinstance(first.get("timestamp"), str) and "type" not in first:
        rest = dicts[1:]
        return bool(rest) and all(
            r.get("record_type") == "state" or r.get("type") in _BARE_ITEMS for r in rest[:5]
        )
    return False


# ---------------------------------------------------------------------------------------------
# small helpers


def _usage_zero() -> dict[str, Any]:
    return {
        "input": 0,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def _count(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value


_SPECS: dict[tuple[str, str], Any] = {}
"""The catalog's answer per model, for one :func:`read` (cleared when it starts: the user's
``models.json`` may change between reads, not within one)."""


def _price(provider: str, model: str | None) -> Any:
    """The catalog's model spec for the cost, or ``None``."""
    if not model:
        return None
    if (provider, model) in _SPECS:
        return _SPECS[provider, model]
    from pi_nb.providers.catalog import find_model

    spec = find_model(provider, model)
    if spec is None and provider == "openai-codex":
        spec = find_model("openai", model)  # the API price of the same model
    _SPECS[provider, model] = spec
    return spec


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _texts(content: Any, kinds: tuple[str, ...]) -> list[str]:
    if not isinstance(content, list):
        return []
    return [
        c["text"]
        for c in content
        if isinstance(c, dict) and c.get("type") in kinds and isinstance(c.get("text"), str)
    ]


def _injected_kind(text: str) -> str | None:
    stripped = text.lstrip()
    for prefix, kind in _INJECTED_PREFIXES:
        if stripped.startswith(prefix):
            return kind
    return None


def _exit_code(output: Any) -> int | None:
    """The exit code a shell tool's output reports (``{"metadata": {"exit_code"}}`` JSON, or
    the ``Exit code: N`` / ``Process exited with code N`` text), or ``None``."""
    if isinstance(output, dict):
        meta = output.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if isinstance(code, int) and not isinstance(code, bool) else None
    if not isinstance(output, str):
        return None
    if output.startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            parsed = None
        if isinstance(parsed, dict):
            return _exit_code(parsed)
    m = _EXIT_CODE_RE.search(output[:2000])
    return int(m.group(1)) if m else None


class _Ids:
    """Entry ids (8 hex characters, like Pi's) derived from the session id and the line."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.used: set[str] = set()

    def make(self, line: int, part: int = 0) -> str:
        salt = 0
        while True:
            key = f"{self.session_id}:{line}:{part}:{salt}".encode()
            eid = hashlib.sha256(key).hexdigest()[:8]
            if eid not in self.used:
                self.used.add(eid)
                return eid
            salt += 1


# ---------------------------------------------------------------------------------------------
# the reader


class _Reader:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self.entries: list[dict[str, Any]] = []
        self.problems: list[tuple[int, str]] = []
        self.header: dict[str, Any] | None = None
        self.ids: _Ids | None = None
        self.timestamp = "1970-01-01T00:00:00.000Z"
        self.model: str | None = None
        self.effort: str | None = None
        self.provider = "openai-codex"
        self.api = "openai-codex-responses"
        self.calls: dict[str, str] = {}  # call_id -> tool name
        # the assistant message being built (one model call) and how usage joins it
        self.group: dict[str, Any] | None = None
        self.group_usage_after = False  # usage came after its items: the next item is a new call
        self.pending: tuple[int, dict[str, Any]] | None = None  # usage that arrived before its items
        self.prev_total: Any = None
        self.context_tokens = 0  # the last call's total_tokens: the context size Codex last knew

    # -- entries ------------------------------------------------------------------------------

    def _id(self, line: int, part: int = 0) -> str:
        assert self.ids is not None
        return self.ids.make(line, part)

    def _append(self, entry: dict[str, Any]) -> dict[str, Any]:
        parent = self.entries[-1]["id"] if len(self.entries) > 1 else None
        entry["parentId"] = parent
        self.entries.append(entry)
        return entry

    def _entry(
        self, etype: str, line: int, fields: dict[str, Any], raw: dict[str, Any] | None = None, part: int = 0
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "type": etype,
            "id": self._id(line, part),
            "parentId": None,
            "timestamp": self.timestamp,
        }
        entry.update(fields)
        entry["raw"] = {"lines": [line], **(raw or {})}
        return self._append(entry)

    def _custom(
        self, line: int, ctype: str, record: Any, raw: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "custom", "customType": f"codex/{ctype}", "data": record}
        entry["id"] = self._id(line)
        entry["parentId"] = None
        entry["timestamp"] = self.timestamp
        entry["raw"] = {"lines": [line], **(raw or {})}
        return self._append(entry)

    def _message(
        self, line: int, message: dict[str, Any], raw: dict[str, Any] | None = None, part: int = 0
    ) -> dict[str, Any]:
        return self._entry("message", line, {"message": message}, raw, part)

    def _custom_message(
        self,
        line: int,
        ctype: str,
        content: list[dict[str, Any]],
        raw: dict[str, Any] | None = None,
        part: int = 0,
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "type": "custom_message",
            "customType": f"codex/{ctype}",
            "content": content,
            "display": False,
            "id": self._id(line, part),
            "parentId": None,
            "timestamp": self.timestamp,
            "raw": {"lines": [line], **(raw or {})},
        }
        return self._append(entry)

    def _ms(self) -> int | float:
        return js_date_ms(self.timestamp)

    # -- the header ---------------------------------------------------------------------------

    def _make_header(self, line: int, meta: Mapping[str, Any], record_timestamp: str | None) -> None:
        sid = meta.get("id")
        if not isinstance(sid, str) or not sid:
            sid = self._fallback_id()
            self.problems.append((line, "session meta without an id: the id is made from the file"))
        ts = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else record_timestamp
        if isinstance(ts, str):
            self.timestamp = ts
        cwd = meta.get("cwd")
        header: dict[str, Any] = {
            "type": "session",
            "version": 3,
            "id": sid,
            "timestamp": self.timestamp,
            "cwd": cwd if isinstance(cwd, str) else "",
            "harness": HARNESS,
        }
        version = meta.get("cli_version")
        if isinstance(version, str):
            header["harnessVersion"] = version
        rest = {k: v for k, v in meta.items() if k not in ("id", "timestamp", "cwd", "cli_version")}
        header["raw"] = {"lines": [line], **rest}
        provider = meta.get("model_provider")
        if isinstance(provider, str) and provider and provider != "openai":
            self.provider = provider
            self.api = "openai-responses"
        if isinstance(meta.get("model"), str):
            self.model = meta["model"]
        self.header = header
        self.ids = _Ids(sid)
        self.entries.append(header)

    def _fallback_id(self) -> str:
        if self.path:
            m = re.search(
                r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", os.path.basename(self.path)
            )
            if m:
                return m.group(1)
        return "codex-" + hashlib.sha256((self.path or "").encode()).hexdigest()[:12]

    def _ensure_header(self, line: int) -> None:
        if self.header is None:
            self.problems.append((line, "no session_meta record first: the header is made from the file"))
            self.header = {
                "type": "session",
                "version": 3,
                "id": self._fallback_id(),
                "timestamp": self.timestamp,
                "cwd": "",
                "harness": HARNESS,
                "raw": {"lines": []},
            }
            self.ids = _Ids(self.header["id"])
            self.entries.append(self.header)

    # -- model calls ----------------------------------------------------------------------------

    def _assistant(self, line: int) -> dict[str, Any]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": [],
            "api": self.api,
            "provider": self.provider,
            "model": self.model or "",
            "usage": _usage_zero(),
            "stopReason": "stop",
            "timestamp": self._ms(),
        }
        return self._message(line, message, {"items": []})

    def _close_group(self) -> None:
        self.group = None
        self.group_usage_after = False

    def _output_item(self, line: int, item: dict[str, Any]) -> None:
        """One item of the model's output, added to the message of its call."""
        if self.pending is not None or self.group is None or self.group_usage_after:
            self._close_group()
            self.group = self._assistant(line)
            if self.pending is not None:
                self._apply_usage(self.group, *self.pending)
                self.pending = None
        group = self.group
        message = group["message"]
        raw_items: list[Any] = group["raw"]["items"]
        if line not in group["raw"]["lines"]:
            group["raw"]["lines"].append(line)
        itype = item.get("type")
        # "block": the index of the first content block the item became (none for a web search)
        extra: dict[str, Any] = {"line": line, "type": itype, "block": len(message["content"])}
        if itype == "reasoning":
            summary = _texts(item.get("summary"), ("summary_text",))
            text = "\n\n".join(summary) or "\n\n".join(
                _texts(item.get("content"), ("reasoning_text", "text"))
            )
            block: dict[str, Any] = {"type": "thinking", "thinking": text}
            if not text and item.get("encrypted_content"):
                block["redacted"] = True
            message["content"].append(block)
            extra.update({k: v for k, v in item.items() if k not in ("type", "summary")})
        elif itype == "message":
            texts = _texts(item.get("content"), ("output_text", "input_text", "text"))
            for t in texts:
                message["content"].append({"type": "text", "text": t})
            others = [
                c
                for c in item.get("content") or []
                if not (isinstance(c, dict) and isinstance(c.get("text"), str))
            ]
            if others:
                extra["content"] = others
            extra.update({k: v for k, v in item.items() if k not in ("type", "role", "content")})
        elif itype in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = _str(item.get("call_id")) or _str(item.get("id")) or f"codex-call-{line}"
            name = _str(item.get("name"))
            if itype == "function_call":
                args_raw = item.get("arguments")
                arguments: Any = {}
                if isinstance(args_raw, dict):
                    arguments = args_raw
                elif isinstance(args_raw, str):
                    try:
                        parsed = orjson.loads(args_raw) if args_raw.strip() else {}
                    except orjson.JSONDecodeError:
                        parsed = None
                    if isinstance(parsed, dict):
                        arguments = parsed
                    else:
                        extra["arguments"] = args_raw  # not a JSON object: kept as written
                skip: tuple[str, ...] = ("type", "name", "arguments", "call_id")
            elif itype == "custom_tool_call":
                arguments = {"input": item.get("input")}
                skip = ("type", "name", "input", "call_id")
            else:  # local_shell_call
                name = "local_shell"
                action = item.get("action")
                arguments = action if isinstance(action, dict) else {"action": action}
                skip = ("type", "action", "call_id")
            extra.update({k: v for k, v in item.items() if k not in skip})
            self.calls[call_id] = name
            message["content"].append(
                {"type": "toolCall", "id": call_id, "name": name, "arguments": arguments}
            )
            message["stopReason"] = "toolUse"
        else:  # web_search_call: run by the server, no result item follows; kept in raw
            extra["block"] = None
            extra.update({k: v for k, v in item.items() if k != "type"})
        raw_items.append(extra)

    def _apply_usage(self, entry: dict[str, Any], line: int, payload: dict[str, Any]) -> None:
        info = payload.get("info") or {}
        last = info.get("last_token_usage") or {}
        n_in = _count(last, "input_tokens")
        n_cached = min(_count(last, "cached_input_tokens"), n_in)
        n_out = _count(last, "output_tokens")
        total = _count(last, "total_tokens") or (n_in + n_out)
        usage: dict[str, Any] = {
            "input": n_in - n_cached,
            "output": n_out,
            "cacheRead": n_cached,
            "cacheWrite": 0,
            "reasoning": _count(last, "reasoning_output_tokens"),
            "totalTokens": total,
            "cost": _usage_zero()["cost"],
        }
        message = entry.get("message") if entry.get("type") == "message" else None
        model = message.get("model") if isinstance(message, dict) else self.model
        provider = message.get("provider") if isinstance(message, dict) else self.provider
        spec = _price(provider or self.provider, model)
        if spec is not None:
            from pi_nb.providers.catalog import calculate_cost

            usage["cost"] = dict(calculate_cost(spec, usage))
        else:
            entry["raw"]["costUnknown"] = True
        if isinstance(message, dict):
            message["usage"] = usage
        else:
            entry["usage"] = usage
        entry["raw"]["tokenCount"] = {"line": line, **payload}
        if line not in entry["raw"]["lines"]:
            entry["raw"]["lines"].append(line)
        self.context_tokens = total

    def _token_count(self, line: int, record: Any, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if (
            not isinstance(info, dict)
            or not isinstance(info.get("last_token_usage"), dict)
            or total == self.prev_total
        ):
            # a rate-limit update, or the same counts again: no new model call
            self._custom(line, "token_count", record)
            return
        self.prev_total = total
        if self.pending is not None:  # two usages before any item: the first call left no items
            self._flush_pending()
        if self.group is not None and not self.group_usage_after and not self.group["raw"].get("tokenCount"):
            self._apply_usage(self.group, line, payload)
            self.group_usage_after = True
        else:
            self.pending = (line, payload)

    def _flush_pending(self) -> None:
        """A usage whose call wrote no items: an assistant message with no content carries it."""
        if self.pending is None:
            return
        line, payload = self.pending
        self.pending = None
        self._close_group()
        entry = self._assistant(line)
        entry["raw"]["noItems"] = True
        self._apply_usage(entry, line, payload)

    # -- the rest ---------------------------------------------------------------------------

    def _user_message(
        self, line: int, item: dict[str, Any], part: int = 0, extra_raw: dict[str, Any] | None = None
    ) -> None:
        role = item.get("role")
        content_in = item.get("content")
        content: list[dict[str, Any]] = []
        leftovers: list[Any] = []
        for c in content_in if isinstance(content_in, list) else []:
            ctype = c.get("type") if isinstance(c, dict) else None
            if ctype in ("input_text", "output_text", "text") and isinstance(c.get("text"), str):
                content.append({"type": "text", "text": c["text"]})
            elif (
                ctype == "input_image"
                and isinstance(c.get("image_url"), str)
                and _DATA_URL_RE.match(c["image_url"])
            ):
                m = _DATA_URL_RE.match(c["image_url"])
                assert m is not None
                content.append({"type": "image", "data": m.group(2), "mimeType": m.group(1)})
            else:
                leftovers.append(c)
        raw: dict[str, Any] = dict(extra_raw or {})
        raw.update({k: v for k, v in item.items() if k not in ("type", "role", "content")})
        if leftovers:
            raw["content"] = leftovers
        text = "".join(b.get("text", "") for b in content)
        if role == "user":
            kind = _injected_kind(text)
            if kind is None:
                self._message(line, {"role": "user", "content": content, "timestamp": self._ms()}, raw, part)
            else:
                self._custom_message(line, kind, content, raw, part)
        else:
            self._custom_message(
                line, role if isinstance(role, str) and role else "message", content, raw, part
            )

    def _tool_result(self, line: int, item: dict[str, Any]) -> None:
        raw_call_id = item.get("call_id")
        call_id = raw_call_id if isinstance(raw_call_id, str) else ""
        output = item.get("output")
        raw: dict[str, Any] = {k: v for k, v in item.items() if k not in ("type", "call_id", "output")}
        raw["type"] = item.get("type")
        is_error = False
        content: list[dict[str, Any]] = []
        if isinstance(output, str):
            content.append({"type": "text", "text": output})
        elif isinstance(output, dict):  # the older {content, success} object
            body = output.get("content")
            if isinstance(body, str):
                content.append({"type": "text", "text": body})
            elif isinstance(body, list):
                content.extend(self._output_items(body, raw))
            if output.get("success") is False:
                is_error = True
            rest = {k: v for k, v in output.items() if k != "content"}
            if rest:
                raw["output"] = rest
        elif isinstance(output, list):  # content items (text / images)
            content.extend(self._output_items(output, raw))
        elif output is not None:
            raw["output"] = output
        code = _exit_code(output if not isinstance(output, dict) else output.get("content"))
        if code is not None:
            raw["exitCode"] = code
            if code != 0:
                is_error = True
        first_text = content[0]["text"] if content and content[0].get("type") == "text" else ""
        if first_text.startswith(_FAILURE_PREFIXES):
            is_error = True
        name = self.calls.get(call_id)
        if name is None:
            raw["unmatchedCall"] = True
        self._message(
            line,
            {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": name or "",
                "content": content,
                "isError": is_error,
                "timestamp": self._ms(),
            },
            raw,
        )

    @staticmethod
    def _output_items(items: list[Any], raw: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        left: list[Any] = []
        for c in items:
            ctype = c.get("type") if isinstance(c, dict) else None
            if ctype in ("input_text", "output_text", "text") and isinstance(c.get("text"), str):
                out.append({"type": "text", "text": c["text"]})
            elif (
                ctype == "input_image"
                and isinstance(c.get("image_url"), str)
                and _DATA_URL_RE.match(c["image_url"])
            ):
                m = _DATA_URL_RE.match(c["image_url"])
                assert m is not None
                out.append({"type": "image", "data": m.group(2), "mimeType": m.group(1)})
            else:
                left.append(c)
        if left:
            raw["outputItems"] = left
        return out

    def _failed_call(self, line: int, reason: str, text: str, record: Any) -> None:
        """Pi's record of a call that failed or was stopped: an assistant message with no
        content and ``stopReason`` ``"error"`` / ``"aborted"``."""
        self._flush_pending()
        self._close_group()
        entry = self._assistant(line)
        entry["message"]["stopReason"] = reason
        entry["message"]["errorMessage"] = text
        entry["raw"]["record"] = record

    def _response_item(self, line: int, record: Any, item: Any) -> None:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            self.problems.append((line, "response item is not an object with a type"))
            self._custom(line, "invalid", record)
            return
        itype = item["type"]
        if itype in _OUTPUT_ITEMS or (itype == "message" and item.get("role") == "assistant"):
            if itype == "message" and not isinstance(item.get("content"), list):
                self.problems.append((line, "assistant message without a content list"))
            self._output_item(line, item)
            return
        if itype == "message":
            if not isinstance(item.get("content"), list):
                self.problems.append((line, "message without a content list"))
                self._custom(line, "invalid", record)
                return
            self._flush_pending()
            self._close_group()
            self._user_message(line, item)
            return
        if itype in ("function_call_output", "custom_tool_call_output"):
            self._flush_pending()
            self._close_group()
            self._tool_result(line, item)
            return
        # ghost_snapshot, compaction (an encrypted summary), other: not model input Pi can show
        self._custom(line, itype, record)

    def _turn_context(self, line: int, record: Any, payload: Any) -> None:
        if not isinstance(payload, dict):
            self.problems.append((line, "turn_context payload is not an object"))
            self._custom(line, "invalid", record)
            return
        made = False
        model = payload.get("model")
        if isinstance(model, str) and model and model != self.model:
            self.model = model
            self._entry(
                "model_change", line, {"provider": self.provider, "modelId": model}, {"turnContext": payload}
            )
            made = True
        effort = payload.get("effort")
        if effort is None and isinstance(payload.get("collaboration_mode"), dict):
            settings = payload["collaboration_mode"].get("settings")
            effort = settings.get("reasoning_effort") if isinstance(settings, dict) else None
        level = _EFFORT_TO_LEVEL.get(effort) if isinstance(effort, str) else None
        if level is not None and effort != self.effort:
            self.effort = effort
            raw: dict[str, Any] = {"effort": effort}
            if not made:
                raw["turnContext"] = payload
            self._entry("thinking_level_change", line, {"thinkingLevel": level}, raw, part=1)
            made = True
        if not made:
            self._custom(line, "turn_context", record)

    def _compacted(self, line: int, record: Any, payload: Any) -> None:
        if not isinstance(payload, dict):
            self.problems.append((line, "compacted payload is not an object"))
            self._custom(line, "invalid", record)
            return
        message = payload.get("message")
        summary = message if isinstance(message, str) else ""
        pending = self.pending
        self.pending = None
        self._close_group()
        entry = self._entry(
            "compaction",
            line,
            {"summary": summary, "firstKeptEntryId": "", "tokensBefore": self.context_tokens},
            {k: v for k, v in payload.items() if k not in ("message", "replacement_history")},
        )
        entry["firstKeptEntryId"] = entry["id"]  # nothing before it is kept: Codex's history is replaced
        if pending is not None:  # the summarising call's usage
            before = self.context_tokens
            self._apply_usage(entry, *pending)
            self.context_tokens = before  # (the summarising call's input is not the new context)
        history = payload.get("replacement_history")
        if isinstance(history, list):
            entry["raw"]["replacementHistory"] = len(history)
            for k, item in enumerate(history, start=1):
                self._replacement_item(line, k, item, summary)
        elif history is not None:
            entry["raw"]["replacement_history"] = history

    def _replacement_item(self, line: int, k: int, item: Any, summary: str) -> None:
        """One item of the history Codex continues with after a compaction, as an entry after the
        compaction entry (in context, marked ``raw["replacementHistory"] = k``)."""
        mark = {"replacementHistory": k}
        if isinstance(item, dict) and item.get("type") == "message" and isinstance(item.get("content"), list):
            role = item.get("role")
            if role == "assistant":
                texts = _texts(item["content"], ("output_text", "input_text", "text"))
                message: dict[str, Any] = {
                    "role": "assistant",
                    "content": [{"type": "text", "text": t} for t in texts],
                    "api": self.api,
                    "provider": self.provider,
                    "model": self.model or "",
                    "usage": _usage_zero(),
                    "stopReason": "stop",
                    "timestamp": self._ms(),
                }
                rest = {key: v for key, v in item.items() if key not in ("type", "role", "content")}
                self._message(line, message, {**mark, **rest}, part=k)
                return
            text = "".join(_texts(item["content"], ("input_text", "text")))
            if role == "user" and (
                text.startswith(_SUMMARY_PREFIXES) or (summary and text.strip().endswith(summary.strip()))
            ):
                # the summary as Codex sends it: the compaction entry's summary stands for it
                self._custom(line, "replacement_summary", item, mark)
                return
            self._user_message(line, item, part=k, extra_raw=mark)
            return
        # the encrypted summary of a remote compaction, and any other item: kept, not shown to Pi
        ctype = item.get("type") if isinstance(item, dict) and isinstance(item.get("type"), str) else "item"
        self._custom(line, f"replacement_{ctype}", item, mark)

    def _event(self, line: int, record: Any, payload: Any) -> None:
        if not isinstance(payload, dict) or not isinstance(payload.get("type"), str):
            self.problems.append((line, "event payload is not an object with a type"))
            self._custom(line, "invalid", record)
            return
        etype = payload["type"]
        if etype == "token_count":
            self._token_count(line, record, payload)
        elif etype == "error":
            msg = payload.get("message")
            self._failed_call(line, "error", msg if isinstance(msg, str) else "error", record)
        elif etype == "turn_aborted":
            reason = payload.get("reason")
            self._failed_call(
                line, "aborted", f"turn aborted ({reason})" if reason else "turn aborted", record
            )
        else:
            self._custom(line, etype, record)

    # -- lines ------------------------------------------------------------------------------

    def run(self, data: bytes) -> ForeignSession:
        lines = data.split(b"\n")
        parsed: list[tuple[int, Any]] = []
        for n, raw_line in enumerate(lines, start=1):
            if not raw_line.strip():
                continue
            try:
                text = raw_line.decode("utf-8")
            except UnicodeDecodeError as exc:
                text = raw_line.decode("utf-8", errors="replace")
                self.problems.append((n, f"invalid UTF-8 at byte {exc.start} (replaced by U+FFFD)"))
            try:
                parsed.append((n, orjson.loads(text)))
            except orjson.JSONDecodeError as exc:
                self.problems.append((n, f"not JSON: {exc}"))
        old_format = (
            bool(parsed)
            and isinstance(parsed[0][1], dict)
            and "type" not in parsed[0][1]
            and "id" in parsed[0][1]
        )
        for i, (n, record) in enumerate(parsed):
            if not isinstance(record, dict):
                self.problems.append((n, f"record is not an object ({type(record).__name__})"))
                if self.header is not None:
                    self._custom(n, "invalid", record)
                continue
            if i == 0 and old_format:
                self._make_header(n, record, None)
                continue
            if i == 0 and record.get("type") == "session_meta" and isinstance(record.get("payload"), dict):
                self._make_header(n, record["payload"], record.get("timestamp"))
                continue
            self._ensure_header(n)
            ts = record.get("timestamp")
            if isinstance(ts, str) and ts:
                self.timestamp = ts
            if "payload" in record and record.get("type") in _ENVELOPE_TYPES:
                rtype = record["type"]
                payload = record["payload"]
                if rtype == "response_item":
                    self._response_item(n, record, payload)
                elif rtype == "event_msg":
                    self._event(n, record, payload)
                elif rtype == "turn_context":
                    self._turn_context(n, record, payload)
                elif rtype == "compacted":
                    self._compacted(n, record, payload)
                else:  # a later session_meta (a resumed or forked rollout)
                    self._custom(n, "session_meta", record)
            elif record.get("record_type") == "state":
                self._custom(n, "state", record)
            elif isinstance(record.get("type"), str) and record["type"] in _BARE_ITEMS:
                self._response_item(n, record, record)
            elif isinstance(record.get("type"), str):  # a record type this reader does not know
                self._custom(n, record["type"], record)
            else:
                self.problems.append((n, "record has no type"))
                self._custom(n, "invalid", record)
        if self.header is None:
            self._ensure_header(1)
        self._flush_pending()
        self.problems.sort(key=lambda p: p[0])
        # plain dicts in Pi's entry shapes (the tests load every one into a SessionManager)
        entries = cast("list[FileEntry]", self.entries)
        return ForeignSession(harness=HARNESS, path=self.path, entries=entries, problems=self.problems)


def read(data: bytes, path: str | None = None) -> ForeignSession:
    """A Codex rollout's bytes mapped to Pi entries (the header first), with the problems of
    the lines that could not be used."""
    _SPECS.clear()
    return _Reader(path).run(data)
