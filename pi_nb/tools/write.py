"""The ``write`` tool: create or overwrite a file, parent directories included (Pi's ``write.ts``).

The content is written as UTF-8 exactly as given (no line-ending or BOM handling: that is the
edit tool's business); the answer is ``Successfully wrote to {path}`` with the path as the model
passed it. Writes to one file are serialised with edits through the file mutation queue.
"""

from __future__ import annotations

import errno
import os
from typing import Any

from pi_nb._fs import SpecialFileError, file_kind, is_special_file, open_regular_for_write
from pi_nb._js import js_utf8_encode
from pi_nb.errors import ToolError
from pi_nb.tools._node import node_fs_error
from pi_nb.tools.base import AbortSignal, AgentTool, AgentToolResult, ToolContext, ToolUpdateCallback
from pi_nb.tools.mutation_queue import with_file_mutation_queue
from pi_nb.tools.paths import resolve_to_cwd

__all__ = ["WriteTool", "create_write_tool"]

WRITE_PROMPT_SNIPPET = "Create or overwrite files"
WRITE_PROMPT_GUIDELINES = ("Use write only for new files or complete rewrites.",)
WRITE_DESCRIPTION = (
    "Write a file with the given content, replacing it if it exists and creating it (and any "
    "missing parent directories) if it does not."
)
WRITE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path", "content"],
    "properties": {
        "path": {"type": "string", "description": "Path to the file to write (relative or absolute)"},
        "content": {"type": "string", "description": "Content to write to the file"},
    },
}


def _mkdir_p(directory: str) -> None:
    """``fs.mkdir(dir, {recursive: true})`` with Node's error texts."""
    missing: list[str] = []
    current = directory
    while True:
        try:
            os.stat(current)
            break
        except FileNotFoundError:
            missing.append(current)
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        except OSError as exc:
            raise node_fs_error(exc, "mkdir", directory) from None
    if not missing and not os.path.isdir(directory):
        raise node_fs_error(OSError(errno.EEXIST, "exists"), "mkdir", directory)
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise node_fs_error(OSError(errno.EEXIST, "exists"), "mkdir", directory) from None
        except NotADirectoryError:
            # a path component is a file: Node reports EEXIST on the first existing component
            raise node_fs_error(OSError(errno.EEXIST, "exists"), "mkdir", current) from None
        except OSError as exc:
            raise node_fs_error(exc, "mkdir", directory) from None


class WriteTool(AgentTool):
    """Pi's ``write`` tool."""

    def __init__(self, cwd: str) -> None:
        super().__init__(
            name="write",
            label="write",
            description=WRITE_DESCRIPTION,
            parameters=WRITE_PARAMETERS,
            prompt_snippet=WRITE_PROMPT_SNIPPET,
            prompt_guidelines=WRITE_PROMPT_GUIDELINES,
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
        path: str = params["path"]
        content: str = params["content"]
        absolute = resolve_to_cwd(path, self.effective_cwd(ctx))
        directory = os.path.dirname(absolute)

        def throw_if_aborted() -> None:
            if signal is not None and signal.aborted:
                raise ToolError("Operation aborted")

        async def mutate() -> AgentToolResult:
            throw_if_aborted()
            _mkdir_p(directory)
            throw_if_aborted()
            try:
                mode: int | None = os.stat(absolute).st_mode
            except OSError:
                mode = None
            if mode is not None and is_special_file(mode):
                # writing to a FIFO blocks until a reader comes; to a device as root, destroys it
                raise ToolError(f"Could not write {path}: it is {file_kind(mode)}, not a regular file.")
            try:
                with open_regular_for_write(absolute) as f:
                    f.write(js_utf8_encode(content))
            except SpecialFileError as exc:  # swapped for a FIFO or device since the check
                raise ToolError(f"Could not write {path}: it is {exc.kind}, not a regular file.") from None
            except OSError as exc:
                raise node_fs_error(exc, "open", absolute) from None
            throw_if_aborted()
            return AgentToolResult(
                content=[{"type": "text", "text": f"Successfully wrote to {path}"}], details=None
            )

        return await with_file_mutation_queue(absolute, mutate)


def create_write_tool(cwd: str) -> WriteTool:
    """Pi's ``createWriteTool(cwd)``."""
    return WriteTool(cwd)
