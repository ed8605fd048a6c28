"""Truncation reports: what the model saw of a tool output against the full output, down to the
bytes at the cut, for a stored tool result (its ``details.truncation``, the full output from
``details.fullOutputPath`` or a re-read file) or for a text truncated here with Pi's limits.

Plain data, no HTML: :mod:`pi_nb.notebook.truncation` renders a report (static HTML/text and a
live widget). :func:`session_truncation_reports` gives the report of every tool result of a
session.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import pi_nb.harness  # noqa: F401 - registers the other agents' readers with the session sources
from pi_nb._fs import read_regular
from pi_nb._js import js_utf8_encode
from pi_nb.errors import NotebookError, TruncationError
from pi_nb.messages import ToolCall, ToolResultMessage, block_text
from pi_nb.session.types import SessionMessageEntry
from pi_nb.truncation import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_head,
    truncate_tail,
)

__all__ = [
    "TruncationReport",
    "dropped_text",
    "session_truncation_reports",
    "truncation_report",
    "truncation_report_for_text",
]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


_TAIL_TOOLS = frozenset({"bash"})
_NOTICE_TOTAL = re.compile(r"Showing lines \d+-\d+ of (\d+)")
_HEAD_TOOLS = frozenset({"read", "grep", "find", "ls"})


@dataclass(frozen=True)
class TruncationReport:
    """What the model saw of one output against the full output.

    Attributes:
        mode: ``"head"`` (read, grep, find, ls keep the beginning) or ``"tail"`` (bash keeps the
            end).
        truncation: the result Pi stored (``details.truncation``), or the one computed here.
        model_text: the text the model saw (content + notice).
        notice: the bracketed notice Pi appended (``[Showing lines ...]``), if any.
        full_text: the full output when known (``None``: only the stored numbers can be shown).
        recomputed: ``truncate_head``/``truncate_tail`` of ``full_text`` with the stored limits.
        matches: whether ``recomputed`` agrees with ``truncation`` (``None`` without full text).
        cut_offset: byte offset of the cut in the UTF-8 of the full text (head: end of the kept
            part; tail: start of the kept part).
        naive_cut_offset: tail with a partial line only: where ``max_bytes`` alone would have cut;
            the bytes between it and ``cut_offset`` are UTF-8 continuation bytes skipped so the
            kept text does not start inside a character.
    """

    mode: Literal["head", "tail"]
    truncation: TruncationResult | None
    model_text: str
    notice: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_call_args: Mapping[str, Any] | None = None  # the tool call's arguments (open JSON)
    is_error: bool = False
    full_output_path: str | None = None
    full_output_exists: bool = False
    full_text: str | None = None
    full_text_source: str | None = None
    recomputed: TruncationResult | None = None
    matches: bool | None = None
    mismatches: tuple[str, ...] = ()
    cut_offset: int | None = None
    naive_cut_offset: int | None = None
    extra_notes: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        return bool(self.truncation and self.truncation.truncated)

    @property
    def full_bytes(self) -> bytes | None:
        return None if self.full_text is None else js_utf8_encode(self.full_text)

    def kept_range(self) -> tuple[int, int] | None:
        """``(start, end)`` byte offsets of the kept text inside the full text."""
        if self.full_text is None or self.truncation is None:
            return None
        full = js_utf8_encode(self.full_text)
        kept = js_utf8_encode(self.truncation.content)
        if self.mode == "head":
            if full.startswith(kept):
                return (0, len(kept))
            return None
        end = len(full) - (1 if full.endswith(b"\n") and self.truncation.truncated else 0)
        if full[:end].endswith(kept):
            return (end - len(kept), end)
        at = full.rfind(kept)
        return (at, at + len(kept)) if at >= 0 else None

    def hex_window(self, radius: int = 12) -> list[tuple[int, int, str]]:
        """Bytes around the cut: ``(offset, byte, role)``, role ``kept``/``dropped``/``skipped``."""
        if self.full_text is None or self.cut_offset is None:
            return []
        full = js_utf8_encode(self.full_text)
        rng = self.kept_range()
        lo, hi = max(0, self.cut_offset - radius), min(len(full), self.cut_offset + radius)
        out: list[tuple[int, int, str]] = []
        for i in range(lo, hi):
            role = "kept" if rng and rng[0] <= i < rng[1] else "dropped"
            if self.naive_cut_offset is not None and self.naive_cut_offset <= i < self.cut_offset:
                role = "skipped"
            out.append((i, full[i], role))
        return out

    def notice_total_lines(self) -> int | None:
        """The total in the notice the model saw (``[Showing lines 1-2000 of 5001 ...]``), if any."""
        m = _NOTICE_TOTAL.search(self.notice or "")
        return int(m.group(1)) if m else None

    def line_count_note(self) -> str | None:
        """Why the notice's total differs from :attr:`truncation`'s ``total_lines``, when it does.

        Pi counts lines two ways: the truncation counts a final newline as ending the last line
        (a 5,000-line file has 5,000 lines), while the read tool's notice counts the pieces of
        ``text.split("\\n")``, so a file ending in a newline has one more, empty, line (5,001).
        """
        t = self.truncation
        shown = self.notice_total_lines()
        if t is None or shown is None or shown == t.total_lines:
            return None
        if shown == t.total_lines + 1 and self.full_text is not None and self.full_text.endswith("\n"):
            return (
                f'the notice says "of {shown}": Pi\'s read tool counts the empty line after the final '
                f"newline as a line; the truncation counts {t.total_lines} (a final newline ends a line)"
            )
        return f'the notice says "of {shown}" lines where the truncation counted {t.total_lines}'

    def summary_lines(self) -> list[str]:
        """The facts, one per line (shared by the text and HTML renderings)."""
        t = self.truncation
        lines: list[str] = []
        who = f"{self.tool_name} result" if self.tool_name else "output"
        if t is None:
            lines.append(f"{who}: no truncation details (the tool did not truncate, or does not record it)")
            return lines
        if not t.truncated:
            lines.append(f"{who}: not truncated ({t.total_lines} lines, {format_size(t.total_bytes)})")
            return lines
        keep = "beginning" if self.mode == "head" else "end"
        lines.append(f"{who}: {self.mode} truncation (kept the {keep})")
        lines.append(
            f"kept {t.output_lines} of {t.total_lines} lines, {t.output_bytes} of {t.total_bytes} bytes "
            f"({format_size(t.output_bytes)} of {format_size(t.total_bytes)})"
        )
        note = self.line_count_note()
        if note:
            lines.append(note)
        dropped_lines = t.total_lines - t.output_lines
        limit = (
            f"maxLines={t.max_lines}"
            if t.truncated_by == "lines"
            else f"maxBytes={t.max_bytes} ({format_size(t.max_bytes)})"
        )
        lines.append(
            f"cut by {t.truncated_by}: {limit}; dropped {dropped_lines} lines, {t.total_bytes - t.output_bytes} bytes"
        )
        if t.first_line_exceeds_limit:
            lines.append(f"the first line alone is over {format_size(t.max_bytes)}: nothing was kept")
        if t.last_line_partial:
            lines.append(f"kept only the last {t.output_bytes} bytes of one over-long line (a partial line)")
        if t.truncated_by == "lines" and t.output_lines == t.total_lines:
            lines.append(
                "quirk: no line was dropped; only the trailing newline pushed the total over the byte limit "
                "(Pi reports it as truncated by lines)"
            )
        if self.cut_offset is not None:
            lines.append(f"cut at byte {self.cut_offset} of the full output")
        if (
            self.cut_offset is not None
            and self.naive_cut_offset is not None
            and self.naive_cut_offset != self.cut_offset
        ):
            lines.append(
                f"UTF-8 boundary: {self.cut_offset - self.naive_cut_offset} continuation byte(s) skipped "
                f"after byte {self.naive_cut_offset} so the kept text starts on a whole character"
            )
        return lines


def _text_of(content: Any) -> str:
    return block_text(content, skip_non_string=True)


def _split_notice(model_text: str, kept: str | None) -> tuple[str, str | None]:
    """``(what the model saw before the notice, the notice)``."""
    if kept is not None and model_text.startswith(kept):
        rest = model_text[len(kept) :]
        stripped = rest.lstrip("\n")
        if stripped.startswith("["):
            return kept, stripped
        if not rest:
            return kept, None
    if model_text.startswith("[") and model_text.endswith("]") and "\n" not in model_text:
        return "", model_text
    at = model_text.rfind("\n\n[")
    if at >= 0 and model_text.endswith("]"):
        return model_text[:at], model_text[at + 2 :]
    return model_text, None


def _compare(stored: TruncationResult, computed: TruncationResult) -> tuple[str, ...]:
    # compared key by key, whatever the values' types
    a: Mapping[str, object] = stored.to_dict()
    b: Mapping[str, object] = computed.to_dict()
    return tuple(k for k in a if a[k] != b[k])


def _cut_offsets(report: TruncationReport) -> tuple[int | None, int | None]:
    t = report.truncation
    if t is None or not t.truncated or report.full_text is None:
        return None, None
    rng = report.kept_range()
    if rng is None:
        return None, None
    if report.mode == "head":
        return rng[1], None
    naive = None
    if t.last_line_partial:
        naive = max(rng[1] - t.max_bytes, 0)
    return rng[0], naive


def read_full_output(path: str) -> str | None:
    try:
        data = read_regular(path, None)  # a path the session names: refused unless a regular file
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def read_tool_text(args: Mapping[str, Any], cwd: str) -> str | None:
    """The text Pi's read tool truncated: the file's lines from ``offset`` for ``limit`` lines.

    ``args`` are the recorded call's arguments, open JSON checked here field by field."""
    raw = args.get("path")
    if not isinstance(raw, str):
        return None
    path = raw[1:] if raw.startswith("@") else raw
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    try:
        text = read_regular(path, None).decode("utf-8", "replace")  # a path the model chose
    except OSError:
        return None
    lines = text.split("\n")
    offset = args.get("offset")
    start = max(0, int(offset) - 1) if isinstance(offset, (int, float)) and offset else 0
    limit = args.get("limit")
    end = min(start + int(limit), len(lines)) if isinstance(limit, (int, float)) else len(lines)
    return "\n".join(lines[start:end])


