"""pandas frames of sessions: entries, messages, tool results (with truncation), usage, compactions.

In the style of Inspect AI's ``evals_df``/``messages_df``: one function per kind of row, each
taking one session (a :class:`~pi_nb.session.SessionManager`), a session file, a directory of
Pi session files (searched recursively for ``*.jsonl``) or a list of those, and returning one
frame with stable id columns (``session_id``, ``session_file``, ``entry_id``, ``parent_id``) and
the branch membership of every row (``on_active_branch``: on the root -> leaf path;
``in_context``: among the entries the model sees at the leaf, after compaction).

Files are only read, never changed: an old format is migrated in memory, a torn last line stays.
``strict=True`` (the default) raises on the first file or line that cannot be used;
``strict=False`` returns ``(frame, errors)`` where ``errors`` has one row per problem with the
columns ``file``, ``line`` (1-based, ``<NA>`` for a whole file) and ``reason``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from pi_nb._js import js_stringify, js_utf8_encode
from pi_nb.errors import (
    InvalidMessageError,
    InvalidSessionFileError,
    NotebookError,
    PiNbError,
    SessionFileCorruptError,
)
from pi_nb.session.context import (
    build_context_entries,
    build_session_context,
    session_entry_to_context_messages,
)
from pi_nb.session.jsonl import read_session_file
from pi_nb.session.manager import SessionManager
from pi_nb.tokens import calculate_context_tokens, count_message_tokens, estimate_tokens

__all__ = [
    "ERROR_COLUMNS",
    "SessionSource",
    "compactions_df",
    "entries_df",
    "iter_sessions",
    "messages_df",
    "tool_results_df",
    "usage_df",
]

SessionSource = Any
"""A SessionManager, a session file, a directory of session files, or a list of these."""

ERROR_COLUMNS = ("file", "line", "reason")
ID_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "tool_call_id",
    "call_entry_id",
    "first_kept_entry_id",
)
"""Columns holding ids, as pandas ``string`` dtype (missing = ``<NA>``)."""

TRUNCATION_FIELDS = (
    ("truncated", "truncated"),
    ("truncatedBy", "truncated_by"),
    ("totalLines", "total_lines"),
    ("totalBytes", "total_bytes"),
    ("outputLines", "output_lines"),
    ("outputBytes", "output_bytes"),
    ("lastLinePartial", "last_line_partial"),
    ("firstLineExceedsLimit", "first_line_exceeds_limit"),
    ("maxLines", "max_lines"),
    ("maxBytes", "max_bytes"),
)


@dataclass
class LoadedSession:
    """One session, loaded for frames: the manager and the lookups every frame needs."""

    session_id: str
    session_file: str | None
    manager: SessionManager
    entries: list[Mapping[str, Any]] = field(default_factory=list)
    active_ids: set[str] = field(default_factory=set)
    context_ids: set[str] = field(default_factory=set)
    leaf_id: str | None = None

    @classmethod
    def of(cls, manager: SessionManager, session_file: str | None) -> LoadedSession:
        entries = manager.get_entries()
        active = {str(e.get("id")) for e in manager.get_branch()}
        leaf = manager.get_leaf_id()
        context: set[str] = set()
        if leaf is not None:
            context = {str(e.get("id")) for e in build_context_entries(entries, leaf)}
        return cls(manager.get_session_id(), session_file, manager, list(entries), active, context, leaf)

    def base(self, entry: Mapping[str, Any]) -> dict[str, Any]:
        eid = str(entry.get("id"))
        return {
            "session_id": self.session_id,
            "session_file": self.session_file,
            "entry_id": eid,
            "parent_id": entry.get("parentId"),
            "timestamp": entry.get("timestamp"),
        }

    def membership(self, entry_id: str) -> dict[str, Any]:
        return {"on_active_branch": entry_id in self.active_ids, "in_context": entry_id in self.context_ids}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _session_files(path: str) -> list[str]:
    if os.path.isdir(path):
        found: list[str] = []
        for root, dirs, files in os.walk(path):
            dirs.sort()
            found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".jsonl"))
        return found
    return [path]


def _flatten_sources(source: SessionSource) -> Iterator[SessionManager | str]:
    if isinstance(source, SessionManager):
        yield source
    elif isinstance(source, (str, os.PathLike)):
        yield from _session_files(os.fspath(source))
    elif isinstance(source, Iterable) and not isinstance(source, (bytes, Mapping)):
        for item in source:
            if isinstance(item, Mapping):
                raise NotebookError(
                    "a list of entries is not a session source here: use SessionManager.in_memory(entries=...)"
                )
            yield from _flatten_sources(item)
    else:
        raise NotebookError(
            f"a session source must be a SessionManager, a file, a directory or a list of them, got {type(source).__name__}"
        )


def iter_sessions(
    source: SessionSource, *, strict: bool = True
) -> tuple[list[LoadedSession], list[tuple[str, int | None, str]]]:
    """Load every session of ``source`` without writing: ``(sessions, problems)``.

    With ``strict`` the first problem raises (:class:`~pi_nb.errors.InvalidSessionFileError`
    for a file that is not a session, :class:`~pi_nb.errors.SessionFileCorruptError` for lines
    that do not parse, :class:`~pi_nb.errors.NotebookError` for a missing file).
    """
    sessions: list[LoadedSession] = []
    problems: list[tuple[str, int | None, str]] = []
    for item in _flatten_sources(source):
        if isinstance(item, SessionManager):
            sessions.append(LoadedSession.of(item, item.get_session_file()))
            continue
        path = item
        contents = read_session_file(path)
        if not contents.exists:
            if strict:
                raise NotebookError(f"no such session file: {path}")
            problems.append((path, None, "file not found"))
            continue
        if not contents.valid:
            if strict:
                raise InvalidSessionFileError(f"Session file is not a valid pi session: {path}")
            problems.append((path, None, "not a pi session (no header with a string id)"))
            continue
        file_problems = [(path, p.line_number, p.reason) for p in contents.problems]
        if file_problems and strict:
            raise SessionFileCorruptError(
                f"{len(file_problems)} line(s) of {path} could not be used: "
                + "; ".join(f"line {n}: {r}" for _, n, r in file_problems[:3]),
                [(n or 0, r) for _, n, r in file_problems],
            )
        problems.extend(file_problems)
        header = contents.entries[0]
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
        try:
            manager = SessionManager.in_memory(cwd, entries=contents.entries)
            sessions.append(LoadedSession.of(manager, path))
        except PiNbError as exc:
            if strict:
                raise
            problems.append((path, None, f"{type(exc).__name__}: {exc}"))
    return sessions, problems


def _finish(
    rows: list[dict[str, Any]],
    columns: Sequence[str],
    problems: list[tuple[str, int | None, str]],
    strict: bool,
) -> Any:
    df = pd.DataFrame(rows, columns=list(columns))
    if "timestamp" in df.columns:
        df["timestamp"] = pd.to_datetime(df["timestamp"], utc=True, errors="coerce", format="ISO8601")
    for col in (
        "total_lines",
        "total_bytes",
        "output_lines",
        "output_bytes",
        "max_lines",
        "max_bytes",
        "line",
    ):
        if col in df.columns:
            df[col] = df[col].astype("Int64")
    if strict:
        return df
    errors = pd.DataFrame(problems, columns=list(ERROR_COLUMNS))
    errors["line"] = errors["line"].astype("Int64")
    return df, errors


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _images(content: Any) -> int:
    return (
        sum(1 for b in content if isinstance(b, Mapping) and b.get("type") == "image")
        if isinstance(content, list)
        else 0
    )


def _role(entry: Mapping[str, Any]) -> str | None:
    etype = entry.get("type")
    if etype == "message":
        msg = entry.get("message")
        return msg.get("role") if isinstance(msg, Mapping) else None
    return {
        "custom_message": "custom",
        "branch_summary": "branchSummary",
        "compaction": "compactionSummary",
    }.get(str(etype))


def _short(entry: Mapping[str, Any], limit: int = 200) -> str:
    etype = entry.get("type")
    if etype == "message":
        msg = _mapping(entry.get("message"))
        if msg.get("role") == "bashExecution":
            text = str(msg.get("command") or "")
        else:
            text = _text(msg.get("content"))
            if not text and msg.get("role") == "assistant":
                text = " ".join(
                    f"{b.get('name')}({js_stringify(b.get('arguments'))})"
                    for b in msg.get("content") or []
                    if isinstance(b, Mapping) and b.get("type") == "toolCall"
                )
    elif etype == "custom_message":
        text = _text(entry.get("content"))
    elif etype in ("compaction", "branch_summary"):
        text = str(entry.get("summary") or "")
    elif etype == "model_change":
        text = f"{entry.get('provider')}/{entry.get('modelId')}"
    elif etype == "thinking_level_change":
        text = str(entry.get("thinkingLevel"))
    elif etype == "label":
        text = f"{entry.get('targetId')}: {entry.get('label') or '(cleared)'}"
    elif etype == "session_info":
        text = str(entry.get("name") or "")
    elif etype == "custom":
        text = str(entry.get("customType") or "")
    else:
        text = ""
    text = text.replace("\n", " ").replace("\t", " ").strip()
    return text[:limit]


def _message_tokens(entry: Mapping[str, Any], encoding: str | None) -> tuple[int, int | None]:
    msgs = session_entry_to_context_messages(entry)
    est = sum(estimate_tokens(m) for m in msgs)
    tik = sum(count_message_tokens(m, encoding) for m in msgs) if encoding else None
    return est, tik


def _depths(parent_of: Mapping[str, Any]) -> dict[str, int]:
    """Distance from the root for every entry (a missing parent makes a root; loops stop)."""
    depth: dict[str, int] = {}
    for eid in parent_of:
        chain: list[str] = []
        seen: set[str] = set()
        cur: str | None = eid
        while cur is not None and cur not in depth and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            parent = parent_of.get(cur)
            cur = str(parent) if parent is not None and str(parent) in parent_of else None
        base = depth[cur] if cur is not None and cur in depth else -1
        for c in reversed(chain):
            base += 1
            depth[c] = base
    return depth


# ---------------------------------------------------------------------------------------------
# frames
# ---------------------------------------------------------------------------------------------

ENTRY_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "type",
    "role",
    "text",
    "label",
    "depth",
    "children",
    "on_active_branch",
    "in_context",
    "is_leaf",
    "estimate_tokens",
)


def entries_df(source: SessionSource, *, strict: bool = True, encoding: str | None = None) -> Any:
    """One row per session entry (file order).

    Columns: the id columns, ``type``, ``role`` (message role; ``custom`` / ``branchSummary`` /
    ``compactionSummary`` for the entries that become those messages), ``text`` (a short
    one-line text), ``label`` (the entry's current label), ``depth`` (0 for a root),
    ``children``, ``on_active_branch``, ``in_context``, ``is_leaf``, ``estimate_tokens`` (Pi's
    chars/4 estimate of what the entry puts in context) and, with ``encoding``, ``tokens``
    (tiktoken).
    """
    sessions, problems = iter_sessions(source, strict=strict)
    rows: list[dict[str, Any]] = []
    columns = [*ENTRY_COLUMNS, *(["tokens"] if encoding else [])]
    for s in sessions:
        children: dict[str, int] = {}
        parent_of: dict[str, Any] = {}
        for e in s.entries:
            parent_of[str(e.get("id"))] = e.get("parentId")
            p = e.get("parentId")
            if p is not None:
                children[str(p)] = children.get(str(p), 0) + 1
        depth = _depths(parent_of)
        for e in s.entries:
            eid = str(e.get("id"))
            est, tik = _message_tokens(e, encoding)
            row = s.base(e)
            row.update(
                type=e.get("type"),
                role=_role(e),
                text=_short(e),
                label=s.manager.get_label(eid),
                depth=depth.get(eid, 0),
                children=children.get(eid, 0),
                is_leaf=eid == s.leaf_id,
                estimate_tokens=est,
                **s.membership(eid),
            )
            if encoding:
                row["tokens"] = tik
            rows.append(row)
    return _finish(rows, columns, problems, strict)


MESSAGE_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "role",
    "text",
    "text_chars",
    "thinking_chars",
    "images",
    "tool_calls",
    "tool_names",
    "tool_call_id",
    "tool_name",
    "is_error",
    "stop_reason",
    "provider",
    "model",
    "on_active_branch",
    "in_context",
    "estimate_tokens",
)


def messages_df(source: SessionSource, *, strict: bool = True, encoding: str | None = None) -> Any:
    """One row per entry that puts a message in context (``message``, ``custom_message``,
    ``branch_summary`` with a summary, ``compaction``), with the message's role, its full text
    (``text``: text blocks joined; a bash execution's command and output; a summary) and its
    parts; ``estimate_tokens`` is Pi's estimate, ``tokens`` (with ``encoding``) tiktoken."""
    sessions, problems = iter_sessions(source, strict=strict)
    rows: list[dict[str, Any]] = []
    columns = [*MESSAGE_COLUMNS, *(["tokens"] if encoding else [])]
    for s in sessions:
        for e in s.entries:
            msgs = session_entry_to_context_messages(e)
            if not msgs:
                continue
            m = msgs[0]
            role = m.get("role")
            content = m.get("content")
            thinking = 0
            calls: list[str] = []
            if role == "assistant" and isinstance(content, list):
                for b in content:
                    if (
                        isinstance(b, Mapping)
                        and b.get("type") == "thinking"
                        and isinstance(b.get("thinking"), str)
                    ):
                        thinking += len(b["thinking"])
                    elif isinstance(b, Mapping) and b.get("type") == "toolCall":
                        calls.append(str(b.get("name")))
            if role == "bashExecution":
                text = f"{m.get('command') or ''}\n{m.get('output') or ''}"
            elif role in ("branchSummary", "compactionSummary"):
                text = str(m.get("summary") or "")
            else:
                text = _text(content)
            eid = str(e.get("id"))
            row = s.base(e)
            row.update(
                role=role,
                text=text,
                text_chars=len(text),
                thinking_chars=thinking,
                images=_images(content),
                tool_calls=len(calls),
                tool_names=",".join(calls),
                tool_call_id=m.get("toolCallId"),
                tool_name=m.get("toolName"),
                is_error=m.get("isError") if role == "toolResult" else None,
                stop_reason=m.get("stopReason"),
                provider=m.get("provider"),
                model=m.get("model"),
                estimate_tokens=sum(estimate_tokens(x) for x in msgs),
                **s.membership(eid),
            )
            if encoding:
                row["tokens"] = sum(count_message_tokens(x, encoding) for x in msgs)
            rows.append(row)
    return _finish(rows, columns, problems, strict)


TOOL_RESULT_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "tool_call_id",
    "tool_name",
    "call_entry_id",
    "arguments",
    "is_error",
    "content_chars",
    "content_bytes",
    "images",
    *(snake for _, snake in TRUNCATION_FIELDS),
    "full_output_path",
    "match_limit_reached",
    "result_limit_reached",
    "entry_limit_reached",
    "lines_truncated",
    "on_active_branch",
    "in_context",
)


def tool_results_df(source: SessionSource, *, strict: bool = True) -> Any:
    """One row per ``toolResult`` message, with the call that asked for it and Pi's truncation
    details (``details.truncation`` fields as snake_case columns; ``<NA>`` where the tool
    stored none), ``full_output_path`` (bash) and the grep/find/ls limit flags.

    ``content_bytes`` is the UTF-8 size of what the model saw (kept text plus notice);
    ``arguments`` is the call's arguments as compact JSON.
    """
    sessions, problems = iter_sessions(source, strict=strict)
    rows: list[dict[str, Any]] = []
    for s in sessions:
        calls: dict[str, tuple[str, Any]] = {}
        for e in s.entries:
            if e.get("type") != "message":
                continue
            m = e.get("message")
            if not isinstance(m, Mapping):
                continue
            if m.get("role") == "assistant" and isinstance(m.get("content"), list):
                for b in m["content"]:
                    if isinstance(b, Mapping) and b.get("type") == "toolCall":
                        calls[str(b.get("id"))] = (str(e.get("id")), b.get("arguments"))
        for e in s.entries:
            m = e.get("message") if e.get("type") == "message" else None
            if not isinstance(m, Mapping) or m.get("role") != "toolResult":
                continue
            eid = str(e.get("id"))
            details = _mapping(m.get("details"))
            trunc = _mapping(details.get("truncation"))
            call = calls.get(str(m.get("toolCallId")))
            text = _text(m.get("content"))
            row = s.base(e)
            row.update(
                tool_call_id=m.get("toolCallId"),
                tool_name=m.get("toolName"),
                call_entry_id=call[0] if call else None,
                arguments=js_stringify(call[1]) if call and call[1] is not None else None,
                is_error=bool(m.get("isError")),
                content_chars=len(text),
                content_bytes=len(js_utf8_encode(text)),
                images=_images(m.get("content")),
                full_output_path=details.get("fullOutputPath"),
                match_limit_reached=details.get("matchLimitReached"),
                result_limit_reached=details.get("resultLimitReached"),
                entry_limit_reached=details.get("entryLimitReached"),
                lines_truncated=details.get("linesTruncated"),
                **s.membership(eid),
            )
            for camel, snake in TRUNCATION_FIELDS:
                row[snake] = trunc.get(camel)
            if not trunc:
                row["truncated"] = False
            rows.append(row)
    df = _finish(rows, TOOL_RESULT_COLUMNS, problems, strict)
    return df


USAGE_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "provider",
    "model",
    "api",
    "stop_reason",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "total_tokens",
    "context_tokens",
    "usable",
    "cost_input",
    "cost_output",
    "cost_cache_read",
    "cost_cache_write",
    "cost_total",
    "on_active_branch",
    "in_context",
)


