"""Tool-output truncation: Pi 0.85.0 ``core/tools/truncate.ts`` and ``output-accumulator.ts``.

Two independent limits, whichever is hit first: ``max_lines`` (default 2000) and ``max_bytes``
(default 51200 = 50 KB). ``truncate_head`` keeps the beginning (the ``read`` tool), ``truncate_tail``
the end (``bash``). Results carry the numbers a notice needs (:class:`TruncationResult`).

Pi's semantics, including its quirks, are reproduced exactly:

* Lines are counted by splitting the JavaScript string on ``"\\n"`` (CR is an ordinary character);
  a final ``"\\n"`` does not start another line, and ``""`` has zero lines.
* Bytes are those of ``Buffer.from(s, "utf8")``: a lone UTF-16 surrogate counts as U+FFFD, 3 bytes.
* Input that is within both limits comes back *verbatim* (a trailing newline included). Truncated
  content never ends with ``"\\n"``, which gives the "trailing-newline overflow" quirk:
  ``truncate_head("aaaa\\n", max_bytes=4)`` is truncated *by lines*, keeping ``"aaaa"``.
* Head mode never returns a partial line; if the first line alone is over ``max_bytes`` the content
  is empty and ``first_line_exceeds_limit`` is set.
* Tail mode returns the end of the last line, cut at a UTF-8 character start, when not even that
  line fits (``last_line_partial``). That partial text is decoded from the Buffer encoding, so a
  lone surrogate in it comes back as U+FFFD; whole lines are slices of the original string.
* Negative limits and ``max_lines=0`` are honoured as Pi honours them (``??`` only replaces
  ``null``/``undefined``); the one input where Pi throws (``truncate_head("")`` with a negative
  limit) raises :class:`~pi_nb.errors.TruncationError`.

Deliberate difference from Pi: ``truncate_head``, ``truncate_tail`` and ``truncate_line`` first
redact known secret values (:mod:`pi_nb.redaction`), then cut, so a cut never keeps the start of a
key (a grep line cut at 500 characters used to keep 19 of a key's 35). Text without a known secret
is untouched.

Speed: nothing here splits the input into a Python list of lines. ASCII text is measured in place;
other text is sized block by block and only a window of ``max_bytes + 2`` characters at the cut is
encoded. Line counts and cut points come from ``count``/``find``/``rfind`` bounded by the limits,
and only the kept part is decoded (benchmarks/README.md has the numbers). A string that holds lone
surrogates (rare) is measured through :func:`~pi_nb._js.js_utf8_encode` and the cut points are
mapped back to the original string by walking its newlines.
"""

from __future__ import annotations

import codecs
import os
import secrets
import tempfile
from dataclasses import dataclass, replace
from typing import IO, Any, AnyStr, Literal, NotRequired, TypedDict, cast

from pi_nb._js import js_number_to_string, js_to_fixed, js_utf8_encode, utf16_len
from pi_nb._wire import wire_dict
from pi_nb.errors import OutputAccumulatorError, TruncationError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_LINES",
    "GREP_MAX_LINE_LENGTH",
    "AccumulatorSnapshot",
    "AccumulatorSnapshotDict",
    "OutputAccumulator",
    "TruncationResult",
    "TruncationResultDict",
    "format_size",
    "truncate_head",
    "truncate_line",
    "truncate_tail",
]

DEFAULT_MAX_LINES = 2000
"""Line limit of ``read`` and ``bash`` output."""
DEFAULT_MAX_BYTES = 50 * 1024
"""Byte limit (UTF-8) of tool output: 51200."""
GREP_MAX_LINE_LENGTH = 500
"""Maximum JavaScript string length (UTF-16 code units) of one grep match line."""

TruncatedBy = Literal["lines", "bytes"]


class TruncationResultDict(TypedDict):
    """:meth:`TruncationResult.to_dict`: Pi's ``TruncationResult`` (camelCase keys, Pi's order)."""

    content: str
    truncated: bool
    truncatedBy: TruncatedBy | None
    totalLines: int
    totalBytes: int
    outputLines: int
    outputBytes: int
    lastLinePartial: bool
    firstLineExceedsLimit: bool
    maxLines: int
    maxBytes: int


