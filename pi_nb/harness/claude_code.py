"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``) read as Pi entries.

One JSONL record per line, linked by ``uuid`` / ``parentUuid``. The mapping (the table in
``docs/other-agents-claude-code.md`` gives every field):

* ``user`` records: text/image content -> a Pi ``user`` message; each ``tool_result`` block -> one
  Pi ``toolResult`` message (``toolName`` from the matching ``tool_use``; ``toolUseResult`` in the
  entry's ``raw``); an ``isMeta`` record (sent to the model, hidden in Claude Code's UI) -> a
  ``custom_message`` entry with ``display: False`` (``customType`` ``"claude-code/meta"``).
* ``assistant`` records: the records of one API response (same ``message.id`` and
  ``requestId``, one content block each, the usage repeated) -> ONE Pi ``assistant`` message, its
  usage counted once: the last record's, whose output count is the fullest (ccusage counts the
  first record's, which can miss most of the output tokens). API error records
  (``isApiErrorMessage``) -> ``stopReason: "error"`` with ``errorMessage``.
* a ``system`` record of subtype ``compact_boundary`` plus the ``isCompactSummary`` user record
  after it -> ONE Pi ``compaction`` entry whose ``firstKeptEntryId`` is itself, so that the
  context after it is the summary and what follows (Claude Code keeps nothing from before).
* every other record (``summary``, ``file-history-snapshot``, ``queue-operation``, other
  ``system`` subtypes, ``progress``, ...) -> a Pi ``custom`` entry (``customType``
  ``"claude-code/<type>"``, ``data`` = the record), in the tree, never in the context.

A field of a mapped record with no Pi counterpart is kept in the entry's ``raw``; nothing is
dropped. Entry ids are the records' uuids (``<uuid>#<n>`` for the second and later entries one
record gives; ``L<line>:<type>`` for a record without a uuid). The leaf (the last entry) is the
main chain's last entry. Only :mod:`pi_nb.providers.catalog` is used besides the session shapes:
costs come from pi_nb's model catalog (zero, and ``raw["costUnknown"]``, for a model it does not
know).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

import orjson

from pi_nb.harness.types import ForeignSession
from pi_nb.providers.catalog import calculate_cost, find_model
from pi_nb.session.types import FileEntry

__all__ = ["HARNESS", "looks_like", "read"]

HARNESS = "claude-code"

PROVIDER = "anthropic"
API = "anthropic-messages"

_CONVERSATION_TYPES = frozenset({"user", "assistant", "system"})
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "error",
}
_EPOCH = "1970-01-01T00:00:00.000Z"
_DATE_SUFFIX = re.compile(r"-\d{8}$")
_REDACTED_THINKING = "[Reasoning redacted]"  # the text Pi's Anthropic provider shows for one


# ---------------------------------------------------------------------------------------------
# detection


def _is_claude_record(r: Any) -> bool:
    if not isinstance(r, dict) or "payload" in r:
        return False
    kind = r.get("type")
    if kind in _CONVERSATION_TYPES:
        return "uuid" in r or "parentUuid" in r or "sessionId" in r
    if kind == "summary":
        return "leafUuid" in r or "summary" in r
    if kind == "file-history-snapshot":
        return "snapshot" in r or "messageId" in r
    if kind == "queue-operation":
        return "operation" in r and "sessionId" in r
    return False


def looks_like(records: list[Any]) -> bool:
    """True when the first records of a JSONL file are a Claude Code transcript's: records with
    a ``uuid`` / ``sessionId`` and a type ``user``, ``assistant``, ``system``, ``summary``,
    ``file-history-snapshot`` or ``queue-operation``. A Pi session (its header first) and a Codex
    rollout (``{timestamp, type, payload}`` lines) are not."""
    if not records:
        return False
    first = records[0]
    if isinstance(first, dict) and first.get("type") == "session":
        return False
    return any(_is_claude_record(r) for r in records)


# ---------------------------------------------------------------------------------------------
# small helpers


