"""``AgentSession``: Pi's coding-agent session (``core/agent-session.ts``) in Python.

It ties the pieces together exactly where Pi does:

* the system prompt is rebuilt from the resource loader (SYSTEM.md / APPEND_SYSTEM.md, context
  files, skills) and the active tools' snippets and guidelines;
* every message is recorded as a session entry on ``message_end`` (``custom`` role ->
  ``custom_message``), and a new session starts with ``model_change`` + ``thinking_level_change``;
* ``/skill:name`` and prompt templates are expanded before a prompt is sent;
* compaction runs at Pi's three checkpoints: after a run (``_handle_post_agent_run``), before a new
  prompt, and between turns inside one run (the agent's ``prepare_next_turn``); an overflow (or a
  recoverable ``length`` stop) is compacted and retried exactly once, with Pi's failure texts;
* a transient error (overloaded, rate limit, server error; not an overflow) is retried at the
  agent level as Pi does: the error stays in the session, leaves the agent's messages, and after
  ``retry.baseDelayMs * 2**(n-1)`` the agent continues, at most ``retry.maxRetries`` times
  (``auto_retry_start`` / ``auto_retry_end`` events; :meth:`abort` cancels the wait);
* ``compact()`` (manual) and ``navigate_tree()`` wrap :mod:`pi_nb.compaction`'s flows and rebuild
  the agent's messages from the session afterwards;
* Python hooks with Pi's event shapes: ``context`` (transform the messages of one request),
  ``before_agent_start`` (extra messages / a system prompt for one run), ``session_before_compact``,
  ``session_compact``, ``session_compact_failed``, ``session_before_tree``, ``session_tree``.

One async core (``await session.prompt(...)``); :meth:`AgentSession.run` is the sync wrapper for
scripts. Events go to :meth:`subscribe` listeners: the agent's events plus ``compaction_start`` /
``compaction_end``, ``auto_retry_start`` / ``auto_retry_end``, ``turn_notice``, ``session_tree``, ``queue_update`` and ``extension_error``
(the union :data:`~pi_nb.agent.events.AgentSessionEvent`, tagged by ``type``).
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict, TypeGuard, cast

from pi_nb._async import run_sync
from pi_nb._js import js_stringify
from pi_nb.agent.agent import Agent
from pi_nb.agent.events import (
    AgentEvent,
    AgentSessionEvent,
    CompactionEvent,
    SimpleHookEvent,
    TurnNoticeEvent,
)
from pi_nb.agent.loop import NextTurnSnapshot, TurnSnapshot
from pi_nb.compaction import (
    CompactionOutcome,
    CompactionOutcomeDict,
    HookRunner,
    NavigateTreeResult,
    is_context_overflow,
    navigate_tree,
    run_compaction,
)
from pi_nb.compaction.decision import (
    OVERFLOW_RECOVERY_FAILED,
    TRUNCATED_RECOVERY_FAILED,
    Checkpoint,
    CompactionDecision,
    ContextCount,
    ModelRef,
    decide,
    freed_no_room,
)
from pi_nb.compaction.retry import is_retryable_assistant_error
from pi_nb.compaction.settings import CompactionSettings, validate_reserve_for_window
from pi_nb.errors import AgentError, PiNbError, SettingsFileWarning
from pi_nb.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
    convert_to_llm,
    js_date_ms,
)
from pi_nb.providers.base import (
    Context,
    Model,
    ToolSchema,
    now_ms,
    validate_model_limits,
    validate_thinking_level,
)
from pi_nb.redaction import (
    RedactingBashOperations,
    redact,
    redact_message,
    register_auth_file,
    register_model_secrets,
)
from pi_nb.resources.context_files import ContextFile
from pi_nb.resources.loader import ResourceLoader
from pi_nb.resources.settings import SettingsManager
from pi_nb.session.context import get_latest_compaction_entry
from pi_nb.session.manager import SessionManager
from pi_nb.session.paths import get_agent_dir
from pi_nb.session.types import BranchSummaryEntry
from pi_nb.system_prompt import build_system_prompt, collect_tool_prompt_options
from pi_nb.tokens import estimate_context_tokens, estimate_tokens
from pi_nb.tools import (
    DEFAULT_ACTIVE_TOOLS,
    AgentTool,
    ToolContext,
    create_all_tools,
    validate_tool_arguments,
)
from pi_nb.tools.base import AbortSignal, tool_schema

if TYPE_CHECKING:  # imported where used, as before (the trust and skills modules load lazily)
    from pi_nb.resources.skills import Skill
    from pi_nb.resources.trust import TrustAsk

__all__ = [
    "OVERFLOW_RECOVERY_FAILED",
    "TRUNCATED_RECOVERY_FAILED",
    "TURN_NOTICE_CODES",
    "AgentSession",
    "PromptResult",
    "PromptUsage",
    "SessionContextUsage",
    "SessionHooks",
]

COMPACTING_PROMPT_ERROR = (
    "Cannot submit a prompt while compaction is in progress. Wait for compaction to finish and retry."
)
STREAMING_NAVIGATE_ERROR = "Wait for the current response to finish before navigating the session tree."

#: The ``code`` of a ``turn_notice`` event (and of an item of :attr:`PromptResult.notices`).
TURN_NOTICE_CODES = (
    "compaction_limit",  # error: the prompt used up compaction.maxAutoCompactionsPerPrompt
    "compaction_no_room",  # error: the request overflows again after compacting (same tool call)
    "compaction_skipped",  # warning (error on an overflow): compaction is due but has nothing to cut
    "session_write_failed",  # error: an entry could not be written; the turn stopped
)
_REMEDIES = (
    "use a model with a bigger context window, lower compaction.keepRecentTokens, or ask for a "
    "narrower result (read with offset/limit, a command piped through head or tail)"
)

Listener = Callable[[AgentSessionEvent], Any]


def _is_assistant(message: AgentMessage) -> TypeGuard[AssistantMessage]:
    return message.get("role") == "assistant"


def _is_custom(message: AgentMessage) -> TypeGuard[CustomMessage]:
    return message.get("role") == "custom"


def _is_text(block: TextContent | ThinkingContent | ToolCall) -> TypeGuard[TextContent]:
    return block.get("type") == "text"


class PromptUsage(TypedDict):
    """:attr:`PromptResult.usage`: the token counts of a prompt's assistant messages, summed."""

    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    totalTokens: int


