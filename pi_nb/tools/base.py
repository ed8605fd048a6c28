"""The tool framework: abort signals, tool results, the tool context and the ``AgentTool`` base.

Pi's tools are pi-agent-core ``AgentTool`` objects: a JSON schema the model sees, an optional
``prepareArguments`` shim run before schema validation, and ``execute(toolCallId, params, signal,
onUpdate, ctx)`` that *throws* on failure. The agent loop turns a thrown error into an error tool
result ``{isError: true, content: [{type: "text", text: error.message}], details: {}}``; here a
failure is raised as :class:`pi_nb.errors.ToolError` whose message is exactly Pi's text.

:class:`AbortSignal` stands in for the DOM ``AbortSignal`` Pi passes around. It is thread-safe
(a notebook's interrupt handler or a UI thread may abort a run that executes on a worker thread's
event loop) and asyncio-friendly (``await signal.wait()``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import stat
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, TypeVar, cast

from pi_nb.errors import ToolError
from pi_nb.messages import ImageContent, TextContent

if TYPE_CHECKING:  # the tools do not import the providers at run time
    from pi_nb.providers.base import ToolSchema

__all__ = [
    "AbortController",
    "AbortSignal",
    "AgentTool",
    "AgentToolResult",
    "AgentToolResultDict",
    "ToolContent",
    "ToolContext",
    "ToolExecutionMode",
    "ToolOutcome",
    "ToolOutcomeDict",
    "ToolUpdateCallback",
    "cleanup_tool_temp_files",
    "tool_temp_files",
    "track_tool_temp_file",
]

T = TypeVar("T")

ToolExecutionMode = Literal["parallel", "sequential"]

#: A block of a tool result's ``content``: what the model sees (text, or an image the read tool loaded).
ToolContent = TextContent | ImageContent

AbortListener = Callable[[], None]


class AbortSignal:
    """A one-shot abort flag with listeners, usable from any thread and awaitable from asyncio.

    ``abort()`` is idempotent: the first call records ``reason``, flips ``aborted`` and runs every
    listener once (in registration order, on the aborting thread). A listener added after the
    signal was aborted runs immediately, so code that registers late cannot miss the abort (the DOM
    API would silently never call it).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._aborted = False
        self._reason: Any = None
        self._listeners: list[AbortListener] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    @property
    def reason(self) -> Any:
        return self._reason

    def abort(self, reason: Any = None) -> None:
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
            self._reason = reason
            listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener()

    def add_listener(self, callback: AbortListener) -> Callable[[], None]:
        """Call ``callback()`` once on abort; returns a function that removes it again."""
        with self._lock:
            if not self._aborted:
                self._listeners.append(callback)
                return lambda: self.remove_listener(callback)
        callback()
        return lambda: None

    def remove_listener(self, callback: AbortListener) -> None:
        with self._lock:
            try:
                self._listeners.remove(callback)
            except ValueError:
                pass

    def throw_if_aborted(self, message: str = "Operation aborted") -> None:
        """Raise ``ToolError(message)`` when aborted (Pi's tools all say ``Operation aborted``)."""
        if self._aborted:
            raise ToolError(message)

    async def wait(self) -> Any:
        """Wait until the signal is aborted (from any thread); returns the reason."""
        if self._aborted:
            return self._reason
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            def settle() -> None:
                if not future.done():
                    future.set_result(None)

            try:
                loop.call_soon_threadsafe(settle)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        remove = self.add_listener(wake)
        try:
            await future
        finally:
            remove()
        return self._reason

    def __repr__(self) -> str:
        return f"AbortSignal(aborted={self._aborted!r}, reason={self._reason!r})"


class AbortController:
    """``new AbortController()``: owns a :class:`AbortSignal` and aborts it."""

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: Any = None) -> None:
        self.signal.abort(reason)


class AgentToolResultDict(TypedDict):
    """:meth:`AgentToolResult.to_dict`: Pi's ``{content, details?, terminate?}``."""

    content: list[ToolContent]
    details: NotRequired[dict[str, Any]]  # the tool's own data: open JSON
    terminate: NotRequired[bool]


