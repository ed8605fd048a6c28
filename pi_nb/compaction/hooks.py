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
Pi's camelCase keys.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pi_nb.compaction.preparation import CompactionPreparation
from pi_nb.compaction.summaries import CompactionResult
from pi_nb.errors import CompactionError
from pi_nb.providers.base import SupportsAbort

__all__ = [
    "CompactionReason",
    "HookError",
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

CompactionReason = Literal["manual", "threshold", "overflow"]

HookHandler = Callable[[Any], Any]
"""``handler(event)`` -> ``None``, a result (dataclass or camelCase dict), or an awaitable of one."""


@dataclass(frozen=True)
class SessionBeforeCompactEvent:
    """Pi's ``session_before_compact``: about to summarise ``preparation``."""

    preparation: CompactionPreparation
    branch_entries: list[Mapping[str, Any]]
    custom_instructions: str | None
    reason: CompactionReason
    will_retry: bool
    signal: SupportsAbort | None = None
    type: Literal["session_before_compact"] = "session_before_compact"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "preparation": self.preparation.to_dict(),
            "branchEntries": list(self.branch_entries),
        }
        if self.custom_instructions is not None:
            out["customInstructions"] = self.custom_instructions
        out["reason"] = self.reason
        out["willRetry"] = self.will_retry
        return out


@dataclass(frozen=True)
class SessionBeforeCompactResult:
    """``{cancel?, compaction?}``: cancel the compaction, or supply its result (``fromHook``)."""

    cancel: bool = False
    compaction: CompactionResult | None = None

    @classmethod
    def coerce(cls, value: Any) -> SessionBeforeCompactResult | None:
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

    compaction_entry: Mapping[str, Any]
    from_extension: bool
    reason: CompactionReason
    will_retry: bool
    type: Literal["session_compact"] = "session_compact"

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "compactionEntry": dict(self.compaction_entry),
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

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "reason": self.reason}
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        out["aborted"] = self.aborted
        out["willRetry"] = self.will_retry
        out["fromExtension"] = self.from_extension
        return out


@dataclass(frozen=True)
class TreePreparation:
    """Pi's ``TreePreparation``: what a tree navigation is about to do."""

    target_id: str
    old_leaf_id: str | None
    common_ancestor_id: str | None
    entries_to_summarize: list[Mapping[str, Any]]
    user_wants_summary: bool
    custom_instructions: str | None = None
    replace_instructions: bool | None = None
    label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
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

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "preparation": self.preparation.to_dict()}


@dataclass(frozen=True)
class TreeSummary:
    """A hook-supplied branch summary ``{summary, details?, usage?}``."""

    summary: str
    details: Any = None
    usage: dict[str, Any] | None = None

    @classmethod
    def coerce(cls, value: Any) -> TreeSummary:
        if isinstance(value, TreeSummary):
            return value
        if isinstance(value, Mapping) and isinstance(value.get("summary"), str):
            usage = value.get("usage")
            return cls(
                value["summary"], value.get("details"), dict(usage) if isinstance(usage, Mapping) else None
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

    def overrides(self) -> dict[str, Any]:
        """The overrides that were given, by snake_case name."""
        out: dict[str, Any] = {}
        for name in ("custom_instructions", "replace_instructions", "label"):
            value = getattr(self, name)
            if value is not _UNSET:
                out[name] = value
        return out

    @classmethod
    def coerce(cls, value: Any) -> SessionBeforeTreeResult | None:
        if value is None or isinstance(value, SessionBeforeTreeResult):
            return value
        if isinstance(value, Mapping):
            kwargs: dict[str, Any] = {"cancel": bool(value.get("cancel"))}
            if value.get("summary") is not None:
                kwargs["summary"] = TreeSummary.coerce(value["summary"])
            for camel, snake in (
                ("customInstructions", "custom_instructions"),
                ("replaceInstructions", "replace_instructions"),
                ("label", "label"),
            ):
                if camel in value:
                    kwargs[snake] = value[camel]
            return cls(**kwargs)
        raise CompactionError(f"session_before_tree handler returned {value!r}")


@dataclass(frozen=True)
class SessionTreeEvent:
    """Pi's ``session_tree``: the leaf moved (and maybe a summary entry was written)."""

    new_leaf_id: str | None
    old_leaf_id: str | None
    summary_entry: Mapping[str, Any] | None = None
    from_extension: bool | None = None
    type: Literal["session_tree"] = "session_tree"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "newLeafId": self.new_leaf_id,
            "oldLeafId": self.old_leaf_id,
        }
        if self.summary_entry is not None:
            out["summaryEntry"] = dict(self.summary_entry)
        if self.from_extension is not None:
            out["fromExtension"] = self.from_extension
        return out


@dataclass(frozen=True)
class HookError:
    """A handler that raised: reported, then skipped (Pi's ``emitError``)."""

    event: str
    handler: HookHandler
    error: BaseException

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.event, "error": str(self.error) or type(self.error).__name__}


_BEFORE_EVENTS = ("session_before_compact", "session_before_tree")
_RESULT_TYPES: dict[str, Any] = {
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

    async def emit(self, event: Any) -> Any:
        """Run the handlers of ``event.type``; return the winning result of a ``session_before_*`` event.

        Results are normalised to :class:`SessionBeforeCompactResult` /
        :class:`SessionBeforeTreeResult`; other events return ``None``.
        """
        event_type: str = event.type
        result: Any = None
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