def _ms(ts: Any) -> int | float:
    """An ISO timestamp as Unix milliseconds (``nan`` when it does not parse, as in Pi)."""
    if isinstance(ts, str):
        try:
            return round(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            pass
    return float("nan")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _without(mapping: Mapping[str, Any], keys: tuple[str, ...] | frozenset[str]) -> dict[str, Any]:
    return {k: v for k, v in mapping.items() if k not in keys}


_SPECS: dict[str, Any] = {}
"""The catalog's answer per model name, for one :func:`read` (cleared when it starts: the user's
``models.json`` may change between reads, not within one)."""


def _model_spec(model: Any) -> Any:
    if not isinstance(model, str) or not model:
        return None
    if model in _SPECS:
        return _SPECS[model]
    spec = find_model(PROVIDER, model)
    if spec is None and _DATE_SUFFIX.search(model):
        spec = find_model(PROVIDER, _DATE_SUFFIX.sub("", model))
    _SPECS[model] = spec
    return spec


def _usage(u: Any, model: Any) -> tuple[dict[str, Any], bool]:
    """Pi's usage for an Anthropic ``usage`` object, and whether its cost is known."""
    u = u if isinstance(u, dict) else {}
    usage: dict[str, Any] = {
        "input": _int(u.get("input_tokens")),
        "output": _int(u.get("output_tokens")),
        "cacheRead": _int(u.get("cache_read_input_tokens")),
        "cacheWrite": _int(u.get("cache_creation_input_tokens")),
    }
    creation = u.get("cache_creation")
    if isinstance(creation, dict):
        usage["cacheWrite1h"] = min(_int(creation.get("ephemeral_1h_input_tokens")), usage["cacheWrite"])
    usage["totalTokens"] = usage["input"] + usage["output"] + usage["cacheRead"] + usage["cacheWrite"]
    spec = _model_spec(model)
    if spec is not None:
        usage["cost"] = calculate_cost(spec, usage)
        return usage, True
    usage["cost"] = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}
    return usage, False


def _image(block: dict[str, Any]) -> dict[str, Any] | None:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64" and isinstance(source.get("data"), str):
        media = source.get("media_type")
        return {"type": "image", "data": source["data"], "mimeType": media if isinstance(media, str) else ""}
    return None


_TEXT_KEYS = frozenset({"type", "text"})


def _user_blocks(blocks: list[Any], unmapped: list[dict[str, Any]], offset: int = 0) -> list[dict[str, Any]]:
    """Text and image blocks as Pi's; anything else (and extra keys) goes to ``unmapped``."""
    out: list[dict[str, Any]] = []
    for i, block in enumerate(blocks):
        if isinstance(block, str):
            out.append({"type": "text", "text": block})
            continue
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            out.append({"type": "text", "text": block["text"]})
            extra = _without(block, _TEXT_KEYS)
            if extra:
                unmapped.append({"index": offset + i, "extra": extra})
            continue
        if kind == "image":
            image = _image(block)
            if image is not None:
                out.append(image)
                src = block.get("source")
                extra = _without(block, ("type", "source"))
                src_extra = _without(src, ("type", "media_type", "data")) if isinstance(src, dict) else {}
                if extra or src_extra:
                    unmapped.append({"index": offset + i, "extra": {**extra, **src_extra}})
                continue
        unmapped.append({"index": offset + i, "block": block})
    return out


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


# ---------------------------------------------------------------------------------------------
# the reader