@dataclass(frozen=True, slots=True)
class TruncationResult:
    """What was kept and why; Pi's ``TruncationResult`` (every field always present).

    ``truncated_by`` is ``None`` exactly when ``truncated`` is false. ``last_line_partial`` can only
    be set in tail mode, ``first_line_exceeds_limit`` only in head mode.
    """

    content: str
    truncated: bool
    truncated_by: TruncatedBy | None
    total_lines: int
    total_bytes: int
    output_lines: int
    output_bytes: int
    last_line_partial: bool
    first_line_exceeds_limit: bool
    max_lines: int
    max_bytes: int

    def to_dict(self) -> TruncationResultDict:
        """Pi's JSON shape (camelCase keys, Pi's key order)."""
        return cast(TruncationResultDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)

    @classmethod
    def from_dict(cls, data: Any) -> TruncationResult:
        """Read Pi's JSON shape back (e.g. ``details.truncation`` of a stored tool result)."""
        if not isinstance(data, dict):
            raise TruncationError(f"a truncation result must be a dict, got {type(data).__name__}")
        try:
            by = data["truncatedBy"]
            if by not in ("lines", "bytes", None):
                raise TruncationError(f"truncatedBy must be 'lines', 'bytes' or null, got {by!r}")
            return cls(
                content=_expect(data["content"], str, "content"),
                truncated=_expect(data["truncated"], bool, "truncated"),
                truncated_by=by,
                total_lines=_expect_int(data["totalLines"], "totalLines"),
                total_bytes=_expect_int(data["totalBytes"], "totalBytes"),
                output_lines=_expect_int(data["outputLines"], "outputLines"),
                output_bytes=_expect_int(data["outputBytes"], "outputBytes"),
                last_line_partial=_expect(data["lastLinePartial"], bool, "lastLinePartial"),
                first_line_exceeds_limit=_expect(
                    data["firstLineExceedsLimit"], bool, "firstLineExceedsLimit"
                ),
                max_lines=_expect_int(data["maxLines"], "maxLines"),
                max_bytes=_expect_int(data["maxBytes"], "maxBytes"),
            )
        except KeyError as exc:
            raise TruncationError(f"a truncation result needs the key {exc.args[0]!r}") from None


def _expect(value: Any, typ: type, name: str) -> Any:
    if not isinstance(value, typ):
        raise TruncationError(f"{name} must be {typ.__name__}, got {type(value).__name__}")
    return value


def _expect_int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TruncationError(f"{name} must be an int, got {type(value).__name__}")
    return value


def _limit(value: int | None, default: int, name: str) -> int:
    """Pi's ``options.x ?? DEFAULT``: ``None`` means the default; any int (0 and negatives too) is used."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise TruncationError(f"{name} must be an int or None, got {type(value).__name__}")
    return value


def _redacted(text: str) -> str:
    """``text`` with known secrets redacted (:func:`pi_nb.redaction.redact`): every cut below is made
    on the redacted text, so a cut never keeps the start of a key that redaction would then miss."""
    from pi_nb.redaction import redact

    return redact(text)


def _check_content(content: Any) -> str:
    if not isinstance(content, str):
        raise TruncationError(f"content must be str, got {type(content).__name__}")
    return content


_BLOCK = 1 << 14  # characters encoded at a time when only sizes and newlines are needed


def _measure(content: str) -> tuple[int, int, str | bytes | None, bool]:
    """``(total_bytes, total_lines, buffer, exact)`` for Pi's counts.

    ``buffer`` has Pi's UTF-8 byte offsets over the *whole* text, or is ``None`` when only windows
    of it will be encoded (see :func:`_window`); ``exact`` says whether decoding a slice of the
    buffer gives back exactly the original substring.

    * ASCII text is its own buffer (bytes are characters).
    * Other text without surrogates is never encoded as a whole: bytes and newlines are counted
      over 16K-character blocks, which stay in cache (about as fast as one big ``encode``) and
      need no copy of the input (CPython's encoder reserves 4 bytes per character for astral
      text, so encoding 100 MB at once would briefly take 400 MB). Only the part near the cut is
      encoded later.
    * Text with surrogates is encoded the way a JS ``Buffer`` does it (lone halves become U+FFFD)
      and is not exact: kept lines are then cut from the original string.
    """
    if content.isascii():
        return len(content), _count_lines(content.count("\n"), content), content, True
    size = newlines = 0
    try:
        for i in range(0, len(content), _BLOCK):
            block = content[i : i + _BLOCK].encode("utf-8")
            size += len(block)
            newlines += block.count(b"\n")
    except UnicodeEncodeError:
        buf = js_utf8_encode(content)
        return len(buf), _count_lines(buf.count(b"\n"), content), buf, False
    return size, _count_lines(newlines, content), None, True


def _count_lines(newlines: int, content: str) -> int:
    """Pi's ``splitLinesForCounting(content).length``: a final newline ends a line, "" has none."""
    if not content:
        return 0
    return newlines + (0 if content.endswith("\n") else 1)


