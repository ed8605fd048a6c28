"""The built-in tools: ``read``, ``bash``, ``edit``, ``write`` (active by default), ``grep``,
``find``, ``ls`` — Pi 0.85.0's tools with their exact notices, limits and error texts.

Every tool is an :class:`AgentTool`: a JSON schema identical to Pi's, a description in pi_nb's
words, Pi's prompt snippet and guidelines for the system prompt, and ``async execute(tool_call_id,
params, signal=None, on_update=None, ctx=None)`` that raises :class:`pi_nb.errors.ToolError` with
Pi's text on failure. :func:`run_tool` runs one call synchronously, the way the agent loop would.
"""

from __future__ import annotations

from pi_nb.tools.base import (
    AbortController,
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ToolContext,
    ToolExecutionMode,
    ToolOutcome,
    ToolUpdateCallback,
    cleanup_tool_temp_files,
)
from pi_nb.tools.bash import (
    BashSpawnContext,
    BashTool,
    LocalBashOperations,
    create_bash_tool,
    get_shell_config,
)
from pi_nb.tools.diff import generate_diff_string, generate_unified_patch
from pi_nb.tools.edit import EditTool, create_edit_tool
from pi_nb.tools.find import FindTool, create_find_tool
from pi_nb.tools.grep import GrepTool, create_grep_tool
from pi_nb.tools.images import detect_supported_image_mime_type, detect_supported_image_mime_type_from_file
from pi_nb.tools.ls import LsTool, create_ls_tool
from pi_nb.tools.mutation_queue import with_file_mutation_queue
from pi_nb.tools.paths import resolve_read_path, resolve_to_cwd
from pi_nb.tools.read import ReadTool, create_read_tool
from pi_nb.tools.registry import (
    ALL_TOOL_NAMES,
    DEFAULT_ACTIVE_TOOLS,
    create_all_tools,
    create_builtin_tools,
    create_coding_tools,
    create_read_only_tools,
    create_tool,
    execute_tool_call,
    run_tool,
)
from pi_nb.tools.validation import validate_tool_arguments
from pi_nb.tools.write import WriteTool, create_write_tool

__all__ = [
    "ALL_TOOL_NAMES",
    "DEFAULT_ACTIVE_TOOLS",
    "AbortController",
    "AbortSignal",
    "AgentTool",
    "AgentToolResult",
    "BashSpawnContext",
    "BashTool",
    "EditTool",
    "FindTool",
    "GrepTool",
    "LocalBashOperations",
    "LsTool",
    "ReadTool",
    "ToolContext",
    "ToolExecutionMode",
    "ToolOutcome",
    "ToolUpdateCallback",
    "WriteTool",
    "cleanup_tool_temp_files",
    "create_all_tools",
    "create_bash_tool",
    "create_builtin_tools",
    "create_coding_tools",
    "create_edit_tool",
    "create_find_tool",
    "create_grep_tool",
    "create_ls_tool",
    "create_read_only_tools",
    "create_read_tool",
    "create_tool",
    "create_write_tool",
    "detect_supported_image_mime_type",
    "detect_supported_image_mime_type_from_file",
    "execute_tool_call",
    "generate_diff_string",
    "generate_unified_patch",
    "get_shell_config",
    "resolve_read_path",
    "resolve_to_cwd",
    "run_tool",
    "validate_tool_arguments",
    "with_file_mutation_queue",
]