class SessionContextUsage(TypedDict):
    """:meth:`AgentSession.get_context_usage`: ``{tokens, usageTokens, trailingTokens, contextWindow,
    threshold, percent, messageTokens}`` (``percent`` is ``None`` for a window of 0). Pi's own
    ``getContextUsage`` shape, ``{tokens, contextWindow, percent}``, is
    :class:`pi_nb.budget.ContextUsage`; this is that plus where the count came from."""

    tokens: int
    usageTokens: int
    trailingTokens: int
    contextWindow: int
    threshold: int
    percent: float | None
    messageTokens: list[int]


# the name this shape had before it was told apart from Pi's ContextUsage (still importable from here)
ContextUsage = SessionContextUsage


class _SystemPromptOptions(TypedDict):
    """The keyword arguments the session passes to :func:`~pi_nb.system_prompt.build_system_prompt`."""

    cwd: str
    custom_prompt: str | None
    selected_tools: list[str]
    tool_snippets: dict[str, str]
    prompt_guidelines: list[str]
    append_system_prompt: str | None
    context_files: list[ContextFile]
    skills: list[Skill]


class SessionHooks(HookRunner):
    """Python hooks for a session: the compaction/tree events plus ``context`` and ``before_agent_start``.

    ``context`` handlers get ``{"type": "context", "messages": [...]}`` (a deep copy) and may return
    ``{"messages": [...]}`` to replace the list for that request; ``before_agent_start`` handlers get
    ``{"type": "before_agent_start", "prompt", "images", "systemPrompt"}`` and may return
    ``{"messages": [...custom...], "systemPrompt": str}``; ``project_trust`` handlers get
    ``{"type": "project_trust", "cwd"}`` and may return ``{"trusted": "yes"|"no", "remember"?: bool}``
    (asked when the session is created without ``project_trusted``). A handler that raises is reported in
    ``errors`` and skipped, as Pi does with extensions.
    """

    EVENT_TYPES: ClassVar[tuple[str, ...]] = (
        *HookRunner.EVENT_TYPES,
        "context",
        "before_agent_start",
        "project_trust",
    )

    async def emit_simple(self, event_type: str, event: SimpleHookEvent) -> list[Any]:
        from pi_nb.compaction.hooks import HookError

        results = []
        for handler in self.handlers(event_type):
            try:
                value = handler(event)
                if inspect.isawaitable(value):
                    value = await value
                results.append(value)
            except Exception as exc:  # reported, skipped
                err = HookError(event_type, handler, exc)
                self.errors.append(err)
                if self._on_error is not None:
                    self._on_error(err)
        return results


@dataclass
class PromptResult:
    """What one ``prompt()`` produced: the new messages and entries, in order."""

    messages: list[AgentMessage] = field(default_factory=list)
    entry_ids: list[str] = field(default_factory=list)
    # CompactionOutcome.to_dict() of each compaction (its shape belongs to pi_nb.compaction)
    compactions: list[CompactionOutcomeDict] = field(default_factory=list)
    notices: list[TurnNoticeEvent] = field(default_factory=list)
    """``turn_notice`` events of this prompt: ``{type, level, code, message}`` (codes: TURN_NOTICE_CODES)."""
    error: str | None = None
    """Why the turn failed, or ``None``: a session-level stop (compaction limit, no room, a failed
    write) or the error text of the final assistant message (``stopReason: "error"``)."""

    @property
    def status(self) -> Literal["ok", "error", "aborted"]:
        """``"error"`` when :attr:`error` is set, ``"aborted"`` when the last response was aborted."""
        if self.error is not None:
            return "error"
        last = self.last_assistant
        if last is not None and last.get("stopReason") == "aborted":
            return "aborted"
        return "ok"

    @property
    def last_assistant(self) -> AssistantMessage | None:
        return next((m for m in reversed(self.messages) if _is_assistant(m)), None)

    @property
    def text(self) -> str:
        msg = self.last_assistant
        if msg is None:
            return ""
        return "".join(b.get("text", "") for b in msg.get("content") or [] if _is_text(b))

    @property
    def usage(self) -> PromptUsage:
        total: PromptUsage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
        for m in self.messages:
            if _is_assistant(m) and m.get("usage"):
                usage = m["usage"]
                total["input"] += _count(usage, "input")
                total["output"] += _count(usage, "output")
                total["cacheRead"] += _count(usage, "cacheRead")
                total["cacheWrite"] += _count(usage, "cacheWrite")
                total["totalTokens"] += _count(usage, "totalTokens")
        return total


def _count(usage: Mapping[str, Any], key: str) -> int:
    """``int(usage[key] or 0)``: a usage read from a session file may lack a count (or hold a string)."""
    return int(usage.get(key) or 0)


class _BoundTool:
    """A tool with the session's context bound (cwd, model, session id/file for PI_* variables)."""

    def __init__(self, tool: AgentTool, ctx: Callable[[], ToolContext]) -> None:
        self._tool = tool
        self._ctx = ctx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tool, name)

    async def execute(
        self, tool_call_id: str, params: dict[str, Any], signal: Any = None, on_update: Any = None
    ) -> Any:
        tool: Any = self._tool
        operations = getattr(tool, "operations", None)
        if operations is not None and callable(getattr(operations, "exec", None)):
            if not isinstance(operations, RedactingBashOperations):
                # a per-call copy: the output is redacted as it streams (split keys included),
                # and the caller's tool object is left as it was
                tool = copy.copy(tool)
                tool.operations = RedactingBashOperations(operations)
        return await tool.execute(tool_call_id, params, signal, on_update, self._ctx())


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def initial_thinking_level(
    model: Model,
    settings: SettingsManager,
    *,
    explicit: str | None = None,
    has_messages: bool = False,
    recorded: str | None = None,
    where: str = "thinking level recorded in the session",
) -> str:
    """The thinking level a session starts at, as Pi's ``createAgentSession`` chooses it.

    ``explicit`` (the caller's choice) wins. A session with messages resumes at its ``recorded``
    level (the last ``thinking_level_change`` on its branch), or without one at the settings'
    ``defaultThinkingLevel``, else ``"medium"``. A new session takes the model's
    ``modelThinkingLevels`` entry, else ``defaultThinkingLevel``, else ``"medium"``. The result is
    clamped to what the model supports (``"off"`` for a model without reasoning; a level the model
    lacks becomes the nearest one it has, above first).
    """
    from pi_nb.providers.thinking_levels import DEFAULT_THINKING_LEVEL, clamp_thinking_level

    level: str | None = validate_thinking_level(explicit) if explicit is not None else None
    if level is None and has_messages:
        if recorded is not None and recorded != "":
            level = validate_thinking_level(recorded, where)
        else:
            level = settings.get_default_thinking_level() or DEFAULT_THINKING_LEVEL
    if level is None:
        level = settings.get_model_thinking_level(model.provider, model.id)
    if level is None:
        level = settings.get_default_thinking_level() or DEFAULT_THINKING_LEVEL
    return clamp_thinking_level(model, level)


