"""``%pi context``: the exact request the next model call would send, with token counts.

System prompt, every message after ``convert_to_llm`` (custom roles rendered as the model sees
them), and the tool schemas, each with its tiktoken count and Pi's chars/4 estimate. Reading it
costs no tokens: nothing is sent.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_nb._async import run_sync
from pi_nb._js import js_stringify
from pi_nb.notebook._mime import filter_bundle
from pi_nb.providers.base import Context
from pi_nb.tokens import count_tokens, estimate_tokens

if TYPE_CHECKING:
    from pi_nb.notebook._base import MimeBundle

__all__ = ["ContextView"]

_MONO = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for b in content or []:
        kind = b.get("type")
        if kind == "text":
            parts.append(b.get("text", ""))
        elif kind == "thinking":
            parts.append(f"[thinking] {b.get('thinking', '')}")
        elif kind == "toolCall":
            parts.append(f"[tool call] {b.get('name')}({js_stringify(b.get('arguments') or {})})")
        elif kind == "image":
            parts.append(f"[image {b.get('mimeType')}, {len(b.get('data', ''))} base64 chars]")
    return "\n".join(parts)


@dataclass(frozen=True)
class _Row:
    label: str
    text: str
    tiktoken: int
    estimate: int | None


class ContextView:
    """A request (``pi_nb.providers.Context``) as a table of parts with token counts."""

    def __init__(
        self,
        context: Context,
        *,
        encoding: str = "o200k_base",
        model: str = "",
        context_window: int | None = None,
        leaf_id: str | None = None,
    ) -> None:
        self.context = context
        self.leaf_id = leaf_id
        self.encoding = encoding
        self.model = model
        self.context_window = context_window
        rows = [
            _Row(
                "system prompt",
                context.system_prompt or "",
                count_tokens(context.system_prompt or "", encoding=encoding),
                None,
            )
        ]
        for i, msg in enumerate(context.messages):
            text = _text(msg.get("content"))
            rows.append(
                _Row(
                    f"{i}: {msg.get('role')}",
                    text,
                    count_tokens(text, encoding=encoding),
                    estimate_tokens(msg),
                )
            )
        for tool in context.tools or []:
            schema = json.dumps(dict(tool), ensure_ascii=False)
            rows.append(
                _Row(
                    f"tool: {tool['name']}",
                    schema,
                    count_tokens(js_stringify(dict(tool)), encoding=encoding),
                    None,
                )
            )
        self.rows = rows

    @classmethod
    def from_session(cls, session: Any, *, run: Any = None) -> ContextView:
        """The next request of an :class:`~pi_nb.agent.AgentSession` (``run`` executes a coroutine)."""
        coro = session.build_request_context()
        context = run(coro) if run is not None else run_sync(coro)
        return cls(
            context,
            model=f"{session.model.provider}/{session.model.id}",
            context_window=session.model.context_window,
            leaf_id=session.session_manager.get_leaf_id(),
        )

    @property
    def total_tokens(self) -> int:
        return sum(r.tiktoken for r in self.rows)

    def to_text(self) -> str:
        head = f"request for {self.model or 'the model'}: {self.total_tokens:,} tokens ({self.encoding})"
        if self.context_window:
            head += f" of a {self.context_window:,} window"
        if self.leaf_id:
            # a request is a snapshot: say which point of the session it was built at
            head += f" · at leaf {self.leaf_id}"
        lines = [head]
        for r in self.rows:
            est = f" · estimate {r.estimate:,}" if r.estimate is not None else ""
            first = r.text.split("\n", 1)[0][:100]
            lines.append(f"  {r.label:<22} {r.tiktoken:>7,} tokens{est}  {first}")
        return "\n".join(lines)

    def to_html(self) -> str:
        head = html.escape(self.to_text().split("\n", 1)[0])
        out = [
            f'<div class="pi-nb-context" style="font-family:system-ui,sans-serif;font-size:13px"><div><b>{head}</b></div>'
        ]
        out.append('<table style="border-collapse:collapse;width:100%">')
        out.append(
            "<tr><th style='text-align:left'>part</th><th style='text-align:right'>tiktoken</th><th style='text-align:right'>Pi estimate</th><th style='text-align:left'>content</th></tr>"
        )
        for r in self.rows:
            est = f"{r.estimate:,}" if r.estimate is not None else "—"
            out.append(
                f"<tr style='border-top:1px solid #e2e8f0;vertical-align:top'><td style='white-space:nowrap;text-align:left'>{html.escape(r.label)}</td>"
                f"<td style='text-align:right'>{r.tiktoken:,}</td><td style='text-align:right'>{est}</td>"
                f"<td style='text-align:left'><details><summary style='{_MONO}'>{html.escape(r.text.split(chr(10), 1)[0][:120])}</summary>"
                f"<pre style='{_MONO};white-space:pre-wrap;max-height:400px;overflow:auto'>{html.escape(r.text)}</pre></details></td></tr>"
            )
        out.append("</table></div>")
        return "".join(out)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> MimeBundle:
        bundle: MimeBundle = {"text/plain": self.to_text(), "text/html": self.to_html()}
        return filter_bundle(bundle, include, exclude)
