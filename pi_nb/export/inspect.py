"""A Pi session as an Inspect AI eval log (Inspect View, ``inspect_ai.analysis``).

:func:`to_eval_log` turns a session source (a :class:`~pi_nb.session.manager.SessionManager`,
an ``AgentSession``, a session file, a directory of them or a list: see
:mod:`pi_nb.session.source`) into one :class:`inspect_ai.log.EvalLog` with one sample per
session; :func:`write_inspect_log` writes it with Inspect's own
:func:`inspect_ai.log.write_eval_log` (``.eval`` or ``.json``). The log is built from Inspect's
classes only, never written by hand, so Inspect View and ``inspect_ai.analysis`` read it as they
read Inspect's own logs. Needs ``pip install 'pi_nb[inspect]'`` (``inspect_ai`` is imported
only when a function here is called).

What maps to what, for each session (its *branch*: the entries from the root to the leaf):

* ``sample.messages``: every message on the branch, as the LLM saw it (Pi's ``convertToLlm``:
  ``bashExecution``, ``custom`` and branch summaries become user messages, ``!!`` commands are
  left out) — ``user`` -> ``ChatMessageUser`` (text and images), ``assistant`` ->
  ``ChatMessageAssistant`` (text, ``thinking`` -> ``ContentReasoning``, ``toolCall`` ->
  ``ToolCall``), ``toolResult`` -> ``ChatMessageTool`` (``isError`` -> ``ToolCallError``).
  ``messages="context"`` gives instead what the LLM sees at the leaf (after the latest
  compaction: its summary, the kept messages, the rest). Each message's ``id`` is its entry's
  id; its ``metadata`` keeps the entry's timestamp and, for an assistant, Pi's provider, api,
  stop reason, error and usage. ``system_prompt`` (not in Pi's session file) is prepended as a
  ``ChatMessageSystem`` when given.
* ``sample.events``: a ``ModelEvent`` per assistant message (its input: the context at its
  parent entry; its output and usage; its error), a ``ToolEvent`` per tool result, a
  ``CompactionEvent`` per compaction entry (summary and ids in its metadata), an ``InfoEvent``
  per model or thinking-level change.
* ``sample.model_usage``: per ``provider/model``, the sums of the assistant messages' usage on
  the branch (``input``, ``output``, ``cacheRead``, ``cacheWrite``, ``totalTokens``,
  ``reasoning``, ``cost.total``), the numbers as Pi recorded them. The usage of compaction and
  branch summaries (no model recorded) is in ``metadata["compactions"]``.
* ``sample.metadata``: session id, file, cwd, name, the header's version, parent session and
  harness (when present), leaf id, entry counts, compaction count and summaries, the number of
  lines of the file that could not be read (skipped, as Pi skips them).
* times: ``started_at`` the header's timestamp, ``completed_at`` the last entry's,
  ``total_time`` the seconds between.
* ``eval``: the task name (``task``, default ``"pi_session"``), the model (the last assistant
  message's ``provider/model``), ``created`` (the earliest session start); ``stats``: the
  model usage summed over the samples; ``status``: ``"success"`` (no scores).
"""

from __future__ import annotations

import math
import os
import re
import uuid
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from pi_nb.errors import InvalidValueError, MissingDependencyError
from pi_nb.messages import convert_to_llm
from pi_nb.session.context import context_entries_from_path, session_entry_to_context_messages
from pi_nb.session.manager import SessionManager
from pi_nb.session.source import SessionSource, load_session_source

if TYPE_CHECKING:
    from inspect_ai.event import Event
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.model import ChatMessage, ChatMessageAssistant, ModelUsage

__all__ = ["to_eval_log", "write_inspect_log"]

_INSTALL = "pip install 'pi_nb[inspect]'"
_NAMESPACE = uuid.UUID("5b0e3f8c-2d4a-4c1e-9f57-1f2b6a3c9d01")  # pi_nb's, for stable sample uuids

#: Pi's stop reasons as Inspect's (``error``/``aborted``/``pending``: ``unknown``, the error is
#: kept in the message metadata and the model event).
_STOP_REASONS: dict[str, Literal["stop", "max_tokens", "tool_calls", "unknown"]] = {
    "stop": "stop",
    "length": "max_tokens",
    "toolUse": "tool_calls",
}


