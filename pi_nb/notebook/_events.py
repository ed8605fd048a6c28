"""The event shapes the notebook views read, as TypedDicts.

An ``AgentSession`` listener gets the agent loop's events (:data:`pi_nb.agent.types.AgentEvent`:
``message_*``, ``tool_execution_*``, ``turn_*``, ``agent_*``) and the session's own ones. The views
read the fields of two of the latter, the compaction events that :mod:`pi_nb.compaction.orchestration`
emits: :class:`CompactionStartEvent` and :class:`CompactionEndEvent` (defined once in
:mod:`pi_nb.compaction`, importable from here too). :data:`ViewEvent` is what a
:class:`~pi_nb.notebook.turn.TurnView` is fed (those, and the ``%%pi`` cell's :class:`RunDoneEvent`).

The ``is_*`` checks narrow a :data:`ViewEvent` to one of the shapes defined here, and, where
they fail, to the agent's events, which then narrow on ``event["type"]``.

Listeners that only look at an event's ``type`` take any event (``Mapping[str, object]``).

Nothing here imports the agent at run time (only the compaction package's event shapes):
:data:`ViewEvent` exists for the type checker only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

from pi_nb.compaction import CompactionEndEvent, CompactionStartEvent

if TYPE_CHECKING:
    from typing import TypeAlias

    from typing_extensions import TypeIs

    from pi_nb.agent.types import AgentEvent

__all__ = [
    "CompactionEndEvent",
    "CompactionStartEvent",
    "RunDoneEvent",
    "is_compaction_end",
    "is_compaction_start",
    "is_run_done",
]


class RunDoneEvent(TypedDict):
    """``{type: "pi_nb_run_done"}``: the ``%%pi`` cell's own marker that the prompt finished (it
    wakes the cell's wait; a :class:`~pi_nb.notebook.turn.TurnView` ignores it)."""

    type: Literal["pi_nb_run_done"]


if TYPE_CHECKING:
    ViewEvent: TypeAlias = AgentEvent | CompactionStartEvent | CompactionEndEvent | RunDoneEvent
    """What a turn view is fed: the agent's events, the session's compaction events and the
    cell's end marker."""


def is_compaction_start(event: ViewEvent) -> TypeIs[CompactionStartEvent]:
    """``event["type"] == "compaction_start"`` (tolerating an event without ``type``)."""
    return event.get("type") == "compaction_start"


def is_compaction_end(event: ViewEvent) -> TypeIs[CompactionEndEvent]:
    """``event["type"] == "compaction_end"`` (tolerating an event without ``type``)."""
    return event.get("type") == "compaction_end"


def is_run_done(event: ViewEvent) -> TypeIs[RunDoneEvent]:
    """``event["type"] == "pi_nb_run_done"`` (tolerating an event without ``type``)."""
    return event.get("type") == "pi_nb_run_done"
