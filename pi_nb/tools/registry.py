"""Creating the built-in tools and running one tool call the way the agent loop does.

``create_tool(name, cwd, options)`` mirrors Pi's ``createTool`` (``options`` keyed by tool name, as
Pi's ``ToolsOptions``); ``create_all_tools`` gives all seven, ``create_coding_tools`` the four
active by default (:data:`DEFAULT_ACTIVE_TOOLS`), ``create_read_only_tools`` read/grep/find/ls.

:func:`execute_tool_call` is one tool call as Pi's loop runs it: ``prepare_arguments``, schema
validation (:func:`~pi_nb.tools.validation.validate_tool_arguments`), ``execute``; a
:class:`~pi_nb.errors.ToolError` becomes an error :class:`~pi_nb.tools.base.ToolOutcome` with the
message as its text and ``details == {}``. :func:`run_tool` does the same synchronously (it also
works inside a running event loop, e.g. a Jupyter cell, by running on a helper thread).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from pi_nb._async import run_sync
from pi_nb.errors import ToolError, UnknownToolError
from pi_nb.tools.base import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ToolContext,
    ToolOutcome,
    ToolUpdateCallback,
)
from pi_nb.tools.bash import create_bash_tool
from pi_nb.tools.edit import create_edit_tool
from pi_nb.tools.find import create_find_tool
from pi_nb.tools.grep import create_grep_tool
from pi_nb.tools.ls import create_ls_tool
from pi_nb.tools.read import create_read_tool
from pi_nb.tools.validation import validate_tool_arguments
from pi_nb.tools.write import create_write_tool

__all__ = [
    "ALL_TOOL_NAMES",
    "DEFAULT_ACTIVE_TOOLS",
    "create_all_tools",
    "create_builtin_tools",
    "create_coding_tools",
    "create_read_only_tools",
    "create_tool",
    "execute_tool_call",
    "run_tool",
]

DEFAULT_ACTIVE_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")
"""Pi's default active tools; ``grep``, ``find`` and ``ls`` exist but are off by default."""
ALL_TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")

#: ``{tool name: keyword options of its factory}``: each tool takes its own keywords (open by design).
ToolsOptions = Mapping[str, Mapping[str, Any]]

_FACTORIES: dict[str, Callable[..., AgentTool]] = {
    "read": create_read_tool,
    "bash": create_bash_tool,
    "edit": create_edit_tool,
    "write": create_write_tool,
    "grep": create_grep_tool,
    "find": create_find_tool,
    "ls": create_ls_tool,
}


def create_tool(name: str, cwd: str, options: ToolsOptions | None = None) -> AgentTool:
    """Pi's ``createTool(name, cwd, options)``; ``options[name]`` are the tool's keyword options
    (e.g. ``{"bash": {"command_prefix": "set -e"}, "find": {"backend": "python"}}``)."""
    factory = _FACTORIES.get(name) if isinstance(name, str) else None
    if factory is None:
        raise UnknownToolError(f"Unknown tool name: {name}")
    try:
        tool: AgentTool = factory(cwd, **dict((options or {}).get(name) or {}))
    except TypeError as exc:
        raise ToolError(f"Invalid options for the {name} tool: {exc}") from None
    return tool


def create_all_tools(cwd: str, options: ToolsOptions | None = None) -> dict[str, AgentTool]:
    """All seven built-in tools by name (Pi's ``createAllTools`` without Windows' powershell)."""
    return {name: create_tool(name, cwd, options) for name in ALL_TOOL_NAMES}


def create_builtin_tools(
    cwd: str, *, names: tuple[str, ...] | list[str] | None = None, options: ToolsOptions | None = None
) -> dict[str, AgentTool]:
    """The built-in tools by name: all seven, or those in ``names`` (in that order)."""
    return {
        name: create_tool(name, cwd, options) for name in (names if names is not None else ALL_TOOL_NAMES)
    }


def create_coding_tools(cwd: str, options: ToolsOptions | None = None) -> list[AgentTool]:
    """Pi's ``createCodingTools``: read, bash, edit, write."""
    return [create_tool(name, cwd, options) for name in DEFAULT_ACTIVE_TOOLS]


