"""How one agent turn looks in a cell: streamed live, then kept as static HTML + text.

``TurnView`` is fed the AgentSession's events (``message_*``, ``tool_execution_*``,
``compaction_*``) and renders the user prompt, the assistant's text, thinking folded in
``<details>``, each tool call as a line that becomes its result (with a truncation badge when Pi
cut the output), compactions, and the usage. ``TurnView.from_messages`` renders a recorded turn
from the session (``%pi turns``) without calling the model. ``TurnResult`` is what a ``%%pi`` cell
returns (``Out[n]``): the turn's messages, usage and entry ids, with a one-line repr.

The view stays bounded however long the turn runs: it shows the last :attr:`TurnView.max_steps`
steps (assistant messages, tool calls, compactions) and collapses the older ones into a count
("… 37 earlier steps (the session holds them)"); each step's text is capped too. The session
file holds everything. A turn that ends in an error fails its cell with
:class:`TurnFailedError`, whose traceback is its one line.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

from pi_nb.errors import AgentError
from pi_nb.messages import AgentMessage, AssistantMessage, block_text
from pi_nb.notebook._base import markdown_html
from pi_nb.notebook._events import is_compaction_end, is_compaction_start, is_run_done
from pi_nb.notebook._mime import filter_bundle
from pi_nb.truncation import format_size

if TYPE_CHECKING:
    from typing_extensions import TypeIs

    from pi_nb.notebook._base import MimeBundle
    from pi_nb.notebook._events import ViewEvent

__all__ = ["TurnFailedError", "TurnMetadata", "TurnMetadataFields", "TurnResult", "TurnView"]

_FONT = "font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:13px;line-height:1.45"
_MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px"


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _text_of(content: Any, kind: str = "text") -> str:
    return block_text(content, "", kind=kind)


def _markdown_html(text: str) -> str:
    """An assistant's answer as HTML (:func:`pi_nb.notebook._base.markdown_html`: raw HTML
    escaped, remote images shown as links, nothing loads by itself)."""
    return markdown_html(text)


def _cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit:,} more characters; the session holds them)"


class TurnFailedError(AgentError):
    """A ``%%pi`` turn that ended in an error (the provider unreachable, a bad key, an overflow
    compaction could not fix): the cell fails with this one line after the streamed output, so
    "Run All", ``nbconvert --execute`` and papermill stop there. ``turn`` is the
    :class:`TurnResult` (the session keeps the turn)."""

    def __init__(self, message: str, *, turn: TurnResult | None = None) -> None:
        super().__init__(message)
        self.turn = turn

    def _render_traceback_(self) -> list[str]:  # IPython shows this instead of a traceback
        return [f"{type(self).__name__}: {self}"]


# A tool call's arguments are open JSON (each tool its own schema), hence the loose mapping here.
def _args_preview(name: str, args: Mapping[str, Any]) -> str:
    return _cap(_args_preview_full(name, args), 300)


def _args_preview_full(name: str, args: Mapping[str, Any]) -> str:
    if name == "bash":
        return str(args.get("command", ""))
    if name in ("read", "write", "edit", "ls") and "path" in args:
        extra = ""
        if name == "read" and (args.get("offset") or args.get("limit")):
            extra = f" (offset={args.get('offset', 1)}, limit={args.get('limit', '∞')})"
        return str(args["path"]) + extra
    if name == "grep":
        return f"{args.get('pattern', '')!r} in {args.get('path', '.')}"
    return json.dumps(dict(args), ensure_ascii=False)[:200]


_NOTICE_TOTAL = re.compile(r"\[Showing lines \d+-\d+ of (\d+)")


def _truncation_badge(details: Any, text: str = "") -> str | None:
    """The cut in one line, with the truncation's own counts (the frames' ``total_lines``).

    Pi counts lines two ways: the truncation counts a final newline as ending the last line (a
    5,000-line file has 5,000), the read tool's notice counts the pieces of ``text.split("\\n")``
    (5,001). Where the notice in ``text`` says another total, the badge says why.
    """
    if not isinstance(details, Mapping):
        return None
    t = details.get("truncation")
    if not isinstance(t, Mapping) or not t.get("truncated"):
        return None
    by = t.get("truncatedBy")
    kept = f"{t.get('outputLines')}/{t.get('totalLines')} lines, {format_size(int(t.get('outputBytes') or 0))}/{format_size(int(t.get('totalBytes') or 0))}"
    where = " (partial last line)" if t.get("lastLinePartial") else ""
    if t.get("firstLineExceedsLimit"):
        where = " (first line over the limit)"
    notice = _NOTICE_TOTAL.search(text)
    if notice and str(notice.group(1)) != str(t.get("totalLines")):
        where += f'; the notice\'s "of {notice.group(1)}" also counts the empty line after the final newline'
    return f"truncated by {by}: kept {kept}{where}"


def _is_assistant(message: AgentMessage) -> TypeIs[AssistantMessage]:
    """``message.role == "assistant"`` (a message without a role is none)."""
    return message.get("role") == "assistant"


@dataclass
class _Tool:
    call_id: str
    name: str
    args: Mapping[str, Any]  # the tool call's arguments (open JSON)
    status: str = "running"
    result_text: str = ""
    badge: str | None = None
    full_output: str | None = None


@dataclass
class TurnView:
    """A turn being streamed (or shown again from the session), rendered as HTML and text."""

    prompt: str = ""
    model: str = ""
    items: list[Any] = field(default_factory=list)
    usage: dict[str, int] = field(
        default_factory=lambda: {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
    )
    status: str = "running"
    notes: list[str] = field(default_factory=list)
    context_window: int | None = None
    last_context_tokens: int | None = None
    dirty: bool = True
    #: how many steps are shown; older ones collapse into a count (the session holds them)
    max_steps: int = 30
    #: steps dropped from ``items`` (memory stays bounded too)
    dropped: int = 0

    MAX_TEXT: ClassVar[int] = 20_000
    MAX_NOTES: ClassVar[int] = 12

    # -- feeding ---------------------------------------------------------------------------------
    def feed(self, event: ViewEvent) -> None:
        self.dirty = True
        if is_compaction_start(event):
            self.items.append(("compaction", f"compacting ({event.get('reason')})…", None))
        elif is_compaction_end(event):
            res = event.get("result")
            if event.get("errorMessage"):
                text = f"compaction ({event.get('reason')}) failed: {event['errorMessage']}"
            elif event.get("aborted"):
                text = f"compaction ({event.get('reason')}) cancelled"
            elif res:
                text = (
                    f"compacted ({event.get('reason')}): {res.get('tokensBefore')} tokens before → "
                    f"~{res.get('estimatedTokensAfter')} after; kept from entry {res.get('firstKeptEntryId')}"
                    + ("; retrying the turn" if event.get("willRetry") else "")
                )
            else:
                text = f"compaction ({event.get('reason')}) ended"
            for i in range(len(self.items) - 1, -1, -1):
                if (
                    isinstance(self.items[i], tuple)
                    and self.items[i][0] == "compaction"
                    and self.items[i][1].endswith("…")
                ):
                    self.items[i] = ("compaction", text, None)
                    break
            else:
                self.items.append(("compaction", text, None))
        elif is_run_done(event) or "type" not in event:
            pass  # the cell's own marker (and, as ever, anything without a type) draws nothing
        elif (
            event["type"] == "message_start"
            or event["type"] == "message_update"
            or event["type"] == "message_end"
        ):
            kind = event["type"]
            msg = event["message"]
            role = msg.get("role")
            if _is_assistant(msg):
                self._set_assistant(msg, final=kind == "message_end", start=kind == "message_start")
            elif role == "user" and kind == "message_end" and not self.prompt:
                self.prompt = _text_of(msg.get("content"))
            elif role == "custom" and kind == "message_end":
                self.items.append(("custom", _text_of(msg.get("content")), msg.get("customType")))
        elif event["type"] == "tool_execution_start":
            self.items.append(_Tool(event["toolCallId"], event["toolName"], event.get("args") or {}))
        elif event["type"] == "tool_execution_update":
            tool = self._tool(event["toolCallId"])
            if tool is not None:
                partial = event.get("partialResult")
                content = (
                    partial.get("content")
                    if isinstance(partial, Mapping)
                    else getattr(partial, "content", None)
                )
                tool.result_text = _text_of(content)
        elif event["type"] == "tool_execution_end":
            tool = self._tool(event["toolCallId"])
            if tool is not None:
                # the tool's result, read tolerantly (``details`` is each tool's own open JSON)
                result: Mapping[str, Any] = event.get("result") or {}
                tool.status = "error" if event.get("isError") else "ok"
                tool.result_text = _text_of(result.get("content"))
                tool.badge = _truncation_badge(result.get("details"), tool.result_text)
                details = result.get("details")
                if isinstance(details, Mapping) and details.get("fullOutputPath"):
                    tool.full_output = str(details["fullOutputPath"])

        self._trim()

    @staticmethod
    def _visible(item: Any) -> bool:
        """Whether a step draws anything (an assistant message that only calls tools does not)."""
        if isinstance(item, dict):
            return bool(item["text"] or item["thinking"] or item["error"])
        return True

    def _trim(self) -> None:
        """Keep at most twice ``max_steps`` items in memory (the view shows ``max_steps``)."""
        keep = max(1, self.max_steps) * 2
        if len(self.items) > keep:
            cut = len(self.items) - max(1, self.max_steps)
            self.dropped += sum(1 for item in self.items[:cut] if self._visible(item))
            del self.items[:cut]

    def _tool(self, call_id: str) -> _Tool | None:
        for item in reversed(self.items):
            if isinstance(item, _Tool) and item.call_id == call_id:
                return item
        return None

    def _set_assistant(self, msg: AssistantMessage, *, final: bool, start: bool = False) -> None:
        """Show an assistant message: ``message_start`` adds a step that its updates and its end
        replace (the final message can carry a later timestamp than its start).

        Its fields are read with ``.get``: a recorded message may lack some (no ``usage``)."""
        ts = msg.get("timestamp")
        entry = {
            "ts": ts,
            "text": _text_of(msg.get("content")),
            "thinking": _text_of(msg.get("content"), "thinking"),
            "error": msg.get("errorMessage"),
            "stop": msg.get("stopReason"),
        }
        last = self.items[-1] if self.items else None
        streaming = isinstance(last, dict) and last.get("streaming")
        if not start and (streaming or (isinstance(last, dict) and last.get("ts") == ts)):
            self.items[-1] = entry
        else:
            self.items.append(entry)
        if not final:
            entry["streaming"] = True
        if final:
            self.model = str(msg.get("model") or self.model)
            usage: Mapping[str, Any] = msg.get("usage") or {}  # counts read tolerantly, by name
            for k in self.usage:
                self.usage[k] += int(usage.get(k) or 0)
            total = int(usage.get("totalTokens") or 0) or sum(int(usage.get(k) or 0) for k in self.usage)
            if total and msg.get("stopReason") not in ("error", "aborted"):
                self.last_context_tokens = total

    @classmethod
    def from_messages(cls, messages: Sequence[AgentMessage], *, model: str = "") -> TurnView:
        """A recorded turn (user message, assistants, tool results) as a finished view.

        The messages come from a session file, so their fields are read tolerantly (``.get``)."""
        view = cls(model=model, status="recorded")
        calls: dict[str, _Tool] = {}
        for msg in messages:
            role = msg.get("role")
            if role == "user" and not view.prompt:
                view.prompt = _text_of(msg.get("content"))
            elif _is_assistant(msg):
                view._set_assistant(msg, final=True)
                blocks: Sequence[Mapping[str, Any]] = msg.get("content") or []  # recorded blocks
                for block in blocks:
                    if block.get("type") == "toolCall":
                        tool = _Tool(block.get("id", ""), block.get("name", ""), block.get("arguments") or {})
                        calls[tool.call_id] = tool
                        view.items.append(tool)
            elif role == "toolResult":
                recorded: Mapping[str, Any] = msg  # a recorded tool result, read tolerantly
                found = calls.get(recorded.get("toolCallId", ""))
                if found is not None:
                    tool = found
                    tool.status = "error" if msg.get("isError") else "ok"
                    tool.result_text = _text_of(msg.get("content"))
                    tool.badge = _truncation_badge(msg.get("details"), tool.result_text)
            view._trim()
        return view

    # -- rendering --------------------------------------------------------------------------------
    def _shown(self) -> tuple[int, list[Any]]:
        """(how many earlier steps are collapsed, the steps shown)."""
        limit = max(1, self.max_steps)
        visible = [item for item in self.items if self._visible(item)]
        return self.dropped + max(0, len(visible) - limit), visible[-limit:]

    @staticmethod
    def _earlier(hidden: int) -> str:
        return f"… {hidden:,} earlier step{'s' if hidden != 1 else ''} (the session holds them)"

    def _notes_shown(self) -> list[str]:
        if len(self.notes) <= self.MAX_NOTES:
            return list(self.notes)
        more = len(self.notes) - self.MAX_NOTES + 1
        return [f"… {more:,} earlier notes", *self.notes[-(self.MAX_NOTES - 1) :]]

    def to_text(self) -> str:
        lines = [f"» {_cap(self.prompt, 2000)}"] if self.prompt else []
        hidden, shown = self._shown()
        if hidden:
            lines.append(f"  {self._earlier(hidden)}")
        for item in shown:
            if isinstance(item, _Tool):
                mark = {"running": "…", "ok": "✓", "error": "✗"}[item.status]
                lines.append(
                    f"  {mark} {item.name} {_args_preview(item.name, item.args)}"
                    + (f"  [{item.badge}]" if item.badge else "")
                )
            elif isinstance(item, dict):
                if item["thinking"]:
                    lines.append(f"  (thinking: {len(item['thinking'])} chars)")
                if item["text"]:
                    lines.append(_cap(item["text"], self.MAX_TEXT))
                if item["error"]:
                    lines.append(f"  ! {item['stop']}: {_cap(str(item['error']), 2000)}")
            else:
                text = _cap(str(item[1]), 2000)
                lines.append(f"  ⟲ {text}" if item[0] == "compaction" else f"  [{item[2]}] {text}")
        lines.append(self._footer())
        lines.extend(f"  note: {_cap(n, 1000)}" for n in self._notes_shown())
        return "\n".join(lines)

    def _footer(self) -> str:
        u = self.usage
        parts = [f"{self.status}", f"model {self.model or '?'}", f"in {u['input']:,} · out {u['output']:,}"]
        if u["cacheRead"] or u["cacheWrite"]:
            parts.append(f"cache r {u['cacheRead']:,} / w {u['cacheWrite']:,}")
        if self.context_window and self.last_context_tokens:
            parts.append(
                f"context {self.last_context_tokens:,}/{self.context_window:,} ({self.last_context_tokens / self.context_window:.0%})"
            )
        return " · ".join(parts)

    def to_html(self) -> str:
        out = [
            f'<div class="pi-nb-turn" style="{_FONT};border-left:3px solid #2563eb;padding:4px 10px;margin:4px 0">'
        ]
        if self.prompt:
            out.append(
                f'<div style="color:#1e3a8a;white-space:pre-wrap"><b>»</b> {_esc(self.prompt[:2000])}{"…" if len(self.prompt) > 2000 else ""}</div>'
            )
        hidden, shown = self._shown()
        if hidden:
            out.append(f'<div style="color:#64748b;font-style:italic">{_esc(self._earlier(hidden))}</div>')
        for item in shown:
            if isinstance(item, _Tool):
                color = {"running": "#64748b", "ok": "#15803d", "error": "#dc2626"}[item.status]
                mark = {"running": "⋯", "ok": "✓", "error": "✗"}[item.status]
                badge = (
                    f' <span style="background:#fef3c7;color:#92400e;border-radius:4px;padding:0 4px;font-size:11px">{_esc(item.badge)}</span>'
                    if item.badge
                    else ""
                )
                full = (
                    f'<div style="color:#64748b;font-size:11px">full output: <code>{_esc(item.full_output)}</code></div>'
                    if item.full_output
                    else ""
                )
                preview = (
                    item.result_text
                    if len(item.result_text) <= 4000
                    else item.result_text[:2000] + "\n…\n" + item.result_text[-1500:]
                )
                out.append(
                    f'<details style="margin:2px 0"><summary style="{_MONO};color:{color}">{mark} <b>{_esc(item.name)}</b> {_esc(_args_preview(item.name, item.args))}{badge}</summary>'
                    f'<pre style="{_MONO};background:#f8fafc;padding:6px;max-height:300px;overflow:auto;white-space:pre-wrap">{_esc(preview)}</pre>{full}</details>'
                )
            elif isinstance(item, dict):
                if item["thinking"]:
                    out.append(
                        f'<details><summary style="color:#64748b">thinking</summary><div style="white-space:pre-wrap;color:#64748b">{_esc(_cap(item["thinking"], 4000))}</div></details>'
                    )
                if item["text"]:
                    out.append(
                        f'<div class="pi-nb-answer" style="margin:4px 0">{_markdown_html(_cap(item["text"], self.MAX_TEXT))}</div>'
                    )
                if item["error"]:
                    out.append(
                        f'<div style="color:#dc2626">{_esc(item["stop"])}: {_esc(_cap(str(item["error"]), 2000))}</div>'
                    )
            elif item[0] == "compaction":
                out.append(f'<div style="color:#b45309">⟲ {_esc(_cap(str(item[1]), 2000))}</div>')
            else:
                out.append(
                    f'<div style="color:#6d28d9">[{_esc(item[2])}] {_esc(_cap(str(item[1]), 2000))}</div>'
                )
        status_color = "#dc2626" if self.status == "error" else "#64748b"
        out.append(
            f'<div style="color:{status_color};font-size:11px;margin-top:4px">{_esc(self._footer())}</div>'
        )
        out.extend(
            f'<div style="color:#92400e;font-size:11px">{_esc(_cap(n, 1000))}</div>'
            for n in self._notes_shown()
        )
        out.append("</div>")
        self.dirty = False
        return "".join(out)

    def bundle(self) -> MimeBundle:
        """The view as a display bundle: ``text/plain`` (terminals, front ends without HTML) beside
        ``text/html``."""
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> MimeBundle:
        return filter_bundle(self.bundle(), include, exclude)


class TurnMetadataFields(TypedDict):
    """What a ``%%pi`` cell's output records of its turn (the ``pi_nb`` key of its metadata)."""

    sessionId: str
    sessionFile: str | None
    entryIds: list[str]
    model: str
    usage: dict[str, int]
    compactions: int
    interrupted: bool
    error: str | None


