"""The JSON shapes of the compaction package, as TypedDicts.

Each value object of :mod:`pi_nb.compaction` is a frozen dataclass with snake_case fields whose
``to_dict()`` gives Pi's camelCase shape; the TypedDicts below name those shapes (``XDict`` for
the ``to_dict()`` of ``X``), the events the session-level flows emit (``compaction_start`` /
``compaction_end``), and the dicts a hook handler may return instead of a result dataclass.

As everywhere in pi_nb, the field order of a TypedDict is the key order of the dict at run time
(the order Pi's object literal has); ``NotRequired`` keys are left out when Pi's value is
``undefined``.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from pi_nb.messages import AgentMessage, Usage
from pi_nb.session.types import BranchSummaryEntry, CompactionEntry, SessionEntry

__all__ = [
    "BranchPreparationDict",
    "BranchSummaryResultDict",
    "BranchSummarySettingsDict",
    "CollectEntriesResultDict",
    "CompactionEndEvent",
    "CompactionOutcomeDict",
    "CompactionPreparationDict",
    "CompactionResultDict",
    "CompactionSettingsDict",
    "CompactionStartEvent",
    "CompactionStreamEvent",
    "CutPointResultDict",
    "FileListsDict",
    "FileOperationsDict",
    "HookErrorDict",
    "NavigateTreeResultDict",
    "RetrySettingsDict",
    "SessionBeforeCompactEventDict",
    "SessionBeforeCompactResultDict",
    "SessionBeforeTreeEventDict",
    "SessionBeforeTreeResultDict",
    "SessionCompactEventDict",
    "SessionCompactFailedEventDict",
    "SessionTreeEventDict",
    "SkipReason",
    "TreeOverrides",
    "TreePreparationDict",
    "TreeSummaryDict",
]

CompactionReason = Literal["manual", "threshold", "overflow"]
"""Why a compaction runs (exported by :mod:`pi_nb.compaction.hooks`)."""

SkipReason = Literal["no_model", "nothing_to_compact", "already_compacted"]
"""Why an automatic compaction was skipped (``CompactionOutcome.skip_reason``)."""

# ---------------------------------------------------------------------------------------------
# settings.py
# ---------------------------------------------------------------------------------------------


class CompactionSettingsDict(TypedDict):
    """:meth:`~pi_nb.compaction.settings.CompactionSettings.to_dict`: Pi's ``{enabled,
    reserveTokens, keepRecentTokens}``, plus pi_nb's ``maxAutoCompactionsPerPrompt`` when it is not
    the default."""

    enabled: bool
    reserveTokens: int
    keepRecentTokens: int
    maxAutoCompactionsPerPrompt: NotRequired[int]


class BranchSummarySettingsDict(TypedDict):
    """:meth:`~pi_nb.compaction.settings.BranchSummarySettings.to_dict`: ``{reserveTokens, skipPrompt}``."""

    reserveTokens: int
    skipPrompt: bool


class RetrySettingsDict(TypedDict):
    """:meth:`~pi_nb.compaction.settings.RetrySettings.to_dict`: ``{enabled, maxRetries, baseDelayMs}``."""

    enabled: bool
    maxRetries: int
    baseDelayMs: int


# ---------------------------------------------------------------------------------------------
# cut_points.py, serialization.py, preparation.py, summaries.py
# ---------------------------------------------------------------------------------------------


class CutPointResultDict(TypedDict):
    """:meth:`~pi_nb.compaction.cut_points.CutPointResult.to_dict`: ``{firstKeptEntryIndex,
    turnStartIndex, isSplitTurn}``."""

    firstKeptEntryIndex: int
    turnStartIndex: int
    isSplitTurn: bool


class FileOperationsDict(TypedDict):
    """:meth:`~pi_nb.compaction.serialization.FileOperations.to_dict`: the three sets as arrays,
    ``{read, written, edited}`` (insertion order)."""

    read: list[str]
    written: list[str]
    edited: list[str]


class FileListsDict(TypedDict):
    """``{readFiles, modifiedFiles}``: :meth:`~pi_nb.compaction.serialization.FileLists.to_dict`,
    and the ``details`` pi_nb writes on the compaction and branch-summary entries it summarises
    itself (Pi's ``CompactionDetails`` / ``BranchSummaryDetails``)."""

    readFiles: list[str]
    modifiedFiles: list[str]


class CompactionPreparationDict(TypedDict):
    """:meth:`~pi_nb.compaction.preparation.CompactionPreparation.to_dict`: Pi's
    ``CompactionPreparation`` (``previousSummary`` only after an earlier compaction)."""

    firstKeptEntryId: str
    messagesToSummarize: list[AgentMessage]
    turnPrefixMessages: list[AgentMessage]
    isSplitTurn: bool
    tokensBefore: int
    previousSummary: NotRequired[str]
    fileOps: FileOperationsDict
    settings: CompactionSettingsDict


class CompactionResultDict(TypedDict):
    """:meth:`~pi_nb.compaction.summaries.CompactionResult.to_dict`: Pi's ``CompactionResult``
    ``{summary, firstKeptEntryId, tokensBefore, estimatedTokensAfter?, usage?, details?}``.

    ``details`` is :class:`FileListsDict` for a summary pi_nb made; a hook's details are its own
    (open JSON, so only "an object" is known).
    """

    summary: str
    firstKeptEntryId: str
    tokensBefore: int
    estimatedTokensAfter: NotRequired[int]
    usage: NotRequired[Usage]
    details: NotRequired[dict[str, Any]]


# ---------------------------------------------------------------------------------------------
# branch_summary.py
# ---------------------------------------------------------------------------------------------


class CollectEntriesResultDict(TypedDict):
    """:meth:`~pi_nb.compaction.branch_summary.CollectEntriesResult.to_dict`: ``{entries,
    commonAncestorId}``."""

    entries: list[SessionEntry]
    commonAncestorId: str | None


class BranchPreparationDict(TypedDict):
    """:meth:`~pi_nb.compaction.branch_summary.BranchPreparation.to_dict`: ``{messages, fileOps,
    totalTokens}``."""

    messages: list[AgentMessage]
    fileOps: FileOperationsDict
    totalTokens: int


class BranchSummaryResultDict(TypedDict, total=False):
    """:meth:`~pi_nb.compaction.branch_summary.BranchSummaryResult.to_dict`: Pi's
    ``BranchSummaryResult {summary?, usage?, readFiles?, modifiedFiles?, aborted?, error?}``
    (only the keys that are set)."""

    summary: str
    usage: Usage
    readFiles: list[str]
    modifiedFiles: list[str]
    aborted: Literal[True]
    error: str


# ---------------------------------------------------------------------------------------------
# hooks.py: the events (to_dict), and what a handler may return as a dict
# ---------------------------------------------------------------------------------------------


class SessionBeforeCompactEventDict(TypedDict):
    """``session_before_compact``: ``{type, preparation, branchEntries, customInstructions?,
    reason, willRetry}`` (Pi's event without its ``signal``)."""

    type: Literal["session_before_compact"]
    preparation: CompactionPreparationDict
    branchEntries: list[SessionEntry]
    customInstructions: NotRequired[str]
    reason: CompactionReason
    willRetry: bool


class SessionCompactEventDict(TypedDict):
    """``session_compact``: ``{type, compactionEntry, fromExtension, reason, willRetry}``."""

    type: Literal["session_compact"]
    compactionEntry: CompactionEntry
    fromExtension: bool
    reason: CompactionReason
    willRetry: bool


class SessionCompactFailedEventDict(TypedDict):
    """``session_compact_failed``: ``{type, reason, errorMessage?, aborted, willRetry,
    fromExtension}``."""

    type: Literal["session_compact_failed"]
    reason: CompactionReason
    errorMessage: NotRequired[str]
    aborted: bool
    willRetry: bool
    fromExtension: bool


class TreePreparationDict(TypedDict):
    """:meth:`~pi_nb.compaction.hooks.TreePreparation.to_dict`: Pi's ``TreePreparation``."""

    targetId: str
    oldLeafId: str | None
    commonAncestorId: str | None
    entriesToSummarize: list[SessionEntry]
    userWantsSummary: bool
    customInstructions: NotRequired[str]
    replaceInstructions: NotRequired[bool]
    label: NotRequired[str]


class SessionBeforeTreeEventDict(TypedDict):
    """``session_before_tree``: ``{type, preparation}`` (Pi's event without its ``signal``)."""

    type: Literal["session_before_tree"]
    preparation: TreePreparationDict


class SessionTreeEventDict(TypedDict):
    """``session_tree``: ``{type, newLeafId, oldLeafId, summaryEntry?, fromExtension?}`` (Pi's
    ``SessionTreeEvent``; also what an ``AgentSession`` listener gets, as
    :data:`pi_nb.agent.types.SessionTreeEvent`).

    Pi leaves ``summaryEntry`` / ``fromExtension`` out when there is none; a ``None`` value is
    accepted too (the agent session's listener event still sends the keys with ``None``)."""

    type: Literal["session_tree"]
    newLeafId: str | None
    oldLeafId: str | None
    summaryEntry: NotRequired[BranchSummaryEntry | None]
    fromExtension: NotRequired[bool | None]


class HookErrorDict(TypedDict):
    """:meth:`~pi_nb.compaction.hooks.HookError.to_dict`: ``{event, error}`` (the error's text)."""

    event: str
    error: str


class SessionBeforeCompactResultDict(TypedDict, total=False):
    """What a ``session_before_compact`` handler may return as a dict: ``{cancel?, compaction?}``
    (read by :meth:`~pi_nb.compaction.hooks.SessionBeforeCompactResult.coerce`)."""

    cancel: bool
    compaction: CompactionResultDict


class TreeSummaryDict(TypedDict):
    """A hook-supplied branch summary as a dict: ``{summary, details?, usage?}`` (``details`` is the
    hook's own data: open JSON)."""

    summary: str
    details: NotRequired[Any]
    usage: NotRequired[Usage]


class SessionBeforeTreeResultDict(TypedDict, total=False):
    """What a ``session_before_tree`` handler may return as a dict: ``{cancel?, summary?,
    customInstructions?, replaceInstructions?, label?}`` (read by
    :meth:`~pi_nb.compaction.hooks.SessionBeforeTreeResult.coerce`)."""

    cancel: bool
    summary: TreeSummaryDict
    customInstructions: str | None
    replaceInstructions: bool | None
    label: str | None


class TreeOverrides(TypedDict, total=False):
    """:meth:`~pi_nb.compaction.hooks.SessionBeforeTreeResult.overrides`: the overrides a
    ``session_before_tree`` hook gave, by snake_case name (a hook's value is passed on as given)."""

    custom_instructions: str | None
    replace_instructions: bool | None
    label: str | None


# ---------------------------------------------------------------------------------------------
# orchestration.py
# ---------------------------------------------------------------------------------------------


class CompactionStartEvent(TypedDict):
    """The session stream's ``{type: "compaction_start", reason}``."""

    type: Literal["compaction_start"]
    reason: CompactionReason


class CompactionEndEvent(TypedDict):
    """The session stream's ``{type: "compaction_end", reason, result, aborted, willRetry,
    errorMessage?}`` (``result`` is ``None`` unless the compaction succeeded)."""

    type: Literal["compaction_end"]
    reason: CompactionReason
    result: CompactionResultDict | None
    aborted: bool
    willRetry: bool
    errorMessage: NotRequired[str]


CompactionStreamEvent: TypeAlias = CompactionStartEvent | CompactionEndEvent
"""What :func:`~pi_nb.compaction.orchestration.run_compaction` passes to its ``emit``."""


class CompactionOutcomeDict(TypedDict):
    """:meth:`~pi_nb.compaction.orchestration.CompactionOutcome.to_dict`: ``{reason, status,
    willRetry, result?, entry?, fromExtension, errorMessage?, skipReason?}``."""

    reason: CompactionReason
    status: Literal["compacted", "skipped", "cancelled", "failed"]
    willRetry: bool
    result: NotRequired[CompactionResultDict]
    entry: NotRequired[CompactionEntry]
    fromExtension: bool
    errorMessage: NotRequired[str]
    skipReason: NotRequired[SkipReason]


class NavigateTreeResultDict(TypedDict):
    """:meth:`~pi_nb.compaction.orchestration.NavigateTreeResult.to_dict`: Pi's ``{editorText?,
    cancelled, aborted?, summaryEntry?}``."""

    editorText: NotRequired[str]
    cancelled: bool
    aborted: NotRequired[Literal[True]]
    summaryEntry: NotRequired[BranchSummaryEntry]