class ToolOutcomeDict(TypedDict):
    """:meth:`ToolOutcome.to_dict`: Pi's ``{isError, content, details?}``."""

    isError: bool
    content: list[ToolContent]
    details: NotRequired[dict[str, Any]]  # the tool's own data: open JSON


@dataclass(frozen=True)
class AgentToolResult:
    """``AgentToolResult``: ``content`` (text/image blocks the model sees) and ``details`` (UI data).

    ``details`` is ``None`` where Pi's is ``undefined`` (``to_dict()`` then omits the key, as
    Pi's JSON does). Its keys are each tool's own (``truncation``, ``fullOutputPath``, ``diff``...):
    open JSON here, since every tool shares this class.
    """

    content: list[ToolContent]
    details: dict[str, Any] | None = None
    terminate: bool | None = None

    def to_dict(self) -> AgentToolResultDict:
        out: AgentToolResultDict = {"content": self.content}
        if self.details is not None:
            out["details"] = self.details
        if self.terminate is not None:
            out["terminate"] = self.terminate
        return out


ToolUpdateCallback = Callable[[AgentToolResult], None]
"""``AgentToolUpdateCallback``: receives partial results while a tool runs (bash streams output)."""


@dataclass(frozen=True)
class ToolOutcome:
    """What the agent loop makes of one tool call: the result, or the error text as a result.

    ``stage`` says where a failure happened: ``"prepare"`` (argument shim or schema validation)
    or ``"execute"``; ``None`` on success. ``to_dict()`` gives Pi's ``{isError, content,
    details?}`` (an error result's details are ``{}``, as the agent loop writes them).
    """

    is_error: bool
    content: list[ToolContent]
    details: dict[str, Any] | None = None  # the tool's own data: open JSON
    stage: Literal["prepare", "execute"] | None = None

    @property
    def text(self) -> str:
        """The text blocks joined by newlines (a convenience for notebooks and tests)."""
        return "\n".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")

    def to_dict(self) -> ToolOutcomeDict:
        out: ToolOutcomeDict = {"isError": self.is_error, "content": self.content}
        if self.details is not None:
            out["details"] = self.details
        return out


@dataclass(frozen=True)
class ToolContext:
    """What a tool learns about the session running it (Pi's ``ExtensionContext`` subset).

    ``cwd`` overrides the tool's own cwd when set (Pi: ``ctx?.cwd || cwd``). ``model`` is any
    mapping or object with ``provider``, ``id`` and ``input`` (a list of ``"text"``/``"image"``);
    the read tool adds a note when the model has no image input, and bash exposes
    ``PI_PROVIDER``/``PI_MODEL``. ``session_id``/``session_file``/``thinking_level`` become
    ``PI_SESSION_ID``/``PI_SESSION_FILE``/``PI_REASONING_LEVEL`` in bash commands.
    """

    cwd: str | None = None
    model: Any = None
    thinking_level: str | None = None
    session_id: str | None = None
    session_file: str | None = None


def model_field(model: Any, name: str) -> Any:
    """Read ``provider``/``id``/``input`` from a model given as a mapping or as an object."""
    if model is None:
        return None
    if isinstance(model, Mapping):
        return model.get(name)
    return getattr(model, name, None)


