"""Session-level compaction and tree navigation: Pi's ``AgentSession`` flows as functions.

:func:`run_compaction` is ``AgentSession.compact()`` (reason ``"manual"``) and
``_runAutoCompaction()`` (``"threshold"`` / ``"overflow"``) minus the agent state;
:func:`navigate_tree` is ``AgentSession.navigateTree()`` minus the "still streaming" check. The
AgentSession (pi_nb.agent) wraps them: it holds the model, settings and hooks, checks that no run is
streaming, and copies ``outcome.context.messages`` into the agent state.

Manual and automatic compaction differ the way Pi's do:

* **manual**: every failure is raised (``NothingToCompactError`` with ``Already compacted`` /
  ``Nothing to compact (session too small)``, ``CompactionCancelledError("Compaction cancelled")``,
  ``SummarizationError``...), after ``compaction_end`` (``errorMessage: "Compaction failed: ..."``)
  and the ``session_compact_failed`` hook.
* **automatic**: nothing is raised for an expected outcome. Nothing to compact (or no model) is a
  silent ``"skipped"`` (no events); a cancel is ``"cancelled"``; an error is ``"failed"`` with
  ``Auto-compaction failed: ...`` or, for an overflow, ``Context overflow recovery failed: ...``.

Events for the AgentSession's own stream (``compaction_start``, ``compaction_end``) go to ``emit``
as dicts with Pi's shapes; hook events go to the :class:`~pi_nb.compaction.hooks.HookRunner`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict, cast

from pi_nb._js import UNDEFINED
from pi_nb.compaction._types import (
    CompactionEndEvent,
    CompactionOutcomeDict,
    CompactionResultDict,
    CompactionStreamEvent,
    FileListsDict,
    NavigateTreeResultDict,
    SkipReason,
)
from pi_nb.compaction.branch_summary import collect_entries_for_branch_summary, generate_branch_summary
from pi_nb.compaction.hooks import (
    CompactionReason,
    HookRunner,
    SessionBeforeCompactEvent,
    SessionBeforeCompactResult,
    SessionBeforeTreeEvent,
    SessionBeforeTreeResult,
    SessionCompactEvent,
    SessionCompactFailedEvent,
    SessionTreeEvent,
    TreePreparation,
)
from pi_nb.compaction.preparation import prepare_compaction
from pi_nb.compaction.retry import RetryCallbacks, SleepFn
from pi_nb.compaction.serialization import content_text
from pi_nb.compaction.settings import (
    DEFAULT_BRANCH_SUMMARY_SETTINGS,
    DEFAULT_COMPACTION_SETTINGS,
    DEFAULT_RETRY_SETTINGS,
    BranchSummarySettings,
    CompactionSettings,
    RetrySettings,
)
from pi_nb.compaction.summaries import CompactionResult, compact
from pi_nb.errors import (
    CompactionCancelledError,
    CompactionError,
    EntryNotFoundError,
    NothingToCompactError,
    SummarizationError,
)
from pi_nb.messages import Usage
from pi_nb.providers.base import Model, SupportsAbort
from pi_nb.redaction import redact, redact_message
from pi_nb.session.context import SessionContext
from pi_nb.session.types import BranchSummaryEntry, CompactionEntry, SessionEntry
from pi_nb.tokens import estimate_tokens
from pi_nb.undefined import Undefined

__all__ = [
    "NO_MODEL_MESSAGE",
    "CompactionOutcome",
    "NavigateTreeResult",
    "navigate_tree",
    "run_compaction",
]

NO_MODEL_MESSAGE = "No model selected."
EmitFn = Callable[[CompactionStreamEvent], Any]
"""``emit(event)`` for the session's own stream; may return an awaitable (it is awaited)."""