def create_read_only_tools(cwd: str, options: ToolsOptions | None = None) -> list[AgentTool]:
    """Pi's ``createReadOnlyTools``: read, grep, find, ls."""
    return [create_tool(name, cwd, options) for name in ("read", "grep", "find", "ls")]


def _error(message: str, stage: str) -> ToolOutcome:
    return ToolOutcome(
        is_error=True,
        content=[{"type": "text", "text": message}],
        details={},
        stage="prepare" if stage == "prepare" else "execute",
    )


async def execute_tool_call(
    tool: AgentTool,
    tool_call_id: str,
    args: Any,
    *,
    signal: AbortSignal | None = None,
    on_update: ToolUpdateCallback | None = None,
    ctx: ToolContext | None = None,
    validate: bool = True,
) -> ToolOutcome:
    """One tool call, as Pi's agent loop runs it (see the module docstring).

    Like Pi's loop, *any* exception a tool raises becomes an error outcome (its message, or its
    type's name when it has none), not only :class:`~pi_nb.errors.ToolError`: a tool bug or a
    hostile argument the schema let through (``validate=False``) cannot break the caller.
    Cancellation (``asyncio.CancelledError``), ``KeyboardInterrupt`` and ``SystemExit`` still
    propagate.
    """
    try:
        prepared = tool.prepare_arguments(args)
        params = validate_tool_arguments(tool, prepared) if validate else prepared
    except ToolError as exc:
        return _error(str(exc), "prepare")
    except Exception as exc:
        return _error(_message(exc), "prepare")
    try:
        if not isinstance(params, dict):
            raise ToolError(f"Tool arguments must be an object, got {type(params).__name__}")
        result = await tool.execute(tool_call_id, params, signal, on_update, ctx)
    except ToolError as exc:
        return _error(str(exc), "execute")
    except Exception as exc:
        return _error(_message(exc), "execute")
    if not isinstance(result, AgentToolResult):
        return _error(f"Tool {tool.name} returned {type(result).__name__}, not a tool result", "execute")
    return ToolOutcome(is_error=False, content=result.content, details=result.details)


def _message(exc: BaseException) -> str:
    """``error.message`` as Pi's loop reads it: the text, else the exception's type name."""
    text = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        text = f"Missing argument: {exc.args[0]}"
    return text or type(exc).__name__


def run_tool(
    name: str,
    cwd: str,
    params: Any,
    *,
    options: ToolsOptions | None = None,
    ctx: ToolContext | None = None,
    signal: AbortSignal | None = None,
    on_update: ToolUpdateCallback | None = None,
    tool_call_id: str = "call_pi_nb",
    validate: bool = True,
) -> ToolOutcome:
    """Create the built-in tool ``name`` for ``cwd`` and run one call synchronously.

    ``run_tool("read", "/proj", {"path": "README.md"}).text`` is the quickest way to see what the
    model would see: as in a session, known secret values are redacted in the outcome and in each
    update passed to ``on_update`` (:mod:`pi_nb.redaction`; the tool itself runs ``params`` as
    given). Never raises for a tool failure, whatever ``params`` hold (wrong types, huge or
    negative numbers, paths to directories, FIFOs or devices): check ``outcome.is_error``. Only
    the caller's own setup raises: an unknown tool ``name``
    (:class:`~pi_nb.errors.UnknownToolError`) or ``options`` the tool does not take
    (:class:`~pi_nb.errors.ToolError`).
    """
    from pi_nb.redaction import redact_message, redact_partial_result

    tool = create_tool(name, cwd, options)
    shown_update: ToolUpdateCallback | None = None
    if on_update is not None:
        user_update = on_update

        def shown_update(partial: Any) -> None:
            user_update(redact_partial_result(partial))

    async def run() -> ToolOutcome:
        outcome = await execute_tool_call(
            tool, tool_call_id, params, signal=signal, on_update=shown_update, ctx=ctx, validate=validate
        )
        content, details = redact_message(outcome.content), redact_message(outcome.details)
        if content is outcome.content and details is outcome.details:
            return outcome
        return dataclasses.replace(outcome, content=content, details=details)

    return run_sync(run(), thread_name="pi-nb-run-tool")
