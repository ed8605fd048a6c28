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

Only regular files are read. A FIFO, socket, character or block device (or a symlink to one) is
refused at once with ``Cannot read {path}: it is a FIFO (named pipe), not a regular file. ...``
(Pi would block for ever on a FIFO, or fill its memory from ``/dev/zero``); the file is opened
non-blocking and checked again, so a path swapped after the check cannot hang the call either. A
file that reports size 0 but has content (``/proc``, ``/sys``) is read up to
:data:`PSEUDO_FILE_MAX_BYTES` (16 MiB, then a notice says so); other files up to their size at
open, and over 2 GiB they get Node's error, as in Pi (``File size (N) is greater than 2 GiB``, plus
a hint to use bash). Text is streamed in 1 MiB chunks (:func:`read_text_file`): every line of the
file is counted for ``of {total}`` but only the shown lines are kept, so reading a 1 GB file costs
a few MB (Pi holds the file, its text and its lines, and fails beyond V8's 512 M-character string).

Images (sniffed from the bytes): ``Read image file [{mime}]`` plus hints, then the image block;
see :mod:`pi_nb.tools.images`. When the session's model has no image input the text gets
``[Current model does not support images. The image will be omitted from this request.]`` (the
block is still returned; ``convert_to_llm`` decides what the model sees).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import math
import os
import stat
from collections.abc import Callable
from dataclasses import replace
from typing import Any, BinaryIO, Protocol

from pi_nb._fs import file_kind
from pi_nb._js import js_number_to_string, js_type_name, js_utf8_encode
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
from pi_nb.tools.images import IMAGE_TYPE_SNIFF_BYTES, detect_supported_image_mime_type, process_image
from pi_nb.tools.paths import resolve_read_path
from pi_nb.truncation import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_head,
)

__all__ = [
    "MAX_READ_FILE_BYTES",
    "PSEUDO_FILE_MAX_BYTES",
    "ReadTool",
    "create_read_tool",
    "format_read_text",
    "read_text_file",
]

READ_CHUNK_BYTES = 1 << 20
MAX_READ_FILE_BYTES = 2 * 1024 * 1024 * 1024 - 1
"""Node's ``readFile`` limit (2 GiB - 1): larger regular files get Node's error, as in Pi."""
PSEUDO_FILE_MAX_BYTES = 16 * 1024 * 1024
"""A file that reports size 0 (``/proc``, ``/sys``, some FUSE files) is read up to this many bytes."""

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
    ``Array.prototype.slice`` arithmetic. :func:`read_text_file` gives the same answer from a file
    without holding it in memory.
    """
    total = text.count("\n") + 1
    start_line: float = max(0, offset - 1) if offset else 0
    if start_line >= total:
        raise _beyond_end(offset, total)
    user_limited: float | None = None
    if limit is not None:
        end_line = min(start_line + limit, total)
        selected = _slice_lines(text, total, start_line, end_line)
        user_limited = end_line - start_line
    else:
        selected = _slice_lines(text, total, start_line, None)
    truncation = truncate_head(selected)

    def first_line_bytes() -> int:
        return len(js_utf8_encode(_slice_lines(text, total, int(start_line), int(start_line) + 1)))

    return _format_selection(path, total, start_line, user_limited, truncation, first_line_bytes)


def _beyond_end(offset: float | None, total: int) -> ToolError:
    return ToolError(
        f"Offset {js_number_to_string(offset if offset is not None else 0)} is beyond end of file ({total} lines total)"
    )


def _format_selection(
    path: str,
    total: int,
    start_line: float,
    user_limited: float | None,
    truncation: TruncationResult,
    first_line_bytes: Callable[[], int],
) -> tuple[str, dict[str, Any] | None]:
    """Pi's notices for a selection of ``total`` lines (``truncation`` = ``truncate_head`` of it)."""
    n = js_number_to_string
    start_display = start_line + 1
    if truncation.first_line_exceeds_limit:
        size = format_size(first_line_bytes())
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


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _nth_newline(buf: bytes, k: int, start: int = 0) -> int:
    """Index of the ``k``-th (0-based) newline of ``buf`` at or after ``start`` (it must exist).

    Many lines are skipped by halving with ``bytes.count`` (C speed) rather than one ``find`` each.
    """
    lo, hi = start, len(buf)
    while k > 64 and hi - lo > 4096:
        mid = (lo + hi) // 2
        c = buf.count(b"\n", lo, mid)
        if k < c:
            hi = mid
        else:
            k -= c
            lo = mid
    pos = lo - 1
    for _ in range(k + 1):
        pos = buf.index(b"\n", pos + 1)
    return pos