class SessionLike(Protocol):
    """The part of ``SessionManager`` these flows use.

    ``details`` is the entry's ``details``: ``{readFiles, modifiedFiles}`` for a summary pi_nb
    made, a hook's own data otherwise (open JSON); ``UNDEFINED`` leaves the key out.
    """

    def get_branch(self, from_id: str | None = None) -> Sequence[SessionEntry]: ...

    def get_entry(self, id: str) -> SessionEntry | None: ...

    def get_entries(self) -> Sequence[SessionEntry]: ...

    def get_leaf_id(self) -> str | None: ...

    def branch(self, branch_from_id: str) -> object: ...

    def reset_leaf(self) -> object: ...

    def append_compaction(
        self,
        summary: str,
        first_kept_entry_id: str,
        tokens_before: int,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Usage | Undefined | None = None,
    ) -> str: ...

    def branch_with_summary(
        self,
        branch_from_id: str | None,
        summary: str,
        details: Any = None,
        from_hook: bool | None = None,
        usage: Usage | Undefined | None = None,
    ) -> str: ...

    def append_label_change(self, target_id: str, label: str | None = None) -> str: ...

    def build_session_context(self) -> SessionContext: ...


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def _emit(emit: EmitFn | None, event: CompactionStreamEvent) -> None:
    if emit is not None:
        await _maybe_await(emit(event))


def _lookup_entry(session: SessionLike, entry_id: str) -> SessionEntry | None:
    try:
        entry = session.get_entry(entry_id)
    except EntryNotFoundError:
        return None
    return entry if isinstance(entry, Mapping) else None


class _OutcomeHead(TypedDict, total=False):
    """The optional keys of :class:`~pi_nb.compaction._types.CompactionOutcomeDict` before
    ``fromExtension``."""

    result: CompactionResultDict
    entry: CompactionEntry


class _OutcomeTail(TypedDict, total=False):
    """The optional keys of :class:`~pi_nb.compaction._types.CompactionOutcomeDict` after
    ``fromExtension``."""

    errorMessage: str
    skipReason: SkipReason


@dataclass(frozen=True)
class CompactionOutcome:
    """What :func:`run_compaction` did.

    ``status``: ``"compacted"`` (``result``, ``entry`` and the rebuilt ``context`` are set;
    ``result.estimated_tokens_after`` is the estimate of that context), ``"skipped"`` (automatic
    only: no model or nothing to compact, nothing emitted), ``"cancelled"`` (a hook or the signal),
    ``"failed"`` (automatic only; ``error_message`` is the formatted text).
    """

    reason: CompactionReason
    status: Literal["compacted", "skipped", "cancelled", "failed"]
    will_retry: bool = False
    result: CompactionResult | None = None
    entry: CompactionEntry | None = None
    from_extension: bool = False
    error_message: str | None = None
    context: SessionContext | None = None
    skip_reason: SkipReason | None = None
    """Why an automatic compaction was ``"skipped"`` (pi_nb: the session reports it; Pi is silent)."""

    @property
    def compacted(self) -> bool:
        return self.status == "compacted"

    def to_dict(self) -> CompactionOutcomeDict:
        # the optional keys are gathered first, then spread in place (result? and entry? come
        # before fromExtension in Pi's order)
        head: _OutcomeHead = {}
        if self.result is not None:
            head["result"] = self.result.to_dict()
        if self.entry is not None:
            head["entry"] = {**self.entry}
        tail: _OutcomeTail = {}
        if self.error_message is not None:
            tail["errorMessage"] = self.error_message
        if self.skip_reason is not None:
            tail["skipReason"] = self.skip_reason
        return {
            "reason": self.reason,
            "status": self.status,
            "willRetry": self.will_retry,
            **head,
            "fromExtension": self.from_extension,
            **tail,
        }


