"""The truncation view: what the model saw of a tool output against the full output, down to the
bytes at the cut (static HTML/text and a live widget with a context-lines slider).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from pi_nb._fs import read_regular
from pi_nb._js import js_utf8_encode
from pi_nb.errors import NotebookError, TruncationError
from pi_nb.messages import ToolCall, ToolResultMessage
from pi_nb.notebook._base import (
    COLORS,
    FONT,
    SANS,
    TraitChange,
    _ipywidgets,
    _mapping,
    _WidgetView,
    escape,
)
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
    "TruncationView",
    "render_truncation_html",
    "render_truncation_text",
    "tool_result_truncation",
    "truncation_report",
    "truncation_report_for_text",
    "truncation_view",
]


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
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


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


def _read_full_output(path: str) -> str | None:
    try:
        data = read_regular(path, None)  # a path the session names: refused unless a regular file
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def _read_tool_text(args: Mapping[str, Any], cwd: str) -> str | None:
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
        text = _read_full_output(resolved)
        source = "fullOutputPath" if text is not None else None
    if text is None and tool_name == "read" and args is not None and cwd is not None:
        text = _read_tool_text(args, cwd)
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


def _lines_window(text: str, *, first: bool, n: int, width: int = 240) -> list[str]:
    if n <= 0:
        return []
    lines = text.split("\n")
    pick = lines[:n] if first else lines[-n:]
    return [ln if len(ln) <= width else ln[:width] + f"… (+{len(ln) - width} chars)" for ln in pick]


def _dropped_text(report: TruncationReport) -> str | None:
    rng = report.kept_range()
    full = report.full_bytes
    if rng is None or full is None:
        return None
    part = full[rng[1] :] if report.mode == "head" else full[: rng[0]]
    return part.decode("utf-8", "replace")


def render_truncation_text(report: TruncationReport, *, context_lines: int = 3) -> str:
    lines = list(report.summary_lines())
    lines.extend(report.extra_notes)
    if report.notice:
        lines.append(f"notice: {report.notice}")
    if report.full_output_path:
        state = "exists" if report.full_output_exists else "missing"
        lines.append(f"full output: {report.full_output_path} ({state})")
    if report.matches is False:
        lines.append(f"the full output gives a different cut ({', '.join(report.mismatches)} differ)")
    if report.full_text is None and report.truncated:
        lines.append("full output not available: only the stored numbers are shown")
    hx = report.hex_window(8)
    if hx:
        lines.append(
            "bytes at the cut: "
            + " ".join(f"{'|' if o == report.cut_offset else ''}{b:02x}" for o, b, _ in hx)
        )
    t = report.truncation
    if t is not None and t.truncated and context_lines:
        dropped = _dropped_text(report)
        if report.mode == "head":
            lines.append("… last kept lines:")
            lines.extend("  " + ln for ln in _lines_window(t.content, first=False, n=context_lines))
            if dropped is not None:
                lines.append("… first dropped lines:")
                lines.extend(
                    "  " + ln for ln in _lines_window(dropped.lstrip("\n"), first=True, n=context_lines)
                )
        else:
            if dropped is not None:
                lines.append("… last dropped lines:")
                lines.extend("  " + ln for ln in _lines_window(dropped, first=False, n=context_lines))
            lines.append("… first kept lines:")
            lines.extend("  " + ln for ln in _lines_window(t.content, first=True, n=context_lines))
    return "\n".join(lines)


def _hex_html(report: TruncationReport) -> str:
    hx = report.hex_window(12)
    if not hx:
        return ""
    cells = []
    for off, byte, role in hx:
        bg = {"kept": "#dcfce7", "dropped": "#fee2e2", "skipped": "#fde68a"}[role]
        cont = (byte & 0xC0) == 0x80
        char = chr(byte) if 0x20 <= byte < 0x7F else ("↵" if byte == 0x0A else ("·" if cont else "…"))
        sep = (
            f'<span style="display:inline-block;width:2px;background:{COLORS["error"]};margin:0 2px">&nbsp;</span>'
            if off == report.cut_offset
            else ""
        )
        cells.append(
            f'{sep}<span title="byte {off}: 0x{byte:02x}{" (continuation byte)" if cont else ""} ({role})" '
            f'style="display:inline-block;text-align:center;background:{bg};margin:0 1px;padding:0 2px;border-radius:2px">'
            f'{byte:02x}<br><span style="color:#64748b">{escape(char)}</span></span>'
        )
    legend = (
        '<span style="background:#dcfce7;padding:0 3px">kept</span> '
        '<span style="background:#fee2e2;padding:0 3px">dropped</span> '
        '<span style="background:#fde68a;padding:0 3px">skipped continuation bytes</span> '
        f'<span style="color:{COLORS["error"]}">|</span> the cut'
    )
    return (
        f'<div style="margin-top:6px"><b>bytes at the cut</b> (UTF-8, byte {hx[0][0]}..{hx[-1][0]}) {legend}'
        f'<div style="{FONT};margin-top:3px">{"".join(cells)}</div></div>'
    )


def _pre(lines: Iterable[str], bg: str, border: str) -> str:
    body = "\n".join(escape(ln) for ln in lines)
    return (
        f'<pre style="{FONT};background:{bg};border-left:3px solid {border};margin:2px 0;padding:4px 6px;'
        f'white-space:pre-wrap;word-break:break-all;max-height:260px;overflow:auto">{body}</pre>'
    )


def render_truncation_html(report: TruncationReport, *, context_lines: int = 6) -> str:
    t = report.truncation
    facts = report.summary_lines() + list(report.extra_notes)
    status_color = COLORS["error"] if report.truncated else COLORS["ok"]
    head = (
        f'<div style="display:flex;justify-content:space-between"><b>Truncation boundary</b>'
        f'<span style="color:{status_color};font-weight:700">'
        f"{'truncated by ' + str(t.truncated_by) if t and t.truncated else 'complete'}</span></div>"
    )
    bars = ""
    if t is not None and t.total_bytes:
        kb = t.output_bytes / t.total_bytes * 100 if t.total_bytes else 100
        kl = t.output_lines / t.total_lines * 100 if t.total_lines else 100
        lim_b = min(100.0, t.max_bytes / t.total_bytes * 100) if t.total_bytes else 100
        lim_l = min(100.0, t.max_lines / t.total_lines * 100) if t.total_lines else 100
        left = report.mode == "head"

        def bar(label: str, kept_pct: float, limit_pct: float, text: str) -> str:
            pos = "left:0" if left else "right:0"
            lim = f"left:{limit_pct:.3f}%" if left else f"right:{limit_pct:.3f}%"
            return (
                f'<div style="display:flex;align-items:center;gap:6px;margin:3px 0"><span style="width:44px">{label}</span>'
                f'<div style="position:relative;flex:1;height:14px;background:#fee2e2;border:1px solid #cbd5e1;border-radius:3px">'
                f'<div style="position:absolute;{pos};top:0;bottom:0;width:{kept_pct:.3f}%;background:#86efac"></div>'
                f'<div title="limit" style="position:absolute;{lim};top:-3px;bottom:-3px;border-left:2px dashed {COLORS["error"]}"></div>'
                f'</div><span style="width:230px;font-size:11px">{escape(text)}</span></div>'
            )

        bars = bar(
            "bytes", kb, lim_b, f"{t.output_bytes:,} / {t.total_bytes:,} (limit {format_size(t.max_bytes)})"
        ) + bar("lines", kl, lim_l, f"{t.output_lines:,} / {t.total_lines:,} (limit {t.max_lines:,})")
    fact_html = "".join(f"<li>{escape(f)}</li>" for f in facts)
    extra = []
    if report.full_output_path:
        state = "exists" if report.full_output_exists else "no longer exists"
        extra.append(f"<li>full output file: <code>{escape(report.full_output_path)}</code> ({state})</li>")
    if report.full_text_source:
        extra.append(f"<li>full text from: {escape(report.full_text_source)}</li>")
    elif report.truncated:
        extra.append("<li>full output not available: only the stored numbers are shown</li>")
    if report.matches is True:
        extra.append(
            f'<li style="color:{COLORS["ok"]}">re-running pi_nb.truncation on the full text gives the same cut</li>'
        )
    elif report.matches is False:
        extra.append(
            f'<li style="color:{COLORS["error"]}">re-running pi_nb.truncation on the full text gives a different cut '
            f"({escape(', '.join(report.mismatches))} differ): the file changed, or the tool post-processed it</li>"
        )
    panes = []
    if t is not None and t.truncated and context_lines > 0:
        dropped = _dropped_text(report)
        kept_lines = (
            _lines_window(t.content, first=report.mode != "head", n=context_lines)
            if t.content
            else ["(nothing kept)"]
        )
        if report.mode == "head":
            panes.append('<div style="margin-top:6px"><b>the model saw</b> (last kept lines)</div>')
            panes.append(_pre(kept_lines, "#f0fdf4", "#16a34a"))
            if report.notice:
                panes.append(_pre([report.notice], "#fffbeb", "#d97706"))
            if dropped is not None:
                panes.append("<div><b>dropped</b> (first lines after the cut)</div>")
                panes.append(
                    _pre(
                        _lines_window(dropped.lstrip("\n"), first=True, n=context_lines), "#fef2f2", "#dc2626"
                    )
                )
        else:
            if dropped is not None:
                panes.append('<div style="margin-top:6px"><b>dropped</b> (last lines before the cut)</div>')
                panes.append(_pre(_lines_window(dropped, first=False, n=context_lines), "#fef2f2", "#dc2626"))
            panes.append("<div><b>the model saw</b> (first kept lines)</div>")
            panes.append(_pre(kept_lines, "#f0fdf4", "#16a34a"))
            if report.notice:
                panes.append(_pre([report.notice], "#fffbeb", "#d97706"))
    elif report.notice:
        panes.append(_pre([report.notice], "#fffbeb", "#d97706"))
    return (
        f'<div class="pi-nb-truncation" style="{SANS};border:1px solid #e2e8f0;border-radius:6px;padding:8px 10px;'
        f'background:#fff;color:#0f172a;max-width:900px">{head}{bars}'
        f'<ul style="margin:4px 0;padding-left:18px;font-size:12px">{fact_html}{"".join(extra)}</ul>'
        f"{''.join(panes)}{_hex_html(report)}</div>"
    )


# ==== the widget ====


class TruncationView(_WidgetView):
    """A truncation boundary: what the model saw against the full output."""

    def __init__(self, report: TruncationReport, *, context_lines: int = 6, live: bool | None = None) -> None:
        if context_lines < 0:
            raise NotebookError(f"context_lines must be >= 0, got {context_lines}")
        self.report = report
        self.context_lines = context_lines
        self.live = live

    def to_html(self) -> str:
        return render_truncation_html(self.report, context_lines=self.context_lines)

    def to_text(self) -> str:
        return render_truncation_text(self.report, context_lines=min(self.context_lines, 3))

    def _build_widget(self) -> Any:
        w = _ipywidgets()
        self.html = w.HTML(value=self.to_html())
        self.lines_slider = w.IntSlider(
            value=self.context_lines,
            min=0,
            max=60,
            description="context lines",
            style={"description_width": "initial"},
            layout=w.Layout(width="420px"),
        )

        def on_lines(change: TraitChange) -> None:
            self.context_lines = int(change["new"])
            self.html.value = self.to_html()

        self.lines_slider.observe(on_lines, names="value")
        self._widget = w.VBox([self.lines_slider, self.html])
        return self._widget


def truncation_view(
    full_text: str | bytes,
    mode: Literal["head", "tail"] = "head",
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    context_lines: int = 6,
) -> TruncationView:
    """Truncate a text with :mod:`pi_nb.truncation` (head or tail, Pi's limits) and show the cut.

    ``full_text`` is the text itself (str or bytes); a path, a tool result or any other object is
    refused with :class:`~pi_nb.errors.NotebookError` (use :func:`tool_result_truncation` for a
    stored tool result)."""
    return TruncationView(
        truncation_report_for_text(full_text, mode, max_lines=max_lines, max_bytes=max_bytes),
        context_lines=context_lines,
    )


def tool_result_truncation(
    tool_result: ToolResultMessage | SessionMessageEntry,
    *,
    full_text: str | bytes | None = None,
    tool_call: ToolCall | None = None,
    cwd: str | None = None,
    base_dir: str | None = None,
    context_lines: int = 6,
) -> TruncationView:
    """The truncation boundary of a stored tool result (see
    :func:`~pi_nb.notebook.views.truncation_report`)."""
    return TruncationView(
        truncation_report(tool_result, full_text=full_text, tool_call=tool_call, cwd=cwd, base_dir=base_dir),
        context_lines=context_lines,
    )