def truncation_report(
    tool_result: ToolResultMessage | SessionMessageEntry,
    *,
    full_text: str | bytes | None = None,
    tool_call: ToolCall | None = None,
    cwd: str | None = None,
    mode: Literal["head", "tail"] | None = None,
    base_dir: str | None = None,
) -> TruncationReport:
    """A :class:`TruncationReport` for a stored ``toolResult`` message (or its session entry).

    The full output comes from ``full_text`` if given, else from ``details.fullOutputPath`` when
    that file still exists (bash; a relative path is taken from ``base_dir``), else - for a
    ``read`` result with ``tool_call`` and ``cwd`` - from re-reading the file (it may have
    changed since; ``matches`` tells).
    """
    msg: object = tool_result.get("message") if tool_result.get("type") == "message" else tool_result
    if not isinstance(msg, Mapping) or msg.get("role") != "toolResult":
        raise NotebookError("truncation_report() needs a toolResult message (or its session entry)")
    # from here ``msg`` is a toolResult message as stored: its fields are read tolerantly
    details = _mapping(msg.get("details"))
    stored_dict = details.get("truncation")
    stored: TruncationResult | None = None
    if isinstance(stored_dict, Mapping):
        try:
            stored = TruncationResult.from_dict(dict(stored_dict))
        except TruncationError as exc:
            raise NotebookError(f"details.truncation is not a truncation result: {exc}") from None
    tool_name = msg.get("toolName") if isinstance(msg.get("toolName"), str) else None
    if mode is None:
        if stored is not None and stored.last_line_partial:
            mode = "tail"
        elif stored is not None and stored.first_line_exceeds_limit:
            mode = "head"
        else:
            mode = "tail" if tool_name in _TAIL_TOOLS else "head"
    path = details.get("fullOutputPath") if isinstance(details.get("fullOutputPath"), str) else None
    args = (
        tool_call.get("arguments") if tool_call and isinstance(tool_call.get("arguments"), Mapping) else None
    )
    source = None
    text: str | None
    if isinstance(full_text, bytes):
        text, source = full_text.decode("utf-8", "replace"), "given"
    else:
        text, source = full_text, "given" if full_text is not None else None
    resolved = path
    if path and base_dir is not None and not os.path.isabs(path):
        resolved = os.path.join(base_dir, path)
    exists = bool(resolved and os.path.isfile(resolved))
    if text is None and resolved and exists:
        text = read_full_output(resolved)
        source = "fullOutputPath" if text is not None else None
    if text is None and tool_name == "read" and args is not None and cwd is not None:
        text = read_tool_text(args, cwd)
        source = "re-read file" if text is not None else None
    model_text = _text_of(msg.get("content"))
    _, notice = _split_notice(model_text, stored.content if stored else None)
    report = TruncationReport(
        mode=mode,
        truncation=stored,
        model_text=model_text,
        notice=notice,
        tool_name=tool_name,
        tool_call_id=msg.get("toolCallId") if isinstance(msg.get("toolCallId"), str) else None,
        tool_call_args=args,
        is_error=bool(msg.get("isError")),
        full_output_path=path,
        full_output_exists=exists,
        full_text=text,
        full_text_source=source,
    )
    return _with_recomputed(report)


