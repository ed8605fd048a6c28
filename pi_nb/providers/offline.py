"""``OfflineModel``: the default model of pi_nb. Deterministic, rule-based, no key, no network.

It is *not* a language model and says so in every answer's metadata (``api="offline"``,
``provider="pi_nb"``, ``responseModel`` naming the rules). It exists so that classrooms, Binder
and CI can run real agent turns: real tool calls with Pi's truncation, real token usage, real
compaction and branch summaries.

How it answers a request (the last user message of the context):

1. It plans actions from the text, in the order they appear:

   ======================================================  ==========================================
   text                                                    tool call
   ======================================================  ==========================================
   ``read notes.txt`` / ``open src/a.py lines 10-20``      ``read {path, offset?, limit?}``
   a command in backticks: ```seq 5000```                  ``bash {command}``
   ``search for "TODO" in src`` / ``grep "x"``             ``grep {pattern, path?}`` (bash ``grep -rn`` without grep)
   ``list src`` / ``ls src``                               ``ls {path}`` (bash ``ls -la`` without ls)
   ``write "text" to out.txt``                             ``write {path, content}``
   ``replace "old" with "new" in a.py``                    ``edit {path, edits: [{oldText, newText}]}``
   ======================================================  ==========================================

2. It issues one tool call per response, in order (the n-th call after the user message is the
   n-th planned action), and when every action has a result it answers from the results: what it
   read (line counts, the first lines, the truncation notice), the command's output tail and exit
   status, the matches, or the error text.
3. A request whose first user message starts with ``<conversation>`` is a summarisation request
   (compaction, turn prefix, branch summary: Pi's prompt structure). It writes the sections the
   instructions ask for (every ``## ``/``### `` heading, in order: Goal, Constraints & Preferences,
   Progress/Done/In Progress/Blocked, Key Decisions, Next Steps, Critical Context, Original Request,
   ...) from the serialized conversation, merging a ``<previous-summary>`` when present.

4. It never re-runs a tool call whose result a compaction summary already records as too big:
   when it summarises, a tool result of more than a quarter of its window is recorded under the
   last section as ``- Result too big to keep: bash(command="seq 3000") ≈ 4012 tokens``; a later
   request that plans the same call, and has no room for that many tokens, is answered with an
   explanation instead (a bigger window, lower ``keepRecentTokens``, a narrower read). Without this
   rule an overflowing read would be compacted, re-read and compacted again forever.

Usage is counted with tiktoken (``o200k_base``) over the exact request (system prompt, every
message's text, tool-call arguments as JSON, tool schemas, plus 4 tokens per message for the chat
framing) and over the answer. A request larger than ``context_window`` is answered with an error
whose text matches Pi's overflow patterns (``prompt is too long: N tokens > W maximum``), and an
answer longer than ``max_tokens`` stops with ``length``: budgets, overflow recovery and compaction
behave as with a real model.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import shlex
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_nb._js import js_stringify
from pi_nb.messages import AssistantContent, AssistantMessage, Message, StopReason, Usage, block_text
from pi_nb.providers.base import (
    AssistantMessageEvent,
    Context,
    Model,
    StreamOptions,
    make_assistant_message,
    make_usage,
)

__all__ = [
    "EXACT_COUNT_CHARS",
    "OFFLINE_RESPONSE_MODEL",
    "PART_COUNT_CHARS",
    "OfflineModel",
    "PlannedAction",
    "plan_actions",
]

OFFLINE_RESPONSE_MODEL = "pi_nb offline rule-based model (deterministic; not an LLM)"

_PATH = r"[\w.~@/+-]*[\w~@+-]\.[\w]+|[\w.~@+-]*/[\w./+-]*[\w+-]"
_READ = re.compile(
    rf"\b(?:read|open|show|view|cat|inspect)\s+(?:the\s+)?(?:file\s+)?`?(?P<path>{_PATH})`?"
    r"(?:\s*(?:,\s*)?lines?\s+(?P<start>\d+)\s*(?:-|to|\.\.)\s*(?P<end>\d+))?",
    re.IGNORECASE,
)
_SEARCH = re.compile(
    r"\b(?:search(?:\s+for)?|grep(?:\s+for)?|look\s+for|find)\s+[\"'](?P<pattern>[^\"']+)[\"']"
    rf"(?:\s+in\s+`?(?P<path>{_PATH}|\.|[\w-]+)`?)?",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"\b(?:list|ls)\s+(?:the\s+)?(?:files\s+in\s+)?`?(?P<path>[\w./~+-]*[\w/~+-]|\.)`?", re.IGNORECASE
)
_WRITE = re.compile(
    rf"\bwrite\s+\"(?P<content>(?:[^\"\\]|\\.)*)\"\s+(?:to|into)\s+`?(?P<path>{_PATH})`?",
    re.IGNORECASE | re.DOTALL,
)
_EDIT = re.compile(
    r"\breplace\s+\"(?P<old>(?:[^\"\\]|\\.)*)\"\s+with\s+\"(?P<new>(?:[^\"\\]|\\.)*)\"\s+in\s+"
    rf"`?(?P<path>{_PATH})`?",
    re.IGNORECASE | re.DOTALL,
)
_BACKTICK = re.compile(r"`([^`\n]+)`")
_SUMMARY_HEADING = re.compile(r"^(#{2,3}) (.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class PlannedAction:
    """One tool call the offline model will make, with where in the request it came from."""

    position: int
    tool: str
    arguments: dict[str, Any]  # the tool call's arguments: open JSON


def _unescape(s: str) -> str:
    return s.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def plan_actions(text: str, tools: Iterable[str]) -> list[PlannedAction]:
    """The actions a request asks for, in order, mapped onto the tools that are available."""
    available = set(tools)
    actions: list[PlannedAction] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= a or span[0] >= b for a, b in taken)

    def add(span: tuple[int, int], tool: str, args: dict[str, Any]) -> None:
        taken.append(span)
        actions.append(PlannedAction(span[0], tool, args))

    # A command in backticks is a command, even `cat notes.txt`; a path in backticks right after a
    # read verb ("read `notes.txt`") is left to the read pattern below.
    for m in _BACKTICK.finditer(text):
        if not re.search(
            r"\b(?:read|open|show|view|inspect|list|ls)\s+(?:the\s+)?(?:file\s+)?$",
            text[: m.start()],
            re.IGNORECASE,
        ):
            add(m.span(), "bash", {"command": m.group(1).strip()})
    for m in _EDIT.finditer(text):
        if free(m.span()):
            add(
                m.span(),
                "edit",
                {
                    "path": m["path"],
                    "edits": [{"oldText": _unescape(m["old"]), "newText": _unescape(m["new"])}],
                },
            )
    for m in _WRITE.finditer(text):
        if free(m.span()):
            add(m.span(), "write", {"path": m["path"], "content": _unescape(m["content"])})
    for m in _READ.finditer(text):
        if not free(m.span()):
            continue
        args: dict[str, Any] = {"path": m["path"]}
        if m["start"]:
            start, end = int(m["start"]), int(m["end"])
            args["offset"] = start
            args["limit"] = max(1, end - start + 1)
        add(m.span(), "read", args)
    for m in _SEARCH.finditer(text):
        if free(m.span()):
            grep_args: dict[str, Any] = {"pattern": m["pattern"]}
            if m["path"]:
                grep_args["path"] = m["path"]
            add(m.span(), "grep", grep_args)
    for m in _LIST.finditer(text):
        if free(m.span()) and m["path"].lower() not in ("the", "files", "all"):
            add(m.span(), "ls", {"path": m["path"]})

    mapped: list[PlannedAction] = []
    for action in sorted(actions, key=lambda a: a.position):
        if action.tool in available:
            mapped.append(action)
            continue
        if "bash" in available and action.tool in ("grep", "ls", "read"):
            if action.tool == "grep":
                cmd = f"grep -rn -- {shlex.quote(action.arguments['pattern'])} {shlex.quote(action.arguments.get('path', '.'))}"
            elif action.tool == "ls":
                cmd = f"ls -la {shlex.quote(action.arguments['path'])}"
            else:
                cmd = f"cat {shlex.quote(action.arguments['path'])}"
            mapped.append(PlannedAction(action.position, "bash", {"command": cmd}))
            continue
        mapped.append(PlannedAction(action.position, "unavailable:" + action.tool, action.arguments))
    return mapped


def _text_of(message: Message) -> str:
    return block_text(message.get("content"), "")


def _request_text(context: Context) -> str:
    """Everything the model reads, in order: how usage is counted (see module docstring)."""
    return "\n".join(_request_parts(context))


#: A request up to this many characters is counted exactly, as one text (every golden number).
EXACT_COUNT_CHARS = 2_000_000
#: Above :data:`EXACT_COUNT_CHARS`, each part is counted on its own (cached), and a part longer
#: than this is counted on its first this-many characters and extrapolated by length.
PART_COUNT_CHARS = 1_000_000


def _request_parts(context: Context) -> list[str]:
    parts: list[str] = []
    if context.system_prompt:
        parts.append(context.system_prompt)
    parts.extend(_message_parts(context.messages))
    for tool in context.tools or []:
        parts.append(js_stringify(tool))
    return parts


def _message_parts(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """The text of each message's content, block by block. The messages are read as the JSON they
    were in the session file (``Mapping[str, Any]``): they are not validated on the way here."""
    parts: list[str] = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
            continue
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                parts.append(block.get("text", ""))
            elif kind == "thinking":
                parts.append(block.get("thinking", ""))
            elif kind == "toolCall":
                parts.append(block.get("name", "") + js_stringify(block.get("arguments", {})))
    return parts


def _first_lines(text: str, n: int) -> list[str]:
    lines = text.split("\n")
    return lines[:n]


def _shorten(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class OfflineModel(Model):
    """The embedded default model (see the module docstring for its rules)."""

    api = "offline"

    def __init__(
        self,
        *,
        id: str = "offline",
        context_window: int = 128_000,
        max_tokens: int = 16_384,
        encoding: str = "o200k_base",
        chunk_delay: float = 0.0,
    ) -> None:
        super().__init__(
            id=id,
            provider="pi_nb",
            context_window=context_window,
            max_tokens=max_tokens,
            reasoning=False,
            input=("text", "image"),
            name="pi_nb offline model",
        )
        self.encoding = encoding
        self.chunk_delay = chunk_delay

    # -- token accounting --------------------------------------------------------------------
    def count_request_tokens(self, context: Context) -> int:
        """Tokens of the request (``+ 4`` per message). Exact up to :data:`EXACT_COUNT_CHARS`
        characters; a bigger request (a session holding a huge tool result) is counted part by
        part, each part once per process, a huge part from its first :data:`PART_COUNT_CHARS`
        characters: linear in the request, bounded per part, and reused by the next turn."""
        from pi_nb.tokens import count_tokens

        parts = _request_parts(context)
        framing = 4 * len(context.messages)
        if sum(len(p) for p in parts) + len(parts) <= EXACT_COUNT_CHARS:
            return count_tokens("\n".join(parts), encoding=self.encoding) + framing
        total = max(len(parts) - 1, 0)  # about one token per joining newline
        for part in parts:
            if len(part) <= PART_COUNT_CHARS:
                total += count_tokens(part, encoding=self.encoding)
            else:
                head = count_tokens(part[:PART_COUNT_CHARS], encoding=self.encoding)
                total += -(-head * len(part) // PART_COUNT_CHARS)
        return total + framing

    def _count(self, text: str) -> int:
        from pi_nb.tokens import count_tokens

        return count_tokens(text, encoding=self.encoding)

    # -- decision ----------------------------------------------------------------------------
    def respond(self, context: Context, options: StreamOptions | None = None) -> AssistantMessage:
        """The final assistant message for this request (pure: no I/O, no randomness)."""
        input_tokens = self.count_request_tokens(context)
        if input_tokens > self.context_window:
            return self._message(
                [],
                stop_reason="error",
                usage=make_usage(0, 0),
                error_message=f"prompt is too long: {input_tokens} tokens > {self.context_window} maximum",
            )
        messages = list(context.messages)
        content: list[AssistantContent]
        stop: StopReason
        if messages and _text_of(messages[0]).startswith("<conversation>"):
            content = [{"type": "text", "text": self._summarize(_text_of(messages[-1]))}]
            stop = "stop"
        else:
            content, stop = self._turn(context, input_tokens)
        limit = options.max_tokens if options and options.max_tokens else self.max_tokens  # Pi's ||
        # the answer counted like a request holding only it (no system prompt, no tools)
        output = self._count("\n".join(_message_parts([{"role": "assistant", "content": content}])))
        first = content[0] if content else None
        if output > limit and first is not None and first["type"] == "text":
            from pi_nb.tokens import get_encoding

            enc = get_encoding(self.encoding)
            content = [{"type": "text", "text": enc.decode(enc.encode(first["text"])[:limit])}]
            output, stop = limit, "length"
        return self._message(content, stop_reason=stop, usage=make_usage(input_tokens, output))

    def _message(
        self,
        content: list[AssistantContent],
        *,
        stop_reason: StopReason,
        usage: Usage,
        error_message: str | None = None,
    ) -> AssistantMessage:
        msg = make_assistant_message(
            content,
            api=self.api,
            provider=self.provider,
            model=self.id,
            usage=usage,
            stop_reason=stop_reason,
            error_message=error_message,
        )
        msg["responseModel"] = OFFLINE_RESPONSE_MODEL
        return msg

    def _decline_too_big(
        self, action: PlannedAction, messages: Sequence[Message], input_tokens: int
    ) -> str | None:
        """Why ``action`` is not run again, when a summary in the context records its result as too
        big and this request leaves no room for it; else ``None``."""
        from pi_nb.messages import format_tool_call_args

        call = f"{action.tool}({format_tool_call_args(action.arguments)})"
        for m in messages:
            if not _is_summary(m):
                continue
            for rec in _TOO_BIG.finditer(_text_of(m)):
                if (
                    rec.group("call") == call
                    and int(rec.group("tokens")) + input_tokens > self.context_window
                ):
                    return (
                        f"I did not run `{call}` again: a compaction summary records its result as about "
                        f"{rec.group('tokens')} tokens, and with this request ({input_tokens} tokens) it "
                        f"does not fit in my {self.context_window}-token context window, so it would be "
                        "compacted away again. Ask for a narrower result (read with offset and limit, or "
                        "pipe the command through head or tail), lower compaction.keepRecentTokens, or "
                        "use a model with a bigger context window."
                    )
        return None

    def _turn(self, context: Context, input_tokens: int = 0) -> tuple[list[AssistantContent], StopReason]:
        messages = list(context.messages)
        last_user = max(
            (i for i, m in enumerate(messages) if m.get("role") == "user" and not _is_summary(m)), default=-1
        )
        if last_user >= 0:
            request = _text_of(messages[last_user])
        else:
            # After a compaction the request itself may live only in the summary (an overflow retry
            # of a split turn): continue from its "Original Request" / "Goal" section.
            summary_at = max((i for i, m in enumerate(messages) if _is_summary(m)), default=-1)
            request = _request_from_summary(_text_of(messages[summary_at])) if summary_at >= 0 else ""
            if not request:
                return [{"type": "text", "text": "There is no request from you in this context yet."}], "stop"
            last_user = summary_at
        tools = [t["name"] for t in context.tools or []]
        plan = plan_actions(request, tools)
        after = messages[last_user + 1 :]
        after_json: Sequence[Mapping[str, Any]] = after  # read as the session's JSON: not validated
        issued = sum(
            1
            for m in after_json
            if m.get("role") == "assistant"
            for b in m.get("content") or []
            if b.get("type") == "toolCall"
        )
        runnable = [a for a in plan if not a.tool.startswith("unavailable:")]
        if issued < len(runnable):
            action = runnable[issued]
            declined = self._decline_too_big(action, messages, input_tokens)
            if declined is not None:
                return [{"type": "text", "text": declined}], "stop"
            call_id = _call_id(messages, issued)
            lead = f"Step {issued + 1} of {len(runnable)}: {action.tool}."
            return (
                [
                    {"type": "text", "text": lead},
                    {"type": "toolCall", "id": call_id, "name": action.tool, "arguments": action.arguments},
                ],
                "toolUse",
            )
        results = [m for m in after if m.get("role") == "toolResult"]
        return [{"type": "text", "text": self._answer(request, plan, results, context)}], "stop"

    def _answer(
        self, request: str, plan: Sequence[PlannedAction], results: Sequence[Message], context: Context
    ) -> str:
        if not plan:
            tokens = self._count(request)
            return (
                "I am pi_nb's offline model: I follow simple rules instead of understanding language. "
                f"Your message has {tokens} tokens; the context I was sent holds {len(context.messages)} messages. "
                'Ask me to `run a command` in backticks, to read a file ("read notes.txt"), to search for '
                '"a pattern", to list a directory, to write "text" to a file, or to replace "old" with "new" in a file.'
            )
        lines = ["Here is what I found."]
        result_iter = iter(results)
        for action in plan:
            if action.tool.startswith("unavailable:"):
                lines.append(
                    f"\n- I would use `{action.tool.split(':', 1)[1]}` here, but that tool is not available in this session."
                )
                continue
            result = next(result_iter, None)
            if result is None:
                lines.append(f"\n- `{action.tool}` did not return a result.")
                continue
            lines.append("\n" + self._describe(action, result))
        return "\n".join(lines)

    def _describe(self, action: PlannedAction, result: Message) -> str:
        text = _text_of(result)
        args = action.arguments
        if result.get("isError"):
            return f"- `{action.tool}` failed: {_shorten(text, 300)}"
        body, _, notice = text.rpartition("\n\n[")
        notice = "[" + notice if body else ""
        body = body if body else text
        if action.tool == "read":
            shown = body.split("\n")
            out = f"- `{args['path']}`: {_plural(len(shown), 'line')} shown"
            if notice:
                out += f" ({notice.strip()})"
            preview = "\n".join(_first_lines(body, 3))
            return out + ". It starts with:\n```\n" + preview + "\n```"
        if action.tool == "bash":
            lines = body.rstrip("\n").split("\n")
            out = f"- `{args['command']}` printed {_plural(len(lines), 'line')}"
            if notice:
                out += f" ({notice.strip()})"
            tail = "\n".join(lines[-3:])
            return out + ". The last lines:\n```\n" + tail + "\n```"
        if action.tool == "grep":
            if text.startswith("No matches found"):
                return f"- No matches for `{args['pattern']}`."
            matches = [ln for ln in body.split("\n") if ln]
            return (
                f"- `{args['pattern']}`: {len(matches)} matching lines, first: `{_shorten(matches[0], 120)}`"
                + (f" ({notice.strip()})" if notice else "")
            )
        if action.tool == "ls":
            entries = [ln for ln in body.split("\n") if ln]
            return (
                f"- `{args.get('path', '.')}` holds {len(entries)} entries: "
                + ", ".join(entries[:8])
                + (" …" if len(entries) > 8 else "")
            )
        return f"- `{action.tool}`: {_shorten(text, 200)}"

    # -- summaries ----------------------------------------------------------------------------
    def _summarize(self, prompt: str) -> str:
        conversation = _between(prompt, "<conversation>\n", "\n</conversation>")
        previous = _between(prompt, "<previous-summary>\n", "\n</previous-summary>")
        instructions = (
            prompt.rsplit("</previous-summary>", 1)[-1]
            if previous
            else prompt.rsplit("</conversation>", 1)[-1]
        )
        headings = [(len(m.group(1)), m.group(2)) for m in _SUMMARY_HEADING.finditer(instructions)]
        facts = _facts(conversation)
        prev_sections = _sections(previous) if previous else {}
        records = self._too_big_lines(facts, previous)
        if not headings:
            return "\n".join([_paragraph_summary(facts), *records])
        out: list[str] = []
        for i, (level, heading) in enumerate(headings):
            out.append(("#" * level) + " " + heading)
            if i + 1 < len(headings) and headings[i + 1][0] > level:
                continue  # a parent heading (## Progress): its content lives in its ### children
            items = _section_items(heading, facts)
            if i == len(headings) - 1:
                items = [*items, *(r for r in records if r not in items)]
            carried = [item for item in prev_sections.get(heading.lower(), []) if item not in items]
            out.extend([*carried, *items] or ["- (none)"])
            out.append("")
        return "\n".join(out).rstrip("\n")

    def _too_big_lines(self, facts: _Facts, previous: str) -> list[str]:
        """``- Result too big to keep: call ≈ N tokens`` for each result over a quarter of the window
        (the shown part counted exactly, the cut part extrapolated), plus the records of ``previous``."""
        lines = [m.group(0) for m in _TOO_BIG.finditer(previous)] if previous else []
        for call, body in zip(facts.full_calls, facts.result_bodies, strict=False):
            tokens = self._result_tokens(body)
            if tokens * 4 > self.context_window:
                line = f"- {_TOO_BIG_LEAD} {call} ≈ {tokens} tokens"
                if line not in lines:
                    lines.append(line)
        return lines

    def _result_tokens(self, body: str) -> int:
        m = _CUT.search(body)
        shown = body[: m.start()] if m else body
        tokens = self._count(shown)
        if m and shown:
            tokens = -(-tokens * (len(shown) + int(m.group(1))) // len(shown))
        return tokens

    # -- Model ----------------------------------------------------------------------------------
    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        final = self.respond(context, options)
        signal = options.signal if options else None
        partial = self._message([], stop_reason="stop", usage=make_usage())
        partial["timestamp"] = final["timestamp"]
        yield {"type": "start", "partial": {**partial, "content": []}}
        if final["stopReason"] == "error":
            yield {"type": "error", "reason": "error", "error": final}
            return
        for index, block in enumerate(final["content"]):
            if signal is not None and signal.aborted:
                yield {
                    "type": "error",
                    "reason": "aborted",
                    "error": {**partial, "stopReason": "aborted", "errorMessage": "Request was aborted"},
                }
                return
            if block["type"] == "text":
                partial["content"] = [*partial["content"], {"type": "text", "text": ""}]
                yield {"type": "text_start", "contentIndex": index, "partial": _copy(partial)}
                shown = ""  # the text of partial's last block, the one streaming
                for piece in _chunks(block["text"]):
                    if self.chunk_delay:
                        await asyncio.sleep(self.chunk_delay)
                    if signal is not None and signal.aborted:
                        yield {
                            "type": "error",
                            "reason": "aborted",
                            "error": {
                                **_copy(partial),
                                "stopReason": "aborted",
                                "errorMessage": "Request was aborted",
                            },
                        }
                        return
                    shown += piece
                    partial["content"][-1] = {"type": "text", "text": shown}
                    yield {
                        "type": "text_delta",
                        "contentIndex": index,
                        "delta": piece,
                        "partial": _copy(partial),
                    }
                yield {
                    "type": "text_end",
                    "contentIndex": index,
                    "content": block["text"],
                    "partial": _copy(partial),
                }
            elif block["type"] == "toolCall":
                partial["content"] = [*partial["content"], block.copy()]
                yield {"type": "toolcall_start", "contentIndex": index, "partial": _copy(partial)}
                yield {
                    "type": "toolcall_end",
                    "contentIndex": index,
                    "toolCall": block.copy(),
                    "partial": _copy(partial),
                }
        yield {"type": "done", "reason": final["stopReason"], "message": final}


def _call_id(messages: Sequence[Message], issued: int) -> str:
    """A tool-call id that is deterministic for a context but differs between sibling branches
    (ids only need to be unique within a conversation, as providers' are)."""
    digest = hashlib.sha1(usedforsecurity=False)
    for m in messages:
        digest.update(str(m.get("role")).encode())
        digest.update(js_stringify(m.get("content")).encode("utf-8", "surrogatepass"))
    return f"call_{digest.hexdigest()[:12]}_{issued}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _copy(partial: AssistantMessage) -> AssistantMessage:
    return {**partial, "content": [b.copy() for b in partial["content"]]}


def _chunks(text: str, size: int = 24) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _is_summary(message: Message) -> bool:
    text = _text_of(message)
    return text.startswith("The conversation history before this point was compacted") or text.startswith(
        "The following is a summary of a branch"
    )


def _request_from_summary(summary: str) -> str:
    """The request a summary says the user made (the last "Original Request", else the first "Goal")."""
    sections = _sections(summary)
    for heading in ("original request", "goal"):
        items = [i for i in sections.get(heading, []) if not i.lstrip("- ").startswith("Later:")]
        if items:
            return items[-1 if heading == "original request" else 0].lstrip("-*0123456789. ").strip()
    return ""


def _between(text: str, start: str, end: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    j = text.find(end, i + len(start))
    return text[i + len(start) : j if j >= 0 else len(text)]


@dataclass
class _Facts:
    requests: list[str]
    answers: list[str]
    calls: list[str]
    results: list[str]
    files: list[str]
    constraints: list[str]
    full_calls: list[str] = field(default_factory=list)
    result_bodies: list[str] = field(default_factory=list)


_CALL = re.compile(r"(\w+)\((.*?)\)(?:; |$)")
_TOO_BIG_LEAD = "Result too big to keep:"
_TOO_BIG = re.compile(
    r"^- Result too big to keep: (?P<call>\w+\(.*\)) ≈ (?P<tokens>\d+) tokens$", re.MULTILINE
)
_CUT = re.compile(r"\n\n\[\.\.\. (\d+) more characters truncated\]$")
_PATH_ARG = re.compile(r'path="([^"]+)"')


def _facts(conversation: str) -> _Facts:
    facts = _Facts([], [], [], [], [], [])
    for block in re.split(
        r"\n\n(?=\[(?:User|Assistant|Assistant thinking|Assistant tool calls|Tool result)\]: )", conversation
    ):
        tag, _, body = block.partition("]: ")
        tag = tag.lstrip("[")
        if tag == "User":
            facts.requests.append(_shorten(body, 200))
            for sentence in re.split(r"(?<=[.!?])\s+", body):
                if re.search(r"\b(must|never|always|don't|do not|prefer|only)\b", sentence, re.IGNORECASE):
                    facts.constraints.append(_shorten(sentence, 160))
        elif tag == "Assistant":
            facts.answers.append(_shorten(body, 200))
        elif tag == "Assistant tool calls":
            for m in _CALL.finditer(body):
                facts.full_calls.append(f"{m.group(1)}({m.group(2)})")
                facts.calls.append(_shorten(f"{m.group(1)}({m.group(2)})", 160))
                for p in _PATH_ARG.findall(m.group(2)):
                    if p not in facts.files:
                        facts.files.append(p)
        elif tag == "Tool result":
            facts.result_bodies.append(body)
            facts.results.append(_shorten(body.split("\n", 1)[0], 120))
    return facts


def _section_items(heading: str, f: _Facts) -> list[str]:
    h = heading.lower()
    if h in ("goal", "original request"):
        return [f"- {r}" for r in f.requests[:1]] + [f"- Later: {r}" for r in f.requests[1:3]]
    if h.startswith("constraints"):
        return [f"- {c}" for c in f.constraints]
    if h == "done" or h == "early progress":
        done = [
            f"- [x] {c}" + (f" → {r}" if r else "")
            for c, r in zip(f.calls, [*f.results, *[""] * len(f.calls)], strict=False)
        ]
        return done or [f"- [x] Answered: {a}" for a in f.answers[-1:]]
    if h == "in progress":
        return [f"- [ ] {f.requests[-1]}"] if f.requests and not f.answers else []
    if h == "blocked":
        return [
            f"- {r}"
            for r in f.results
            if "error" in r.lower() or "failed" in r.lower() or "not found" in r.lower()
        ]
    if h == "key decisions":
        return [f"- **{_shorten(a, 60)}**" for a in f.answers[-3:]]
    if h == "next steps":
        return [f"1. Continue from: {f.requests[-1]}"] if f.requests else []
    if h in ("critical context", "context for suffix"):
        return [f"- File: {p}" for p in f.files] + [f"- Last result: {r}" for r in f.results[-1:]]
    if h == "progress":
        return []
    return [f"- {a}" for a in f.answers[-2:]]


def _sections(summary: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    current: str | None = None
    for line in summary.split("\n"):
        m = re.match(r"^#{2,3} (.+?)\s*$", line)
        if m:
            current = m.group(1).lower()
            out.setdefault(current, [])
        elif current is not None and re.match(r"^\s*(?:[-*]|\d+\.)\s", line) and line.strip() != "- (none)":
            out[current].append(line)  # bullets only: never "---", "**Turn Context...**" or <read-files> tags
    return out


def _paragraph_summary(f: _Facts) -> str:
    parts = []
    if f.requests:
        parts.append(f"The user asked: {f.requests[0]}")
    if f.calls:
        parts.append(f"Tools used: {'; '.join(f.calls[:6])}.")
    if f.answers:
        parts.append(f"Last answer: {f.answers[-1]}")
    return "\n".join(parts) or "Nothing happened in this part of the conversation."