class _Selection:
    """One pass over raw file bytes: the file's newline count and, for the lines ``[s, e)``
    (``e`` ``None``: to the end), their line and byte totals as Pi counts them on the decoded
    text, the UTF-8 size of their first line, and a decoded *prefix* long enough for
    ``truncate_head`` to decide exactly as on the whole selection (more than ``max_lines`` lines or
    ``max_bytes`` bytes, else all of it)."""

    def __init__(self, s: int, e: int | None) -> None:
        self.s, self.e = s, e
        self.newlines = 0  # newlines of the whole file so far
        self.active = s == 0 and (e is None or e > 0)
        self.finished = e is not None and e <= s
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.pending = False
        self.sel_newlines = 0
        self.sel_bytes = 0
        self.sel_raw = 0
        self.last_char_newline = False
        self.first_open = True
        self.first_bytes = 0
        self.prefix: list[str] = []
        self.prefix_bytes = 0
        self.prefix_newlines = 0
        self.collecting = True

    def feed(self, chunk: bytes) -> None:
        pos = 0
        count = chunk.count(b"\n")
        if not self.active and not self.finished:
            # find the start of line s: just after newline s-1
            need = self.s - 1 - self.newlines  # newlines still to pass in this chunk, minus one
            if need >= count:
                self.newlines += count
                return
            idx = _nth_newline(chunk, need)
            pos = idx + 1
            self.newlines += need + 1
            count -= need + 1
            self.active = True
            if self.e is not None and self.e <= self.s:
                self.active, self.finished = False, True
        if self.active:
            end = len(chunk)
            if self.e is not None:
                # the selection ends just before newline e-1
                need = self.e - 1 - self.newlines
                if need < count:
                    end = _nth_newline(chunk, need, pos)
            part = chunk[pos:end]
            inside = part.count(b"\n")
            self.newlines += inside
            count -= inside
            self._take(part, inside)
            if end < len(chunk):
                self._close()
                self.newlines += count  # the rest of the chunk (from the closing newline on)
                return
            return
        self.newlines += count

    def _take(self, part: bytes, newlines: int) -> None:
        if not part:
            return
        self.sel_raw += len(part)
        self.sel_newlines += newlines
        self.last_char_newline = part.endswith(b"\n")
        if not self.pending and part.isascii():
            self.sel_bytes += len(part)
            if self.first_open:
                idx = part.find(b"\n")
                if idx < 0:
                    self.first_bytes += len(part)
                else:
                    self.first_bytes += idx
                    self.first_open = False
            if self.collecting:
                self._collect(part.decode("ascii"), newlines)
            return
        text = self.decoder.decode(part)
        self.pending = bool(self.decoder.getstate()[0])
        self._text(text)

    def _text(self, text: str) -> None:
        if not text:
            return
        size = _utf8_len(text)
        self.sel_bytes += size
        if self.first_open:
            idx = text.find("\n")
            if idx < 0:
                self.first_bytes += size
            else:
                self.first_bytes += _utf8_len(text[:idx])
                self.first_open = False
        if self.collecting:
            self._collect(text, text.count("\n"), size)

    def _collect(self, text: str, newlines: int, size: int | None = None) -> None:
        self.prefix.append(text)
        self.prefix_bytes += len(text) if size is None else size
        self.prefix_newlines += newlines
        if self.prefix_newlines > DEFAULT_MAX_LINES or self.prefix_bytes > DEFAULT_MAX_BYTES:
            self.collecting = False

    def _close(self) -> None:
        if self.active:
            self._text(self.decoder.decode(b"", final=True))
            self.pending = False
            self.active = False
            self.finished = True

    def end(self) -> None:
        self._close()

    @property
    def total(self) -> int:
        return self.newlines + 1

    def truncation(self) -> TruncationResult:
        prefix = "".join(self.prefix)
        result = truncate_head(prefix)
        if self.collecting:  # the prefix is the whole selection
            return result
        lines = 0 if self.sel_raw == 0 else self.sel_newlines + (0 if self.last_char_newline else 1)
        return replace(result, total_lines=lines, total_bytes=self.sel_bytes)


