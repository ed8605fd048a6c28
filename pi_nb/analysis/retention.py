"""What a compaction keeps: the artifacts of the summarised span and where each one survives.

A compaction replaces the older part of a path with a summary. This module lists the
*artifacts* of that dropped span (the things a later turn may need) and says, for each, whether
the model still sees it afterwards: in the kept messages (``"kept"``), only in the summary text
(``"summary"``), or nowhere (``"none"``).

The spans, as Pi's ``prepareCompaction`` cuts them (a compaction entry ``C`` on its path):

* **dropped**: the path entries from the previous compaction's kept boundary (its
  ``firstKeptEntryId``; the start of the path when there is none) up to ``C.firstKeptEntryId``,
  without compaction entries. A split turn's prefix is in it (Pi summarises it too).
* **kept**: what the model sees right after ``C`` besides the summary: the messages of Pi's
  context rebuilt at ``C`` (``buildContextEntries``), ``C`` itself left out.
* **summary**: ``C``'s summary text, with its ``<read-files>`` / ``<modified-files>`` lists.

The artifacts of a message (the extraction rule):

=================  =============================================================================
kind               what is taken
=================  =============================================================================
``file_read``      ``arguments.path`` of an assistant's ``read`` call
``file_modified``  ``arguments.path`` of a ``write`` or ``edit`` call
``command``        ``arguments.command`` of a ``bash`` call; a user ``!`` command (bashExecution)
``identifier``     in tool results, bash output and user text: a word of ``[A-Za-z_][A-Za-z0-9_]*``,
                   3 to 64 characters, that is snake_case (an ``_`` between two other
                   characters), a dunder (``__init__``), camelCase (a lower-case letter followed by an upper-case one)
                   or directly followed by ``(`` (a call)
``error``          a tool result with ``isError`` (its first non-empty line), an assistant
                   message with ``stopReason: "error"`` (its ``errorMessage``), and in any tool
                   output the exception line of a Python ``Traceback`` (``Name: message``)
``instruction``    the text of a user message (whitespace collapsed)
=================  =============================================================================

Each artifact is listed once per span (the first entry it appears in). How survival is tested
(``"kept"`` wins when both hold):

* files, commands, and in the kept text also instructions and errors: the value, whitespace
  collapsed, is a substring of the text (verbatim);
* identifiers: the identifier is a whole word of the text (the extraction's word rule);
* instructions and errors in the summary (which paraphrases): at least :data:`WORD_SHARE` of
  their distinct words of 4 or more letters or digits (lower-cased) are words of the summary;
  a value without such words must appear whole.

The kept text is every message's searchable text: text blocks, thinking, tool-call names and
every string of the arguments, tool results, a bash execution's command and output, summaries.
Rows of the kept span are listed too (``span="kept"``): each of them survives as ``"kept"``,
which checks that extraction and matching agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from pi_nb.analysis.columns import Column
from pi_nb.analysis.extract import content_text, entry_id, is_map
from pi_nb.session.context import (
    context_entries_from_path,
    get_branch_entries,
    session_entry_to_context_messages,
)
from pi_nb.session.types import SessionEntry

__all__ = [
    "ARTIFACT_KINDS",
    "RETENTION_COLUMNS",
    "RETENTION_SUMMARY_COLUMNS",
    "WORD_SHARE",
    "Artifact",
    "CompactionRetention",
    "RetentionRow",
    "compaction_retention",
    "extract_identifiers",
    "message_artifacts",
    "message_search_text",
    "replay_retention",
    "retention_rows",
    "retention_summary_rows",
    "session_retention",
]

ArtifactKind = Literal["file_read", "file_modified", "command", "identifier", "error", "instruction"]
SurvivedIn = Literal["summary", "kept", "none"]

ARTIFACT_KINDS: Final[tuple[ArtifactKind, ...]] = (
    "file_read",
    "file_modified",
    "command",
    "identifier",
    "error",
    "instruction",
)
WORD_SHARE: Final = 0.6
"""The share of an instruction's or error's words that must be in a text for it to survive."""

_WORD = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[a-z][A-Z]")
_LONG_WORD = re.compile(r"[^\W_]{4,}")
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt)\b.*)$", re.M)


@dataclass(frozen=True)
class Artifact:
    """One artifact of a message: its ``kind`` and ``value`` (see the module docstring)."""

    kind: ArtifactKind
    value: str


# ---------------------------------------------------------------------------------------------
# extraction


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _is_identifier(word: str, text: str, end: int) -> bool:
    if not 3 <= len(word) <= 64:
        return False
    inner = word.strip("_")
    if "_" in inner or (word.startswith("__") and word.endswith("__") and inner):
        return True
    if _CAMEL.search(word):
        return True
    return end < len(text) and text[end] == "("


def extract_identifiers(text: str) -> list[str]:
    """The code identifiers of ``text`` (the rule of the module docstring), first use first."""
    seen: dict[str, None] = {}
    for m in _WORD.finditer(text):
        word = m.group()
        if word not in seen and _is_identifier(word, text, m.end()):
            seen[word] = None
    return list(seen)


def _first_line(text: str, limit: int = 200) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def _traceback_errors(text: str) -> list[str]:
    out: list[str] = []
    start = text.find(_TRACEBACK)
    while start >= 0:
        m = _EXCEPTION_LINE.search(text, start + len(_TRACEBACK))
        if m is None:
            break
        out.append(m.group(1).strip()[:200])
        start = text.find(_TRACEBACK, m.end())
    return out


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (keys left out)."""
    if isinstance(value, str):
        yield value
    elif is_map(value):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _tool_calls(message: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    content = message.get("content")
    if not isinstance(content, list):
        return
    for b in content:
        if is_map(b) and b.get("type") == "toolCall":
            args = b.get("arguments")
            yield str(b.get("name")), args if is_map(args) else {}


def _output_artifacts(text: str) -> list[Artifact]:
    return [Artifact("identifier", w) for w in extract_identifiers(text)] + [
        Artifact("error", e) for e in _traceback_errors(text)
    ]


def message_artifacts(message: Mapping[str, Any]) -> list[Artifact]:
    """The artifacts of one context message (any role; a role without artifacts gives ``[]``)."""
    role = message.get("role")
    out: list[Artifact] = []
    if role == "assistant":
        for name, args in _tool_calls(message):
            path, command = args.get("path"), args.get("command")
            if name == "read" and isinstance(path, str) and path:
                out.append(Artifact("file_read", path))
            elif name in ("write", "edit") and isinstance(path, str) and path:
                out.append(Artifact("file_modified", path))
            elif name == "bash" and isinstance(command, str) and command.strip():
                out.append(Artifact("command", _collapse(command)))
        if message.get("stopReason") == "error":
            err = message.get("errorMessage")
            line = _first_line(err) if isinstance(err, str) else ""
            out.append(Artifact("error", line or "error"))
    elif role == "toolResult":
        text = content_text(message.get("content"))
        if message.get("isError") is True:
            line = _first_line(text)
            if line:
                out.append(Artifact("error", line))
        out.extend(_output_artifacts(text))
    elif role == "bashExecution":
        command = message.get("command")
        if isinstance(command, str) and command.strip():
            out.append(Artifact("command", _collapse(command)))
        output = message.get("output")
        if isinstance(output, str):
            out.extend(_output_artifacts(output))
    elif role == "user":
        text = content_text(message.get("content"))
        if text.strip():
            out.append(Artifact("instruction", _collapse(text)))
            out.extend(Artifact("identifier", w) for w in extract_identifiers(text))
    return out


def message_search_text(message: Mapping[str, Any]) -> str:
    """Everything of a message the model reads, as one text (see the module docstring)."""
    role = message.get("role")
    parts: list[str] = []
    if role == "assistant":
        content = message.get("content")
        if isinstance(content, list):
            for b in content:
                if not is_map(b):
                    continue
                if b.get("type") == "text" and isinstance(b.get("text"), str):
                    parts.append(b["text"])
                elif b.get("type") == "thinking" and isinstance(b.get("thinking"), str):
                    parts.append(b["thinking"])
                elif b.get("type") == "toolCall":
                    parts.append(str(b.get("name")))
                    parts.extend(_strings(b.get("arguments")))
        err = message.get("errorMessage")
        if isinstance(err, str):
            parts.append(err)
    elif role == "bashExecution":
        parts.extend(str(message.get(k) or "") for k in ("command", "output"))
    elif role in ("compactionSummary", "branchSummary"):
        parts.append(str(message.get("summary") or ""))
    else:
        parts.append(content_text(message.get("content")))
    return "\n".join(parts)


class _Target:
    """A text artifacts are looked for in, with its word sets computed once."""

    def __init__(self, text: str) -> None:
        self.collapsed = _collapse(text)
        self.words = {m.group() for m in _WORD.finditer(text)}
        self.long_words = set(_LONG_WORD.findall(text.lower()))

    def has(self, a: Artifact, fuzzy: bool = False) -> bool:
        if a.kind == "identifier":
            return a.value in self.words
        if fuzzy and a.kind in ("instruction", "error"):
            words = set(_LONG_WORD.findall(a.value.lower()))
            if words:
                return len(words & self.long_words) >= WORD_SHARE * len(words)
        return _collapse(a.value) in self.collapsed


# ---------------------------------------------------------------------------------------------
# one compaction


@dataclass(frozen=True)
class RetentionRow:
    """One artifact of one compaction: where it came from and where it survives."""

    compaction_id: str | None
    span: Literal["dropped", "kept"]
    entry_id: str | None
    kind: ArtifactKind
    value: str
    survived_in: SurvivedIn


@dataclass(frozen=True)
class CompactionRetention:
    """The artifacts of one compaction (``rows``) and the texts they were looked for in."""

    compaction_id: str | None
    first_kept_entry_id: str | None
    dropped_entries: int
    kept_entries: int
    summary_chars: int
    rows: tuple[RetentionRow, ...]

    def counts(self) -> dict[str, dict[str, int]]:
        """``{kind: {"artifacts", "summary", "kept", "none"}}`` over the dropped span."""
        out: dict[str, dict[str, int]] = {
            k: {"artifacts": 0, "summary": 0, "kept": 0, "none": 0} for k in ARTIFACT_KINDS
        }
        for r in self.rows:
            if r.span == "dropped":
                out[r.kind]["artifacts"] += 1
                out[r.kind][r.survived_in] += 1
        return out


def _span_artifacts(entries: Iterable[SessionEntry]) -> list[tuple[str | None, Artifact]]:
    seen: set[Artifact] = set()
    out: list[tuple[str | None, Artifact]] = []
    for e in entries:
        if e.get("type") == "compaction":
            continue
        for m in session_entry_to_context_messages(e):
            for a in message_artifacts(m):
                if a not in seen:
                    seen.add(a)
                    out.append((entry_id(e), a))
    return out


def _index_of(path: Sequence[SessionEntry], wanted: Any, stop: int) -> int:
    for i in range(stop):
        if "id" in path[i] and wanted is not None and path[i].get("id") == wanted:
            return i
    return -1


def compaction_retention(path: Sequence[SessionEntry]) -> CompactionRetention:
    """The retention of the compaction that ends ``path`` (a root -> compaction entry path)."""
    path = list(path)
    if not path or path[-1].get("type") != "compaction":
        raise ValueError("the path must end with a compaction entry")
    comp = path[-1]
    c_idx = len(path) - 1
    start = 0
    for i in range(c_idx - 1, -1, -1):
        if path[i].get("type") == "compaction":
            found = _index_of(path, path[i].get("firstKeptEntryId"), c_idx)
            start = found if found >= 0 else i + 1
            break
    kept_idx = _index_of(path, comp.get("firstKeptEntryId"), c_idx)
    dropped_end = kept_idx if kept_idx >= start else c_idx
    dropped = path[start:dropped_end]
    kept = [e for e in context_entries_from_path(path) if e is not comp]
    raw_summary = comp.get("summary")
    summary = raw_summary if isinstance(raw_summary, str) else ""
    kept_messages = [m for e in kept for m in session_entry_to_context_messages(e)]
    in_kept = _Target("\n".join(message_search_text(m) for m in kept_messages))
    in_summary = _Target(summary)
    cid = entry_id(comp)
    rows: list[RetentionRow] = []
    for span, entries in (("dropped", dropped), ("kept", kept)):
        for eid, a in _span_artifacts(entries):
            where: SurvivedIn = (
                "kept" if in_kept.has(a) else "summary" if in_summary.has(a, fuzzy=True) else "none"
            )
            rows.append(RetentionRow(cid, span, eid, a.kind, a.value, where))  # type: ignore[arg-type]
    fk = comp.get("firstKeptEntryId")
    return CompactionRetention(
        cid,
        fk if isinstance(fk, str) else None,
        sum(1 for e in dropped if e.get("type") != "compaction"),
        len(kept),
        len(summary),
        tuple(rows),
    )


def session_retention(entries: Sequence[SessionEntry]) -> list[CompactionRetention]:
    """The retention of every compaction entry of a session (file order), each on its own path."""
    out: list[CompactionRetention] = []
    for e in entries:
        if e.get("type") == "compaction" and e.get("id") is not None:
            path = get_branch_entries(entries, str(e.get("id")))
            if path and path[-1] is e:
                out.append(compaction_retention(path))
    return out


def replay_retention(result: Any) -> list[CompactionRetention]:
    """The retention of every compaction a what-if replay made (``result``: a
    :class:`~pi_nb.what_if.ReplayResult`; its ``entries`` are the simulated path, each
    compaction's ``entry`` one of them)."""
    entries = list(result.entries)
    out: list[CompactionRetention] = []
    for c in result.compactions:
        idx = next((i for i, e in enumerate(entries) if e is c.entry), -1)
        if idx < 0:
            idx = next((i for i, e in enumerate(entries) if e.get("id") == c.id), -1)
        if idx >= 0:
            out.append(compaction_retention(entries[: idx + 1]))
    return out


# ---------------------------------------------------------------------------------------------
# frame rows


@dataclass(frozen=True)
class _Ctx:
    session_id: str | None
    session_file: str | None
    policy: str | None
    simulated: bool
    index: int
    c: CompactionRetention
    r: RetentionRow | None = None
    kind: str | None = None


RETENTION_COLUMNS: tuple[Column, ...] = (
    Column("session_id", "string", lambda x: x.session_id),
    Column("session_file", "string", lambda x: x.session_file),
    Column("policy", "string", lambda x: x.policy),
    Column("simulated", "boolean", lambda x: x.simulated),
    Column("compaction_index", "Int64", lambda x: x.index),
    Column("compaction_id", "string", lambda x: x.c.compaction_id),
    Column("span", "string", lambda x: x.r.span),
    Column("entry_id", "string", lambda x: x.r.entry_id),
    Column("kind", "string", lambda x: x.r.kind),
    Column("value", "string", lambda x: x.r.value),
    Column("survived_in", "string", lambda x: x.r.survived_in),
)
"""The columns of ``retention_df``: one row per (compaction, artifact)."""


def _count(x: _Ctx, key: str) -> int:
    return x.c.counts()[str(x.kind)][key]


def _rate(x: _Ctx) -> float | None:
    n = _count(x, "artifacts")
    return (n - _count(x, "none")) / n if n else None


RETENTION_SUMMARY_COLUMNS: tuple[Column, ...] = (
    *RETENTION_COLUMNS[:6],
    Column("first_kept_entry_id", "string", lambda x: x.c.first_kept_entry_id),
    Column("dropped_entries", "Int64", lambda x: x.c.dropped_entries),
    Column("kept_entries", "Int64", lambda x: x.c.kept_entries),
    Column("summary_chars", "Int64", lambda x: x.c.summary_chars),
    Column("kind", "string", lambda x: x.kind),
    Column("artifacts", "Int64", lambda x: _count(x, "artifacts")),
    Column("in_kept", "Int64", lambda x: _count(x, "kept")),
    Column("in_summary", "Int64", lambda x: _count(x, "summary")),
    Column("lost", "Int64", lambda x: _count(x, "none")),
    Column("survival_rate", "Float64", _rate),
)
"""The columns of ``retention_summary_df``: one row per (compaction, artifact kind), over the
dropped span; ``survival_rate`` is (kept + summary) / artifacts (``<NA>`` without artifacts)."""

Labelled = tuple[str | None, str | None, str | None, bool, list[CompactionRetention]]
"""``(session id, session file, policy, simulated, retentions)``."""


def _contexts(groups: Iterable[Labelled], summary: bool) -> Iterator[_Ctx]:
    for sid, sfile, policy, simulated, retentions in groups:
        for i, c in enumerate(retentions):
            if summary:
                for k in ARTIFACT_KINDS:
                    yield _Ctx(sid, sfile, policy, simulated, i, c, kind=k)
            else:
                for r in c.rows:
                    yield _Ctx(sid, sfile, policy, simulated, i, c, r)


def retention_rows(groups: Iterable[Labelled]) -> list[tuple[Any, ...]]:
    """The rows of ``retention_df`` (:data:`RETENTION_COLUMNS` order)."""
    getters = [c.value for c in RETENTION_COLUMNS]
    return [tuple(g(x) for g in getters) for x in _contexts(groups, False)]


def retention_summary_rows(groups: Iterable[Labelled]) -> list[tuple[Any, ...]]:
    """The rows of ``retention_summary_df`` (:data:`RETENTION_SUMMARY_COLUMNS` order)."""
    getters = [c.value for c in RETENTION_SUMMARY_COLUMNS]
    return [tuple(g(x) for g in getters) for x in _contexts(groups, True)]
