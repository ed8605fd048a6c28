"""The session file's header and entry shapes (Pi 0.85.0 ``core/session-manager.ts``), as TypedDicts.

A session file is JSONL: the first line is a :class:`SessionHeader`, every other line one entry.
Every entry has ``type``, ``id`` (8 hex chars), ``parentId`` (``None`` for a root) and ``timestamp``
(an ISO string such as ``2026-01-01T00:00:00.000Z``).

Key order matters for byte-identical files: Pi builds each entry as an object literal and writes it
with ``JSON.stringify``, so the keys come out in literal order, and keys whose value is
``undefined`` are left out. The field order of each TypedDict below is that order, and
:data:`ENTRY_KEY_ORDER` spells it out per type. Two types put the common fields *last*:
``custom`` (``type, customType, data, id, parentId, timestamp``) and ``custom_message``
(``type, customType, content, display, details, id, parentId, timestamp``).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from pi_nb.messages import AgentMessage, ImageContent, TextContent, Usage

__all__ = [
    "ENTRY_KEY_ORDER",
    "BranchSummaryEntry",
    "CompactionEntry",
    "CustomEntry",
    "CustomMessageEntry",
    "FileEntry",
    "LabelEntry",
    "ModelChangeEntry",
    "SessionEntry",
    "SessionHeader",
    "SessionInfoEntry",
    "SessionMessageEntry",
    "ThinkingLevelChangeEntry",
]


class SessionHeader(TypedDict):
    """First line: ``{type: "session", version?, id, timestamp, cwd, parentSession?}``.

    ``version`` is absent in v1 files (current: 3); ``parentSession`` is the source file of a fork.
    """

    type: Literal["session"]
    version: NotRequired[int]
    id: str
    timestamp: str
    cwd: str
    parentSession: NotRequired[str]


class SessionMessageEntry(TypedDict):
    """``{type: "message", id, parentId, timestamp, message}``; the message is any agent message
    (``user``, ``assistant``, ``toolResult``, ``bashExecution``, rarely ``custom``)."""

    type: Literal["message"]
    id: str
    parentId: str | None
    timestamp: str
    message: AgentMessage


class ThinkingLevelChangeEntry(TypedDict):
    """``{type: "thinking_level_change", id, parentId, timestamp, thinkingLevel}``."""

    type: Literal["thinking_level_change"]
    id: str
    parentId: str | None
    timestamp: str
    thinkingLevel: str


class ModelChangeEntry(TypedDict):
    """``{type: "model_change", id, parentId, timestamp, provider, modelId}``."""

    type: Literal["model_change"]
    id: str
    parentId: str | None
    timestamp: str
    provider: str
    modelId: str


class CompactionEntry(TypedDict):
    """``{type: "compaction", id, parentId, timestamp, summary, firstKeptEntryId, tokensBefore,
    details?, usage?, fromHook?}``.

    In context it becomes a ``compactionSummary`` message; the entries before ``firstKeptEntryId``
    on the path are left out of the context.
    """

    type: Literal["compaction"]
    id: str
    parentId: str | None
    timestamp: str
    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    details: NotRequired[Any]
    usage: NotRequired[Usage]
    fromHook: NotRequired[bool]


class BranchSummaryEntry(TypedDict):
    """``{type: "branch_summary", id, parentId, timestamp, fromId, summary, details?, usage?, fromHook?}``.

    ``fromId`` is the leaf before the branch was taken (``"root"`` if there was none). Only a
    non-empty ``summary`` produces a ``branchSummary`` message in context.
    """

    type: Literal["branch_summary"]
    id: str
    parentId: str | None
    timestamp: str
    fromId: str
    summary: str
    details: NotRequired[Any]
    usage: NotRequired[Usage]
    fromHook: NotRequired[bool]


class CustomEntry(TypedDict):
    """Extension state, never in context: ``{type: "custom", customType, data?, id, parentId, timestamp}``."""

    type: Literal["custom"]
    customType: str
    data: NotRequired[Any]
    id: str
    parentId: str | None
    timestamp: str


class CustomMessageEntry(TypedDict):
    """An extension message that *is* in context (as a ``custom`` message):
    ``{type: "custom_message", customType, content, display, details?, id, parentId, timestamp}``."""

    type: Literal["custom_message"]
    customType: str
    content: str | list[TextContent | ImageContent]
    display: bool
    details: NotRequired[Any]
    id: str
    parentId: str | None
    timestamp: str


class LabelEntry(TypedDict):
    """``{type: "label", id, parentId, timestamp, targetId, label?}``; an absent label clears it."""

    type: Literal["label"]
    id: str
    parentId: str | None
    timestamp: str
    targetId: str
    label: NotRequired[str]


class SessionInfoEntry(TypedDict):
    """``{type: "session_info", id, parentId, timestamp, name?}`` (the display name)."""

    type: Literal["session_info"]
    id: str
    parentId: str | None
    timestamp: str
    name: NotRequired[str]


SessionEntry: TypeAlias = (
    SessionMessageEntry
    | ThinkingLevelChangeEntry
    | ModelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
)
FileEntry: TypeAlias = SessionHeader | SessionEntry

#: Key order of the header and of each entry type as Pi 0.85 writes them (JSON.stringify of the
#: object literal; optional keys are left out when undefined, without changing the others' order).
ENTRY_KEY_ORDER: dict[str, tuple[str, ...]] = {
    "session": ("type", "version", "id", "timestamp", "cwd", "parentSession"),
    "message": ("type", "id", "parentId", "timestamp", "message"),
    "thinking_level_change": ("type", "id", "parentId", "timestamp", "thinkingLevel"),
    "model_change": ("type", "id", "parentId", "timestamp", "provider", "modelId"),
    "compaction": (
        "type",
        "id",
        "parentId",
        "timestamp",
        "summary",
        "firstKeptEntryId",
        "tokensBefore",
        "details",
        "usage",
        "fromHook",
    ),
    "branch_summary": (
        "type",
        "id",
        "parentId",
        "timestamp",
        "fromId",
        "summary",
        "details",
        "usage",
        "fromHook",
    ),
    "custom": ("type", "customType", "data", "id", "parentId", "timestamp"),
    "custom_message": ("type", "customType", "content", "display", "details", "id", "parentId", "timestamp"),
    "label": ("type", "id", "parentId", "timestamp", "targetId", "label"),
    "session_info": ("type", "id", "parentId", "timestamp", "name"),
}