class _Reader:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self.problems: list[tuple[int, str]] = []
        self.records: list[tuple[int, dict[str, Any]]] = []
        self.entries: list[dict[str, Any]] = []
        self.tail: dict[str, str] = {}  # a record's uuid -> the id of the last entry it gave
        self.ids: set[str] = set()
        self.tool_names: dict[str, str] = {}
        self.last_ts = _EPOCH
        self.last_main: str | None = None  # the last main-chain entry so far (customs hang on it)
        self.main_leaf: dict[str, Any] | None = None
        self.all_sidechain = False

    # -- lines -> records

    def parse(self, data: bytes) -> None:
        if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
            data = data[3:]
        for n, line in enumerate(data.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                # the slow path: invalid UTF-8 (read with U+FFFD, and reported), or JSON that
                # orjson refuses but JavaScript wrote (a lone surrogate escape, a huge integer)
                try:
                    text, bad_bytes = line.decode("utf-8"), False
                except UnicodeDecodeError:
                    text, bad_bytes = line.decode("utf-8", errors="replace"), True
                try:
                    value = json.loads(text)
                except ValueError as exc:
                    what = "invalid UTF-8 and not JSON" if bad_bytes else "not JSON"
                    self.problems.append((n, f"{what} ({exc}): {text[:60]!r}"))
                    continue
                if bad_bytes:
                    self.problems.append((n, "invalid UTF-8 (the bad bytes read as U+FFFD)"))
            if not isinstance(value, dict):
                self.problems.append((n, f"not a JSON object: {type(value).__name__}"))
                continue
            self.records.append((n, value))

    # -- helpers

    def new_id(self, wanted: Any, line: int, kind: str) -> str:
        base = wanted if isinstance(wanted, str) and wanted else f"L{line}:{kind}"
        eid = base
        k = 1
        while eid in self.ids:
            eid = f"{base}~L{line}" if k == 1 else f"{base}~L{line}.{k}"
            k += 1
        self.ids.add(eid)
        return eid

    def parent(self, record: dict[str, Any], raw: dict[str, Any]) -> str | None:
        """The Pi parent of a record (its ``parentUuid``'s entry), or ``None`` (a root); an
        unknown parent (in another file, or trimmed away) stays in ``raw``."""
        pu = record.get("parentUuid")
        if pu is None:
            return None
        found = self.tail.get(pu) if isinstance(pu, str) else None
        if found is None:
            raw["parentUuid"] = pu
            raw["parentUnresolved"] = True
        return found

    def timestamp(self, record: dict[str, Any]) -> str:
        ts = record.get("timestamp")
        if isinstance(ts, str) and ts:
            self.last_ts = ts
            return ts
        return self.last_ts

    def emit(self, entry: dict[str, Any], raw: dict[str, Any], record: dict[str, Any], main: bool) -> None:
        uuid = record.get("uuid")
        if isinstance(uuid, str) and entry["id"].startswith(uuid + "~"):
            raw["duplicateUuid"] = uuid  # a uuid seen before in the file: this entry's id is new
        if raw:
            entry["raw"] = raw
        self.entries.append(entry)
        if isinstance(uuid, str) and uuid not in self.tail:
            self.tail[uuid] = entry["id"]
        if main:
            self.last_main = entry["id"]
            self.main_leaf = entry

    def is_main(self, record: dict[str, Any]) -> bool:
        return self.all_sidechain or record.get("isSidechain") is not True

    # -- the records

    def run(self) -> list[dict[str, Any]]:
        recs = self.records
        self.all_sidechain = (
            bool(recs)
            and all(r.get("isSidechain") is True for _, r in recs if r.get("type") in _CONVERSATION_TYPES)
            and any(r.get("type") in _CONVERSATION_TYPES for _, r in recs)
        )
        for _, r in recs:
            if r.get("type") == "assistant" and isinstance(r.get("message"), dict):
                for b in r["message"].get("content") or ():
                    if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                        name = b.get("name")
                        self.tool_names[b["id"]] = name if isinstance(name, str) else ""
        # the compact summary of each boundary, and the assistant records one response was split over
        summary_of: dict[str, int] = {}
        for i, (_, r) in enumerate(recs):
            if (
                r.get("type") == "user"
                and r.get("isCompactSummary") is True
                and isinstance(r.get("parentUuid"), str)
            ):
                summary_of.setdefault(r["parentUuid"], i)
        consumed: set[int] = set()
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for i, (n, r) in enumerate(recs):
            if i in consumed:  # a compact summary, read with its boundary
                continue
            kind = r.get("type")
            if kind == "assistant" and isinstance(r.get("message"), dict):
                self.assistant(n, r, groups)
            elif kind == "user" and isinstance(r.get("message"), dict):
                self.user(n, r)
            elif kind == "system" and r.get("subtype") == "compact_boundary":
                j = summary_of.get(r["uuid"]) if isinstance(r.get("uuid"), str) else None
                if j is not None and j > i:
                    consumed.add(j)
                self.compaction(n, r, recs[j] if j is not None and j > i else None)
            else:
                if kind in ("user", "assistant"):
                    self.problems.append(
                        (n, f"a {kind} record without a message object: kept as a custom entry")
                    )
                self.custom(n, r)
        self.resolve_forward_parents()
        leaf = self.main_leaf
        if leaf is not None and self.entries[-1] is not leaf:  # Pi's leaf is the last entry
            at = next(i for i in range(len(self.entries) - 1, -1, -1) if self.entries[i] is leaf)
            self.entries.append(self.entries.pop(at))
        return self.entries

    def resolve_forward_parents(self) -> None:
        """A parent that comes later in the file than its child (rare: records written out of
        order) is linked at the end, unless the link would close a loop."""
        by_id = {e["id"]: e for e in self.entries}
        for entry in self.entries:
            raw = entry.get("raw")
            if not raw or not raw.get("parentUnresolved"):
                continue
            wanted = raw.get("logicalParentUuid", raw.get("parentUuid"))
            target = self.tail.get(wanted) if isinstance(wanted, str) else None
            if target is None:
                continue
            seen = {entry["id"]}
            walk: str | None = target
            while walk is not None and walk not in seen:
                seen.add(walk)
                walk = by_id[walk]["parentId"] if walk in by_id else None
            if walk is None:  # no loop: the parent's chain reaches a root
                entry["parentId"] = target
                del raw["parentUnresolved"]
                raw["parentLater"] = True  # (the uuid stays in raw: the entry it names comes later)

    def custom(self, n: int, r: dict[str, Any]) -> None:
        kind = r.get("type")
        kind_s = kind if isinstance(kind, str) and kind else "unknown"
        has_place = isinstance(r.get("uuid"), str) and "parentUuid" in r
        raw: dict[str, Any] = {}
        if has_place:
            parent = self.parent(r, raw)
        else:
            parent = self.last_main
        eid = self.new_id(r.get("uuid") if has_place else None, n, kind_s)
        entry: dict[str, Any] = {
            "type": "custom",
            "customType": f"claude-code/{kind_s}",
            "data": r,
            "id": eid,
            "parentId": parent,
            "timestamp": self.timestamp(r),
        }
        raw["line"] = n
        # in the chain when it has a place there; the leaf only for a conversation record
        self.emit(entry, raw, r, main=has_place and kind in _CONVERSATION_TYPES and self.is_main(r))

    # user records

    _USER_MAPPED = frozenset({"type", "uuid", "parentUuid", "timestamp", "message", "toolUseResult"})

    def user(self, n: int, r: dict[str, Any]) -> None:
        msg = r["message"]
        if r.get("isCompactSummary") is True:  # a summary with no boundary before it
            self.compaction(n, r, None, summary_only=True)
            return
        raw: dict[str, Any] = _without(r, self._USER_MAPPED)
        raw["line"] = n
        extra_msg = _without(msg, ("role", "content"))
        if msg.get("role") != "user":
            extra_msg["role"] = msg.get("role")
        if extra_msg:
            raw["message"] = extra_msg
        parent = self.parent(r, raw)
        ts = self.timestamp(r)
        ms = _ms(ts)
        main = self.is_main(r)
        content = msg.get("content")
        if isinstance(content, str) or content is None:
            if content is None:
                raw["contentMissing"] = True
            if "toolUseResult" in r:
                raw["toolUseResult"] = r["toolUseResult"]
            self.user_entry(n, r, raw, parent, ts, ms, content or "", main)
            return
        if not isinstance(content, list):
            self.problems.append(
                (n, f"user message content is a {type(content).__name__}: kept as a custom entry")
            )
            self.custom(n, r)
            return
        # split the blocks into runs: tool results one entry each, other blocks one user entry per run
        runs: list[tuple[str, Any, int]] = []
        pending: list[Any] = []
        pending_at = 0
        for i, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if pending:
                    runs.append(("user", pending, pending_at))
                    pending = []
                runs.append(("tool", block, i))
            else:
                if not pending:
                    pending_at = i
                pending.append(block)
        if pending or not runs:
            runs.append(("user", pending, pending_at))
        first = True
        for kind, value, at in runs:
            eraw: dict[str, Any] = raw if first else {"line": n, "blockIndex": at}
            if kind == "tool":
                if first and "toolUseResult" in r:
                    eraw["toolUseResult"] = r["toolUseResult"]
                parent = self.tool_entry(n, r, eraw, parent, ts, ms, value, at, main, first)
            else:
                unmapped: list[dict[str, Any]] = []
                blocks = _user_blocks(value, unmapped, at)
                if unmapped:
                    eraw["unmappedContent"] = unmapped
                if first and "toolUseResult" in r:
                    eraw["toolUseResult"] = r["toolUseResult"]
                parent = self.user_entry(n, r, eraw, parent, ts, ms, blocks, main, first)
            first = False

    def user_entry(
        self,
        n: int,
        r: dict[str, Any],
        raw: dict[str, Any],
        parent: str | None,
        ts: str,
        ms: int | float,
        content: Any,
        main: bool,
        first: bool = True,
    ) -> str:
        eid = self.new_id(
            r.get("uuid") if first else f"{r.get('uuid') or f'L{n}'}#{raw.get('blockIndex', 0)}", n, "user"
        )
        if r.get("isMeta") is True:
            entry: dict[str, Any] = {
                "type": "custom_message",
                "customType": "claude-code/meta",
                "content": content,
                "display": False,
                "id": eid,
                "parentId": parent,
                "timestamp": ts,
            }
        else:
            entry = {
                "type": "message",
                "id": eid,
                "parentId": parent,
                "timestamp": ts,
                "message": {"role": "user", "content": content, "timestamp": ms},
            }
        self.emit(entry, raw, r, main)
        if isinstance(r.get("uuid"), str):
            self.tail[r["uuid"]] = eid
        return eid

    def tool_entry(
        self,
        n: int,
        r: dict[str, Any],
        raw: dict[str, Any],
        parent: str | None,
        ts: str,
        ms: int | float,
        block: dict[str, Any],
        at: int,
        main: bool,
        first: bool,
    ) -> str:
        uuid = r.get("uuid")
        eid = self.new_id(uuid if first else f"{uuid or f'L{n}'}#{at}", n, "toolResult")
        call_id = block.get("tool_use_id")
        inner = block.get("content")
        unmapped: list[dict[str, Any]] = []
        if isinstance(inner, str):
            blocks: list[dict[str, Any]] = [{"type": "text", "text": inner}]
        elif isinstance(inner, list):
            blocks = _user_blocks(inner, unmapped)
        else:
            blocks = []
            if inner is not None:
                unmapped.append({"index": None, "block": inner})
        extra = _without(block, ("type", "tool_use_id", "content", "is_error"))
        if extra:
            raw["block"] = extra
        if unmapped:
            raw["unmappedContent"] = unmapped
        if not isinstance(call_id, str):
            raw["toolUseId"] = call_id
        name = self.tool_names.get(call_id) if isinstance(call_id, str) else None
        if name is None:
            raw["toolNameUnknown"] = True
        message: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id if isinstance(call_id, str) else "",
            "toolName": name or "",
            "content": blocks,
            "isError": block.get("is_error") is True,
            "timestamp": ms,
        }
        entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": message}
        self.emit(entry, raw, r, main)
        if isinstance(uuid, str):
            self.tail[uuid] = eid
        return eid

    # assistant records

    _ASSISTANT_MAPPED = frozenset({"type", "uuid", "parentUuid", "timestamp", "message"})
    _MESSAGE_MAPPED = frozenset({"role", "content", "model", "id", "usage", "stop_reason"})

    def assistant(self, n: int, r: dict[str, Any], groups: dict[tuple[Any, ...], dict[str, Any]]) -> None:
        msg = r["message"]
        mid = msg.get("id")
        key = (mid, r.get("requestId"), r.get("isSidechain") is True)
        group = groups.get(key) if isinstance(mid, str) and mid else None
        content = msg.get("content")
        if group is not None:
            entry = group["entry"]
            pmsg: dict[str, Any] = entry["message"]
            raw = entry.setdefault("raw", {})
            unmapped = raw.get("unmappedContent", [])
            offset = group["blocks"]
            blocks = self.assistant_blocks(content, unmapped, offset, n)
            if unmapped:
                raw["unmappedContent"] = unmapped
            pmsg["content"].extend(blocks)
            group["blocks"] += len(content) if isinstance(content, list) else 1
            later: dict[str, Any] = {"line": n, "uuid": r.get("uuid"), "parentUuid": r.get("parentUuid")}
            first_rec = group["record"]
            for k, v in r.items():
                if k in ("uuid", "parentUuid", "message"):
                    continue
                if first_rec.get(k) != v:
                    later[k] = v
            for k, v in msg.items():
                if k == "content":
                    continue
                if first_rec["message"].get(k) != v:
                    later.setdefault("message", {})[k] = v
            raw.setdefault("merged", []).append(later)
            usage = msg.get("usage")
            if isinstance(usage, dict) and usage != group["usage"]:
                # the records repeat the usage of the stream so far: the last one is the fullest
                # (its output count grows); the first record's stays in raw
                raw.setdefault("firstRecordUsage", first_rec["message"].get("usage"))
                pmsg["usage"], _ = _usage(usage, pmsg.get("model"))
                group["usage"] = usage
            sr = msg.get("stop_reason")
            if isinstance(sr, str):  # the last record that has one says how the response ended
                self.set_stop(pmsg, sr, raw)
            elif "rawStopReason" not in pmsg:  # none yet: inferred again from the blocks so far
                self.set_stop(pmsg, None, raw)
            uuid = r.get("uuid")
            if isinstance(uuid, str):
                self.tail.setdefault(uuid, entry["id"])
            if self.is_main(r):
                self.last_main = entry["id"]
                self.main_leaf = entry
            return
        raw = _without(r, self._ASSISTANT_MAPPED)
        raw["line"] = n
        extra_msg = _without(msg, self._MESSAGE_MAPPED)
        if extra_msg:
            raw["message"] = extra_msg
        parent = self.parent(r, raw)
        ts = self.timestamp(r)
        unmapped = []
        blocks = self.assistant_blocks(content, unmapped, 0, n)
        if unmapped:
            raw["unmappedContent"] = unmapped
        model = msg.get("model")
        usage, known = _usage(msg.get("usage"), model)
        if not known:
            raw["costUnknown"] = True
        if "usage" in msg and isinstance(msg["usage"], dict):
            usage_extra = _without(
                msg["usage"],
                ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
            )
            if usage_extra:
                raw["usage"] = usage_extra
        pmsg = {
            "role": "assistant",
            "content": blocks,
            "api": API,
            "provider": PROVIDER,
            "model": model if isinstance(model, str) else "",
        }
        if isinstance(mid, str):
            pmsg["responseId"] = mid
        pmsg["usage"] = usage
        pmsg["stopReason"] = "stop"
        pmsg["timestamp"] = _ms(ts)
        sr = msg.get("stop_reason")
        self.set_stop(pmsg, sr if isinstance(sr, str) else None, raw)
        if r.get("isApiErrorMessage") is True or (
            model == "<synthetic>" and _text_of(content).startswith("API Error")
        ):
            pmsg["stopReason"] = "error"
            err = (
                _text_of(content)
                or (r.get("error") if isinstance(r.get("error"), str) else "")
                or "API error"
            )
            pmsg["errorMessage"] = err
            self.order(pmsg)
        eid = self.new_id(r.get("uuid"), n, "assistant")
        entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": pmsg}
        self.emit(entry, raw, r, self.is_main(r))
        if isinstance(mid, str) and mid:
            groups[key] = {
                "entry": entry,
                "record": r,
                "blocks": len(content) if isinstance(content, list) else 1,
                "usage": msg.get("usage"),
            }

    @staticmethod
    def order(pmsg: dict[str, Any]) -> None:
        """Pi's key order for an assistant message (the optional keys where Pi puts them)."""
        keys = (
            "role", "content", "api", "provider", "model", "responseModel", "responseId", "usage",
            "stopReason", "errorMessage", "rawStopReason", "timestamp",
        )  # fmt: skip
        items = {k: pmsg[k] for k in keys if k in pmsg}
        pmsg.clear()
        pmsg.update(items)

    def set_stop(self, pmsg: dict[str, Any], sr: str | None, raw: dict[str, Any]) -> None:
        if pmsg.get("stopReason") == "error" and "errorMessage" in pmsg:
            return
        if sr is None:
            has_call = any(b.get("type") == "toolCall" for b in pmsg["content"])
            pmsg["stopReason"] = "toolUse" if has_call else "stop"
            pmsg.pop("rawStopReason", None)
        else:
            mapped = _STOP_REASONS.get(sr)
            if mapped is None:
                raw["stopReasonUnknown"] = True
                mapped = "stop"
            pmsg["stopReason"] = mapped
            pmsg["rawStopReason"] = sr
            if sr == "refusal":
                pmsg["errorMessage"] = "The model refused to complete the request"
        self.order(pmsg)

    def assistant_blocks(
        self, content: Any, unmapped: list[dict[str, Any]], offset: int, line: int
    ) -> list[dict[str, Any]]:
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if not isinstance(content, list):
            if content is not None:
                unmapped.append({"index": None, "block": content})
            return []
        out: list[dict[str, Any]] = []
        for i, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            at = offset + i
            if kind == "text" and isinstance(block.get("text"), str):
                out.append({"type": "text", "text": block["text"]})
                extra = _without(block, _TEXT_KEYS)
            elif kind == "thinking" and isinstance(block.get("thinking"), str):
                b: dict[str, Any] = {"type": "thinking", "thinking": block["thinking"]}
                if isinstance(block.get("signature"), str):
                    b["thinkingSignature"] = block["signature"]
                out.append(b)
                extra = _without(block, ("type", "thinking", "signature"))
            elif kind == "redacted_thinking":
                out.append(
                    {
                        "type": "thinking",
                        "thinking": _REDACTED_THINKING,
                        "thinkingSignature": block.get("data") if isinstance(block.get("data"), str) else "",
                        "redacted": True,
                    }
                )
                extra = _without(block, ("type", "data"))
            elif kind == "tool_use" and isinstance(block.get("id"), str):
                args = block.get("input")
                out.append(
                    {
                        "type": "toolCall",
                        "id": block["id"],
                        "name": block.get("name") if isinstance(block.get("name"), str) else "",
                        "arguments": args if isinstance(args, dict) else {},
                    }
                )
                extra = _without(block, ("type", "id", "name", "input"))
                if not isinstance(args, dict):
                    extra["input"] = args
            else:
                unmapped.append({"index": at, "block": block})
                continue
            if extra:
                unmapped.append({"index": at, "extra": extra})
        return out

    # compaction

    _BOUNDARY_MAPPED = frozenset({"type", "uuid", "parentUuid", "timestamp", "logicalParentUuid"})

    def compaction(
        self,
        n: int,
        r: dict[str, Any],
        summary: tuple[int, dict[str, Any]] | None,
        summary_only: bool = False,
    ) -> None:
        raw: dict[str, Any] = {}
        if summary_only:  # an isCompactSummary user record with no boundary: it is the compaction
            raw = _without(r, ("type", "uuid", "parentUuid", "timestamp", "message"))
            raw["line"] = n
            raw["noBoundary"] = True
            parent = self.parent(r, raw)
            text = _text_of(r["message"].get("content"))
            tokens = 0
            extra_msg = _without(r["message"], ("role", "content"))
            if extra_msg:
                raw["message"] = extra_msg
            if not isinstance(r["message"].get("content"), str):
                raw["summaryContent"] = r["message"].get("content")
        else:
            raw = _without(r, self._BOUNDARY_MAPPED)
            raw["line"] = n
            if r.get("parentUuid") is not None:
                raw["parentUuid"] = r.get("parentUuid")
            logical = r.get("logicalParentUuid")
            if isinstance(logical, str):
                parent = self.tail.get(logical)
                if parent is None:
                    raw["logicalParentUuid"] = logical
                    raw["parentUnresolved"] = True
            else:
                parent = self.parent(r, raw)
            meta = r.get("compactMetadata")
            tokens = _int(meta.get("preTokens")) if isinstance(meta, dict) else 0
            text = ""
            if summary is not None:
                sn, srec = summary
                found = srec.get("message")
                smsg: dict[str, Any] = found if isinstance(found, dict) else {}
                text = _text_of(smsg.get("content"))
                sraw = _without(srec, ("type",))
                sraw["line"] = sn
                if not isinstance(smsg.get("content"), str):
                    sraw["message"] = smsg  # the content is not a plain string: keep it all
                else:
                    srec_msg = _without(smsg, ("content",))
                    sraw["message"] = srec_msg
                raw["summaryRecord"] = sraw
            else:
                raw["summaryMissing"] = True
        eid = self.new_id(r.get("uuid"), n, "compaction")
        entry: dict[str, Any] = {
            "type": "compaction",
            "id": eid,
            "parentId": parent,
            "timestamp": self.timestamp(r),
            "summary": text,
            "firstKeptEntryId": eid,
            "tokensBefore": tokens,
        }
        self.emit(entry, raw, r, self.is_main(r))
        if summary is not None and isinstance(summary[1].get("uuid"), str):
            self.tail[summary[1]["uuid"]] = eid
            self.ids.add(summary[1]["uuid"])


