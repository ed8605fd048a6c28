"""The ``grep`` tool: ripgrep over files and directories (Pi's ``grep.ts``).

Runs ``rg --json --line-number --color=never --hidden [--ignore-case] [--fixed-strings]
[--glob G] -- PATTERN PATH`` (the ``--`` keeps a pattern such as ``--pre=script`` from being read as
an option) and formats each match as ``{label}:{n}: {text}``; with ``context`` N, the file is read
and lines ``n-N..n+N`` are shown, context lines as ``{label}-{m}- {text}`` (blocks of adjacent
matches are not merged, as in Pi). Labels are paths relative to the searched directory with ``/``
separators, or the file name when a single file is searched.

Limits, in notice order: ``limit`` matches (default 100; rg is stopped once reached):
``{L} matches limit reached. Use limit={2L} for more, or refine pattern``; 50 KB of output:
``50.0KB limit reached``; lines longer than 500 characters are cut:
``Some lines truncated to 500 chars. Use read tool to see full lines``.

ripgrep comes from the ``ripgrep`` wheel (``rg`` next to the Python executable), else from
``PATH``. Its order across files is its own (parallel) order, as in Pi.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
from typing import Any

from pi_nb._fs import file_kind, is_special_file, read_regular
from pi_nb._js import js_number_to_string
from pi_nb.errors import ToolError
from pi_nb.tools.base import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ToolContext,
    ToolUpdateCallback,
    listing_result,
)
from pi_nb.tools.paths import resolve_to_cwd
from pi_nb.truncation import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    truncate_line,
)

__all__ = ["GrepTool", "create_grep_tool", "find_rg_binary"]

GREP_DEFAULT_LIMIT = 100
GREP_PROMPT_SNIPPET = "Search file contents for patterns (respects .gitignore)"
GREP_DESCRIPTION = (
    "Search inside files for a regular expression (or a literal string) and return the matching "
    "lines with their file paths and line numbers; .gitignore rules are honoured. At most "
    f"{GREP_DEFAULT_LIMIT} matches or {DEFAULT_MAX_BYTES // 1024}KB of output are returned, "
    f"whichever limit is reached first, and lines longer than {GREP_MAX_LINE_LENGTH} characters are cut."
)
GREP_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["pattern"],
    "properties": {
        "pattern": {"type": "string", "description": "Search pattern (regex or literal string)"},
        "path": {"type": "string", "description": "Directory or file to search (default: current directory)"},
        "glob": {
            "type": "string",
            "description": "Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'",
        },
        "ignoreCase": {"type": "boolean", "description": "Case-insensitive search (default: false)"},
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as literal string instead of regex (default: false)",
        },
        "context": {
            "type": "number",
            "description": "Number of lines to show before and after each match (default: 0)",
        },
        "limit": {"type": "number", "description": "Maximum number of matches to return (default: 100)"},
    },
}


def find_rg_binary() -> str | None:
    """The ripgrep binary: the one the ``ripgrep`` wheel installed next to Python, else ``PATH``'s."""
    bundled = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.path.isfile(bundled) and os.access(bundled, os.X_OK):
        return bundled
    return shutil.which("rg")


def _sanitize_match_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "")
    return text[:-1] if text.endswith("\n") else text


