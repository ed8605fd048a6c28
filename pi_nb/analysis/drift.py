"""How far the token estimates are from what the provider counted, per kind of content.

Pi sizes its context with ``estimateTokens`` (characters / 4); pi_nb can also count with
tiktoken. Neither is what the provider bills: this module compares both against the recorded
usage of a session's responses.

**How recorded tokens are attributed.** Walk the active branch (root -> leaf). The *prompt* of
an assistant response is its ``usage.input + usage.cacheRead + usage.cacheWrite`` (the whole
request, cached or not). Between two consecutive *usable* responses A and B (usage with a
prompt above 0, ``stopReason`` neither ``error`` nor ``aborted``) the request grew by
``prompt(B) - prompt(A)``: that increment is what the provider counted for the messages added in
between — A itself (its text, thinking and tool calls are sent back) and every message after A
up to B (tool results, user prompts, bash executions...). An errored or aborted response is not
sent back (pi-ai drops it) and adds nothing. An interval is left out (``usable=False``) when a
compaction, a branch summary or a model change lies between A and B (the request was rebuilt,
not grown) or when the increment is not above 0. Within an interval the increment is split over
its *parts* in proportion to their tiktoken counts (an image part, which tiktoken does not
count, weighs its chars/4 estimate: 1200); so per-message chat-format overhead lands on the
parts of its interval, and a part a provider does not resend (some drop old thinking) still
takes its share.

**Parts and kinds.** Each message is split into parts of one kind:

================  ==================================================================
kind              part
================  ==================================================================
``user_text``     a user message's text
``assistant_text``  an assistant's text blocks
``thinking``      an assistant's thinking blocks
``tool_call``     an assistant's tool call (``name`` + ``JSON.stringify(arguments)``)
``bash_output``   a ``bash`` tool result; a user ``!`` command (command + output)
``code``          a ``read`` result of a file with a code extension (:data:`CODE_EXTENSIONS`)
``json``          a tool result whose text is a JSON object or array
``image``         an image block (base64)
``tool_result:<name>``  any other tool result, by tool name
``summary``       a compaction / branch summary; ``custom``: a custom message
================  ==================================================================

``estimate`` is characters / 4 (UTF-16 code units as in Pi, not rounded per part; an image is
1200), ``tiktoken`` is :func:`pi_nb.tokens.count_tokens` in the model's encoding
(:func:`model_encoding`; images count 0), ``recorded`` the attributed share. The drift of a kind
is ``estimate / recorded - 1`` (``+0.12``: the estimate is 12 % too high).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from pi_nb._js import js_stringify
from pi_nb.analysis.columns import Column
from pi_nb.analysis.extract import entry_id, is_map
from pi_nb.session.types import SessionEntry
from pi_nb.tokens import DEFAULT_ENCODING, count_tokens

__all__ = [
    "CODE_EXTENSIONS",
    "DRIFT_INTERVAL_COLUMNS",
    "DRIFT_KIND_COLUMNS",
    "DRIFT_PART_COLUMNS",
    "DriftInterval",
    "DriftPart",
    "DriftSummary",
    "KindDrift",
    "drift_by_kind",
    "drift_intervals",
    "drift_line",
    "message_parts",
    "model_encoding",
    "session_drift",
]

CODE_EXTENSIONS: Final = frozenset(
    "py pyi js mjs cjs ts tsx jsx java go rs c h cc cpp cxx hpp hh cs rb php swift kt kts scala sh "
    "bash zsh fish lua r m mm sql html htm css scss sass less vue svelte dart ex exs hs ml mli clj "
    "pl pm jl zig nim erl f90 ps1 bat".split()
)
"""The extensions of files whose ``read`` results count as ``code``."""

IMAGE_ESTIMATE: Final = 1200  # Pi's estimateTokens: 4800 characters per image


def model_encoding(model: str | None) -> str:
    """The tiktoken encoding used for a model: ``cl100k_base`` for GPT-4 (not 4o / 4.1) and
    GPT-3.5, ``o200k_base`` for everything else (OpenAI's newer models; for other vendors, whose
    tokenizers are not public, the closest available stand-in)."""
    m = (model or "").lower()
    if m.startswith("gpt-3.5") or (
        m.startswith("gpt-4") and not m.startswith(("gpt-4o", "gpt-4.1", "gpt-4.5"))
    ):
        return "cl100k_base"
    return DEFAULT_ENCODING


@dataclass(frozen=True)
class DriftPart:
    """One part of one message (see the module docstring)."""

    entry_id: str | None
    role: str
    kind: str
    tool_name: str | None
    chars: int
    estimate: float
    tiktoken: int | None
    recorded: float | None = None


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _part(
    eid: str | None, role: str, kind: str, text: str, encoding: str | None, tool: str | None = None
) -> DriftPart:
    n = _utf16(text)
    tk = count_tokens(text, encoding) if encoding else None
    return DriftPart(eid, role, kind, tool, n, n / 4, tk)


def _image(eid: str | None, role: str, tool: str | None = None, counted: bool = True) -> DriftPart:
    return DriftPart(eid, role, "image", tool, 4800, float(IMAGE_ESTIMATE), 0 if counted else None)


def _is_json(text: str) -> bool:
    t = text.strip()
    if not t or t[0] not in "[{":
        return False
    try:
        json.loads(t)
    except ValueError:
        return False
    return True


def _extension(path: Any) -> str:
    if not isinstance(path, str) or "." not in path.rsplit("/", 1)[-1]:
        return ""
    return path.rsplit(".", 1)[-1].lower()


def message_parts(
    message: Mapping[str, Any],
    *,
    eid: str | None = None,
    encoding: str | None = DEFAULT_ENCODING,
    call_args: Mapping[str, Any] | None = None,
) -> list[DriftPart]:
    """The parts of one context message. ``call_args``: the arguments of the call a tool result
    answers (a ``read`` result's path decides ``code``); ``encoding=None`` skips tiktoken."""
    role = str(message.get("role"))
    content = message.get("content")
    out: list[DriftPart] = []
    if role in ("user", "custom"):
        kind = "user_text" if role == "user" else "custom"
        if isinstance(content, str):
            out.append(_part(eid, role, kind, content, encoding))
        elif isinstance(content, list):
            texts = [
                b["text"]
                for b in content
                if is_map(b) and b.get("type") == "text" and isinstance(b.get("text"), str)
            ]
            if texts:
                out.append(_part(eid, role, kind, "".join(texts), encoding))
            out.extend(
                _image(eid, role, counted=encoding is not None)
                for b in content
                if is_map(b) and b.get("type") == "image"
            )
    elif role == "assistant" and isinstance(content, list):
        text = "".join(
            b["text"]
            for b in content
            if is_map(b) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        thinking = "".join(
            b["thinking"]
            for b in content
            if is_map(b) and b.get("type") == "thinking" and isinstance(b.get("thinking"), str)
        )
        if text:
            out.append(_part(eid, role, "assistant_text", text, encoding))
        if thinking:
            out.append(_part(eid, role, "thinking", thinking, encoding))
        for b in content:
            if is_map(b) and b.get("type") == "toolCall":
                name = str(b.get("name"))
                args = js_stringify(b.get("arguments")) if "arguments" in b else ""
                n = _utf16(name) + _utf16(args)
                tk = count_tokens(name, encoding) + count_tokens(args, encoding) if encoding else None
                out.append(DriftPart(eid, role, "tool_call", name, n, n / 4, tk))
    elif role == "toolResult":
        tool = message.get("toolName")
        tool_name = tool if isinstance(tool, str) else None
        blocks = (
            content
            if isinstance(content, list)
            else [{"type": "text", "text": content}]
            if isinstance(content, str)
            else []
        )
        text = "".join(
            b["text"]
            for b in blocks
            if is_map(b) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
        if text:
            if tool_name == "bash":
                kind = "bash_output"
            elif tool_name == "read" and _extension((call_args or {}).get("path")) in CODE_EXTENSIONS:
                kind = "code"
            elif _is_json(text):
                kind = "json"
            else:
                kind = f"tool_result:{tool_name}"
            out.append(_part(eid, role, kind, text, encoding, tool_name))
        out.extend(
            _image(eid, role, tool_name, encoding is not None)
            for b in blocks
            if is_map(b) and b.get("type") == "image"
        )
    elif role == "bashExecution":
        if not message.get("excludeFromContext"):
            text = f"{message.get('command') or ''}{message.get('output') or ''}"
            out.append(_part(eid, role, "bash_output", text, encoding))
    elif role in ("compactionSummary", "branchSummary"):
        summary = message.get("summary")
        out.append(_part(eid, role, "summary", summary if isinstance(summary, str) else "", encoding))
    return out


# ---------------------------------------------------------------------------------------------
# intervals


@dataclass(frozen=True)
class DriftInterval:
    """The messages added between two consecutive responses and what the provider counted."""

    index: int
    start_entry_id: str | None
    end_entry_id: str | None
    model: str | None
    encoding: str | None
    recorded: int
    usable: bool
    reason: str | None
    parts: tuple[DriftPart, ...] = field(repr=False)

    @property
    def estimate(self) -> float:
        return sum(p.estimate for p in self.parts)

    @property
    def tiktoken(self) -> int | None:
        if any(p.tiktoken is None for p in self.parts):
            return None
        return sum(p.tiktoken or 0 for p in self.parts)


def _prompt(message: Mapping[str, Any]) -> int | None:
    if message.get("stopReason") in ("error", "aborted"):
        return None
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return None
    total = 0
    for key in ("input", "cacheRead", "cacheWrite"):
        v = usage.get(key)
        if type(v) is int or (type(v) is float and v.is_integer()):
            total += int(v)
    return total if total > 0 else None


def _attribute(parts: list[DriftPart], recorded: int) -> tuple[DriftPart, ...]:
    weights = [
        float(p.tiktoken) if p.kind != "image" and p.tiktoken is not None else p.estimate for p in parts
    ]
    total = sum(weights)
    if total <= 0:
        weights, total = [1.0] * len(parts), float(len(parts))
    return tuple(
        DriftPart(
            p.entry_id, p.role, p.kind, p.tool_name, p.chars, p.estimate, p.tiktoken, recorded * w / total
        )
        for p, w in zip(parts, weights, strict=True)
    )


PartsCache = dict[int, tuple[Any, ...]]
"""``{id(entry): (entry, encoding, parts, messages)}``: the parts of an entry's message already
split, and its messages (``session_entry_to_context_messages`` builds new ones at each call), so
a live view that re-reads its session after every event splits only new messages. (An entry
with several messages is kept by message: ``{id(message): (message, encoding, parts)}``.)"""


def _cached_messages(cache: PartsCache | None, e: SessionEntry) -> list[Mapping[str, Any]]:
    """The entry's context messages: the ones kept for it when it was seen before."""
    from pi_nb.session.context import session_entry_to_context_messages

    if cache is not None:
        hit = cache.get(id(e))
        if hit is not None and hit[0] is e and len(hit) == 4:
            return cast("list[Mapping[str, Any]]", hit[3])
    return list(session_entry_to_context_messages(e))


def _cached_parts(
    cache: PartsCache | None,
    m: Mapping[str, Any],
    eid: str | None,
    encoding: str | None,
    args: Mapping[str, Any] | None = None,
    e: SessionEntry | None = None,
    msgs: list[Mapping[str, Any]] | None = None,
) -> list[DriftPart]:
    if cache is None:
        return message_parts(m, eid=eid, encoding=encoding, call_args=args)
    by_entry = e is not None and msgs is not None and len(msgs) == 1
    owner: Any = e if by_entry else m
    hit = cache.get(id(owner))
    if hit is not None and hit[0] is owner and hit[1] == encoding:
        return cast("list[DriftPart]", hit[2])
    parts = message_parts(m, eid=eid, encoding=encoding, call_args=args)
    cache[id(owner)] = (owner, encoding, parts, msgs) if by_entry else (owner, encoding, parts)
    return parts


def drift_intervals(
    branch: Sequence[SessionEntry], *, tiktoken: bool = True, cache: PartsCache | None = None
) -> list[DriftInterval]:
    """The intervals between consecutive usable responses of a root -> leaf ``branch`` (see the
    module docstring). ``tiktoken=False`` leaves the tiktoken counts out (``None``; the
    increment is then split by the estimates). ``cache``: a dict kept between calls over the
    same session, so only new messages are split."""
    calls: dict[str, Mapping[str, Any]] = {}
    out: list[DriftInterval] = []
    pending: list[DriftPart] = []
    prev: tuple[int, str | None] | None = None
    broken: str | None = None
    model: str | None = None
    start = 0
    # A live view asks again after each new entry: resume where the last walk of the same branch
    # ended when the branch still holds that walk's entries (the same objects) as its prefix.
    resume_key = _RESUME_TIKTOKEN if tiktoken else _RESUME_ESTIMATE
    saved = cache.get(resume_key) if cache is not None else None
    if saved is not None:
        done, last, state = saved[1], saved[2], saved[3]
        if 0 < done <= len(branch) and branch[done - 1] is last:
            calls, out, pending, prev, broken, model = (
                dict(state[0]), list(state[1]), list(state[2]), state[3], state[4], state[5],
            )  # fmt: skip
            start = done
    for i in range(start, len(branch)):
        e = branch[i]
        etype = e.get("type")
        if etype in ("compaction", "branch_summary", "model_change"):
            broken = broken or etype
            if etype == "model_change":
                mid = e.get("modelId")
                model = mid if isinstance(mid, str) else model
        msgs = _cached_messages(cache, e)
        for m in msgs:
            role = m.get("role")
            eid = entry_id(e)
            encoding = model_encoding(model) if tiktoken else None
            if role == "assistant":
                if isinstance(m.get("model"), str):
                    model = m["model"]
                    encoding = model_encoding(model) if tiktoken else None
                prompt = _prompt(m)
                if prompt is None:  # not sent back: adds nothing
                    continue
                content = m.get("content")
                for b in content if isinstance(content, list) else []:
                    if is_map(b) and b.get("type") == "toolCall" and is_map(b.get("arguments")):
                        calls[str(b.get("id"))] = b["arguments"]
                if prev is not None:
                    delta = prompt - prev[0]
                    reason = broken or (None if delta > 0 else "no increase")
                    usable = reason is None and bool(pending)
                    if not pending and reason is None:
                        reason = "nothing added"
                    parts = _attribute(pending, delta) if usable else tuple(pending)
                    out.append(
                        DriftInterval(len(out), prev[1], eid, model, encoding, delta, usable, reason, parts)
                    )
                pending = list(_cached_parts(cache, m, eid, encoding, None, e, msgs))
                prev, broken = (prompt, eid), None
            else:
                args = calls.get(str(m.get("toolCallId"))) if role == "toolResult" else None
                pending.extend(_cached_parts(cache, m, eid, encoding, args, e, msgs))
    if cache is not None and branch:
        state = (calls, out, pending, prev, broken, model)
        cache[resume_key] = (None, len(branch), branch[-1], state)
    return list(out)


_RESUME_ESTIMATE = -1
_RESUME_TIKTOKEN = -2
"""The keys of the resumable walk in a parts cache (``id()`` of an object is never negative)."""


# ---------------------------------------------------------------------------------------------
# aggregates


@dataclass(frozen=True)
class KindDrift:
    """The sums of one kind over usable intervals."""

    kind: str
    parts: int
    chars: int
    estimate: float
    tiktoken: int | None
    recorded: float

    @property
    def estimate_drift(self) -> float | None:
        return self.estimate / self.recorded - 1 if self.recorded > 0 else None

    @property
    def tiktoken_drift(self) -> float | None:
        return self.tiktoken / self.recorded - 1 if self.recorded > 0 and self.tiktoken is not None else None


def drift_by_kind(intervals: Iterable[DriftInterval]) -> list[KindDrift]:
    """Per kind (first seen first), the parts of the usable intervals summed."""
    acc: dict[str, list[Any]] = {}
    for iv in intervals:
        if not iv.usable:
            continue
        for p in iv.parts:
            a = acc.setdefault(p.kind, [0, 0, 0.0, 0, 0.0])
            a[0] += 1
            a[1] += p.chars
            a[2] += p.estimate
            a[3] = None if a[3] is None or p.tiktoken is None else a[3] + p.tiktoken
            a[4] += p.recorded or 0.0
    return [KindDrift(k, *v) for k, v in acc.items()]


@dataclass(frozen=True)
class DriftSummary:
    """The drift over the usable intervals of one session (or corpus)."""

    turns: int
    estimate: float
    tiktoken: int | None
    recorded: int
    encoding: str | None

    @property
    def estimate_drift(self) -> float | None:
        return self.estimate / self.recorded - 1 if self.recorded > 0 else None

    @property
    def tiktoken_drift(self) -> float | None:
        return self.tiktoken / self.recorded - 1 if self.recorded > 0 and self.tiktoken is not None else None

    def line(self) -> str | None:
        """One line for the budget view, ``None`` without a usable interval, e.g. ``"chars/4
        estimate off by +12 % vs recorded usage over 37 turns"`` (a turn: the messages between
        two consecutive responses)."""
        drift = self.estimate_drift
        if drift is None or self.turns == 0:
            return None
        text = (
            f"chars/4 estimate off by {round(drift * 100):+d} % vs recorded usage over "
            f"{self.turns} turn{'s' if self.turns != 1 else ''}"
        )
        tk = self.tiktoken_drift
        if tk is not None:
            text += f" (tiktoken {self.encoding}: {round(tk * 100):+d} %)"
        return text


def session_drift(
    branch: Sequence[SessionEntry], *, tiktoken: bool = False, cache: PartsCache | None = None
) -> DriftSummary:
    """The drift of a root -> leaf ``branch`` (chars/4 only unless ``tiktoken``)."""
    return summarize(drift_intervals(branch, tiktoken=tiktoken, cache=cache))


def summarize(intervals: Iterable[DriftInterval]) -> DriftSummary:
    """:class:`DriftSummary` of intervals (their usable ones)."""
    usable = [iv for iv in intervals if iv.usable]
    tks = [iv.tiktoken for iv in usable]
    encodings = {iv.encoding for iv in usable}
    return DriftSummary(
        len(usable),
        sum(iv.estimate for iv in usable),
        None if any(t is None for t in tks) else sum(t or 0 for t in tks),
        sum(iv.recorded for iv in usable),
        encodings.pop() if len(encodings) == 1 else ("mixed" if encodings else None),
    )


def drift_line(branch: Sequence[SessionEntry], cache: PartsCache | None = None) -> str | None:
    """:meth:`DriftSummary.line` of a branch (chars/4 only: cheap enough for a live view, with a
    ``cache`` kept between calls)."""
    return session_drift(branch, cache=cache).line()


# ---------------------------------------------------------------------------------------------
# frame rows

Labelled = tuple[str | None, str | None, list[DriftInterval]]
"""``(session id, session file, intervals)``."""


@dataclass(frozen=True)
class _Ctx:
    sid: str | None
    sfile: str | None
    iv: DriftInterval | None = None
    p: DriftPart | None = None
    k: KindDrift | None = None


def _f(x: float | None) -> float | None:
    return None if x is None else float(x)


DRIFT_PART_COLUMNS: tuple[Column, ...] = (
    Column("session_id", "string", lambda x: x.sid),
    Column("session_file", "string", lambda x: x.sfile),
    Column("interval", "Int64", lambda x: x.iv.index),
    Column("usable", "boolean", lambda x: x.iv.usable),
    Column("model", "string", lambda x: x.iv.model),
    Column("encoding", "string", lambda x: x.iv.encoding),
    Column("entry_id", "string", lambda x: x.p.entry_id),
    Column("role", "string", lambda x: x.p.role),
    Column("kind", "string", lambda x: x.p.kind),
    Column("tool_name", "string", lambda x: x.p.tool_name),
    Column("chars", "Int64", lambda x: x.p.chars),
    Column("estimate_tokens", "Float64", lambda x: x.p.estimate),
    Column("tiktoken_tokens", "Int64", lambda x: x.p.tiktoken),
    Column("recorded_tokens", "Float64", lambda x: x.p.recorded),
)
"""``estimate_drift_df(by="part")``: one row per part of every interval."""

DRIFT_INTERVAL_COLUMNS: tuple[Column, ...] = (
    *DRIFT_PART_COLUMNS[:6],
    Column("reason", "string", lambda x: x.iv.reason),
    Column("start_entry_id", "string", lambda x: x.iv.start_entry_id),
    Column("end_entry_id", "string", lambda x: x.iv.end_entry_id),
    Column("parts", "Int64", lambda x: len(x.iv.parts)),
    Column("estimate_tokens", "Float64", lambda x: x.iv.estimate),
    Column("tiktoken_tokens", "Int64", lambda x: x.iv.tiktoken),
    Column("recorded_tokens", "Int64", lambda x: x.iv.recorded),
)
"""``estimate_drift_df(by="interval")``: one row per interval between two responses."""

DRIFT_KIND_COLUMNS: tuple[Column, ...] = (
    Column("kind", "string", lambda x: x.k.kind),
    Column("parts", "Int64", lambda x: x.k.parts),
    Column("chars", "Int64", lambda x: x.k.chars),
    Column("estimate_tokens", "Float64", lambda x: x.k.estimate),
    Column("tiktoken_tokens", "Int64", lambda x: x.k.tiktoken),
    Column("recorded_tokens", "Float64", lambda x: x.k.recorded),
    Column("estimate_drift", "Float64", lambda x: _f(x.k.estimate_drift)),
    Column("tiktoken_drift", "Float64", lambda x: _f(x.k.tiktoken_drift)),
)
"""``estimate_drift_df(by="kind")``: one row per kind over every usable interval of the source."""


def _rows(spec: Sequence[Column], contexts: Iterator[_Ctx]) -> list[tuple[Any, ...]]:
    getters = [c.value for c in spec]
    return [tuple(g(x) for g in getters) for x in contexts]


def drift_rows(groups: Sequence[Labelled], by: str) -> tuple[tuple[Column, ...], list[tuple[Any, ...]]]:
    """The columns and rows of ``estimate_drift_df(by=...)`` (``part``, ``interval`` or ``kind``)."""
    if by == "part":
        return DRIFT_PART_COLUMNS, _rows(
            DRIFT_PART_COLUMNS, (_Ctx(s, f, iv, p) for s, f, ivs in groups for iv in ivs for p in iv.parts)
        )
    if by == "interval":
        return DRIFT_INTERVAL_COLUMNS, _rows(
            DRIFT_INTERVAL_COLUMNS, (_Ctx(s, f, iv) for s, f, ivs in groups for iv in ivs)
        )
    if by == "kind":
        kinds = drift_by_kind(iv for _s, _f, ivs in groups for iv in ivs)
        return DRIFT_KIND_COLUMNS, _rows(DRIFT_KIND_COLUMNS, (_Ctx(None, None, k=k) for k in kinds))
    raise ValueError(f"by must be 'part', 'interval' or 'kind', got {by!r}")