async def run_compaction(
    session_manager: SessionLike,
    model: Model | None,
    settings: CompactionSettings | Mapping[str, Any] = DEFAULT_COMPACTION_SETTINGS,
    *,
    reason: CompactionReason,
    custom_instructions: str | None = None,
    will_retry: bool = False,
    hooks: HookRunner | None = None,
    signal: SupportsAbort | None = None,
    thinking_level: str | None = "off",
    retry: RetrySettings | Mapping[str, Any] | None = DEFAULT_RETRY_SETTINGS,
    callbacks: RetryCallbacks | None = None,
    emit: EmitFn | None = None,
    sleep: SleepFn | None = None,
    session_id: str | None = None,
) -> CompactionOutcome:
    """Compact the current branch of ``session_manager`` (Pi's manual and automatic flows).

    Prepares from ``session_manager.get_branch()``, offers the preparation to the
    ``session_before_compact`` hooks (cancel, or a ready ``compaction`` used verbatim with
    ``fromHook: true``), otherwise summarises with ``model`` (``custom_instructions`` as
    "Additional focus"), appends the ``compaction`` entry, rebuilds the context, and emits
    ``session_compact`` and ``compaction_end``.

    Raises (manual only; see the module docstring): :class:`NothingToCompactError`,
    :class:`CompactionCancelledError`, :class:`SummarizationError`, :class:`CompactionError`.
    """
    if reason not in ("manual", "threshold", "overflow"):
        raise CompactionError(f"unknown compaction reason {reason!r}")
    s = CompactionSettings.coerce(settings)
    manual = reason == "manual"
    if manual:
        will_retry = False
    from_extension = False
    started = False

    async def fail(aborted: bool, error_message: str | None) -> None:
        end: CompactionEndEvent = {
            "type": "compaction_end",
            "reason": reason,
            "result": None,
            "aborted": aborted,
            "willRetry": False,
        }
        if error_message is not None:
            end["errorMessage"] = error_message
        await _emit(emit, end)
        if hooks is not None and hooks.has_handlers("session_compact_failed"):
            await hooks.emit(
                SessionCompactFailedEvent(
                    reason=reason,
                    aborted=aborted,
                    will_retry=False,
                    from_extension=from_extension,
                    error_message=error_message,
                )
            )

    try:
        if manual:
            await _emit(emit, {"type": "compaction_start", "reason": reason})
            started = True
            if model is None:
                raise CompactionError(NO_MODEL_MESSAGE)
        elif model is None:
            return CompactionOutcome(reason, "skipped", will_retry, skip_reason="no_model")

        path_entries = list(session_manager.get_branch())
        preparation = prepare_compaction(path_entries, s)
        if preparation is None:
            if not manual:
                already = bool(path_entries) and path_entries[-1].get("type") == "compaction"
                return CompactionOutcome(
                    reason,
                    "skipped",
                    will_retry,
                    skip_reason="already_compacted" if already else "nothing_to_compact",
                )
            if path_entries and path_entries[-1].get("type") == "compaction":
                raise NothingToCompactError("Already compacted")
            raise NothingToCompactError("Nothing to compact (session too small)")

        if not manual:
            await _emit(emit, {"type": "compaction_start", "reason": reason})
            started = True

        hook_result: SessionBeforeCompactResult | None = None
        if hooks is not None and hooks.has_handlers("session_before_compact"):
            hook_result = await hooks.emit(
                SessionBeforeCompactEvent(
                    preparation=preparation,
                    branch_entries=path_entries,
                    custom_instructions=custom_instructions,
                    reason=reason,
                    will_retry=will_retry,
                    signal=signal,
                )
            )
            if hook_result is not None and hook_result.cancel:
                raise CompactionCancelledError("Compaction cancelled")

        if hook_result is not None and hook_result.compaction is not None:
            result = hook_result.compaction
            from_extension = True
        else:
            assert model is not None
            result = await compact(
                preparation,
                model,
                custom_instructions,
                signal,
                thinking_level,
                retry,
                callbacks,
                session_id,
                sleep=sleep,
            )
        if signal is not None and signal.aborted:
            raise CompactionCancelledError("Compaction cancelled")

        # a summary is model output: no known secret value reaches the session file
        result = _redacted_result(result)
        entry_id = session_manager.append_compaction(
            result.summary,
            result.first_kept_entry_id,
            result.tokens_before,
            UNDEFINED if result.details is None else result.details,
            from_extension,
            UNDEFINED if result.usage is None else result.usage,
        )
        # the entry append_compaction just wrote (the id came back from it): a compaction entry
        entry = cast(CompactionEntry | None, _lookup_entry(session_manager, entry_id))
        context = session_manager.build_session_context()
        estimated_after = sum(estimate_tokens(m) for m in context.messages)
        final = CompactionResult(
            summary=result.summary,
            first_kept_entry_id=result.first_kept_entry_id,
            tokens_before=result.tokens_before,
            usage=result.usage,
            details=result.details,
            estimated_tokens_after=estimated_after,
        )
        if hooks is not None and entry is not None:
            await hooks.emit(
                SessionCompactEvent(
                    compaction_entry=entry,
                    from_extension=from_extension,
                    reason=reason,
                    will_retry=will_retry,
                )
            )
        await _emit(
            emit,
            {
                "type": "compaction_end",
                "reason": reason,
                "result": final.to_dict(),
                "aborted": False,
                "willRetry": will_retry,
            },
        )
        return CompactionOutcome(reason, "compacted", will_retry, final, entry, from_extension, None, context)
    except CompactionCancelledError:
        if started:
            await fail(True, None)
        if manual:
            raise
        return CompactionOutcome(reason, "cancelled", False, from_extension=from_extension)
    except Exception as exc:
        message = str(exc) or type(exc).__name__
        if manual:
            await fail(False, f"Compaction failed: {message}")
            raise
        formatted = (
            f"Context overflow recovery failed: {message}"
            if reason == "overflow"
            else f"Auto-compaction failed: {message}"
        )
        if started:
            await fail(False, formatted)
        return CompactionOutcome(
            reason, "failed", False, from_extension=from_extension, error_message=formatted
        )