class GrepTool(AgentTool):
    """Pi's ``grep`` tool; ``rg_path`` overrides the ripgrep binary."""

    def __init__(self, cwd: str, *, rg_path: str | None = None) -> None:
        super().__init__(
            name="grep",
            label="grep",
            description=GREP_DESCRIPTION,
            parameters=GREP_PARAMETERS,
            prompt_snippet=GREP_PROMPT_SNIPPET,
            prompt_guidelines=None,
            cwd=cwd,
        )
        self.rg_path = rg_path

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
        rg = self.rg_path or find_rg_binary()
        if not rg:
            raise ToolError("ripgrep (rg) is not available and could not be downloaded")
        pattern: str = params["pattern"]
        search_path = resolve_to_cwd(params.get("path") or ".", self.effective_cwd(ctx))
        try:
            is_directory = os.path.isdir(search_path)
            mode = os.stat(search_path).st_mode
        except OSError:
            raise ToolError(f"Path not found: {search_path}") from None
        if is_special_file(mode):  # rg would block on a FIFO and never end on /dev/zero
            raise ToolError(
                f"Cannot search {search_path}: it is {file_kind(mode)}, not a regular file or a directory"
            )
        context = params.get("context")
        context_value = context if context and context > 0 else 0
        limit = params.get("limit")
        effective_limit: float = max(1, GREP_DEFAULT_LIMIT if limit is None else limit)

        def format_path(file_path: str) -> str:
            if is_directory:
                relative = os.path.relpath(file_path, search_path) if file_path != search_path else ""
                if relative and relative != "." and not relative.startswith(".."):
                    return relative.replace("\\", "/")
            return os.path.basename(file_path)

        args = ["--json", "--line-number", "--color=never", "--hidden"]
        if params.get("ignoreCase"):
            args.append("--ignore-case")
        if params.get("literal"):
            args.append("--fixed-strings")
        if params.get("glob"):
            args += ["--glob", params["glob"]]
        args += ["--", pattern, search_path]

        try:
            proc = await asyncio.create_subprocess_exec(
                rg, *args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as exc:
            raise ToolError(f"Failed to run ripgrep: {exc.strerror or exc}") from None

        loop = asyncio.get_running_loop()
        aborted = False
        killed_for_limit = False

        def kill() -> None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()

        def on_abort() -> None:
            nonlocal aborted
            aborted = True
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(kill)

        remove = signal.add_listener(on_abort) if signal is not None else None
        matches: list[tuple[str | None, int | None, str | None]] = []
        match_count = 0
        match_limit_reached = False
        stderr_task = asyncio.ensure_future(proc.stderr.read())  # type: ignore[union-attr]
        assert proc.stdout is not None
        pending = b""

        def handle_line(raw: bytes) -> None:
            nonlocal match_count, match_limit_reached, killed_for_limit
            if match_count >= effective_limit:
                return
            event = _parse_event(raw)
            if event is None or event.get("type") != "match":
                return
            match_count += 1
            data = event.get("data") or {}
            file_path = (data.get("path") or {}).get("text")
            line_number = data.get("line_number")
            line_text = (data.get("lines") or {}).get("text")
            if file_path and isinstance(line_number, int) and not isinstance(line_number, bool):
                matches.append((file_path, line_number, line_text))
            if match_count >= effective_limit:
                match_limit_reached = True
                if not killed_for_limit:
                    killed_for_limit = True
                    kill()

        try:
            while True:
                chunk = await proc.stdout.read(1 << 16)
                if not chunk:
                    break
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for raw in complete:
                    handle_line(raw)
            handle_line(pending)
            code = await proc.wait()
            stderr = (await stderr_task).decode("utf-8", errors="replace")
        finally:
            if remove is not None:
                remove()
            if proc.returncode is None:
                kill()
                await proc.wait()
        if aborted:
            raise ToolError("Operation aborted")
        if not killed_for_limit and code not in (0, 1):
            raise ToolError(stderr.strip() or f"ripgrep exited with code {code}")
        if match_count == 0:
            return AgentToolResult(content=[{"type": "text", "text": "No matches found"}], details=None)

        lines_truncated = False
        file_cache: dict[str, list[str]] = {}

        def file_lines(path: str) -> list[str]:
            cached = file_cache.get(path)
            if cached is None:
                try:
                    # the file rg matched, as it is now: refused if swapped for a FIFO or a device
                    content = read_regular(path, None).decode("utf-8", errors="replace")
                    cached = content.replace("\r\n", "\n").replace("\r", "\n").split("\n")
                except OSError:
                    cached = []
                file_cache[path] = cached
            return cached

        output_lines: list[str] = []
        for file_path, line_number, line_text in matches:
            assert file_path is not None and line_number is not None
            label = format_path(file_path)
            if context_value == 0 and line_text is not None:
                text, cut = truncate_line(_sanitize_match_text(line_text))
                lines_truncated = lines_truncated or cut
                output_lines.append(f"{label}:{line_number}: {text}")
                continue
            lines = file_lines(file_path)
            if not lines:
                output_lines.append(f"{label}:{line_number}: (unable to read file)")
                continue
            start = max(1, line_number - context_value) if context_value > 0 else line_number
            end = min(len(lines), line_number + context_value) if context_value > 0 else line_number
            current: float = start
            while current <= end:
                index = int(current) - 1
                line = lines[index] if 0 <= index < len(lines) and float(current).is_integer() else ""
                text, cut = truncate_line(line.replace("\r", ""))
                lines_truncated = lines_truncated or cut
                n = js_number_to_string(current)
                if current == line_number:
                    output_lines.append(f"{label}:{n}: {text}")
                else:
                    output_lines.append(f"{label}-{n}- {text}")
                current += 1

        limit_notice = None
        if match_limit_reached:
            limit_notice = (
                f"{js_number_to_string(effective_limit)} matches limit reached. "
                f"Use limit={js_number_to_string(effective_limit * 2)} for more, or refine pattern",
                "matchLimitReached",
                effective_limit,
            )
        after = (
            (
                (
                    f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines",
                    "linesTruncated",
                    True,
                ),
            )
            if lines_truncated
            else ()
        )
        return listing_result(output_lines, limit=limit_notice, after=after)


def _parse_event(raw: bytes) -> dict[str, Any] | None:
    """One line of ``rg --json``: ripgrep's own event object (a wire payload, not modelled here)."""
    if not raw.strip():
        return None
    try:
        event = json.loads(raw)
    except ValueError:
        return None
    return event if isinstance(event, dict) else None


def create_grep_tool(cwd: str, *, rg_path: str | None = None) -> GrepTool:
    """Pi's ``createGrepTool(cwd)``."""
    return GrepTool(cwd, rg_path=rg_path)