def usage_df(source: SessionSource, *, strict: bool = True) -> Any:
    """One row per assistant message with its provider usage.

    ``context_tokens`` is Pi's ``calculateContextTokens`` (``totalTokens``, or the sum of the
    parts when it is 0); ``usable`` is Pi's test for a usage its threshold maths may use (not
    aborted or errored, more than 0 tokens). Branch summaries and compactions that carry the
    usage of their summarising call are not included (see :func:`compactions_df`).
    """
    sessions, problems = iter_sessions(source, strict=strict)
    rows: list[dict[str, Any]] = []
    for s in sessions:
        for e in s.entries:
            m = e.get("message") if e.get("type") == "message" else None
            if not isinstance(m, Mapping) or m.get("role") != "assistant":
                continue
            usage = m.get("usage") if isinstance(m.get("usage"), Mapping) else None
            cost = usage.get("cost") if usage and isinstance(usage.get("cost"), Mapping) else {}
            ctx: int | None = None
            if usage:
                try:
                    ctx = calculate_context_tokens(usage)
                except InvalidMessageError:
                    ctx = None
            eid = str(e.get("id"))
            row = s.base(e)
            row.update(
                provider=m.get("provider"),
                model=m.get("model"),
                api=m.get("api"),
                stop_reason=m.get("stopReason"),
                input=usage.get("input") if usage else None,
                output=usage.get("output") if usage else None,
                cache_read=usage.get("cacheRead") if usage else None,
                cache_write=usage.get("cacheWrite") if usage else None,
                total_tokens=usage.get("totalTokens") if usage else None,
                context_tokens=ctx,
                usable=bool(ctx and ctx > 0 and m.get("stopReason") not in ("aborted", "error")),
                cost_input=cost.get("input"),
                cost_output=cost.get("output"),
                cost_cache_read=cost.get("cacheRead"),
                cost_cache_write=cost.get("cacheWrite"),
                cost_total=cost.get("total"),
                **s.membership(eid),
            )
            rows.append(row)
    df = _finish(rows, USAGE_COLUMNS, problems, strict)
    frame = df if strict else df[0]
    for col in ("input", "output", "cache_read", "cache_write", "total_tokens", "context_tokens"):
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("Int64")
    return df