def _redacted_result(result: CompactionResult) -> CompactionResult:
    """``result`` with known secret values redacted in its summary and details (copy-on-write)."""
    summary = redact(result.summary)
    details = redact_message(result.details)
    if summary is result.summary and details is result.details:
        return result
    return CompactionResult(
        summary=summary,
        first_kept_entry_id=result.first_kept_entry_id,
        tokens_before=result.tokens_before,
        usage=result.usage,
        details=details,
        estimated_tokens_after=result.estimated_tokens_after,
    )


@dataclass(frozen=True)
class NavigateTreeResult:
    """Pi's ``{editorText?, cancelled, aborted?, summaryEntry?}`` plus the new position.

    ``editor_text``: the text of a user/custom message target, handed back for editing (the leaf
    moved to its parent). ``context``: the rebuilt context (``None`` when nothing changed).
    """

    cancelled: bool
    aborted: bool = False
    editor_text: str | None = None
    summary_entry: BranchSummaryEntry | None = None
    old_leaf_id: str | None = None
    new_leaf_id: str | None = None
    from_extension: bool | None = None
    context: SessionContext | None = None

    def to_dict(self) -> NavigateTreeResultDict:
        out: NavigateTreeResultDict
        if self.editor_text is not None:
            out = {"editorText": self.editor_text, "cancelled": self.cancelled}
        else:
            out = {"cancelled": self.cancelled}
        if self.aborted:
            out["aborted"] = True
        if self.summary_entry is not None:
            out["summaryEntry"] = {**self.summary_entry}
        return out