class TurnMetadata(TypedDict):
    """A ``%%pi`` cell's output metadata: ``{"pi_nb": {...}}``."""

    pi_nb: TurnMetadataFields


@dataclass
class TurnResult:
    """What ``%%pi`` returns: the turn's messages, usage and entry ids (a compact one-line repr)."""

    session_id: str
    session_file: str | None
    model: str
    messages: list[AgentMessage]
    entry_ids: list[str]
    usage: dict[str, int]
    #: the prompt's compactions, as ``CompactionOutcome.to_dict()`` (the compaction package's shape)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    #: why the turn failed (the provider's or the agent's words), ``None`` when it did not
    error: str | None = None

    @property
    def text(self) -> str:
        for msg in reversed(self.messages):
            if msg.get("role") == "assistant":
                return _text_of(msg.get("content"))
        return ""

    def metadata(self) -> TurnMetadata:
        return {
            "pi_nb": {
                "sessionId": self.session_id,
                "sessionFile": self.session_file,
                "entryIds": list(self.entry_ids),
                "model": self.model,
                "usage": dict(self.usage),
                "compactions": len(self.compactions),
                "interrupted": self.interrupted,
                "error": self.error,
            }
        }

    def _summary(self) -> str:
        u = self.usage
        bits = [
            f"{len(self.messages)} messages",
            f"{u.get('input', 0):,} in / {u.get('output', 0):,} out tokens",
            f"entries {self.entry_ids[0]}…{self.entry_ids[-1]}" if self.entry_ids else "no entries",
        ]
        if self.compactions:
            bits.append(f"{len(self.compactions)} compaction(s)")
        if self.interrupted:
            bits.append("interrupted")
        if self.error:
            bits.append("error")
        return f"<pi turn: {', '.join(bits)}; session {self.session_id[:8]}>"

    def __repr__(self) -> str:
        return self._summary()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[MimeBundle, TurnMetadata]:
        data: MimeBundle = {
            "text/plain": self._summary(),
            "text/html": f'<code style="color:#64748b">{_esc(self._summary())}</code>',
        }
        return filter_bundle(data, include, exclude), self.metadata()