def _header(reader: _Reader, path: str | None) -> dict[str, Any]:
    recs = [r for _, r in reader.records]

    def first(key: str) -> Any:
        for r in recs:
            v = r.get(key)
            if isinstance(v, str) and v:
                return v
        return None

    session_id = first("sessionId")
    stem = os.path.splitext(os.path.basename(path))[0] if path else None
    agent_id = first("agentId")
    is_subagent = reader.all_sidechain  # every record a sidechain: a subagent's transcript
    if session_id is None:
        session_id = stem or ""
    elif is_subagent:
        session_id = f"{session_id}/{stem or 'agent-' + (agent_id or 'sidechain')}"
    header: dict[str, Any] = {
        "type": "session",
        "version": 3,
        "id": session_id,
        "timestamp": first("timestamp") or _EPOCH,
        "cwd": first("cwd") or "",
    }
    if path is not None and is_subagent:
        sub_dir = os.path.dirname(os.path.abspath(path))
        if os.path.basename(sub_dir) == "subagents":
            session_dir = os.path.dirname(sub_dir)
            parent_file = session_dir + ".jsonl"
            if os.path.isfile(parent_file):
                header["parentSession"] = parent_file
    header["harness"] = HARNESS
    version = first("version")
    if version is not None:
        header["harnessVersion"] = version
    branch = first("gitBranch")
    if branch is not None:
        header["gitBranch"] = branch
    if is_subagent and agent_id is not None:
        header["agentId"] = agent_id
    return header


def read(data: bytes, path: str | None = None) -> ForeignSession:
    """A Claude Code transcript's bytes mapped to Pi entries (header first). Lines that are not
    JSON objects are problems ``(line, reason)``; the rest of the file is still read."""
    _SPECS.clear()
    reader = _Reader(path)
    reader.parse(data)
    entries = reader.run()
    return ForeignSession(
        harness=HARNESS,
        path=path,
        entries=cast("list[FileEntry]", [_header(reader, path), *entries]),  # plain dicts in Pi's shapes
        problems=sorted(reader.problems),
    )