def _require_inspect() -> None:
    try:
        import inspect_ai  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            f"exporting an Inspect AI eval log needs inspect_ai: {_INSTALL} ({exc})"
        ) from None


# ---------------------------------------------------------------------------------------------
# Times
# ---------------------------------------------------------------------------------------------


def _iso_time(value: Any) -> datetime | None:
    """An entry's ISO timestamp as an aware datetime (``None`` when absent or unparseable)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def _ms_time(value: Any) -> datetime | None:
    """A message's Unix-milliseconds timestamp as an aware datetime (``None`` for NaN, absent)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _entry_time(entry: Mapping[str, Any]) -> datetime | None:
    got = _iso_time(entry.get("timestamp"))
    if got is None:
        message = entry.get("message")
        if isinstance(message, Mapping):
            got = _ms_time(message.get("timestamp"))
    return got


# ---------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------


def _content(blocks: Any) -> Any:
    """Text and image blocks of a user or tool message as Inspect content (a string stays one)."""
    from inspect_ai.model import ContentImage, ContentText

    if isinstance(blocks, str):
        return blocks
    out: list[Any] = []
    for block in blocks if isinstance(blocks, list) else []:
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "image":
            out.append(ContentImage(image=f"data:{block.get('mimeType')};base64,{block.get('data', '')}"))
        elif block.get("type") == "text":
            out.append(ContentText(text=str(block.get("text", ""))))
    return out


def _text_of(blocks: Any) -> str:
    if isinstance(blocks, str):
        return blocks
    return "\n".join(
        str(b.get("text", ""))
        for b in (blocks if isinstance(blocks, list) else [])
        if isinstance(b, Mapping) and b.get("type") == "text"
    )


def _model_name(message: Mapping[str, Any]) -> str:
    return f"{message.get('provider', 'unknown')}/{message.get('model', 'unknown')}"