class AgentSession:
    """A session that runs agent turns and records them (see the module docstring)."""

    def __init__(
        self,
        session_manager: SessionManager,
        model: Model,
        *,
        agent_dir: str | None = None,
        settings: SettingsManager | None = None,
        resource_loader: ResourceLoader | None = None,
        tools: Mapping[str, AgentTool] | Sequence[AgentTool] | None = None,
        active_tools: Sequence[str] | None = None,
        thinking_level: str | None = None,
        hooks: SessionHooks | None = None,
        project_trusted: bool | None = None,
        ask: TrustAsk | None = None,
    ) -> None:
        self.session_manager = session_manager
        self.cwd = session_manager.get_cwd()
        self.agent_dir = agent_dir or get_agent_dir()
        self.hooks = hooks or SessionHooks()
        if project_trusted is None and settings is None:
            project_trusted = self._resolve_project_trust(ask)
        self.settings = settings or SettingsManager.create(
            self.cwd, self.agent_dir, project_trusted=bool(project_trusted)
        )
        if settings is None:
            _warn_settings_errors(self.settings)
        if resource_loader is None:
            resource_loader = ResourceLoader(
                cwd=self.cwd, agent_dir=self.agent_dir, settings_manager=self.settings
            )
            resource_loader.reload()
        self.resource_loader = resource_loader
        if tools is None:
            tools = create_all_tools(self.cwd)
        tool_list = list(tools.values()) if isinstance(tools, Mapping) else list(tools)
        self._tool_registry: dict[str, AgentTool] = {t.name: t for t in tool_list}

        _check_model(model)
        register_model_secrets(model)
        # the keys in Pi's auth.json are credentials pi_nb can read: redacted wherever they appear
        register_auth_file(os.path.join(self.agent_dir, "auth.json"))
        context = session_manager.build_session_context()
        has_thinking_entry = any(
            e.get("type") == "thinking_level_change" for e in session_manager.get_branch()
        )
        level = initial_thinking_level(
            model,
            self.settings,
            explicit=thinking_level,
            has_messages=bool(context.messages),
            recorded=context.thinking_level if has_thinking_entry else None,
            where=f"thinking level recorded in {session_manager.get_session_file()}",
        )
        self.agent = Agent(
            model,
            thinking_level=level,
            convert_to_llm=self._convert_to_llm,
            transform_context=self._transform_context,
            validate_arguments=validate_tool_arguments,
            session_id=session_manager.get_session_id(),
        )
        self.agent.prepare_next_turn = self._prepare_next_turn
        self.agent.subscribe(self._handle_agent_event)
        self._listeners: list[Listener] = []
        self._overflow_recovery_attempted = False
        self._last_assistant: AssistantMessage | None = None
        self._compacting = False
        self._compaction_controller: AbortSignal | None = None
        self._system_prompt_override: str | None = None
        self._active: list[str] = []
        self._collector: PromptResult | None = None
        self._auto_compactions = 0
        self._overflow_signature: tuple[str, ...] | None = None
        self._turn_error: str | None = None
        self._noticed: set[str] = set()
        self._write_error: BaseException | None = None
        self._retry_attempt = 0
        self._retry_controller: AbortSignal | None = None
        self.set_active_tools(list(active_tools) if active_tools is not None else list(DEFAULT_ACTIVE_TOOLS))
        if context.messages:
            self.agent.state.messages = list(context.messages)
            if not has_thinking_entry:
                # Pi records the level a resumed session without one now runs at
                session_manager.append_thinking_level_change(level)
        else:
            # a session without messages starts as a new one (Pi's createAgentSession)
            session_manager.append_model_change(model.provider, model.id)
            session_manager.append_thinking_level_change(level)

    def _resolve_project_trust(self, ask: TrustAsk | None) -> bool:
        """Pi's resolution order: no project resources -> trusted; ``project_trust`` hooks;
        the saved decision; ``defaultProjectTrust`` from the global settings; then ``ask`` (a
        callable given the :class:`~pi_nb.resources.trust.TrustPrompt`), and with no way to ask,
        untrusted."""
        from pi_nb.resources.trust import ProjectTrustStore, resolve_project_trusted

        global_settings = SettingsManager.create(self.cwd, self.agent_dir, project_trusted=False)
        return resolve_project_trusted(
            self.cwd,
            ProjectTrustStore(self.agent_dir),
            default_project_trust=global_settings.get_default_project_trust(),
            project_trust=list(self.hooks.handlers("project_trust")) or None,
            ask=ask,
        )

    # -- properties ----------------------------------------------------------------------------
    @property
    def model(self) -> Model:
        return self.agent.state.model

    @property
    def thinking_level(self) -> str:
        return self.agent.state.thinking_level

    @property
    def messages(self) -> list[AgentMessage]:
        return self.agent.state.messages

    @property
    def system_prompt(self) -> str:
        return self.agent.state.system_prompt

    @property
    def is_streaming(self) -> bool:
        return self.agent.is_running

    @property
    def is_compacting(self) -> bool:
        return self._compacting

    @property
    def session_id(self) -> str:
        return self.session_manager.get_session_id()

    @property
    def session_file(self) -> str | None:
        return self.session_manager.get_session_file()

    def get_active_tool_names(self) -> list[str]:
        return list(self._active)

    def get_all_tools(self) -> list[AgentTool]:
        return list(self._tool_registry.values())

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, event: AgentSessionEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    def _emit_own(self, event: AgentSessionEvent) -> None:
        """An event the session makes itself (compaction, hooks, notices): redacted before it is shown."""
        self._emit(redact_message(event))

    def _emit_compaction(self, event: Mapping[str, Any]) -> None:
        """``run_compaction``'s ``emit``: its events are ``compaction_start`` / ``compaction_end``."""
        self._emit_own(cast(CompactionEvent, event))

    def _notice(
        self, level: Literal["error", "warning"], code: str, message: str, *, once: bool = False
    ) -> None:
        """A ``turn_notice`` event, kept in the prompt's result; an error also ends the turn."""
        if once and code in self._noticed:
            return
        self._noticed.add(code)
        event: TurnNoticeEvent = {
            "type": "turn_notice",
            "level": level,
            "code": code,
            "message": redact(message),
        }
        if self._collector is not None:
            self._collector.notices.append(event)
        if level == "error" and self._turn_error is None:
            self._turn_error = event["message"]
        self._emit(event)

    # -- configuration ----------------------------------------------------------------------------
    def set_active_tools(self, names: Sequence[str]) -> None:
        unknown = [n for n in names if n not in self._tool_registry]
        if unknown:
            raise AgentError(f"Unknown tool(s): {', '.join(unknown)}")
        self._active = list(names)
        self.agent.state.tools = [
            _BoundTool(self._tool_registry[n], self._tool_context) for n in self._active
        ]
        self._base_system_prompt = self._rebuild_system_prompt(self._active)
        self.agent.state.system_prompt = self._base_system_prompt

    def set_model(self, model: Model) -> None:
        """Switch to ``model`` (a ``model_change`` entry), then apply the thinking level Pi picks
        for a model switch: the model's ``modelThinkingLevels`` entry, else
        ``defaultThinkingLevel``, else the current level, clamped to the new model (a
        ``thinking_level_change`` entry when that changes the level)."""
        _check_model(model)
        register_model_secrets(model)
        level = self.settings.get_model_thinking_level(model.provider, model.id)
        if level is None:
            level = self.settings.get_default_thinking_level() or self.thinking_level
        # written first: if the file cannot take the entry, the session keeps its model
        self.session_manager.append_model_change(model.provider, model.id)
        self.agent.state.model = model
        self.set_thinking_level(level)

    def set_thinking_level(self, level: str) -> None:
        """Pi's ``setThinkingLevel``: ``level`` clamped to what the model supports; a
        ``thinking_level_change`` entry only when the level actually changes."""
        from pi_nb.providers.thinking_levels import clamp_thinking_level

        effective = clamp_thinking_level(self.model, validate_thinking_level(level))
        if effective == self.agent.state.thinking_level:
            return
        self.session_manager.append_thinking_level_change(effective)
        self.agent.state.thinking_level = effective

    def _check_settings(self, model: Model) -> CompactionSettings:
        """The compaction settings, refused (InvalidValueError) when the reserve leaves no room in
        the model's window. Checked when a prompt is sent, not when the model or the settings
        change: a notebook sets a small window first and the smaller reserve on the next line."""
        settings = self.settings.get_compaction_settings()
        if settings.enabled:
            validate_reserve_for_window(settings, model.context_window, f"{model.provider}/{model.id}")
        return settings

    def reload_resources(self) -> None:
        self.resource_loader.reload()
        self.set_active_tools(self._active)

    def _tool_context(self) -> ToolContext:
        return ToolContext(
            cwd=self.cwd,
            model=self.model,
            thinking_level=self.thinking_level,
            session_id=self.session_id,
            session_file=self.session_file,
        )

    def _loader_skills(self) -> list[Skill]:
        return list(self.resource_loader.get_skills().skills)

    def _rebuild_system_prompt(self, tool_names: Sequence[str]) -> str:
        valid = [n for n in tool_names if n in self._tool_registry]
        snippets, guidelines = collect_tool_prompt_options(
            valid,
            {n: self._tool_registry[n].prompt_snippet for n in valid},
            {n: self._tool_registry[n].prompt_guidelines for n in valid},
        )
        loader = self.resource_loader
        append = list(loader.get_append_system_prompt())
        agents = loader.get_agents_files()
        self._system_prompt_options: _SystemPromptOptions = {
            "cwd": self.cwd,
            "custom_prompt": loader.get_system_prompt(),
            "selected_tools": valid,
            "tool_snippets": snippets,
            "prompt_guidelines": guidelines,
            "append_system_prompt": "\n\n".join(append) if append else None,
            "context_files": list(agents),
            "skills": self._loader_skills(),
        }
        return build_system_prompt(**self._system_prompt_options)

    def system_prompt_parts(self) -> dict[str, str]:
        """The pieces of the current system prompt by category (for token budgets; costs nothing)."""
        from pi_nb.resources.skills import format_skills_for_prompt

        opts = self._system_prompt_options
        parts: dict[str, str] = {}
        files = opts["context_files"]
        if files:
            parts["context files"] = "".join(
                f'<project_instructions path="{getattr(f, "path", "")}">\n{getattr(f, "content", "")}\n</project_instructions>\n\n'
                for f in files
            )
        skills = opts["skills"]
        read_tool = next((t for t in ("read", "bash") if t in opts["selected_tools"]), None)
        if skills and read_tool:
            parts["skills list"] = format_skills_for_prompt(skills, "read" if read_tool == "read" else "bash")
        if opts["append_system_prompt"]:
            parts["append"] = opts["append_system_prompt"]
        return parts

    # -- conversion hooks ---------------------------------------------------------------------------
    def _convert_to_llm(self, messages: list[AgentMessage]) -> list[Message]:
        return convert_to_llm(messages, block_images=bool(self.settings.get_block_images()))

    async def _transform_context(self, messages: list[AgentMessage], signal: Any) -> list[AgentMessage]:
        if not self.hooks.has_handlers("context"):
            return messages
        current = copy.deepcopy(messages)
        for handler in self.hooks.handlers("context"):
            try:
                result = await _maybe_await(handler({"type": "context", "messages": current}))
                if isinstance(result, Mapping) and result.get("messages") is not None:
                    current = list(result["messages"])
            except Exception as exc:
                from pi_nb.compaction.hooks import HookError

                self.hooks.errors.append(HookError("context", handler, exc))
        return current

    # -- events / persistence -------------------------------------------------------------------
    async def _handle_agent_event(self, event: AgentEvent, signal: AbortSignal) -> None:
        if event["type"] == "message_start" and event["message"].get("role") == "user":
            self._overflow_recovery_attempted = False
        self._emit(event)
        if event["type"] == "message_end":
            msg = event["message"]
            role = msg.get("role")
            entry_id: str | None = None
            if self._write_error is None:
                try:
                    if _is_custom(msg):
                        entry_id = self.session_manager.append_custom_message_entry(
                            msg.get("customType"),
                            msg.get("content"),
                            bool(msg.get("display")),
                            msg.get("details"),
                        )
                    elif role in ("user", "assistant", "toolResult"):
                        entry_id = self.session_manager.append_message(msg)
                except (OSError, PiNbError) as exc:
                    self._on_write_failed(exc)
            if self._collector is not None:
                self._collector.messages.append(msg)
                if entry_id:
                    self._collector.entry_ids.append(entry_id)
            if _is_assistant(msg):
                self._last_assistant = msg
                if msg.get("stopReason") not in ("error", "length"):
                    self._overflow_recovery_attempted = False
                if msg.get("stopReason") != "error" and self._retry_attempt > 0:
                    # Pi resets the count on the first answer that is not an error
                    self._emit_own(
                        {"type": "auto_retry_end", "success": True, "attempt": self._retry_attempt}
                    )
                    self._retry_attempt = 0

    def _on_write_failed(self, exc: BaseException) -> None:
        """An entry could not be written (permission denied, disk full...): stop the run, and make
        the agent's history what the file holds again once it has stopped (see :meth:`_resync`)."""
        self._write_error = exc
        self._notice(
            "error",
            "session_write_failed",
            f"Could not write to the session file {self.session_file}: {exc}. The turn was stopped; "
            "the conversation continues from what the file holds. Free disk space or fix the file's "
            "permissions, then send the prompt again.",
        )
        self.agent.abort()

    def _resync(self) -> None:
        """The agent's messages from the session's context: after a failed write, the next request
        sends exactly what the file's context holds (nothing that was not written)."""
        self.agent.state.messages = list(self.session_manager.build_session_context().messages)

    # -- prompting ------------------------------------------------------------------------------
    def expand_input(self, text: str) -> str:
        """``/skill:name args`` then ``/template args`` expansion, as Pi does before sending."""
        from pi_nb.resources.prompt_templates import expand_prompt_template
        from pi_nb.resources.skills import expand_skill_command

        def report(skill: Any, error: Exception) -> None:  # Pi: an error event, the text is sent unchanged
            self._emit_own(
                {
                    "type": "extension_error",
                    "event": "skill_expansion",
                    "extensionPath": skill.file_path,
                    "error": str(error),
                }
            )

        expanded = expand_skill_command(text, self._loader_skills(), on_error=report)
        return expand_prompt_template(expanded, list(self.resource_loader.get_prompts().prompts))

    async def prompt(
        self,
        text: str,
        *,
        images: Sequence[ImageContent] = (),
        streaming_behavior: Literal["steer", "follow_up"] | None = None,
        expand: bool = True,
    ) -> PromptResult:
        """Send one prompt and run the agent until it stops (Pi's ``AgentSession.prompt``)."""
        if self._compacting:
            raise AgentError(COMPACTING_PROMPT_ERROR)
        expanded = self.expand_input(text) if expand else text
        if not self.is_streaming:
            _check_model(self.model)
            self._check_settings(self.model)  # settings.json may have changed since the last prompt
        if self.is_streaming:
            if streaming_behavior is None:
                raise AgentError(
                    "Agent is already processing. Specify streaming_behavior ('steer' or 'follow_up') to queue the message."
                )
            message: UserMessage = {
                "role": "user",
                "content": [{"type": "text", "text": expanded}, *images],
                "timestamp": now_ms(),
            }
            (self.agent.steer if streaming_behavior == "steer" else self.agent.follow_up)(message)
            self._emit({"type": "queue_update"})
            return PromptResult()
        last = next((m for m in reversed(self.agent.state.messages) if _is_assistant(m)), None)
        result = PromptResult()
        self._collector = result
        self._auto_compactions = 0
        self._overflow_signature = None
        self._turn_error = None
        self._noticed = set()
        self._write_error = None
        try:
            if last is not None:
                await self._check_compaction(last, skip_aborted_check=False, result=result)
            messages: list[AgentMessage] = [
                {
                    "role": "user",
                    "content": [{"type": "text", "text": expanded}, *images],
                    "timestamp": now_ms(),
                }
            ]
            hook_results = await self.hooks.emit_simple(
                "before_agent_start",
                {
                    "type": "before_agent_start",
                    "prompt": expanded,
                    "images": list(images),
                    "systemPrompt": self._base_system_prompt,
                },
            )
            system_override = None
            for r in hook_results:
                if not isinstance(r, Mapping):
                    continue
                for m in r.get("messages") or []:
                    messages.append(
                        {
                            "role": "custom",
                            "customType": m.get("customType"),
                            "content": m.get("content") if m.get("content") is not None else [],
                            "display": bool(m.get("display")),
                            "details": m.get("details"),
                            "timestamp": now_ms(),
                        }
                    )
                if r.get("systemPrompt") is not None:
                    system_override = r["systemPrompt"]
            self._system_prompt_override = system_override
            self.agent.state.system_prompt = (
                system_override if system_override is not None else self._base_system_prompt
            )
            await self._run_agent_prompt(messages, result)
        finally:
            self._collector = None
            self._system_prompt_override = None
            self.agent.state.system_prompt = self._base_system_prompt
            if self._write_error is not None:
                self._resync()
        if self._turn_error is not None:
            result.error = self._turn_error
        else:
            final = result.last_assistant
            if final is not None and final.get("stopReason") == "error":
                result.error = str(final.get("errorMessage") or "The model stopped with an error")
        return result

    def run(self, text: str, **kwargs: Any) -> PromptResult:
        """Synchronous :meth:`prompt` for scripts and notebooks.

        Inside a running event loop (a Jupyter cell) the turn runs on a worker thread with its own
        loop and this call blocks until it ends; ``await session.prompt(...)`` is the non-blocking form.
        """
        return run_sync(self.prompt(text, **kwargs), thread_name="pi_nb-run")

    async def _run_agent_prompt(self, messages: list[AgentMessage], result: PromptResult) -> None:
        await self.agent.prompt(messages)
        while await self._handle_post_agent_run(result):
            await self.agent.continue_()

    async def _handle_post_agent_run(self, result: PromptResult) -> bool:
        msg, self._last_assistant = self._last_assistant, None
        if msg is None or self._write_error is not None or self._turn_error is not None:
            return False
        if self._is_retryable_error(msg) and await self._prepare_retry(msg):
            return True
        if msg.get("stopReason") == "error" and self._retry_attempt > 0:
            self._emit_own(
                {
                    "type": "auto_retry_end",
                    "success": False,
                    "attempt": self._retry_attempt,
                    "finalError": msg.get("errorMessage"),
                }
            )
            self._retry_attempt = 0
        if await self._check_compaction(msg, result=result):
            return True
        return self.agent.has_queued_messages()

    def _is_retryable_error(self, message: AssistantMessage) -> bool:
        """Pi's ``_isRetryableError``: a transient error, never a context overflow (compaction's)."""
        if is_context_overflow(message, self.model.context_window):
            return False
        return is_retryable_assistant_error(message)

    async def _prepare_retry(self, message: AssistantMessage) -> bool:
        """Pi's ``_prepareRetry``: count the attempt, drop the error from the agent's messages (the
        session keeps it), wait the backoff; ``False`` when retries are off, used up or aborted."""
        settings = self.settings.get_retry_settings()
        if not settings.enabled:
            return False
        self._retry_attempt += 1
        if self._retry_attempt > settings.max_retries:
            self._retry_attempt -= 1  # kept for the final auto_retry_end
            return False
        delay_ms = settings.base_delay_ms * 2 ** (self._retry_attempt - 1)
        self._emit_own(
            {
                "type": "auto_retry_start",
                "attempt": self._retry_attempt,
                "maxAttempts": settings.max_retries,
                "delayMs": delay_ms,
                "errorMessage": str(message.get("errorMessage") or "Unknown error"),
            }
        )
        messages = self.agent.state.messages
        if messages and messages[-1].get("role") == "assistant":
            self.agent.state.messages = messages[:-1]
        controller = AbortSignal()
        self._retry_controller = controller
        try:
            try:
                await asyncio.wait_for(controller.wait(), delay_ms / 1000)
            except TimeoutError:
                pass
            if controller.aborted:
                attempt, self._retry_attempt = self._retry_attempt, 0
                self._emit_own(
                    {
                        "type": "auto_retry_end",
                        "success": False,
                        "attempt": attempt,
                        "finalError": "Retry cancelled",
                    }
                )
                return False
        finally:
            self._retry_controller = None
        return True

    @property
    def retry_attempt(self) -> int:
        """The current auto-retry attempt (0 when not retrying)."""
        return self._retry_attempt

    def abort(self) -> None:
        if self._retry_controller is not None:
            self._retry_controller.abort()
        self.agent.abort()
        if self._compaction_controller is not None:
            self._compaction_controller.abort()

    # -- compaction --------------------------------------------------------------------------------
    def _decide(
        self, checkpoint: Checkpoint, msg: AssistantMessage | None, messages: Sequence[AgentMessage]
    ) -> CompactionDecision:
        """What :func:`pi_nb.compaction.decision.decide` says on the live session's state."""
        model = self.model
        latest = get_latest_compaction_entry(self.session_manager.get_branch()) if msg is not None else None
        latest_ms = _iso_ms(latest["timestamp"]) if latest is not None else None

        def estimate() -> ContextCount:
            counted = estimate_context_tokens(messages)
            anchor = messages[counted.last_usage_index] if counted.last_usage_index is not None else None
            stale = anchor is not None and anchor.get("role") == "assistant"
            return ContextCount(counted.tokens, stale and _not_newer(anchor, latest_ms))

        signature = _last_tool_calls(self.agent.state.messages)
        return decide(
            checkpoint,
            msg,
            self.settings.get_compaction_settings(),
            ModelRef(model.provider, model.id, model.context_window, model.max_tokens)
            if model is not None
            else None,
            estimate,
            message_stale=msg is not None and _not_newer(msg, latest_ms),
            overflow_attempted=self._overflow_recovery_attempted,
            repeats_overflow=bool(signature) and signature == self._overflow_signature,
            compactions_so_far=self._auto_compactions,
        )

    async def _check_compaction(
        self, msg: AssistantMessage, *, skip_aborted_check: bool = True, result: PromptResult | None = None
    ) -> bool:
        """Pi's ``_checkCompaction``: after a run (aborted answers skipped) or before a prompt."""
        checkpoint: Checkpoint = "after_run" if skip_aborted_check else "pre_prompt"
        return await self._run_auto_compaction(
            self._decide(checkpoint, msg, self.agent.state.messages), result
        )

    async def _run_auto_compaction(self, decision: CompactionDecision, result: PromptResult | None) -> bool:
        """Carry out a decision: Pi's events for a failed recovery, the overflow retry's bookkeeping,
        pi_nb's notices, and the compaction. ``True``: the run goes on (``agent.continue()``)."""
        window = decision.context_window
        error_message = decision.error_message
        if error_message is not None:
            self._emit_own(
                {
                    "type": "compaction_end",
                    "reason": "overflow",
                    "result": None,
                    "aborted": False,
                    "willRetry": False,
                    "errorMessage": error_message,
                }
            )
            await self.hooks.emit_simple(
                "session_compact_failed",
                {
                    "type": "session_compact_failed",
                    "reason": "overflow",
                    "errorMessage": error_message,
                    "aborted": False,
                    "willRetry": False,
                    "fromExtension": False,
                },
            )
            if self._turn_error is None:
                self._turn_error = error_message
            return False
        if decision.why == "no_room":
            # pi_nb: the same tool call overflowing again after a compaction means the compaction
            # freed no room for it; retrying would compact forever
            signature = _last_tool_calls(self.agent.state.messages)
            self._notice(
                "error",
                "compaction_no_room",
                f"Compaction freed no room: after compacting, the request overflowed the "
                f"{window}-token context window again with the same tool call "
                f"({'; '.join(signature)}). Its result does not fit in the window; {_REMEDIES}.",
            )
            return False
        if decision.action == "none":
            return False
        reason: Literal["threshold", "overflow"] = (
            "overflow" if decision.action == "overflow" else "threshold"
        )
        will_retry = decision.will_retry
        if will_retry:
            if decision.trigger == "overflow":
                self._overflow_signature = _last_tool_calls(self.agent.state.messages)
            self._overflow_recovery_attempted = True
            msgs = self.agent.state.messages
            if msgs and msgs[-1].get("role") == "assistant":
                self.agent.state.messages = msgs[:-1]
        settings = self.settings.get_compaction_settings()
        if decision.over_limit:
            limit = settings.max_auto_compactions_per_prompt
            text = (
                f"This prompt already ran {self._auto_compactions} automatic compactions "
                f"(compaction.maxAutoCompactionsPerPrompt = {limit})"
            )
            if reason == "overflow":
                self._notice(
                    "error",
                    "compaction_limit",
                    f"{text} and the request still overflows the {window}-token context window, so "
                    f"the turn ends here. To go on, {_REMEDIES}, or raise maxAutoCompactionsPerPrompt.",
                )
            else:
                self._notice(
                    "warning",
                    "compaction_limit",
                    f"{text}; the context is over the compaction threshold again but is not compacted "
                    "until the next prompt.",
                    once=True,
                )
            return False
        self._auto_compactions += 1
        outcome = await self._compaction(reason, will_retry=will_retry)
        if outcome.status == "skipped":
            self._auto_compactions -= 1  # nothing ran
            self._report_skipped(reason, outcome, settings)
            return False
        if outcome.status == "failed" and will_retry and self._turn_error is None:
            self._turn_error = outcome.error_message
        if not outcome.compacted:
            return False
        self._after_compaction(outcome, result)
        after = outcome.result.estimated_tokens_after if outcome.result is not None else None
        if freed_no_room(decision, after):
            self._notice(
                "error",
                "compaction_no_room",
                f"Compaction freed no room: the context still holds about {after} tokens after "
                f"compacting, which does not fit in the {window}-token context window; {_REMEDIES}.",
            )
            return False
        if will_retry:
            msgs = self.agent.state.messages
            if (
                msgs
                and msgs[-1].get("role") == "assistant"
                and msgs[-1].get("stopReason") in ("error", "length")
            ):
                self.agent.state.messages = msgs[:-1]
            return True
        return self.agent.has_queued_messages()

    async def _compaction(
        self,
        reason: Literal["manual", "threshold", "overflow"],
        *,
        will_retry: bool = False,
        custom_instructions: str | None = None,
    ) -> CompactionOutcome:
        """One compaction through :func:`pi_nb.compaction.run_compaction`, abortable via :meth:`abort`."""
        controller = AbortSignal()
        self._compaction_controller = controller
        self._compacting = True
        try:
            return await run_compaction(
                self.session_manager,
                self.model,
                self.settings.get_compaction_settings(),
                reason=reason,
                custom_instructions=custom_instructions,
                will_retry=will_retry,
                hooks=self.hooks,
                signal=controller,
                thinking_level=self.thinking_level,
                retry=self.settings.get_retry_settings(),
                emit=self._emit_compaction,
                session_id=self.session_id,
            )
        finally:
            self._compacting = False
            self._compaction_controller = None

    def _report_skipped(
        self,
        reason: Literal["threshold", "overflow"],
        outcome: CompactionOutcome,
        settings: CompactionSettings,
    ) -> None:
        """Compaction was due but could not run: say why (Pi skips in silence)."""
        tokens = estimate_context_tokens(self.agent.state.messages).tokens
        why = outcome.skip_reason
        if why == "already_compacted":
            cause = "the session already ends with a compaction, so there is nothing new to summarise"
        elif why == "no_model":
            cause = "no model is selected"
        else:
            cause = (
                "there is nothing before the kept recent part to summarise (compaction.keepRecentTokens "
                f"is {settings.keep_recent_tokens}, and a cut can only fall at a user or assistant "
                "message, never inside a tool result)"
            )
        window = self.model.context_window
        if reason == "overflow":
            self._notice(
                "error",
                "compaction_skipped",
                f"The request overflows the {window}-token context window and compaction cannot run: "
                f"{cause}. {_REMEDIES[0].upper()}{_REMEDIES[1:]}.",
            )
        else:
            self._notice(
                "warning",
                "compaction_skipped",
                f"Compaction is due (about {tokens} tokens, threshold "
                f"{window - settings.reserve_tokens}) but cannot run: {cause}. Lower "
                "compaction.keepRecentTokens to let it cut older turns.",
                once=True,
            )

    def _after_compaction(self, outcome: CompactionOutcome, result: PromptResult | None) -> None:
        context = outcome.context or self.session_manager.build_session_context()
        self.agent.state.messages = list(context.messages)
        if result is not None:
            result.compactions.append(outcome.to_dict())

    async def _prepare_next_turn(self, turn: TurnSnapshot, signal: AbortSignal | None) -> NextTurnSnapshot:
        """Checkpoint 3 (new in 0.85): compact between turns when the context crossed the threshold."""
        context = turn.context
        decision = self._decide("between_turns", None, context.messages)
        if decision.action != "none":
            await self._run_auto_compaction(decision, self._collector)
            context.messages = list(self.agent.state.messages)
        context.system_prompt = (
            self._system_prompt_override
            if self._system_prompt_override is not None
            else self._base_system_prompt
        )
        context.tools = list(self.agent.state.tools)
        return NextTurnSnapshot(
            context=context, model=self.agent.state.model, thinking_level=self.agent.state.thinking_level
        )

    async def compact(self, custom_instructions: str | None = None) -> CompactionOutcome:
        """Manual compaction (``/compact``): aborts a running turn first; failures raise."""
        self.abort()
        outcome = await self._compaction("manual", custom_instructions=custom_instructions)
        if outcome.compacted:
            self._after_compaction(outcome, None)
        return outcome

    # -- tree ---------------------------------------------------------------------------------------
    async def navigate_tree(
        self,
        target_id: str,
        *,
        summarize: bool = False,
        custom_instructions: str | None = None,
        replace_instructions: bool | None = None,
        label: str | None = None,
    ) -> NavigateTreeResult:
        """Move to another point of the tree, optionally summarising the branch left behind."""
        if self.is_streaming:
            raise AgentError(STREAMING_NAVIGATE_ERROR)
        old_leaf = self.session_manager.get_leaf_id()
        outcome = await navigate_tree(
            self.session_manager,
            target_id,
            summarize=summarize,
            custom_instructions=custom_instructions,
            replace_instructions=replace_instructions,
            label=label,
            model=self.model,
            hooks=self.hooks,
            branch_summary_settings=self.settings.get_branch_summary_settings(),
            retry=self.settings.get_retry_settings(),
        )
        if outcome.context is not None:
            self.agent.state.messages = list(outcome.context.messages)
        if not outcome.cancelled and outcome.new_leaf_id != old_leaf:
            self._emit(
                {
                    "type": "session_tree",
                    "newLeafId": self.session_manager.get_leaf_id(),
                    "oldLeafId": old_leaf,
                    "summaryEntry": _branch_summary_entry(outcome.summary_entry),
                    "fromExtension": outcome.from_extension,
                }
            )
        return outcome

    # -- measurements (cost no tokens) -----------------------------------------------------------------
    async def build_request_context(self) -> Context:
        """The request the next model call would send now: ``context`` hooks, then ``convert_to_llm``,
        the system prompt and the active tools' schemas (nothing is sent)."""
        messages = await self._transform_context(list(self.agent.state.messages), None)
        tools: list[ToolSchema] = [tool_schema(t) for t in self.agent.state.tools]
        # list[Any]: Context.messages (pi_nb.providers.base) is typed as plain dicts, not as Message
        llm_messages: list[Any] = self._convert_to_llm(messages)
        return Context(self.agent.state.system_prompt, llm_messages, tools)

    def get_context_usage(self) -> SessionContextUsage:
        """Pi's ``getContextUsage``: tokens of the current context against the window (estimate + usage)."""
        estimate = estimate_context_tokens(self.agent.state.messages)
        window = self.model.context_window
        settings = self.settings.get_compaction_settings()
        return {
            "tokens": estimate.tokens,
            "usageTokens": estimate.usage_tokens,
            "trailingTokens": estimate.trailing_tokens,
            "contextWindow": window,
            "threshold": window - settings.reserve_tokens,
            "percent": (estimate.tokens / window * 100) if window else None,
            "messageTokens": [estimate_tokens(m) for m in self.agent.state.messages],
        }

    # -- construction from options ---------------------------------------------------------------
    @classmethod
    def create(cls, **options: Unpack[CreateSessionOptions]) -> AgentSession:
        """A session built from options, as Pi's ``createAgentSession`` builds one: cwd, agent dir,
        session manager, project trust, settings, model, resources and tools (see
        :func:`pi_nb.agent.factory.create_agent_session`)."""
        from pi_nb.agent.factory import create_agent_session

        return create_agent_session(session_class=cls, **options)


