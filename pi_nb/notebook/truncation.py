"""The truncation view: what the model saw of a tool output against the full output, down to the
bytes at the cut (static HTML/text and a live widget with a context-lines slider).

The reports are computed by :mod:`pi_nb.analysis.truncation` (re-exported here); this module
only renders them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pi_nb.analysis.truncation import (
    TruncationReport,
    dropped_text,
    read_full_output,
    read_tool_text,
    truncation_report,
    truncation_report_for_text,
)
from pi_nb.errors import NotebookError
from pi_nb.messages import ToolCall, ToolResultMessage
from pi_nb.notebook._base import (
    COLORS,
    FONT,
    SANS,
    TraitChange,
    _ipywidgets,
    _WidgetView,
    escape,
)
from pi_nb.session.types import SessionMessageEntry
from pi_nb.truncation import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size

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

# the readers, importable from here as before
_read_full_output = read_full_output
_read_tool_text = read_tool_text
_dropped_text = dropped_text


def _lines_window(text: str, *, first: bool, n: int, width: int = 240) -> list[str]:
    if n <= 0:
        return []
    lines = text.split("\n")
    pick = lines[:n] if first else lines[-n:]
    return [ln if len(ln) <= width else ln[:width] + f"… (+{len(ln) - width} chars)" for ln in pick]


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