class _Source(Protocol):
    """What :func:`read_text_file` needs of a file: ``read(n)`` and ``seek(0)``."""

    def read(self, n: int = -1, /) -> bytes: ...

    def seek(self, pos: int, /) -> int: ...


def _count_newlines(f: _Source, limit: int, chunk_size: int) -> int:
    count = 0
    left = limit
    while left > 0:
        chunk = f.read(min(chunk_size, left))
        if not chunk:
            break
        left -= len(chunk)
        count += chunk.count(b"\n")
    return count


def read_text_file(
    f: _Source,
    path: str,
    offset: float | None,
    limit: float | None,
    *,
    max_read: int,
    chunk_size: int = READ_CHUNK_BYTES,
) -> tuple[str, dict[str, Any] | None]:
    """:func:`format_read_text` of the first ``max_read`` bytes of the open file ``f`` (at its
    start), decoded as UTF-8 with U+FFFD for invalid bytes, streamed in chunks: memory stays at a
    chunk plus the shown lines, whatever the file's size, and the answer is the same."""
    start_line: float = max(0, offset - 1) if offset else 0
    # the lines [s, e) that Array.prototype.slice(start_line, end_line) selects
    s = _js_index(start_line)
    e: int | None = None
    end_raw: float | None = None
    if limit is not None:
        end_raw = start_line + limit
        if math.isnan(end_raw):
            e = 0
        elif end_raw >= 0 or _js_index(end_raw) >= 0:
            e = None if math.isinf(end_raw) else _js_index(end_raw)
        else:  # counts from the end: the number of lines is needed first
            total = _count_newlines(f, max_read, chunk_size) + 1
            f.seek(0)
            e = max(total + _js_index(end_raw), 0)
    if isinstance(s, float):  # an infinite offset
        total = _count_newlines(f, max_read, chunk_size) + 1
        raise _beyond_end(offset, total)
    selection = _Selection(s, e)
    left = max_read
    while left > 0:
        chunk = f.read(min(chunk_size, left))
        if not chunk:
            break
        left -= len(chunk)
        selection.feed(chunk)
    selection.end()
    total = selection.total
    if start_line >= total:
        raise _beyond_end(offset, total)
    user_limited: float | None = None
    if limit is not None and end_raw is not None:
        user_limited = min(end_raw, total) - start_line
    return _format_selection(
        path, total, start_line, user_limited, selection.truncation(), lambda: selection.first_bytes
    )


