"""Hook points of compaction and tree navigation: Pi's extension events as Python callables.

Pi lets extensions intercept ``session_before_compact`` (cancel, or supply the compaction),
observe ``session_compact`` / ``session_compact_failed``, intercept ``session_before_tree``
(cancel, supply the branch summary, change the instructions or the label) and observe
``session_tree``. pi_nb keeps the event and result shapes (frozen dataclasses, snake_case fields,
``to_dict()`` with Pi's names) and replaces extensions by a :class:`HookRunner`: register handlers
with :meth:`HookRunner.on`, and the orchestration functions (``run_compaction``,
``navigate_tree``) emit the events.

Semantics follow Pi's ``ExtensionRunner.emit``: handlers run in registration order; for the
``session_before_*`` events the last handler that returns a result wins, and a result with
``cancel`` stops the chain at once; a handler that raises is reported (``on_error``) and skipped,
so a broken hook falls back to the default behaviour instead of failing the operation. A handler
may be a plain function or a coroutine function, and may return a result dataclass or a dict with
Pi's camelCase keys (:class:`~pi_nb.compaction._types.SessionBeforeCompactResultDict`,
:class:`~pi_nb.compaction._types.SessionBeforeTreeResultDict`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias, cast, overload

from pi_nb.compaction._types import (
    CompactionReason,
    HookErrorDict,
    SessionBeforeCompactEventDict,
    SessionBeforeTreeEventDict,
    SessionCompactEventDict,
    SessionCompactFailedEventDict,
    SessionTreeEventDict,
    TreeOverrides,
    TreePreparationDict,
)
from pi_nb.compaction.preparation import CompactionPreparation
from pi_nb.compaction.summaries import CompactionResult
from pi_nb.errors import CompactionError
from pi_nb.messages import Usage
from pi_nb.providers.base import SupportsAbort
from pi_nb.session.types import BranchSummaryEntry, CompactionEntry, SessionEntry

__all__ = [
    "CompactionReason",
    "HookError",
    "HookEvent",
    "HookRunner",
    "SessionBeforeCompactEvent",
    "SessionBeforeCompactResult",
    "SessionBeforeTreeEvent",
    "SessionBeforeTreeResult",
    "SessionCompactEvent",
    "SessionCompactFailedEvent",
    "SessionTreeEvent",
    "TreePreparation",
    "TreeSummary",
]

HookHandler = Callable[[Any], Any]
"""``handler(event)`` -> ``None``, a result (dataclass or camelCase dict), or an awaitable of one.