async def navigate_tree(
    session_manager: SessionLike,
    target_id: str,
    *,
    summarize: bool = False,
    custom_instructions: str | None = None,
    replace_instructions: bool | None = None,
    label: str | None = None,
    model: Model | None = None,
    hooks: HookRunner | None = None,
    signal: SupportsAbort | None = None,
    branch_summary_settings: BranchSummarySettings | Mapping[str, Any] = DEFAULT_BRANCH_SUMMARY_SETTINGS,
    retry: RetrySettings | Mapping[str, Any] | None = DEFAULT_RETRY_SETTINGS,
    callbacks: RetryCallbacks | None = None,
    sleep: SleepFn | None = None,
) -> NavigateTreeResult:
    """Move the session's leaf to ``target_id``, optionally summarising the branch left behind.

    Pi's rules (spec 9.3): the same target as the leaf is a no-op; a ``user`` message target
    moves the leaf to its parent (``None`` for a root) and returns its text as ``editor_text``,
    likewise a ``custom_message``; any other target becomes the leaf. With a summary (the user
    asked for one and the branch had entries, or a hook supplied one), a ``branch_summary`` entry
    is written under the new leaf with ``fromId`` = the old leaf, and the label (if any) goes on
    it; without, the label goes on the target. ``session_before_tree`` hooks may cancel, supply
    the summary (used only when ``summarize``), or override instructions and label.

    Raises:
        CompactionError: ``No model available for summarization``.
        EntryNotFoundError: ``Entry {id} not found``.
        SummarizationError: the summary call failed (error/length stop or a tool call).
    """
    bs = BranchSummarySettings.coerce(branch_summary_settings)
    old_leaf_id = session_manager.get_leaf_id()
    if target_id == old_leaf_id:
        return NavigateTreeResult(cancelled=False, old_leaf_id=old_leaf_id, new_leaf_id=old_leaf_id)
    if summarize and model is None:
        raise CompactionError("No model available for summarization")
    target = _lookup_entry(session_manager, target_id)
    if target is None:
        raise EntryNotFoundError(f"Entry {target_id} not found")

    collected = collect_entries_for_branch_summary(session_manager, old_leaf_id, target_id)
    preparation = TreePreparation(
        target_id=target_id,
        old_leaf_id=old_leaf_id,
        common_ancestor_id=collected.common_ancestor_id,
        entries_to_summarize=collected.entries,
        user_wants_summary=summarize,
        custom_instructions=custom_instructions,
        replace_instructions=replace_instructions,
        label=label,
    )

    hook_summary = None
    from_extension = False
    if hooks is not None and hooks.has_handlers("session_before_tree"):
        result: SessionBeforeTreeResult | None = await hooks.emit(SessionBeforeTreeEvent(preparation, signal))
        if result is not None:
            if result.cancel:
                return NavigateTreeResult(cancelled=True, old_leaf_id=old_leaf_id, new_leaf_id=old_leaf_id)
            if result.summary is not None and summarize:
                hook_summary = result.summary
                from_extension = True
            overrides = result.overrides()
            custom_instructions = overrides.get("custom_instructions", custom_instructions)
            replace_instructions = overrides.get("replace_instructions", replace_instructions)
            label = overrides.get("label", label)

    summary_text: str | None = None
    summary_details: Any = None  # FileListsDict, or a hook's own details (open JSON)
    summary_usage: Usage | None = None
    if summarize and collected.entries and hook_summary is None:
        assert model is not None
        generated = await generate_branch_summary(
            collected.entries,
            model=model,
            signal=signal,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            reserve_tokens=bs.reserve_tokens,
            retry=retry,
            callbacks=callbacks,
            sleep=sleep,
        )
        if generated.aborted:
            return NavigateTreeResult(
                cancelled=True, aborted=True, old_leaf_id=old_leaf_id, new_leaf_id=old_leaf_id
            )
        if generated.error is not None:
            raise SummarizationError(generated.error)
        summary_text = generated.summary
        summary_usage = generated.usage
        details: FileListsDict = {
            "readFiles": list(generated.read_files or []),
            "modifiedFiles": list(generated.modified_files or []),
        }
        summary_details = details
    elif hook_summary is not None:
        summary_text = hook_summary.summary
        summary_details = hook_summary.details
        summary_usage = hook_summary.usage

    editor_text: str | None = None
    new_leaf_id: str | None
    target_message = target.get("message") if target.get("type") == "message" else None
    if isinstance(target_message, Mapping) and target_message.get("role") == "user":
        new_leaf_id = target.get("parentId")
        editor_text = content_text(target_message.get("content"), "")
    elif target.get("type") == "custom_message":
        new_leaf_id = target.get("parentId")
        editor_text = content_text(target.get("content"), "")
    else:
        new_leaf_id = target_id

    summary_entry: BranchSummaryEntry | None = None
    if summary_text:
        summary_text = redact(summary_text)
        summary_id = session_manager.branch_with_summary(
            new_leaf_id,
            summary_text,
            UNDEFINED if summary_details is None else summary_details,
            from_extension,
            UNDEFINED if summary_usage is None else summary_usage,
        )
        # the entry branch_with_summary just wrote (the id came back from it): a branch summary
        summary_entry = cast(BranchSummaryEntry | None, _lookup_entry(session_manager, summary_id))
        if label:
            session_manager.append_label_change(summary_id, label)
    elif new_leaf_id is None:
        session_manager.reset_leaf()
    else:
        session_manager.branch(new_leaf_id)
    if label and not summary_text:
        session_manager.append_label_change(target_id, label)

    context = session_manager.build_session_context()
    new_leaf = session_manager.get_leaf_id()
    if hooks is not None:
        await hooks.emit(
            SessionTreeEvent(
                new_leaf_id=new_leaf,
                old_leaf_id=old_leaf_id,
                summary_entry=summary_entry,
                from_extension=from_extension if summary_text else None,
            )
        )
    return NavigateTreeResult(
        cancelled=False,
        editor_text=editor_text,
        summary_entry=summary_entry,
        old_leaf_id=old_leaf_id,
        new_leaf_id=new_leaf,
        from_extension=from_extension if summary_text else None,
        context=context,
    )