def _js_index(x: float) -> Any:
    """ToIntegerOrInfinity: truncation toward zero, infinities kept (as floats)."""
    if math.isinf(x):
        return x
    return math.trunc(x)


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
        work = run_in_daemon_thread(self._read, params, ctx, signal)
        if signal is None:
            return await work
        # Pi rejects as soon as the signal fires, even while the file is still being read. (One
        # future woken by whichever comes first: the read or the abort, from any thread.)
        loop = asyncio.get_running_loop()
        first: asyncio.Future[None] = loop.create_future()

        def settle(_: object = None) -> None:
            if not first.done():
                first.set_result(None)

        def on_abort() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
                loop.call_soon_threadsafe(settle)

        work.add_done_callback(settle)
        remove = signal.add_listener(on_abort)
        try:
            await first
        finally:
            remove()
        if work.done():
            return work.result()
        work.add_done_callback(_consume)  # the read finishes in the background; its outcome is dropped
        raise ToolError("Operation aborted")

    def _read(
        self, params: dict[str, Any], ctx: ToolContext | None, signal: AbortSignal | None = None
    ) -> AgentToolResult:
        path = params["path"]
        offset, limit = params.get("offset"), params.get("limit")
        if not isinstance(path, str):
            raise ToolError(f"path must be a string, got {_type_name(path)}")
        for name, value in (("offset", offset), ("limit", limit)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ToolError(f"{name} must be a number, got {_type_name(value)}")
        absolute = resolve_read_path(path, self.effective_cwd(ctx))
        try:
            st = os.stat(absolute)
            if not os.access(absolute, os.R_OK):
                raise PermissionError(13, "Permission denied")
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
            if isinstance(exc, ValueError):
                exc = OSError(2, "No such file or directory")
            raise node_fs_error(exc, "access", absolute) from None
        if stat.S_ISDIR(st.st_mode):
            raise node_fs_error(IsADirectoryError(21, "Is a directory"), "read") from None
        _refuse_special(st.st_mode, absolute)
        try:
            # O_NONBLOCK: if the path was swapped for a FIFO since the stat, opening does not hang
            fd = os.open(absolute, os.O_RDONLY | _O_NONBLOCK | _O_NOCTTY | _O_CLOEXEC)
        except OSError as exc:
            raise node_fs_error(exc, "open", absolute) from None
        with os.fdopen(fd, "rb", buffering=0) as f:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise node_fs_error(IsADirectoryError(21, "Is a directory"), "read") from None
            _refuse_special(st.st_mode, absolute)
            os.set_blocking(fd, True)
            if st.st_size > MAX_READ_FILE_BYTES:
                raise ToolError(
                    f"File size ({st.st_size}) is greater than 2 GiB. "
                    "Use bash (head, tail, sed -n) to read parts of it."
                )
            pseudo = st.st_size == 0
            max_read = PSEUDO_FILE_MAX_BYTES if pseudo else st.st_size
            reader = _BoundedReader(f, signal)
            try:
                head = reader.read(IMAGE_TYPE_SNIFF_BYTES)
                mime = detect_supported_image_mime_type(head)
                if mime:
                    data = head + reader.read_all(max_read - len(head))
                    return self._image_result(data, mime, ctx)
                f.seek(0)
                out, details = read_text_file(reader, path, offset, limit, max_read=max_read)
                if pseudo and reader.read(1):
                    out += (
                        f"\n\n[{absolute} reports a size of 0 (a /proc or /sys file, or similar): "
                        f"only its first {format_size(PSEUDO_FILE_MAX_BYTES)} were read.]"
                    )
            except OSError as exc:
                raise node_fs_error(exc, "read") from None
        return AgentToolResult(content=[{"type": "text", "text": out}], details=details)

    def _image_result(self, data: bytes, mime: str, ctx: ToolContext | None) -> AgentToolResult:
        note = _non_vision_note(ctx.model if ctx is not None else None)
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


_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _refuse_special(mode: int, absolute: str) -> None:
    """Only regular files are read: a FIFO, socket or device would block or never end."""
    if stat.S_ISREG(mode):
        return
    kind = file_kind(mode)
    raise ToolError(
        f"Cannot read {absolute}: it is {kind}, not a regular file. "
        "The read tool only reads regular files (use bash to read from special files, with a limit "
        "such as head -c)."
    )


_type_name = js_type_name


class _BoundedReader:
    """A file read in chunks that stops with ``Operation aborted`` as soon as the call's signal
    fired (the tool has already answered; the thread should not read on for nothing)."""

    def __init__(self, f: BinaryIO, signal: AbortSignal | None) -> None:
        self.f = f
        self.signal = signal

    def read(self, n: int = -1) -> bytes:
        if self.signal is not None:
            self.signal.throw_if_aborted()
        return self.f.read(n) if n >= 0 else self.read_all(MAX_READ_FILE_BYTES)

    def read_all(self, limit: int) -> bytes:
        parts: list[bytes] = []
        while limit > 0:
            chunk = self.read(min(READ_CHUNK_BYTES, limit))
            if not chunk:
                break
            parts.append(chunk)
            limit -= len(chunk)
        return b"".join(parts)

    def seek(self, pos: int) -> int:
        return self.f.seek(pos)


def _consume(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def create_read_tool(cwd: str, *, auto_resize_images: bool = True) -> ReadTool:
    """Pi's ``createReadTool(cwd, {autoResizeImages})``."""
    return ReadTool(cwd, auto_resize_images=auto_resize_images)