Open on both sides: a handler may be typed for the one event it is registered for (or, on a
session's hooks, for the plain-dict ``context`` events), and its return value is checked by the
result's ``coerce``."""


@dataclass(frozen=True)
class SessionBeforeCompactEvent:
    """Pi's ``session_before_compact``: about to summarise ``preparation``."""

    preparation: CompactionPreparation
    branch_entries: list[SessionEntry]
    custom_instructions: str | None
    reason: CompactionReason
    will_retry: bool
    signal: SupportsAbort | None = None
    type: Literal["session_before_compact"] = "session_before_compact"

    def to_dict(self) -> SessionBeforeCompactEventDict:
        if self.custom_instructions is None:
            return {
                "type": self.type,
                "preparation": self.preparation.to_dict(),
                "branchEntries": list(self.branch_entries),
                "reason": self.reason,
                "willRetry": self.will_retry,
            }
        return {
            "type": self.type,
            "preparation": self.preparation.to_dict(),
            "branchEntries": list(self.branch_entries),
            "customInstructions": self.custom_instructions,
            "reason": self.reason,
            "willRetry": self.will_retry,
        }


@dataclass(frozen=True)
class SessionBeforeCompactResult:
    """``{cancel?, compaction?}``: cancel the compaction, or supply its result (``fromHook``)."""

    cancel: bool = False
    compaction: CompactionResult | None = None

    @classmethod
    def coerce(cls, value: object) -> SessionBeforeCompactResult | None:
        """A handler's return value: ``None``, a result, or a
        :class:`~pi_nb.compaction._types.SessionBeforeCompactResultDict`; anything else raises."""
        if value is None or isinstance(value, SessionBeforeCompactResult):
            return value
        if isinstance(value, Mapping):
            comp = value.get("compaction")
            if comp is not None and not isinstance(comp, CompactionResult):
                if not isinstance(comp, Mapping):
                    raise CompactionError(
                        f"session_before_compact: 'compaction' must be a result, got {comp!r}"
                    )
                comp = CompactionResult.from_dict(comp)
            return cls(cancel=bool(value.get("cancel")), compaction=comp)
        raise CompactionError(f"session_before_compact handler returned {value!r}")


@dataclass(frozen=True)
class SessionCompactEvent:
    """Pi's ``session_compact``: the compaction entry was appended."""

    compaction_entry: CompactionEntry
    from_extension: bool
    reason: CompactionReason
    will_retry: bool
    type: Literal["session_compact"] = "session_compact"

    def to_dict(self) -> SessionCompactEventDict:
        return {
            "type": self.type,
            "compactionEntry": {**self.compaction_entry},
            "fromExtension": self.from_extension,
            "reason": self.reason,
            "willRetry": self.will_retry,
        }


@dataclass(frozen=True)
class SessionCompactFailedEvent:
    """Pi's ``session_compact_failed``: cancelled (``aborted``) or failed (``error_message``)."""

    reason: CompactionReason
    aborted: bool
    will_retry: bool
    from_extension: bool
    error_message: str | None = None
    type: Literal["session_compact_failed"] = "session_compact_failed"

    def to_dict(self) -> SessionCompactFailedEventDict:
        if self.error_message is None:
            return {
                "type": self.type,
                "reason": self.reason,
                "aborted": self.aborted,
                "willRetry": self.will_retry,
                "fromExtension": self.from_extension,
            }
        return {
            "type": self.type,
            "reason": self.reason,
            "errorMessage": self.error_message,
            "aborted": self.aborted,
            "willRetry": self.will_retry,
            "fromExtension": self.from_extension,
        }


@dataclass(frozen=True)
class TreePreparation:
    """Pi's ``TreePreparation``: what a tree navigation is about to do."""

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[SessionEntry]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None

    def to_dict(self) -> TreePreparationDict:
        out: TreePreparationDict = {
            "targetId": self.target_id,
            "oldLeafId": self.old_leaf_id,
            "commonAncestorId": self.common_ancestor_id,
            "entriesToSummarize": list(self.entries_to_summarize),
            "userWantsSummary": self.user_wants_summary,
        }
        if self.custom_instructions is not None:
            out["customInstructions"] = self.custom_instructions
        if self.replace_instructions is not None:
            out["replaceInstructions"] = self.replace_instructions
        if self.label is not None:
            out["label"] = self.label
        return out


@dataclass(frozen=True)
class SessionBeforeTreeEvent:
    """Pi's ``session_before_tree {preparation, signal}``."""

    preparation: TreePreparation
    signal: SupportsAbort | None = None
    type: Literal["session_before_tree"] = "session_before_tree"

    def to_dict(self) -> SessionBeforeTreeEventDict:
        return {"type": self.type, "preparation": self.preparation.to_dict()}


@dataclass(frozen=True)
class TreeSummary:
    """A hook-supplied branch summary ``{summary, details?, usage?}``."""

    summary: str
    details: Any = None  # the hook's own data (open JSON), written to the entry as given
    usage: Usage | None = None

    @classmethod
    def coerce(cls, value: object) -> TreeSummary:
        """A summary, or a :class:`~pi_nb.compaction._types.TreeSummaryDict`; anything else raises."""
        if isinstance(value, TreeSummary):
            return value
        if isinstance(value, Mapping) and isinstance(value.get("summary"), str):
            usage = value.get("usage")
            return cls(
                value["summary"],
                value.get("details"),
                # a hook's usage is taken as given once it is an object (Pi does not check it either)
                cast(Usage, dict(usage)) if isinstance(usage, Mapping) else None,
            )
        raise CompactionError(
            f"session_before_tree: 'summary' must be {{summary, details?, usage?}}, got {value!r}"
        )


_UNSET: Any = object()


@dataclass(frozen=True)
class SessionBeforeTreeResult:
    """``{cancel?, summary?, customInstructions?, replaceInstructions?, label?}``.

    The three overrides apply only when given (a field left at its default changes nothing);
    ``summary`` is used only when the user asked for a summary.
    """

    cancel: bool = False
    summary: TreeSummary | None = None
    custom_instructions: Any = field(default=_UNSET)
    replace_instructions: Any = field(default=_UNSET)
    label: Any = field(default=_UNSET)

    def overrides(self) -> TreeOverrides:
        """The overrides that were given, by snake_case name."""
        out: TreeOverrides = {}
        if self.custom_instructions is not _UNSET:
            out["custom_instructions"] = self.custom_instructions
        if self.replace_instructions is not _UNSET:
            out["replace_instructions"] = self.replace_instructions
        if self.label is not _UNSET:
            out["label"] = self.label
        return out

    @classmethod
    def coerce(cls, value: object) -> SessionBeforeTreeResult | None:
        """A handler's return value: ``None``, a result, or a
        :class:`~pi_nb.compaction._types.SessionBeforeTreeResultDict`; anything else raises."""
        if value is None or isinstance(value, SessionBeforeTreeResult):
            return value
        if isinstance(value, Mapping):
            cancel = bool(value.get("cancel"))
            summary = TreeSummary.coerce(value["summary"]) if value.get("summary") is not None else None
            # an override the hook left out stays unset; one it gave is passed on as given
            return cls(
                cancel=cancel,
                summary=summary,
                custom_instructions=value.get("customInstructions", _UNSET),
                replace_instructions=value.get("replaceInstructions", _UNSET),
                label=value.get("label", _UNSET),
            )
        raise CompactionError(f"session_before_tree handler returned {value!r}")


@dataclass(frozen=True)
class SessionTreeEvent:
    """Pi's ``session_tree``: the leaf moved (and maybe a summary entry was written)."""

    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: BranchSummaryEntry | None = None
    from_extension: bool | None = None
    type: Literal["session_tree"] = "session_tree"

    def to_dict(self) -> SessionTreeEventDict:
        out: SessionTreeEventDict = {
            "type": self.type,
            "newLeafId": self.new_leaf_id,
            "oldLeafId": self.old_leaf_id,
        }
        if self.summary_entry is not None:
            out["summaryEntry"] = {**self.summary_entry}
        if self.from_extension is not None:
            out["fromExtension"] = self.from_extension
        return out


@dataclass(frozen=True)
class HookError:
    """A handler that raised: reported, then skipped (Pi's ``emitError``)."""

    event: str
    handler: HookHandler
    error: BaseException

    def to_dict(self) -> HookErrorDict:
        return {"event": self.event, "error": str(self.error) or type(self.error).__name__}


HookEvent: TypeAlias = (
    SessionBeforeCompactEvent
    | SessionCompactEvent
    | SessionCompactFailedEvent
    | SessionBeforeTreeEvent
    | SessionTreeEvent
)
"""The events :meth:`HookRunner.emit` runs handlers for."""

_BEFORE_EVENTS = ("session_before_compact", "session_before_tree")
_RESULT_TYPES: dict[str, type[SessionBeforeCompactResult] | type[SessionBeforeTreeResult]] = {
    "session_before_compact": SessionBeforeCompactResult,
    "session_before_tree": SessionBeforeTreeResult,
}


class HookRunner:
    """A registry of hook handlers by event type, emitting with Pi's extension-runner semantics.

    ``hooks.on("session_before_compact", lambda event: {"cancel": True})`` cancels every
    compaction; ``hooks.errors`` lists the handlers that raised (each also goes to ``on_error``).
    """

    EVENT_TYPES: ClassVar[tuple[str, ...]] = (
        "session_before_compact",
        "session_compact",
        "session_compact_failed",
        "session_before_tree",
        "session_tree",
    )

    def __init__(self, on_error: Callable[[HookError], Any] | None = None) -> None:
        self._handlers: dict[str, list[HookHandler]] = {}
        self.errors: list[HookError] = []
        self._on_error = on_error

    def on(self, event_type: str, handler: HookHandler) -> HookHandler:
        """Register ``handler`` for ``event_type``; returns it (usable as a decorator factory arg)."""
        if event_type not in self.EVENT_TYPES:
            raise CompactionError(f"unknown hook event {event_type!r}; known: {', '.join(self.EVENT_TYPES)}")
        if not callable(handler):
            raise CompactionError(f"hook handler for {event_type!r} is not callable: {handler!r}")
        self._handlers.setdefault(event_type, []).append(handler)
        return handler

    def off(self, event_type: str, handler: HookHandler) -> None:
        """Unregister a handler (no error if it was not registered)."""
        handlers = self._handlers.get(event_type, [])
        if handler in handlers:
            handlers.remove(handler)

    def has_handlers(self, event_type: str) -> bool:
        return bool(self._handlers.get(event_type))

    def handlers(self, event_type: str) -> Sequence[HookHandler]:
        return tuple(self._handlers.get(event_type, ()))

    @overload
    async def emit(self, event: SessionBeforeCompactEvent) -> SessionBeforeCompactResult | None: ...

    @overload
    async def emit(self, event: SessionBeforeTreeEvent) -> SessionBeforeTreeResult | None: ...

    @overload
    async def emit(
        self, event: SessionCompactEvent | SessionCompactFailedEvent | SessionTreeEvent
    ) -> None: ...

    async def emit(self, event: HookEvent) -> SessionBeforeCompactResult | SessionBeforeTreeResult | None:
        """Run the handlers of ``event.type``; return the winning result of a ``session_before_*`` event.

        Results are normalised to :class:`SessionBeforeCompactResult` /
        :class:`SessionBeforeTreeResult`; other events return ``None``.
        """
        event_type: str = event.type
        result: SessionBeforeCompactResult | SessionBeforeTreeResult | None = None
        for handler in self.handlers(event_type):
            try:
                value = handler(event)
                if inspect.isawaitable(value):
                    value = await value
                if event_type in _BEFORE_EVENTS and value:
                    result = _RESULT_TYPES[event_type].coerce(value)
                    if result is not None and result.cancel:
                        return result
            except Exception as exc:  # a broken hook is reported and skipped, as in Pi
                err = HookError(event_type, handler, exc)
                self.errors.append(err)
                if self._on_error is not None:
                    self._on_error(err)
        return result