if TYPE_CHECKING:  # the options of AgentSession.create (the factory imports this module)
    from typing import Unpack

    from pi_nb.agent.factory import CreateSessionOptions


def _check_model(model: Model) -> None:
    """A model's limits, checked again where a session takes it (an object may have been changed)."""
    validate_model_limits(
        getattr(model, "context_window", None),
        getattr(model, "max_tokens", None),
        f"{getattr(model, 'provider', '?')}/{getattr(model, 'id', '?')}",
    )


def _last_tool_calls(messages: Sequence[AgentMessage]) -> tuple[str, ...]:
    """The tool calls (``name(arguments-json)``) of the newest assistant message that made any."""
    for m in reversed(messages):
        if not _is_assistant(m):
            continue
        calls = tuple(
            f"{b.get('name')}({js_stringify(b.get('arguments'))})"
            for b in m.get("content") or []
            if isinstance(b, Mapping) and b.get("type") == "toolCall"
        )
        if calls:
            return calls
        if m.get("stopReason") not in ("error", "aborted"):
            return ()
    return ()


def _branch_summary_entry(entry: Mapping[str, Any] | None) -> BranchSummaryEntry | None:
    """``NavigateTreeResult.summary_entry``: the ``branch_summary`` entry the navigation appended."""
    return cast(BranchSummaryEntry, entry) if entry is not None else None