@dataclass
class AgentTool:
    """Base class of a tool the agent loop can call (pi-agent-core ``AgentTool``).

    Subclasses set the fields and override :meth:`execute`. ``description`` is what the model
    reads about the tool (pi_nb's own words); ``parameters`` is the JSON schema, identical to
    Pi's; ``prompt_snippet``/``prompt_guidelines`` are Pi's exact one-liners for the system
    prompt's tool list and guidelines (``None`` where Pi has none).
    """

    name: str
    label: str
    description: str
    parameters: dict[str, Any]  # a JSON Schema: open JSON
    prompt_snippet: str | None = None
    prompt_guidelines: tuple[str, ...] | None = None
    execution_mode: ToolExecutionMode | None = None
    cwd: str = field(default=".", repr=True)

    def prepare_arguments(self, args: Any) -> Any:
        """Pi's ``prepareArguments`` shim, run on the raw arguments before validation."""
        return args

    @property
    def has_prepare_arguments(self) -> bool:
        return type(self).prepare_arguments is not AgentTool.prepare_arguments

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],  # the validated tool arguments: open JSON
        signal: AbortSignal | None = None,
        on_update: ToolUpdateCallback | None = None,
        ctx: ToolContext | None = None,
    ) -> AgentToolResult:
        raise NotImplementedError

    def effective_cwd(self, ctx: ToolContext | None) -> str:
        """``ctx?.cwd || cwd``: the session's cwd wins over the one the tool was made with."""
        return (ctx.cwd if ctx is not None and ctx.cwd else None) or self.cwd

    def to_tool_schema(self) -> ToolSchema:
        """The tool as Pi's agent hands it to its stream function: ``{name, label, description,
        parameters}`` in that order (the JSON of Pi's ``AgentTool`` object, which pi-ai's context
        estimate counts when it clamps the output limit; the request itself carries name,
        description and parameters)."""
        return tool_schema(self)


def tool_schema(tool: Any) -> ToolSchema:
    """Any tool object (an :class:`AgentTool` or a duck-typed one with ``name``, ``description``,
    ``parameters``) as Pi's agent hands it to pi-ai: ``{name, label, description, parameters}``,
    ``label`` left out when the tool has none (``JSON.stringify`` drops an undefined one)."""
    out: dict[str, Any] = {"name": tool.name}
    label = getattr(tool, "label", None)
    if label is not None:
        out["label"] = label
    out["description"] = tool.description
    out["parameters"] = tool.parameters
    return cast("ToolSchema", out)


class _DaemonWorkers:
    """Daemon threads that run blocking calls one after another, started on demand: a call goes to
    an idle worker, or to a new one when every worker is busy (a call blocked forever holds only
    its own thread). A worker idle for ``IDLE_SECONDS`` ends. (Starting a thread per call costs
    the calling loop a thread start, and a wait for the new thread to be scheduled, every time.)"""

    IDLE_SECONDS = 30.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Callable[[Any], None]]] = queue.SimpleQueue()
        self._idle = 0  # waiting workers no submitted job has claimed yet

    def submit(self, compute: Callable[[], Any], deliver: Callable[[Any], None]) -> None:
        """Run ``compute()`` (which must not raise) on a worker, then ``deliver(its result)`` there."""
        with self._lock:
            spawn = self._idle == 0
            if not spawn:
                self._idle -= 1  # claimed: that worker takes this job
        self._jobs.put((compute, deliver))
        if spawn:
            threading.Thread(target=self._work, name="pi-nb-tool-io", daemon=True).start()

    def _work(self) -> None:
        while True:
            try:
                compute, deliver = self._jobs.get(timeout=self.IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # no job is on its way to this worker: end
                        self._idle -= 1
                        return
                continue  # a submitted job claimed this worker: take it
            outcome = compute()
            with self._lock:  # idle again *before* the caller hears back (and submits the next)
                self._idle += 1
            with contextlib.suppress(Exception):  # (``deliver`` reports to the caller itself)
                deliver(outcome)

    def reset_after_fork(self) -> None:
        """In a forked child the workers do not exist: start afresh."""
        self._lock = threading.Lock()
        self._jobs = queue.SimpleQueue()
        self._idle = 0


_workers = _DaemonWorkers()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_workers.reset_after_fork)