def _window(content: str, chars: int, *, tail: bool) -> bytes:
    """The UTF-8 encoding of the first (head) or last (tail) ``chars`` characters, or of all.

    A cut within ``max_bytes`` bytes of either end lies within ``max_bytes + 1`` (head) or
    ``max_bytes + 2`` (tail: one more for a trailing newline) characters of it, since a character
    takes at least one byte; the cut helpers only look that far, so the window answers exactly
    as the whole encoding would.
    """
    if chars >= len(content):
        return content.encode("utf-8")
    return (content[-chars:] if tail else content[:chars]).encode("utf-8")


def _slice(buf: str | bytes, start: int, end: int) -> str:
    if isinstance(buf, str):
        return buf[start:end]
    return buf[start:end].decode("utf-8")


def _nth_newline(text: AnyStr, nl: AnyStr, n: int) -> int:
    """Index of the ``n``-th (1-based) newline of ``text``; it must exist."""
    pos = -1
    for _ in range(n):
        pos = text.find(nl, pos + 1)
    return pos


def _nth_newline_from_end(text: AnyStr, nl: AnyStr, n: int, end: int) -> int:
    """Index of the ``n``-th (1-based) newline before ``end``, counting backwards; it must exist."""
    pos = end
    for _ in range(n):
        pos = text.rfind(nl, 0, pos)
    return pos


def _result(
    content: str,
    *,
    truncated: bool,
    truncated_by: TruncatedBy | None,
    total_lines: int,
    total_bytes: int,
    output_lines: int,
    output_bytes: int,
    max_lines: int,
    max_bytes: int,
    last_line_partial: bool = False,
    first_line_exceeds_limit: bool = False,
) -> TruncationResult:
    return TruncationResult(
        content=content,
        truncated=truncated,
        truncated_by=truncated_by,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=output_lines,
        output_bytes=output_bytes,
        last_line_partial=last_line_partial,
        first_line_exceeds_limit=first_line_exceeds_limit,
        max_lines=max_lines,
        max_bytes=max_bytes,
    )


def _head_cut(
    buf: AnyStr, nl: AnyStr, total_lines: int, max_lines: int, max_bytes: int
) -> tuple[int, int, TruncatedBy] | None:
    """(kept lines, end offset in ``buf``, truncated_by), or ``None`` when the first line is too long.

    Only called once the input is known to be over a limit. Pi keeps whole lines while the joined
    bytes stay within ``max_bytes``; the joined bytes of the first ``k`` lines are exactly the offset
    of the ``k``-th newline, so "lines that fit" is "newlines at offset <= max_bytes", counted in C.
    """
    length = len(buf)
    ends_nl = buf.endswith(nl)
    first_end = buf.find(nl)
    if first_end == -1:
        first_end = length
    if first_end > max_bytes:
        return None
    cap = min(total_lines, max_lines)
    if cap <= 0:
        return 0, 0, "lines"
    fit = buf.count(nl, 0, max_bytes + 1) + (1 if not ends_nl and length <= max_bytes else 0)
    if fit < cap:
        # stopped by bytes: the last kept line ends at the last newline within the limit
        return fit, buf.rfind(nl, 0, max_bytes + 1), "bytes"
    if cap == total_lines and not ends_nl:
        return cap, length, "lines"
    return cap, _nth_newline(buf, nl, cap), "lines"