def _with_recomputed(report: TruncationReport) -> TruncationReport:
    if report.full_text is None:
        return report
    limits = report.truncation
    max_lines = limits.max_lines if limits else DEFAULT_MAX_LINES
    max_bytes = limits.max_bytes if limits else DEFAULT_MAX_BYTES
    fn = truncate_head if report.mode == "head" else truncate_tail
    recomputed = fn(report.full_text, max_lines=max_lines, max_bytes=max_bytes)
    mismatches = _compare(limits, recomputed) if limits else ()
    notes: list[str] = []
    if report.tool_name == "grep" and limits is not None and limits.max_lines != recomputed.max_lines:
        notes.append("grep truncates by bytes only")
    report = replace(
        report,
        recomputed=recomputed,
        matches=None if limits is None else not mismatches,
        mismatches=mismatches,
        truncation=limits or recomputed,
        extra_notes=tuple(notes),
    )
    cut, naive = _cut_offsets(report)
    return replace(report, cut_offset=cut, naive_cut_offset=naive)


def _check_text(value: object) -> None:
    """Refuse what is not the text itself (a path, a tool result, a number...)."""
    if isinstance(value, os.PathLike):
        raise NotebookError(
            f"truncation_view() takes the text itself, not a path: pass Path({os.fspath(value)!r}).read_text()"
        )
    if isinstance(value, Mapping):
        raise NotebookError(
            "truncation_view() takes a text; for a stored tool result use tool_result_truncation()"
        )
    if not isinstance(value, (str, bytes)):
        raise NotebookError(f"truncation_view() takes a str or bytes, got {type(value).__name__}")
    if isinstance(value, str) and value and "\n" not in value and len(value) < 4096:
        try:
            is_file = os.path.isfile(value)
        except (OSError, ValueError):
            is_file = False
        if is_file:
            raise NotebookError(
                f"truncation_view() takes the text itself; {value!r} is a file path: pass Path({value!r}).read_text()"
            )