COMPACTION_COLUMNS = (
    "session_id",
    "session_file",
    "entry_id",
    "parent_id",
    "timestamp",
    "tokens_before",
    "first_kept_entry_id",
    "summary",
    "summary_chars",
    "summary_estimate_tokens",
    "estimate_tokens_after",
    "read_files",
    "modified_files",
    "from_hook",
    "usage_total_tokens",
    "on_active_branch",
    "in_context",
)


def compactions_df(source: SessionSource, *, strict: bool = True) -> Any:
    """One row per ``compaction`` entry: ``tokens_before`` (Pi's estimate when it compacted),
    ``first_kept_entry_id``, the summary, ``estimate_tokens_after`` (Pi's ``estimatedTokensAfter``:
    the sum of ``estimateTokens`` over the context rebuilt at the compaction), the file lists
    from ``details`` (as JSON arrays), ``from_hook`` and the summarising call's total tokens."""
    sessions, problems = iter_sessions(source, strict=strict)
    rows: list[dict[str, Any]] = []
    for s in sessions:
        for e in s.entries:
            if e.get("type") != "compaction":
                continue
            eid = str(e.get("id"))
            after = build_session_context(s.entries, eid).messages
            details = _mapping(e.get("details"))
            usage = _mapping(e.get("usage"))
            raw_summary = e.get("summary")
            summary = raw_summary if isinstance(raw_summary, str) else ""
            row = s.base(e)
            row.update(
                tokens_before=e.get("tokensBefore"),
                first_kept_entry_id=e.get("firstKeptEntryId"),
                summary=summary,
                summary_chars=len(summary),
                summary_estimate_tokens=sum(estimate_tokens(m) for m in session_entry_to_context_messages(e)),
                estimate_tokens_after=sum(estimate_tokens(m) for m in after),
                read_files=json.dumps(details.get("readFiles")) if "readFiles" in details else None,
                modified_files=json.dumps(details.get("modifiedFiles"))
                if "modifiedFiles" in details
                else None,
                from_hook=e.get("fromHook"),
                usage_total_tokens=usage.get("totalTokens"),
                **s.membership(eid),
            )
            rows.append(row)
    return _finish(rows, COMPACTION_COLUMNS, problems, strict)
