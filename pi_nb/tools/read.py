"""The ``read`` tool: text files with offsets and limits, images as attachments (Pi's ``read.ts``).

Text: the file is decoded as UTF-8 (invalid bytes become U+FFFD, so binary files never crash the
tool) and split on ``"\\n"``. Unlike the truncation module's line count, a trailing newline *does*
make a final empty line here: ``"a\\nb\\n"`` is 3 lines, and notices say so. The selected lines go
through ``truncate_head`` (2000 lines / 50 KB) and exactly one notice may follow:

* ``[Line {n} is {size}, exceeds 50.0KB limit. Use bash: sed -n '{n}p' {path} | head -c 51200]``
  when the first selected line alone is too big (the whole answer is this notice);
* ``[Showing lines {a}-{b} of {total}. Use offset={b+1} to continue.]`` (line limit) or
  ``[Showing lines {a}-{b} of {total} (50.0KB limit). Use offset={b+1} to continue.]``;
* ``[{k} more lines in file. Use offset={next} to continue.]`` when the caller's ``limit``
  stopped before the end.

``offset``/``limit`` keep Pi's JavaScript arithmetic (a fractional limit slices like
``Array.prototype.slice`` and is printed as given). An offset past the end fails with
``Offset {offset} is beyond end of file ({n} lines total)``.

Images (sniffed from the bytes): ``Read image file [{mime}]`` plus hints, then the image block;
see :mod:`pi_nb.tools.images`. When the session's model has no image input the text gets
``[Current model does not support images. The image will be omitted from this request.]`` (the
block is still returned; ``convert_to_llm`` decides what the model sees).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from pi_nb._js import js_number_to_string, js_utf8_encode
from pi_nb.errors import ToolError
from pi_nb.tools._node import js_slice, node_fs_error
from pi_nb.tools.base import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ToolContext,
    ToolUpdateCallback,
    model_field,
    run_in_daemon_thread,
)
from pi_nb.tools.images import detect_supported_image_mime_type_from_file, process_image
from pi_nb.tools.paths import resolve_read_path
from pi_nb.truncation import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size, truncate_head

__all__ = ["ReadTool", "create_read_tool"]

READ_PROMPT_SNIPPET = "Read file contents"
READ_PROMPT_GUIDELINES = ("Use read to examine files instead of cat or sed.",)
READ_DESCRIPTION = (
    "Read a file. Text files and images (jpg, png, gif, webp, bmp) are supported; images are "
    f"returned as attachments. Text output stops at {DEFAULT_MAX_LINES} lines or "
    f"{DEFAULT_MAX_BYTES // 1024}KB, whichever comes first: page through larger files with "
    "offset/limit, continuing from the offset the notice gives until you have what you need."
)
READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path"],
    "properties": {
        "path": {"type": "string", "description": "Path to the file to read (relative or absolute)"},
        "offset": {"type": "number", "description": "Line number to start reading from (1-indexed)"},
        "limit": {"type": "number", "description": "Maximum number of lines to read"},
    },
}
NON_VISION_NOTE = "[Current model does not support images. The image will be omitted from this request.]"


def _non_vision_note(model: Any) -> str | None:
    if model is None:
        return None
    inputs = model_field(model, "input") or ()
    return None if "image" in inputs else NON_VISION_NOTE


def format_read_text(
    text: str, path: str, offset: float | None, limit: float | None
) -> tuple[str, dict[str, Any] | None]:
    """The text branch of Pi's read tool on already-decoded file content: (text, details).

    Lines are located with ``find`` instead of splitting the whole file into a list (a 20 MB log
    read with no offset costs one scan); fractional or negative offsets and limits keep Pi's
    ``Array.prototype.slice`` arithmetic.
    """
    total = text.count("\n") + 1
    start_line: float = max(0, offset - 1) if offset else 0
    start_display = start_line + 1
    if start_line >= total:
        raise ToolError(
            f"Offset {js_number_to_string(offset if offset is not None else 0)} is beyond end of file ({total} lines total)"
        )
    user_limited: float | None = None
    if limit is not None:
        end_line = min(start_line + limit, total)
        selected = _slice_lines(text, total, start_line, end_line)
        user_limited = end_line - start_line
    else:
        selected = _slice_lines(text, total, start_line, None)
    truncation = truncate_head(selected)
    n = js_number_to_string
    if truncation.first_line_exceeds_limit:
        first = _slice_lines(text, total, int(start_line), int(start_line) + 1)
        size = format_size(len(js_utf8_encode(first)))
        out = (
            f"[Line {n(start_display)} is {size}, exceeds {format_size(DEFAULT_MAX_BYTES)} limit. "
            f"Use bash: sed -n '{n(start_display)}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        )
        return out, {"truncation": truncation.to_dict()}
    if truncation.truncated:
        end_display = start_display + truncation.output_lines - 1
        out = truncation.content
        if truncation.truncated_by == "lines":
            out += f"\n\n[Showing lines {n(start_display)}-{n(end_display)} of {total}. Use offset={n(end_display + 1)} to continue.]"
        else:
            out += (
                f"\n\n[Showing lines {n(start_display)}-{n(end_display)} of {total} "
                f"({format_size(DEFAULT_MAX_BYTES)} limit). Use offset={n(end_display + 1)} to continue.]"
            )
        return out, {"truncation": truncation.to_dict()}
    if user_limited is not None and start_line + user_limited < total:
        remaining = total - (start_line + user_limited)
        next_offset = start_line + user_limited + 1
        return (
            f"{truncation.content}\n\n[{n(remaining)} more lines in file. Use offset={n(next_offset)} to continue.]",
            None,
        )
    return truncation.content, None


def _line_start(text: str, index: int) -> int:
    """Character offset where line ``index`` (0-based, ``index < total``) starts."""
    pos = 0
    for _ in range(index):
        pos = text.index("\n", pos) + 1
    return pos


def _slice_lines(text: str, total: int, start: float, end: float | None) -> str:
    """``text.split("\n").slice(start, end).join("\n")`` without building the list."""
    if not (
        float(start).is_integer() and start >= 0 and (end is None or (float(end).is_integer() and end >= 0))
    ):
        return "\n".join(js_slice(text.split("\n"), start, end))
    s = int(start)
    e = total if end is None else min(int(end), total)
    if e <= s:
        return ""
    begin = _line_start(text, s)
    if e == total:
        return text[begin:]
    stop = begin
    for _ in range(e - s):
        stop = text.index("\n", stop) + 1
    return text[begin : stop - 1]


class ReadTool(AgentTool):
    """Pi's ``read`` tool; ``auto_resize_images`` as Pi's option (default on)."""

    def __init__(self, cwd: str, *, auto_resize_images: bool = True) -> None:
        super().__init__(
            name="read",
            label="read",
            description=READ_DESCRIPTION,
            parameters=READ_PARAMETERS,
            prompt_snippet=READ_PROMPT_SNIPPET,
            prompt_guidelines=READ_PROMPT_GUIDELINES,
            cwd=cwd,
        )
        self.auto_resize_images = auto_resize_images

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
        work = run_in_daemon_thread(self._read, params, ctx)
        if signal is None:
            return await work
        # Pi rejects as soon as the signal fires, even while the file is still being read.
        aborted = asyncio.ensure_future(signal.wait())
        try:
            done, _ = await asyncio.wait({work, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
        if work in done:
            return work.result()
        work.add_done_callback(_consume)  # the read finishes in the background; its outcome is dropped
        raise ToolError("Operation aborted")

    def _read(self, params: dict[str, Any], ctx: ToolContext | None) -> AgentToolResult:
        path: str = params["path"]
        absolute = resolve_read_path(path, self.effective_cwd(ctx))
        try:
            os.stat(absolute)
            if not os.access(absolute, os.R_OK):
                raise PermissionError(13, "Permission denied")
        except OSError as exc:
            raise node_fs_error(exc, "access", absolute) from None
        try:
            mime = None if os.path.isdir(absolute) else detect_supported_image_mime_type_from_file(absolute)
            if os.path.isdir(absolute):
                raise IsADirectoryError(21, "Is a directory")
            with open(absolute, "rb") as f:
                data = f.read()
        except IsADirectoryError as exc:
            raise node_fs_error(exc, "read") from None
        except OSError as exc:
            raise node_fs_error(exc, "open", absolute) from None
        note = _non_vision_note(ctx.model if ctx is not None else None)
        if mime:
            processed = process_image(data, mime, auto_resize_images=self.auto_resize_images)
            if not processed.ok:
                text = f"Read image file [{mime}]\n{processed.message}"
                if note:
                    text += f"\n{note}"
                return AgentToolResult(content=[{"type": "text", "text": text}], details=None)
            text = f"Read image file [{processed.mime_type}]"
            if processed.hints:
                text += "\n" + "\n".join(processed.hints)
            if note:
                text += f"\n{note}"
            return AgentToolResult(
                content=[
                    {"type": "text", "text": text},
                    {"type": "image", "data": processed.data, "mimeType": processed.mime_type},
                ],
                details=None,
            )
        out, details = format_read_text(
            data.decode("utf-8", errors="replace"), path, params.get("offset"), params.get("limit")
        )
        return AgentToolResult(content=[{"type": "text", "text": out}], details=details)


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def create_read_tool(cwd: str, *, auto_resize_images: bool = True) -> ReadTool:
    """Pi's ``createReadTool(cwd, {autoResizeImages})``."""
    return ReadTool(cwd, auto_resize_images=auto_resize_images)