def truncation_report_for_text(
    full_text: str | bytes,
    mode: Literal["head", "tail"] = "head",
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TruncationReport:
    """Run :func:`pi_nb.truncation.truncate_head` / ``truncate_tail`` on a text and report the cut."""
    if mode not in ("head", "tail"):
        raise NotebookError(f"mode must be 'head' or 'tail', got {mode!r}")
    _check_text(full_text)
    text = full_text.decode("utf-8", "replace") if isinstance(full_text, bytes) else full_text
    fn = truncate_head if mode == "head" else truncate_tail
    result = fn(text, max_lines=max_lines, max_bytes=max_bytes)
    report = TruncationReport(
        mode=mode, truncation=result, model_text=result.content, full_text=text, full_text_source="given"
    )
    report = replace(report, recomputed=result, matches=True)
    cut, naive = _cut_offsets(report)
    return replace(report, cut_offset=cut, naive_cut_offset=naive)


def dropped_text(report: TruncationReport) -> str | None:
    """The part of the full text the model did not see (``None`` without the full text)."""
    rng = report.kept_range()
    full = report.full_bytes
    if rng is None or full is None:
        return None
    part = full[rng[1] :] if report.mode == "head" else full[: rng[0]]
    return part.decode("utf-8", "replace")


def session_truncation_reports(
    source: Any, *, truncated_only: bool = True, base_dir: str | None = None
) -> list[TruncationReport]:
    """The :class:`TruncationReport` of every ``toolResult`` of one session (file order): what
    was cut where, per tool result. ``source`` is one session
    (:func:`pi_nb.session.source.open_session_source`); each result is paired with the tool call
    that asked for it and read with the session's ``cwd`` (so a ``read`` result can re-read its
    file). ``truncated_only`` keeps the results Pi stored truncation details for that say
    truncated. A result whose stored details are not a truncation result is skipped."""
    from pi_nb.session.source import open_session_source

    manager = open_session_source(source)
    header = _mapping(manager.get_header())
    cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
    calls: dict[str, ToolCall] = {}
    out: list[TruncationReport] = []
    for entry in manager.get_entries():
        if entry.get("type") != "message":
            continue
        msg = _mapping(entry.get("message"))
        role = msg.get("role")
        if role == "assistant" and isinstance(msg.get("content"), list):
            for block in msg["content"]:
                if isinstance(block, Mapping) and block.get("type") == "toolCall":
                    calls[str(block.get("id"))] = block  # type: ignore[assignment]
            continue
        if role != "toolResult":
            continue
        stored = _mapping(_mapping(msg.get("details")).get("truncation"))
        if truncated_only and stored.get("truncated") is not True:
            continue
        try:
            report = truncation_report(
                entry,  # type: ignore[arg-type]
                tool_call=calls.get(str(msg.get("toolCallId"))),
                cwd=cwd,
                base_dir=base_dir,
            )
        except NotebookError:
            continue
        out.append(report)
    return out
