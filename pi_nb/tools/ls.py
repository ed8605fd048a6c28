"""The ``ls`` tool: one directory's entries (Pi's ``ls.ts``).

Entries are sorted case-insensitively the way Pi's ``localeCompare`` sorts them (see
:mod:`pi_nb.tools._collate`), dotfiles included, directories (symlinks to directories too) with a
``/`` suffix; entries that cannot be stat'ed (dangling symlinks) are skipped. At most ``limit``
entries (default 500) are listed, then the text is cut to 50 KB. Notices are appended as
``\\n\\n[{L} entries limit reached. Use limit={2L} for more. 50.0KB limit reached]``.
"""

from __future__ import annotations

import os
import stat as stat_mod
from typing import Any

from pi_nb._js import js_number_to_string
from pi_nb.errors import ToolError
from pi_nb.tools._collate import collation_key
from pi_nb.tools._node import node_fs_message
from pi_nb.tools.base import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ToolContext,
    ToolUpdateCallback,
    listing_result,
)
from pi_nb.tools.paths import resolve_to_cwd
from pi_nb.truncation import DEFAULT_MAX_BYTES

__all__ = ["LsTool", "create_ls_tool"]

LS_DEFAULT_LIMIT = 500
LS_PROMPT_SNIPPET = "List directory contents"
LS_DESCRIPTION = (
    "List the entries of a directory, sorted alphabetically, dotfiles included; directories end "
    f"with '/'. At most {LS_DEFAULT_LIMIT} entries or {DEFAULT_MAX_BYTES // 1024}KB of output are "
    "returned, whichever limit is reached first."
)
LS_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of entries to return (default: 500)"},
    },
}


def _list_dir(dir_path: str) -> list[str]:
    try:
        names = os.listdir(dir_path)
    except OSError as exc:
        raise ToolError(f"Cannot read directory: {node_fs_message(exc, 'scandir', dir_path)}") from None
    names.sort(key=lambda n: n.encode("utf-8", "surrogateescape"))  # libuv's scandir order (strcmp)
    names.sort(key=lambda n: collation_key(n.lower()))  # stable: equal keys keep readdir order
    return names


class LsTool(AgentTool):
    """Pi's ``ls`` tool."""

    def __init__(self, cwd: str) -> None:
        super().__init__(
            name="ls",
            label="ls",
            description=LS_DESCRIPTION,
            parameters=LS_PARAMETERS,
            prompt_snippet=LS_PROMPT_SNIPPET,
            prompt_guidelines=None,
            cwd=cwd,
        )

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None = None,
        on_update: ToolUpdateCallback | None = None,
        ctx: ToolContext | None = None,
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        dir_path = resolve_to_cwd(params.get("path") or ".", self.effective_cwd(ctx))
        limit = params.get("limit")
        effective_limit: float = LS_DEFAULT_LIMIT if limit is None else limit
        if not os.path.exists(dir_path):
            raise ToolError(f"Path not found: {dir_path}")
        try:
            is_dir = os.path.isdir(dir_path)
        except OSError:  # pragma: no cover - exists() just said it is there
            is_dir = False
        if not is_dir:
            raise ToolError(f"Not a directory: {dir_path}")
        entries = _list_dir(dir_path)

        results: list[str] = []
        entry_limit_reached = False
        for entry in entries:
            if len(results) >= effective_limit:
                entry_limit_reached = True
                break
            try:
                mode = os.stat(os.path.join(dir_path, entry)).st_mode
            except OSError:
                continue  # Pi skips entries it cannot stat
            results.append(entry + ("/" if stat_mod.S_ISDIR(mode) else ""))
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        if not results:
            return AgentToolResult(content=[{"type": "text", "text": "(empty directory)"}], details=None)

        limit_notice = None
        if entry_limit_reached:
            limit_notice = (
                f"{js_number_to_string(effective_limit)} entries limit reached. "
                f"Use limit={js_number_to_string(effective_limit * 2)} for more",
                "entryLimitReached",
                effective_limit,
            )
        return listing_result(results, limit=limit_notice)


def create_ls_tool(cwd: str) -> LsTool:
    """Pi's ``createLsTool(cwd)``."""
    return LsTool(cwd)