def _not_newer(message: Mapping[str, Any] | None, latest_ms: float | None) -> bool:
    """Pi's ``message.timestamp <= compactionTime`` (false without a compaction or a numeric
    timestamp, as ``undefined <= n`` is in JavaScript)."""
    ts = message.get("timestamp") if message is not None else None
    if latest_ms is None or isinstance(ts, bool) or not isinstance(ts, (int, float)):
        return False
    return ts <= latest_ms


def _iso_ms(iso: str) -> float:
    """``new Date(iso).getTime()`` (NaN for a bad timestamp, which compares false like in JS)."""
    return float(js_date_ms(iso))


def _warn_settings_errors(settings: SettingsManager) -> None:
    """Pi's startup report of settings that could not be read (``collectSettingsDiagnostics``):
    one :class:`~pi_nb.errors.SettingsFileWarning` per file, ``Invalid settings file <path>:
    <error>``; the scope reads as ``{}`` and is never written over."""
    import warnings

    seen: set[str] = set()
    for record in settings.drain_errors():
        if record.path:
            message = f"Invalid settings file {record.path}: {record.error}"
        else:
            message = f"Invalid {record.scope} settings: {record.error}"
        if message not in seen:
            seen.add(message)
            warnings.warn(message, SettingsFileWarning, stacklevel=3)