def run_in_daemon_thread(fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Run blocking ``fn(*args)`` on a daemon thread; the future resolves on the calling loop.

    Unlike ``asyncio.to_thread`` the thread is not part of the loop's executor, so a call that
    stays blocked after its tool was aborted (a FIFO with no writer, a hung network mount) does
    not keep ``asyncio.run`` from returning. The threads are reused (:class:`_DaemonWorkers`);
    a blocked call keeps its own.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def compute() -> tuple[bool, Any]:
        try:
            return True, fn(*args)
        except BaseException as exc:  # delivered to the awaiting task
            return False, exc

    def deliver(outcome: tuple[bool, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            loop.call_soon_threadsafe(settle, *outcome)

    _workers.submit(compute, deliver)
    return future


MAX_SAFE_INTEGER = 2**53 - 1
"""``Number.MAX_SAFE_INTEGER``: grep, find and ls truncate by bytes only (no line limit)."""


def listing_result(
    lines: list[str],
    *,
    limit: tuple[str, str, Any] | None = None,
    after: tuple[tuple[str, str, Any], ...] = (),
) -> AgentToolResult:
    """The ending grep, find and ls share in Pi: the lines cut to 50 KB (bytes only, head kept),
    then one ``[...]`` of notices joined by ``". "`` in Pi's order: the count limit (``limit`` =
    notice, details key, value), ``50.0KB limit reached``, then ``after`` (same triples)."""
    from pi_nb.truncation import DEFAULT_MAX_BYTES, format_size, truncate_head

    truncation = truncate_head("\n".join(lines), max_lines=MAX_SAFE_INTEGER)
    output = truncation.content
    details: dict[str, Any] = {}  # keyed by the caller's names (grep, find and ls details differ)
    notices: list[str] = []
    if limit is not None:
        notices.append(limit[0])
        details[limit[1]] = limit[2]
    if truncation.truncated:
        notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
        details["truncation"] = truncation.to_dict()
    for text, key, value in after:
        notices.append(text)
        details[key] = value
    if notices:
        output += "\n\n[" + ". ".join(notices) + "]"
    return AgentToolResult(content=[{"type": "text", "text": output}], details=details or None)


# -- temp files written by tool calls -------------------------------------------------------------

_TEMP_FILES_LOCK = threading.Lock()
_TEMP_FILES: dict[str | None, list[str]] = {}


def track_tool_temp_file(path: str, session_id: str | None) -> None:
    """Record that a tool call for session ``session_id`` (``None``: a call without a session, e.g.
    :func:`~pi_nb.tools.run_tool` without a context) wrote the temp file ``path`` (bash's full
    output), so :func:`cleanup_tool_temp_files` can remove it when the session is closed."""
    with _TEMP_FILES_LOCK:
        paths = _TEMP_FILES.setdefault(session_id, [])
        if path not in paths:
            paths.append(path)


def tool_temp_files(session_id: str | None) -> list[str]:
    """The temp files tool calls wrote for ``session_id`` and that were not cleaned up yet."""
    with _TEMP_FILES_LOCK:
        return list(_TEMP_FILES.get(session_id, ()))


def cleanup_tool_temp_files(session_id: str | None, *, every_session: bool = False) -> list[str]:
    """Delete the temp files tool calls wrote for ``session_id`` (all sessions' with
    ``every_session=True``); returns the paths removed.

    Only regular files are removed: if a path was replaced meanwhile (by a symlink, a directory or
    anything else), it is left alone and forgotten. Files already gone are forgotten silently. A file
    that cannot be removed (permission denied) stays recorded, and :class:`~pi_nb.errors.ToolError`
    names it after every other file was handled.
    """
    with _TEMP_FILES_LOCK:
        keys = list(_TEMP_FILES) if every_session else [session_id]
        todo = [(key, _TEMP_FILES.pop(key, [])) for key in keys]
    removed: list[str] = []
    failed: list[tuple[str | None, str, OSError]] = []
    for key, paths in todo:
        for path in paths:
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue
                os.unlink(path)
            except FileNotFoundError:
                continue
            except OSError as exc:
                failed.append((key, path, exc))
                continue
            removed.append(path)
    if failed:
        for key, path, _ in failed:
            track_tool_temp_file(path, key)
        detail = "; ".join(f"{path}: {exc.strerror or exc}" for _, path, exc in failed)
        raise ToolError(f"Could not remove {len(failed)} tool temp file(s): {detail}")
    return removed