def truncate_head(
    content: str, *, max_lines: int | None = DEFAULT_MAX_LINES, max_bytes: int | None = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the beginning: whole lines while both limits hold (Pi's ``truncateHead``).

    Used by ``read``, and with ``max_lines=2**53 - 1`` (bytes only) by ``grep``, ``find`` and ``ls``.
    ``None`` for a limit means its default, as ``undefined``/``null`` do in Pi.
    """
    content = _redacted(_check_content(content))
    lines_limit = _limit(max_lines, DEFAULT_MAX_LINES, "max_lines")
    bytes_limit = _limit(max_bytes, DEFAULT_MAX_BYTES, "max_bytes")
    total_bytes, total_lines, whole, exact = _measure(content)
    ends_nl = content.endswith("\n")
    if total_lines <= lines_limit and total_bytes <= bytes_limit:
        return _result(
            content,
            truncated=False,
            truncated_by=None,
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=total_lines,
            output_bytes=total_bytes,
            max_lines=lines_limit,
            max_bytes=bytes_limit,
        )
    if total_lines == 0:
        # Pi reads lines[0] of an empty list and Buffer.byteLength(undefined) throws a TypeError
        raise TruncationError(
            "truncate_head of an empty string with a negative limit: Pi 0.85 throws here "
            "(Buffer.byteLength(undefined)); pass limits >= 0"
        )
    buf = whole if whole is not None else _window(content, max(bytes_limit, 0) + 1, tail=False)
    if isinstance(buf, str):
        cut = _head_cut(buf, "\n", total_lines, lines_limit, bytes_limit)
    else:
        cut = _head_cut(buf, b"\n", total_lines, lines_limit, bytes_limit)
    if cut is None:
        return _result(
            "",
            truncated=True,
            truncated_by="bytes",
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=0,
            output_bytes=0,
            max_lines=lines_limit,
            max_bytes=bytes_limit,
            first_line_exceeds_limit=True,
        )
    kept, end, by = cut
    if exact:
        out = _slice(buf, 0, end)
    elif kept == total_lines and not ends_nl:
        out = content
    else:
        out = content[: _nth_newline(content, "\n", kept)] if kept else ""
    return _result(
        out,
        truncated=True,
        truncated_by=by,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=kept,
        output_bytes=end,
        max_lines=lines_limit,
        max_bytes=bytes_limit,
    )


def _tail_cut(
    buf: AnyStr, nl: AnyStr, total_lines: int, max_lines: int, max_bytes: int
) -> tuple[int, int, int, TruncatedBy]:
    """(kept lines, start offset, end offset, truncated_by) for tail mode; kept 0 means "partial".

    With ``body`` = the buffer minus a trailing newline, the last ``k`` lines joined take
    ``len(body) - (offset of the k-th newline from the end) - 1`` bytes, so the lines that fit are
    the newlines at offset >= ``len(body) - max_bytes - 1`` (plus the whole body if it fits).
    """
    end = len(buf) - 1 if buf.endswith(nl) else len(buf)
    cap = min(total_lines, max_lines)
    if cap <= 0:
        return 0, end, end, "lines"
    if max_bytes < 0:
        fit = 0
    else:
        fit = buf.count(nl, max(0, end - max_bytes - 1), end) + (1 if end <= max_bytes else 0)
    if fit < cap:
        if fit == 0:
            return 0, buf.rfind(nl, 0, end) + 1, end, "bytes"
        return fit, buf.find(nl, max(0, end - max_bytes - 1), end) + 1, end, "bytes"
    if cap == total_lines:
        return cap, 0, end, "lines"
    return cap, _nth_newline_from_end(buf, nl, cap, end) + 1, end, "lines"


def _partial_tail(buf: str | bytes, start: int, end: int, max_bytes: int) -> tuple[str, int]:
    """Pi's ``truncateStringToBytesFromEnd`` on the line ``buf[start:end]`` (known to be too long).

    The cut moves forward past UTF-8 continuation bytes, so it never starts mid-character and may
    come back empty (``"abc🙂"`` with 3 bytes gives ``""``).
    """
    cut = end - max_bytes
    if cut >= end:
        return "", 0
    if isinstance(buf, bytes):
        while cut < end and (buf[cut] & 0xC0) == 0x80:
            cut += 1
    return _slice(buf, cut, end), end - cut


def truncate_tail(
    content: str, *, max_lines: int | None = DEFAULT_MAX_LINES, max_bytes: int | None = DEFAULT_MAX_BYTES
) -> TruncationResult:
    """Keep the end: whole lines from the last backwards while both limits hold (Pi's ``truncateTail``).

    If not even the last line fits, its end is kept (at most ``max_bytes`` bytes, starting at a
    character boundary) and ``last_line_partial`` is set. Quirk kept from Pi: when that happens with
    ``max_lines == 1`` the result says ``truncated_by="lines"``.
    """
    content = _redacted(_check_content(content))
    lines_limit = _limit(max_lines, DEFAULT_MAX_LINES, "max_lines")
    bytes_limit = _limit(max_bytes, DEFAULT_MAX_BYTES, "max_bytes")
    total_bytes, total_lines, whole, exact = _measure(content)
    ends_nl = content.endswith("\n")
    if total_lines <= lines_limit and total_bytes <= bytes_limit:
        return _result(
            content,
            truncated=False,
            truncated_by=None,
            total_lines=total_lines,
            total_bytes=total_bytes,
            output_lines=total_lines,
            output_bytes=total_bytes,
            max_lines=lines_limit,
            max_bytes=bytes_limit,
        )
    buf = whole if whole is not None else _window(content, max(bytes_limit, 0) + 2, tail=True)
    if isinstance(buf, str):
        kept, start, end, by = _tail_cut(buf, "\n", total_lines, lines_limit, bytes_limit)
    else:
        kept, start, end, by = _tail_cut(buf, b"\n", total_lines, lines_limit, bytes_limit)
    partial = kept == 0 and by == "bytes"
    if partial:
        out, out_bytes = _partial_tail(buf, start, end, bytes_limit)
        kept = 1
        if kept >= lines_limit and out_bytes <= bytes_limit:
            by = "lines"
    else:
        out_bytes = end - start
        if exact or kept == 0:
            out = _slice(buf, start, end)
        else:
            body = content[:-1] if ends_nl else content
            out = (
                body
                if kept == total_lines
                else body[_nth_newline_from_end(body, "\n", kept, len(body)) + 1 :]
            )
    return _result(
        out,
        truncated=True,
        truncated_by=by,
        total_lines=total_lines,
        total_bytes=total_bytes,
        output_lines=kept,
        output_bytes=out_bytes,
        max_lines=lines_limit,
        max_bytes=bytes_limit,
        last_line_partial=partial,
    )


def truncate_line(line: str, max_chars: int = GREP_MAX_LINE_LENGTH) -> tuple[str, bool]:
    """Cap one line at ``max_chars`` JavaScript characters (UTF-16 code units), Pi's ``truncateLine``.

    Returns ``(text, was_truncated)``; a cut line gets the suffix ``"... [truncated]"``.

    Deliberate difference from Pi: Pi's ``line.slice(0, maxChars)`` can cut an astral character
    (emoji) in half and leave a lone high surrogate. Here, when the cut would split a surrogate
    pair, the whole pair is dropped, so the text is one code unit shorter than Pi's and stays valid.
    Everywhere else the result is Pi's, including a negative ``max_chars`` (JS ``slice`` counts it
    from the end).
    """
    if not isinstance(line, str):
        raise TruncationError(f"line must be str, got {type(line).__name__}")
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise TruncationError(f"max_chars must be an int, got {type(max_chars).__name__}")
    line = _redacted(line)
    length = utf16_len(line)
    if length <= max_chars:
        return line, False
    units = max_chars if max_chars >= 0 else max(length + max_chars, 0)
    head = line[:units]
    if head.isascii() or max(head) < "\ud800":
        # no astral characters and no surrogates: code points are code units
        return head + "... [truncated]", True
    count = 0
    index = 0
    for ch in line:
        width = 2 if ord(ch) > 0xFFFF else 1
        if count + width > units:
            break  # an astral character straddles the cut: drop it whole
        count += width
        index += 1
    if (
        index > 0
        and index < len(line)
        and "\ud800" <= line[index - 1] <= "\udbff"
        and "\udc00" <= line[index] <= "\udfff"
    ):
        index -= 1  # a pair held as two code points: same rule
    return line[:index] + "... [truncated]", True


def format_size(n: int | float) -> str:
    """``1023B``, ``1.5KB``, ``1024.0KB``, ``1.0MB``: Pi's ``formatSize`` with JS ``toFixed(1)`` rounding.

    ``toFixed`` rounds the exact binary value half-up, so 1280 bytes (1.25 KB) is ``"1.3KB"`` where
    Python's ``f"{1.25:.1f}"`` would say ``"1.2"``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        raise TruncationError(f"format_size takes a number of bytes, got {type(n).__name__}")
    if n < 1024:
        return f"{js_number_to_string(n)}B"
    x = float(n)
    if n < 1024 * 1024:
        return f"{js_to_fixed(x / 1024, 1)}KB"
    return f"{js_to_fixed(x / (1024 * 1024), 1)}MB"


# --------------------------------------------------------------------------------------------------
# OutputAccumulator


_BOM = b"\xef\xbb\xbf"


class _Utf8StreamDecoder:
    """``new TextDecoder()`` used with ``{stream: true}``: WHATWG UTF-8 decode.

    Invalid input becomes one U+FFFD per maximal subpart (Python's UTF-8 decoder follows the same
    Unicode recommendation), characters split across chunks are joined, and a leading BOM is
    removed once, as TextDecoder does by default. Python's ``utf-8-sig`` is not used because it
    drops an incomplete BOM prefix (``b"\\xef\\xbb"``) at the end of the stream instead of
    reporting it as U+FFFD.
    """

    __slots__ = ("_decoder", "_pending")

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pending: bytes | None = b""  # None once the BOM question is settled

    def decode(self, data: bytes, final: bool = False) -> str:
        return self.decode_measured(data, final)[0]

    def decode_measured(self, data: bytes, final: bool = False) -> tuple[str, int]:
        """The text of this chunk and its UTF-8 byte length (without encoding it again if possible)."""
        if self._pending is not None:
            head = self._pending + data
            if len(head) < 3 and _BOM.startswith(head) and not final:
                self._pending = head
                return "", 0
            self._pending = None
            data = head[3:] if head.startswith(_BOM) else head
        before = len(self._decoder.buffer)
        text = self._decoder.decode(data, final)
        pending = self._decoder.buffer
        if pending and not _whatwg_prefix_ok(pending):
            # CPython waits for more input after ED A0..BF (an encoded surrogate, which can never
            # become valid); WHATWG reports it at once. Flushing keeps every chunk's text equal to
            # TextDecoder's, which matters because Pi's limits are checked after every chunk.
            text += self._decoder.decode(b"", True)
        if text.isascii():
            return text, len(text)
        if "\ufffd" not in text:
            # nothing was replaced: the text re-encodes to exactly the bytes it was decoded from
            return text, before + len(data) - len(self._decoder.buffer)
        return text, len(text.encode("utf-8"))


def _whatwg_prefix_ok(pending: bytes) -> bool:
    """Whether ``pending`` (an unfinished sequence) can still become a valid UTF-8 character."""
    lead = pending[0]
    if len(pending) == 1:
        return 0xC2 <= lead <= 0xF4
    lo, hi = 0x80, 0xBF
    if lead == 0xE0:
        lo = 0xA0
    elif lead == 0xED:
        hi = 0x9F
    elif lead == 0xF0:
        lo = 0x90
    elif lead == 0xF4:
        hi = 0x8F
    return lo <= pending[1] <= hi and all(0x80 <= b <= 0xBF for b in pending[2:])


def _utf8_len(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8"))


class AccumulatorSnapshotDict(TypedDict):
    """:meth:`AccumulatorSnapshot.to_dict`: ``{content, truncation, fullOutputPath?}``."""

    content: str
    truncation: TruncationResultDict
    fullOutputPath: NotRequired[str]


@dataclass(frozen=True, slots=True)
class AccumulatorSnapshot:
    """What a streaming tool shows now: the tail ``content``, its ``truncation``, the full-output file."""

    content: str
    truncation: TruncationResult
    full_output_path: str | None

    def to_dict(self) -> AccumulatorSnapshotDict:
        """Pi's shape; ``fullOutputPath`` is left out when there is no file (``undefined`` in Pi)."""
        out: AccumulatorSnapshotDict = {"content": self.content, "truncation": self.truncation.to_dict()}
        if self.full_output_path is not None:
            out["fullOutputPath"] = self.full_output_path
        return out


class OutputAccumulator:
    """Streaming output with bounded memory (Pi's ``OutputAccumulator``; the bash tool's buffer).

    Raw bytes go in with :meth:`append`; they are decoded incrementally (a character split across
    chunks is joined, invalid bytes become U+FFFD). Only a decoded *tail* is kept for display: once
    it is over ``4 * max_bytes`` bytes it is cut to its last ``2 * max_bytes`` (at a character
    start); if that cut is mid-line, snapshots drop the broken first line. Lines and bytes of the
    whole stream are counted as they pass.

    As soon as the stream is over a limit (raw bytes or decoded bytes over ``max_bytes``, or more
    than ``max_lines`` lines) a temp file ``{tmpdir}/{prefix}-{16 hex}.log`` is opened and receives
    every raw byte so far and after: the *unsanitised* full output. Before that, at most
    ``max_bytes`` raw bytes are held in memory. :meth:`snapshot` with ``persist_if_truncated=True``
    also opens it when the snapshot is truncated.

    Lifecycle: :meth:`append` ... :meth:`finish` (flushes the decoder) ... :meth:`snapshot` ...
    :meth:`close` (closes the temp file; Pi's ``closeTempFile``). Appending after ``finish`` or
    ``close`` raises :class:`~pi_nb.errors.OutputAccumulatorError` (Pi raises after ``finish`` and
    silently stops writing the file after ``closeTempFile``; here both are errors). Also a context
    manager that closes on exit.
    """

    def __init__(
        self,
        *,
        max_lines: int | None = DEFAULT_MAX_LINES,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        temp_file_prefix: str = "pi-output",
        tmpdir: str | os.PathLike[str] | None = None,
    ) -> None:
        self._max_lines = _limit(max_lines, DEFAULT_MAX_LINES, "max_lines")
        self._max_bytes = _limit(max_bytes, DEFAULT_MAX_BYTES, "max_bytes")
        if not isinstance(temp_file_prefix, str):
            raise TruncationError(f"temp_file_prefix must be str, got {type(temp_file_prefix).__name__}")
        self._prefix = temp_file_prefix
        self._tmpdir = os.fspath(tmpdir) if tmpdir is not None else None
        self._max_rolling_bytes = max(self._max_bytes * 2, 1)
        self._decoder = _Utf8StreamDecoder()
        self._raw_chunks: list[bytes] = []
        self._tail: list[str] = []  # decoded pieces, oldest first ...
        self._tail_sizes: list[int] = []  # ... and their UTF-8 sizes
        self._tail_bytes = 0
        self._tail_starts_at_line_boundary = True
        self._total_raw_bytes = 0
        self._total_decoded_bytes = 0
        self._completed_lines = 0
        self._total_lines = 0
        self._current_line_bytes = 0
        self._has_open_line = False
        self._finished = False
        self._closed = False
        self._path: str | None = None
        self._file: IO[bytes] | None = None

    # -- public state -------------------------------------------------------------------------------

    @property
    def max_lines(self) -> int:
        return self._max_lines

    @property
    def max_bytes(self) -> int:
        return self._max_bytes

    @property
    def full_output_path(self) -> str | None:
        """Path of the full-output temp file, once it has been opened."""
        return self._path

    @property
    def total_lines(self) -> int:
        """Lines of the decoded stream so far (a trailing newline does not start a line)."""
        return self._total_lines

    @property
    def total_bytes(self) -> int:
        """UTF-8 bytes of the decoded stream so far (invalid input counted as U+FFFD, 3 bytes)."""
        return self._total_decoded_bytes

    @property
    def total_raw_bytes(self) -> int:
        return self._total_raw_bytes

    @property
    def finished(self) -> bool:
        return self._finished

    @property
    def closed(self) -> bool:
        return self._closed

    def get_last_line_bytes(self) -> int:
        """Bytes of the current unterminated line (0 right after a newline); Pi's ``getLastLineBytes``."""
        return self._current_line_bytes

    # -- streaming ----------------------------------------------------------------------------------

    def append(self, data: bytes | bytearray | memoryview) -> None:
        """Add raw output bytes (any chunking; results do not depend on where chunks split)."""
        if self._finished:
            raise OutputAccumulatorError("Cannot append to a finished output accumulator")
        if self._closed:
            raise OutputAccumulatorError("Cannot append to a closed output accumulator")
        if isinstance(data, (bytearray, memoryview)):
            data = bytes(data)
        elif not isinstance(data, bytes):
            raise TruncationError(f"append() takes bytes, got {type(data).__name__}")
        self._total_raw_bytes += len(data)
        self._append_decoded(*self._decoder.decode_measured(data))
        if self._file is not None or self._should_use_temp_file():
            self._ensure_temp_file()
            self._write(data)
        elif data:
            self._raw_chunks.append(data)

    def finish(self) -> None:
        """End of stream: flush the decoder (an incomplete character becomes U+FFFD). Idempotent."""
        if self._finished:
            return
        self._finished = True
        self._append_decoded(*self._decoder.decode_measured(b"", final=True))
        if self._should_use_temp_file():
            self._ensure_temp_file()
        self._flush()

    def snapshot(self, *, persist_if_truncated: bool = False) -> AccumulatorSnapshot:
        """The tail as ``truncate_tail`` shows it, with the whole stream's line and byte totals.

        ``truncated`` is decided on the whole stream (more lines or decoded bytes than the limits),
        not on the kept tail; ``truncated_by`` falls back to bytes-then-lines when the tail itself
        fits (Pi's rule).
        """
        tail = truncate_tail(self._snapshot_text(), max_lines=self._max_lines, max_bytes=self._max_bytes)
        truncated = self._total_lines > self._max_lines or self._total_decoded_bytes > self._max_bytes
        truncated_by: TruncatedBy | None = None
        if truncated:
            truncated_by = tail.truncated_by or (
                "bytes" if self._total_decoded_bytes > self._max_bytes else "lines"
            )
        truncation = replace(
            tail,
            truncated=truncated,
            truncated_by=truncated_by,
            total_lines=self._total_lines,
            total_bytes=self._total_decoded_bytes,
            max_lines=self._max_lines,
            max_bytes=self._max_bytes,
        )
        if persist_if_truncated and truncated:
            self._ensure_temp_file()
        self._flush()
        return AccumulatorSnapshot(content=tail.content, truncation=truncation, full_output_path=self._path)

    def close(self) -> None:
        """Close the temp file (Pi's ``closeTempFile``). Snapshots still work; appends do not."""
        self._closed = True
        if self._file is not None:
            file, self._file = self._file, None
            try:
                file.close()
            except OSError as exc:
                raise OutputAccumulatorError(
                    f"Could not write the full output to {self._path}: {exc}"
                ) from exc

    def __enter__(self) -> OutputAccumulator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------------------

    def _append_decoded(self, text: str, nbytes: int) -> None:
        if not text:
            return
        self._total_decoded_bytes += nbytes
        self._tail.append(text)
        self._tail_sizes.append(nbytes)
        self._tail_bytes += nbytes
        if self._tail_bytes > self._max_rolling_bytes * 2:
            self._trim_tail()
        elif len(self._tail) > 512:  # many tiny chunks: keep the piece list short
            self._tail = ["".join(self._tail)]
            self._tail_sizes = [self._tail_bytes]
        newlines = text.count("\n")
        if newlines == 0:
            self._current_line_bytes += nbytes
            self._has_open_line = True
        else:
            self._completed_lines += newlines
            rest = text[text.rfind("\n") + 1 :]
            self._current_line_bytes = _utf8_len(rest)
            self._has_open_line = len(rest) > 0
        self._total_lines = self._completed_lines + (1 if self._has_open_line else 0)

    def _trim_tail(self) -> None:
        """Keep the last ``max_rolling_bytes`` bytes of the tail, starting at a character start.

        Pi encodes the whole tail and cuts the buffer; the same cut is found here by skipping whole
        pieces (their sizes are known) and encoding only the piece the cut falls in.
        """
        texts, sizes = self._tail, self._tail_sizes
        cut = self._tail_bytes - self._max_rolling_bytes  # > 0: trimming only runs when over 2x
        i = 0
        while cut >= sizes[i]:
            cut -= sizes[i]
            i += 1
        piece = texts[i]
        if cut == 0:
            boundary = texts[i - 1].endswith("\n")
            first, first_bytes = piece, sizes[i]
        elif piece.isascii():
            boundary = piece[cut - 1] == "\n"
            first, first_bytes = piece[cut:], sizes[i] - cut
        else:
            data = piece.encode("utf-8")
            start = cut
            while start < len(data) and (data[start] & 0xC0) == 0x80:
                start += 1
            boundary = data[start - 1] == 0x0A
            first, first_bytes = data[start:].decode("utf-8"), len(data) - start
        self._tail_starts_at_line_boundary = boundary
        self._tail = ([first] if first else []) + texts[i + 1 :]
        self._tail_sizes = ([first_bytes] if first else []) + sizes[i + 1 :]
        self._tail_bytes = sum(self._tail_sizes)

    def _snapshot_text(self) -> str:
        text = "".join(self._tail)
        self._tail = [text] if text else []
        self._tail_sizes = [self._tail_bytes] if text else []
        if self._tail_starts_at_line_boundary:
            return text
        first = text.find("\n")
        return text if first == -1 else text[first + 1 :]

    def _should_use_temp_file(self) -> bool:
        return (
            self._total_raw_bytes > self._max_bytes
            or self._total_decoded_bytes > self._max_bytes
            or self._total_lines > self._max_lines
        )

    def _ensure_temp_file(self) -> None:
        if self._path is not None:
            return
        directory = self._tmpdir if self._tmpdir is not None else tempfile.gettempdir()
        path = os.path.join(directory, f"{self._prefix}-{secrets.token_hex(8)}.log")
        try:
            file = cast(IO[bytes], open(path, "xb"))
        except OSError as exc:
            raise OutputAccumulatorError(f"Could not create the full-output file {path}: {exc}") from exc
        self._path = path
        self._file = file
        for chunk in self._raw_chunks:
            self._write(chunk)
        self._raw_chunks = []
        if self._closed:
            # opened after close() (a late snapshot/finish): write what we hold and close again
            self._file = None
            try:
                file.close()
            except OSError as exc:
                raise OutputAccumulatorError(f"Could not write the full output to {path}: {exc}") from exc

    def _write(self, data: bytes) -> None:
        if self._file is None or not data:
            return
        try:
            self._file.write(data)
        except OSError as exc:
            raise OutputAccumulatorError(f"Could not write the full output to {self._path}: {exc}") from exc

    def _flush(self) -> None:
        if self._file is None:
            return
        try:
            self._file.flush()
        except OSError as exc:
            raise OutputAccumulatorError(f"Could not write the full output to {self._path}: {exc}") from exc