def _usage(usage: Any) -> ModelUsage | None:
    """Pi's ``usage`` of one call as Inspect's :class:`ModelUsage` (its numbers unchanged)."""
    from inspect_ai.model import ModelUsage

    if not isinstance(usage, Mapping):
        return None

    def n(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0

    cost = usage.get("cost")
    total_cost = cost.get("total") if isinstance(cost, Mapping) else None
    reasoning = usage.get("reasoning")
    return ModelUsage(
        input_tokens=n("input"),
        output_tokens=n("output"),
        total_tokens=n("totalTokens"),
        input_tokens_cache_read=n("cacheRead"),
        input_tokens_cache_write=n("cacheWrite"),
        reasoning_tokens=int(reasoning) if isinstance(reasoning, (int, float)) else None,
        total_cost=float(total_cost) if isinstance(total_cost, (int, float)) else None,
    )


def _add_usage(into: dict[str, ModelUsage], model: str, usage: ModelUsage) -> None:
    into[model] = into[model] + usage if model in into else usage.model_copy()


def _tool_call(block: Mapping[str, Any]) -> Any:
    from inspect_ai.tool import ToolCall

    args = block.get("arguments")
    if isinstance(args, Mapping):
        return ToolCall(
            id=str(block.get("id", "")), function=str(block.get("name", "")), arguments=dict(args)
        )
    # a hand-edited or torn call: Inspect's own spelling of arguments that are not an object
    return ToolCall(
        id=str(block.get("id", "")),
        function=str(block.get("name", "")),
        arguments={},
        parse_error=f"arguments are not an object: {args!r}",
    )


def _chat_message(message: Mapping[str, Any], entry: Mapping[str, Any], pi_role: Any) -> ChatMessage:
    """One LLM message (the output of :func:`pi_nb.messages.convert_to_llm`) as Inspect's."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageTool,
        ChatMessageUser,
        ContentReasoning,
        ContentText,
    )
    from inspect_ai.tool import ToolCallError

    meta: dict[str, Any] = {"pi_entry_id": entry.get("id"), "pi_timestamp": entry.get("timestamp")}
    if pi_role != message.get("role"):
        meta["pi_role"] = pi_role
    entry_id = entry.get("id")
    msg_id = f"{entry_id}" if isinstance(entry_id, str) else None
    role = message.get("role")
    if role == "assistant":
        content: list[Any] = []
        calls: list[Any] = []
        for block in message.get("content") or []:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text":
                content.append(ContentText(text=str(block.get("text", ""))))
            elif kind == "thinking":
                signature = block.get("thinkingSignature")
                content.append(
                    ContentReasoning(
                        reasoning=str(block.get("thinking", "")),
                        signature=signature if isinstance(signature, str) else None,
                        redacted=bool(block.get("redacted", False)),
                    )
                )
            elif kind == "toolCall":
                calls.append(_tool_call(block))
        for key in ("provider", "api", "stopReason", "errorMessage", "responseId", "usage"):
            if key in message:
                meta[key] = message[key]
        return ChatMessageAssistant(
            id=msg_id,
            content=content or "",
            tool_calls=calls or None,
            model=str(message.get("model", "")),
            source="generate",
            metadata=meta,
        )
    if role == "toolResult":
        error = None
        if message.get("isError"):
            error = ToolCallError("unknown", _text_of(message.get("content")))
        return ChatMessageTool(
            id=msg_id,
            content=_content(message.get("content")),
            tool_call_id=str(message.get("toolCallId", "")),
            function=str(message.get("toolName", "")),
            error=error,
            metadata=meta,
        )
    return ChatMessageUser(id=msg_id, content=_content(message.get("content")), source="input", metadata=meta)


class _Converter:
    """The Inspect messages of each entry, converted once and shared by the sample's messages
    and the model events' inputs (so Inspect's condensing stores each one once)."""

    def __init__(self) -> None:
        self._done: dict[int, list[ChatMessage]] = {}

    def of(self, entry: Mapping[str, Any]) -> list[ChatMessage]:
        key = id(entry)
        got = self._done.get(key)
        if got is None:
            got = []
            for agent_message in session_entry_to_context_messages(entry):  # type: ignore[arg-type]
                for llm in convert_to_llm([agent_message]):
                    got.append(_chat_message(llm, entry, agent_message.get("role")))
            self._done[key] = got
        return got


# ---------------------------------------------------------------------------------------------
# One session -> one sample
# ---------------------------------------------------------------------------------------------


def _sample(
    manager: SessionManager,
    file: str | None,
    *,
    skipped_lines: int,
    sample_id: str,
    messages_mode: str,
    system_prompt: str | None,
    model_events: bool,
) -> tuple[EvalSample, str | None]:
    """The sample of one session and the ``provider/model`` of its last assistant message."""
    from inspect_ai.event import CompactionEvent, InfoEvent, ModelEvent, ToolEvent
    from inspect_ai.log import EvalSample
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
        GenerateConfig,
        ModelOutput,
    )

    header: Mapping[str, Any] = manager.get_header() or {}
    path: list[Any] = manager.get_branch()
    convert = _Converter()
    system: list[ChatMessage] = [ChatMessageSystem(content=system_prompt)] if system_prompt else []

    started = _iso_time(header.get("timestamp")) or next(
        (t for t in map(_entry_time, path) if t is not None), None
    )
    origin = started or datetime.now(UTC)

    def since(t: datetime | None) -> float:
        return max((t - origin).total_seconds(), 0.0) if t is not None else 0.0

    events: list[Event] = []
    usage_by_model: dict[str, ModelUsage] = {}
    branch_messages: list[ChatMessage] = []
    calls: dict[str, Any] = {}
    compactions: list[dict[str, Any]] = []
    last_model: str | None = None
    last_assistant: tuple[Mapping[str, Any], ChatMessageAssistant] | None = None
    last_time = started

    # the LLM messages of the context at the entry being read (context_entries_from_path of the
    # path before it), kept up to date entry by entry: rebuilt at a compaction, appended to
    # otherwise (exactly what the projection of each longer prefix gives), so a long session
    # costs one walk, not one per model call
    context_messages: list[ChatMessage] = []
    for i, entry in enumerate(path):
        if i:
            before = path[i - 1]
            if before.get("type") == "compaction":
                context_messages = [m for e in context_entries_from_path(path[:i]) for m in convert.of(e)]
            else:
                context_messages.extend(convert.of(before))
        etype = entry.get("type")
        when = _entry_time(entry) or last_time or origin
        last_time = when
        converted = convert.of(entry) if etype != "compaction" else []
        if etype == "compaction":
            record = {
                "id": entry.get("id"),
                "timestamp": entry.get("timestamp"),
                "summary": entry.get("summary"),
                "firstKeptEntryId": entry.get("firstKeptEntryId"),
                "tokensBefore": entry.get("tokensBefore"),
            }
            for key in ("fromHook", "usage", "details"):
                if key in entry:
                    record[key] = entry[key]
            compactions.append(record)
            tokens_before = entry.get("tokensBefore")
            events.append(
                CompactionEvent(
                    timestamp=when,
                    working_start=since(when),
                    type="summary",
                    tokens_before=tokens_before if isinstance(tokens_before, int) else None,
                    source="pi",
                    metadata=record,
                )
            )
            continue
        if etype in ("model_change", "thinking_level_change"):
            data = {k: v for k, v in entry.items() if k not in ("id", "parentId")}
            events.append(InfoEvent(timestamp=when, working_start=since(when), source="pi", data=data))
            continue
        branch_messages.extend(converted)
        message = entry.get("message") if etype == "message" else None
        if not isinstance(message, Mapping) or not converted:
            continue
        role = message.get("role")
        if role == "assistant" and isinstance(converted[0], ChatMessageAssistant):
            chat = converted[0]
            model = _model_name(message)
            last_model = model
            last_assistant = (message, chat)
            usage = _usage(message.get("usage"))
            if usage is not None:
                _add_usage(usage_by_model, model, usage)
            for call in chat.tool_calls or []:
                calls[call.id] = (call, when)
            if model_events:
                begun = _ms_time(message.get("timestamp")) or when
                context = [*system, *context_messages]
                error = message.get("errorMessage")
                event = ModelEvent(
                    timestamp=begun,
                    working_start=since(begun),
                    completed=when,
                    working_time=max((when - begun).total_seconds(), 0.0),
                    model=model,
                    input=[],
                    tools=[],
                    tool_choice="auto",
                    config=GenerateConfig(),
                    output=ModelOutput(
                        model=model,
                        choices=[
                            ChatCompletionChoice(
                                message=chat,
                                stop_reason=_STOP_REASONS.get(str(message.get("stopReason")), "unknown"),
                            )
                        ],
                        usage=usage,
                        error=error if isinstance(error, str) else None,
                    ),
                    error=error if isinstance(error, str) else None,
                )
                # the input is assigned, not validated: its messages are the validated ones of
                # this sample, and validating each again per call would cost O(n^2) Python calls
                event.input = context
                events.append(event)
        elif role == "toolResult" and model_events and isinstance(converted[0], ChatMessageTool):
            tool_message = converted[0]
            call_id = str(message.get("toolCallId", ""))
            found = calls.get(call_id)
            arguments = found[0].arguments if found is not None else {}
            begun = found[1] if found is not None else when
            events.append(
                ToolEvent(
                    timestamp=begun,
                    working_start=since(begun),
                    completed=when,
                    working_time=max((when - begun).total_seconds(), 0.0),
                    id=call_id,
                    function=str(message.get("toolName", "")),
                    arguments=arguments,
                    result=_content(message.get("content")),
                    error=tool_message.error,
                    events=[],
                    message_id=tool_message.id,
                )
            )

    if messages_mode == "context":
        sample_messages: list[ChatMessage] = list(system)
        for entry in context_entries_from_path(path):
            sample_messages.extend(convert.of(entry))
    else:
        sample_messages = [*system, *branch_messages]

    first_user = next((m for m in sample_messages if isinstance(m, ChatMessageUser)), None)
    output = ModelOutput(model=last_model or "none")
    if last_assistant is not None:
        message, chat = last_assistant
        output = ModelOutput(
            model=_model_name(message),
            choices=[
                ChatCompletionChoice(
                    message=chat,
                    stop_reason=_STOP_REASONS.get(str(message.get("stopReason")), "unknown"),
                )
            ],
            usage=_usage(message.get("usage")),
        )

    completed = last_time
    metadata: dict[str, Any] = {
        "session_id": manager.get_session_id(),
        "session_file": file,
        "cwd": header.get("cwd", manager.get_cwd()),
        "session_name": manager.get_session_name(),
        "leaf_id": manager.get_leaf_id(),
        "entries": len(manager.get_entries()),
        "branch_entries": len(path),
        "compactions": len(compactions),
        "compaction_summaries": compactions,
        "skipped_lines": skipped_lines,
    }
    for key in ("version", "parentSession", "harness"):
        if key in header:
            metadata[key] = header[key]
    sample = EvalSample(
        id=sample_id,
        epoch=1,
        input=[*system, first_user] if first_user is not None else "",
        target="",
        messages=sample_messages,
        output=output,
        metadata=metadata,
        events=events,
        model_usage=usage_by_model,
        started_at=started.isoformat() if started else None,
        completed_at=completed.isoformat() if completed else None,
        total_time=max((completed - started).total_seconds(), 0.0) if started and completed else None,
        uuid=str(uuid.uuid5(_NAMESPACE, f"{file or ''}\0{sample_id}\0{manager.get_leaf_id()}")),
    )
    return sample, last_model


# ---------------------------------------------------------------------------------------------
# The log
# ---------------------------------------------------------------------------------------------


def to_eval_log(
    source: SessionSource,
    *,
    task: str | None = None,
    messages: Literal["branch", "context"] = "branch",
    system_prompt: str | None = None,
    model_events: bool = True,
    strict: bool | None = None,
) -> EvalLog:
    """The sessions of ``source`` as one Inspect AI :class:`~inspect_ai.log.EvalLog`, one sample
    per session (see the module docstring for what maps to what).

    ``task``: the eval's task name (default ``"pi_session"``). ``messages``: ``"branch"`` (every
    message from the root to the leaf) or ``"context"`` (what the LLM sees at the leaf).
    ``system_prompt``: prepended to each sample's messages (Pi's session files do not record
    it). ``model_events``: add a ``ModelEvent`` per assistant message and a ``ToolEvent`` per
    tool result (Inspect View's transcript); compactions and model changes are events always.
    ``strict``: what a line or file that cannot be read does, as in
    :func:`pi_nb.session.source.load_session_source`. Files are only read.

    Raises :class:`~pi_nb.errors.MissingDependencyError` without ``inspect_ai``
    (``pip install 'pi_nb[inspect]'``), :class:`~pi_nb.errors.InvalidValueError` for a bad
    argument, :class:`~pi_nb.errors.NotebookError` for a source that is not sessions.
    """
    if messages not in ("branch", "context"):
        raise InvalidValueError(f"messages must be 'branch' or 'context'; got {messages!r}")
    if task is not None and (not isinstance(task, str) or not task):
        raise InvalidValueError(f"task must be a non-empty string; got {task!r}")
    _require_inspect()
    import inspect_ai
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalResults, EvalSpec, EvalStats

    import pi_nb

    loaded, _problems = load_session_source(source, strict=strict)
    samples = []
    seen: dict[str, int] = {}
    model: str | None = None
    for manager, file, bad in loaded:
        base = manager.get_session_id()
        seen[base] = seen.get(base, 0) + 1
        sample_id = base if seen[base] == 1 else f"{base}-{seen[base]}"
        sample, last = _sample(
            manager,
            file,
            skipped_lines=bad,
            sample_id=sample_id,
            messages_mode=messages,
            system_prompt=system_prompt,
            model_events=model_events,
        )
        samples.append(sample)
        model = last or model

    usage: dict[str, ModelUsage] = {}
    for sample in samples:
        for name, u in sample.model_usage.items():
            _add_usage(usage, name, u)
    starts = [t for t in (_iso_time(s.started_at) for s in samples) if t is not None]
    ends = [t for t in (_iso_time(s.completed_at) for s in samples) if t is not None]
    created = (min(starts) if starts else datetime.now(UTC)).isoformat()
    task_name = task or "pi_session"
    run = uuid.uuid5(_NAMESPACE, "\0".join([task_name, *(s.uuid or "" for s in samples)]))
    spec = EvalSpec(
        eval_id=run.hex[:22],
        run_id=run.hex[10:32],
        created=created,
        task=task_name,
        task_id=uuid.uuid5(_NAMESPACE, task_name).hex[:22],
        solver="pi",
        dataset=EvalDataset(name=task_name, samples=len(samples), sample_ids=[s.id for s in samples]),
        model=model or "none",
        config=EvalConfig(),
        packages={"pi_nb": pi_nb.__version__, "inspect_ai": inspect_ai.__version__},
        metadata={"exported_by": "pi_nb.export.inspect", "messages": messages},
    )
    return EvalLog(
        status="success",
        eval=spec,
        stats=EvalStats(
            started_at=min(starts).isoformat() if starts else "",
            completed_at=max(ends).isoformat() if ends else "",
            model_usage=usage,
        ),
        results=EvalResults(total_samples=len(samples), completed_samples=len(samples)),
        samples=samples,
    )


def _inspect_file_name(log: EvalLog, ext: str) -> str:
    """Inspect's own name for a log, ``{created}_{task}_{task id}.{ext}``: Inspect lists a
    ``.json`` log (Inspect View, ``inspect_ai.analysis``) only when its name starts with a time."""
    created = re.sub(r"[^A-Za-z0-9]+", "-", log.eval.created).strip("-")
    task = re.sub(r"[^A-Za-z0-9._-]+", "-", log.eval.task).strip("-") or "task"
    return f"{created}_{task}_{log.eval.task_id}.{ext}"


def write_inspect_log(
    source: SessionSource,
    path: str | os.PathLike[str],
    *,
    format: Literal["eval", "json"] | None = None,
    **options: Any,
) -> str:
    """Write the sessions of ``source`` as an Inspect AI eval log with Inspect's
    :func:`inspect_ai.log.write_eval_log`, and return the path written.

    ``path``: the log file, or a directory (an existing one, or a path ending in a separator)
    where the log gets Inspect's own name, ``{created}_{task}_{id}.eval`` (or ``.json``).
    ``format``: ``"eval"`` (Inspect's compressed log) or ``"json"``; by default the one the
    suffix names (``.eval`` / ``.json``), ``"eval"`` for a directory or any other suffix. A
    ``format`` that contradicts the suffix is refused (Inspect reads a log by its suffix).
    Inspect's listings (Inspect View, ``inspect_ai.analysis`` frames) take a ``.json`` log only
    when its name starts with a timestamp, as Inspect names them: a ``.json`` file named
    otherwise is written, with a warning saying so. ``options`` go to :func:`to_eval_log`
    (``task``, ``messages``, ``system_prompt``, ``model_events``, ``strict``)."""
    location = os.fspath(path)
    if format is not None and format not in ("eval", "json"):
        raise InvalidValueError(f"format must be 'eval' or 'json'; got {format!r}")
    directory = os.path.isdir(location) or location.endswith((os.sep, "/"))
    suffix = "" if directory else os.path.splitext(location)[1].lower()
    named = {".eval": "eval", ".json": "json"}.get(suffix)
    if format is not None and named is not None and format != named:
        raise InvalidValueError(f"format {format!r} does not match the file name {location!r}")
    chosen: Literal["eval", "json"] = format or ("json" if named == "json" else "eval")
    log = to_eval_log(source, **options)
    from inspect_ai.log import condense_sample, write_eval_log

    if directory:
        os.makedirs(location, exist_ok=True)
        location = os.path.join(location, _inspect_file_name(log, chosen))
    elif chosen == "json" and not re.match(
        r"\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}", os.path.basename(location)
    ):
        warnings.warn(
            f"{location}: Inspect View and inspect_ai.analysis list a .json log only when its name "
            "starts with a timestamp (pass a directory to get Inspect's own name, or use .eval); "
            "read_eval_log reads it",
            UserWarning,
            stacklevel=2,
        )
    # condensed as Inspect's recorder stores a sample (repeated messages and images stored once)
    if log.samples:
        log.samples = [condense_sample(s) for s in log.samples]
    write_eval_log(log, location, format=chosen)
    return location
