"""Message and content shapes, and the conversion of agent messages to LLM messages.

Mirrors Pi 0.85.0 ``pi-ai/src/types.ts`` (the LLM message shapes), ``coding-agent/src/core/messages.ts``
(the coding agent's own roles and ``convertToLlm``) and the ``blockImages`` wrapper of
``core/sdk.ts``.

Messages are plain dicts with Pi's camelCase keys, typed as :class:`TypedDict`. The key order of
each TypedDict below is the order in which Pi builds the object, and therefore the order in which
``JSON.stringify`` writes it to a session file; optional keys (``NotRequired``) are left out when
Pi's value is ``undefined``.

Why the loose input types: session files are parsed without validation (old versions, forks,
hand-edited files), so the functions here accept any ``Mapping`` and follow what Pi's JavaScript
does with missing or oddly typed fields (a missing ``summary`` is rendered as ``"undefined"``, a
missing ``timestamp`` stays missing). A message that is not an object at all is an error.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, cast

from pi_nb._js import UNDEFINED, js_key_order, js_number_to_string, js_stringify
from pi_nb._js import js_truthy as _truthy
from pi_nb.errors import CompactionError, InvalidMessageError, InvalidValueError

__all__ = [
    "BRANCH_SUMMARY_PREFIX",
    "BRANCH_SUMMARY_SUFFIX",
    "COMPACTION_SUMMARY_PREFIX",
    "COMPACTION_SUMMARY_SUFFIX",
    "IMAGE_BLOCKED_TEXT",
    "THINKING_LEVELS",
    "AgentMessage",
    "AssistantContent",
    "AssistantMessage",
    "AssistantMessageEvent",
    "BashExecutionMessage",
    "BranchSummaryMessage",
    "CompactionSummaryMessage",
    "CustomMessage",
    "DoneEvent",
    "DoneReason",
    "ErrorEvent",
    "ErrorReason",
    "ImageContent",
    "Message",
    "StartEvent",
    "StopReason",
    "TextContent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingContent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingStartEvent",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolResultMessage",
    "Usage",
    "UsageCost",
    "UserMessage",
    "bash_execution_to_text",
    "block_text",
    "convert_to_llm",
    "create_branch_summary_message",
    "create_compaction_summary_message",
    "create_custom_message",
    "format_tool_call_args",
    "validate_thinking_level",
]


#: Pi 0.85's thinking levels (``VALID_THINKING_LEVELS`` of pi-coding-agent, pi-ai's ``ThinkingLevel``
#: plus ``off``), in order. The shared types live here so that settings (resources) and the providers
#: both read them without importing each other.
THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


def validate_thinking_level(level: object, what: str = "thinking level") -> str:
    """``level`` if it is one of Pi's thinking levels, else :class:`~pi_nb.errors.InvalidValueError`."""
    if not isinstance(level, str) or level not in THINKING_LEVELS:
        raise InvalidValueError(f"{what} must be one of {', '.join(THINKING_LEVELS)}; got {level!r}")
    return level


# ---------------------------------------------------------------------------------------------
# Constants (core/messages.ts). Note the asymmetry: the compaction suffix starts with a newline,
# the branch-summary suffix does not, so a branch summary's last line runs into "</summary>".
# ---------------------------------------------------------------------------------------------

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"

#: The text that replaces an image block when the ``images.blockImages`` setting is on.
IMAGE_BLOCKED_TEXT = "Image reading is disabled."

# ---------------------------------------------------------------------------------------------
# Content blocks (pi-ai types.ts)
# ---------------------------------------------------------------------------------------------


class TextContent(TypedDict):
    """``{type: "text", text, textSignature?}``."""

    type: Literal["text"]
    text: str
    textSignature: NotRequired[str]


class ThinkingContent(TypedDict):
    """``{type: "thinking", thinking, thinkingSignature?, redacted?}``."""

    type: Literal["thinking"]
    thinking: str
    thinkingSignature: NotRequired[str]
    redacted: NotRequired[bool]


class ImageContent(TypedDict):
    """``{type: "image", data (base64), mimeType}``."""

    type: Literal["image"]
    data: str
    mimeType: str


class ToolCall(TypedDict):
    """``{type: "toolCall", id, name, arguments, thoughtSignature?, namespace?}``."""

    type: Literal["toolCall"]
    id: str
    name: str
    arguments: dict[str, Any]
    thoughtSignature: NotRequired[str]
    namespace: NotRequired[str]


class UsageCost(TypedDict):
    """``usage.cost``: ``{input, output, cacheRead, cacheWrite, total}`` in dollars."""

    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    total: float


class Usage(TypedDict):
    """Token usage of one LLM call: ``{input, output, cacheRead, cacheWrite, cacheWrite1h?,
    reasoning?, totalTokens, cost}``."""

    input: int
    output: int
    cacheRead: int
    cacheWrite: int
    cacheWrite1h: NotRequired[int]
    reasoning: NotRequired[int]
    totalTokens: int
    cost: UsageCost


StopReason: TypeAlias = Literal["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"]

#: A block of an assistant message's ``content``.
AssistantContent: TypeAlias = TextContent | ThinkingContent | ToolCall

# ---------------------------------------------------------------------------------------------
# LLM messages (pi-ai types.ts). Timestamps are Unix milliseconds; a timestamp Pi derived from an
# unparseable ISO string is NaN (written as null by JSON.stringify), hence ``int | float``.
# ---------------------------------------------------------------------------------------------


class UserMessage(TypedDict):
    """``{role: "user", content: string | (Text|Image)[], timestamp}``."""

    role: Literal["user"]
    content: str | list[TextContent | ImageContent]
    timestamp: int | float


class AssistantMessage(TypedDict):
    """``{role: "assistant", content, api, provider, model, responseModel?, responseId?,
    providerThinkingLevel?, diagnostics?, usage, stopReason, deferred?, errorMessage?,
    rawStopReason?, endTurn?, timestamp}``."""

    role: Literal["assistant"]
    content: list[AssistantContent]
    api: str
    provider: str
    model: str
    responseModel: NotRequired[str]
    responseId: NotRequired[str]
    providerThinkingLevel: NotRequired[str]
    diagnostics: NotRequired[list[dict[str, Any]]]  # provider diagnostics: open JSON
    usage: Usage
    stopReason: StopReason
    deferred: NotRequired[dict[str, Any]]  # a deferred turn's provider state: open JSON
    errorMessage: NotRequired[str]
    rawStopReason: NotRequired[str]
    endTurn: NotRequired[bool]
    timestamp: int | float


class ToolResultMessage(TypedDict):
    """``{role: "toolResult", toolCallId, toolName, content, details?, usage?, addedToolNames?,
    isError, timestamp}``."""

    role: Literal["toolResult"]
    toolCallId: str
    toolName: str
    content: list[TextContent | ImageContent]
    details: NotRequired[Any]
    usage: NotRequired[Usage]
    addedToolNames: NotRequired[list[str]]
    isError: bool
    timestamp: int | float


# ---------------------------------------------------------------------------------------------
# The coding agent's own roles (core/messages.ts)
# ---------------------------------------------------------------------------------------------


class BashExecutionMessage(TypedDict):
    """A user ``!``/``!!`` shell command: ``{role: "bashExecution", command, output, exitCode,
    cancelled, truncated, fullOutputPath?, timestamp, excludeFromContext?}``.

    ``exitCode`` is ``number | undefined`` in Pi (undefined when the process was killed), so it is
    absent from the JSON in that case. ``excludeFromContext`` marks ``!!`` commands, which stay in
    the session but never reach the LLM.
    """

    role: Literal["bashExecution"]
    command: str
    output: str
    exitCode: NotRequired[int | None]
    cancelled: bool
    truncated: bool
    fullOutputPath: NotRequired[str]
    timestamp: int | float
    excludeFromContext: NotRequired[bool]


class CustomMessage(TypedDict):
    """An extension/hook message: ``{role: "custom", customType, content, display, details?,
    timestamp}``. Sent to the LLM as a user message; ``display`` only affects the UI."""

    role: Literal["custom"]
    customType: str
    content: str | list[TextContent | ImageContent]
    display: bool
    details: NotRequired[Any]
    timestamp: int | float


class BranchSummaryMessage(TypedDict):
    """``{role: "branchSummary", summary, fromId, timestamp}`` (built from a branch_summary entry)."""

    role: Literal["branchSummary"]
    summary: str
    fromId: str | None
    timestamp: int | float


class CompactionSummaryMessage(TypedDict):
    """``{role: "compactionSummary", summary, tokensBefore, timestamp}`` (built from a compaction entry)."""

    role: Literal["compactionSummary"]
    summary: str
    tokensBefore: int
    timestamp: int | float


Message: TypeAlias = UserMessage | AssistantMessage | ToolResultMessage
AgentMessage: TypeAlias = (
    UserMessage
    | AssistantMessage
    | ToolResultMessage
    | BashExecutionMessage
    | CustomMessage
    | BranchSummaryMessage
    | CompactionSummaryMessage
)

# ---------------------------------------------------------------------------------------------
# Streaming events of one assistant response (pi-ai types.ts ``AssistantMessageEvent``). Every event
# but the last carries ``partial``, the message so far; ``contentIndex`` is the index of the block
# in ``partial["content"]``. The stream ends with exactly one ``done`` or ``error``.
# ---------------------------------------------------------------------------------------------

#: The stop reasons of a ``done`` event (``Extract<StopReason, "stop" | "length" | "toolUse">``).
DoneReason: TypeAlias = Literal["stop", "length", "toolUse"]
#: The stop reasons of an ``error`` event (``Extract<StopReason, "aborted" | "error">``).
ErrorReason: TypeAlias = Literal["aborted", "error"]


class StartEvent(TypedDict):
    """``{type: "start", partial}``: the response began (``partial`` has no content yet)."""

    type: Literal["start"]
    partial: AssistantMessage


class TextStartEvent(TypedDict):
    """``{type: "text_start", contentIndex, partial}``: a text block was opened."""

    type: Literal["text_start"]
    contentIndex: int
    partial: AssistantMessage


class TextDeltaEvent(TypedDict):
    """``{type: "text_delta", contentIndex, delta, partial}``: text appended to a text block."""

    type: Literal["text_delta"]
    contentIndex: int
    delta: str
    partial: AssistantMessage


class TextEndEvent(TypedDict):
    """``{type: "text_end", contentIndex, content, partial}``: a text block is complete (``content``
    is its whole text)."""

    type: Literal["text_end"]
    contentIndex: int
    content: str
    partial: AssistantMessage


class ThinkingStartEvent(TypedDict):
    """``{type: "thinking_start", contentIndex, partial}``: a thinking block was opened."""

    type: Literal["thinking_start"]
    contentIndex: int
    partial: AssistantMessage


class ThinkingDeltaEvent(TypedDict):
    """``{type: "thinking_delta", contentIndex, delta, partial}``: reasoning appended to a thinking block."""

    type: Literal["thinking_delta"]
    contentIndex: int
    delta: str
    partial: AssistantMessage


class ThinkingEndEvent(TypedDict):
    """``{type: "thinking_end", contentIndex, content, partial}``: a thinking block is complete."""

    type: Literal["thinking_end"]
    contentIndex: int
    content: str
    partial: AssistantMessage


class ToolCallStartEvent(TypedDict):
    """``{type: "toolcall_start", contentIndex, partial}``: a tool call was opened."""

    type: Literal["toolcall_start"]
    contentIndex: int
    partial: AssistantMessage


class ToolCallDeltaEvent(TypedDict):
    """``{type: "toolcall_delta", contentIndex, delta, partial}``: argument JSON text streamed in
    (``delta`` is the raw text; ``partial`` holds the arguments parsed so far)."""

    type: Literal["toolcall_delta"]
    contentIndex: int
    delta: str
    partial: AssistantMessage


class ToolCallEndEvent(TypedDict):
    """``{type: "toolcall_end", contentIndex, toolCall, partial}``: a tool call is complete."""

    type: Literal["toolcall_end"]
    contentIndex: int
    toolCall: ToolCall
    partial: AssistantMessage


class DoneEvent(TypedDict):
    """``{type: "done", reason, message}``: the final message, which stopped normally.

    ``reason`` is the message's ``stopReason``: a :data:`DoneReason` from the real providers; typed
    :data:`StopReason` because a scripted (test) response passes its own ``stopReason`` on as is.
    """

    type: Literal["done"]
    reason: StopReason
    message: AssistantMessage


class ErrorEvent(TypedDict):
    """``{type: "error", reason, error}``: the final message of a failed or aborted response
    (``error["stopReason"]`` is ``reason``, ``error["errorMessage"]`` says what happened)."""

    type: Literal["error"]
    reason: ErrorReason
    error: AssistantMessage


#: One streaming event of one assistant response, tagged by ``type``.
AssistantMessageEvent: TypeAlias = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)

# ---------------------------------------------------------------------------------------------
# JavaScript value semantics used by the renderers
# ---------------------------------------------------------------------------------------------


def _js_string(value: Any) -> str:
    """``String(value)`` / template-literal interpolation of a JSON value."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return js_number_to_string(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if v is None or v is UNDEFINED else _js_string(v) for v in value)
    return "[object Object]"


def _get(obj: Mapping[str, Any], key: str) -> Any:
    """``obj.key`` in JavaScript: ``UNDEFINED`` when the key is absent."""
    return obj.get(key, UNDEFINED)


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    """Set ``out[key]`` unless the value is ``undefined`` (JSON.stringify drops those keys)."""
    if value is not UNDEFINED:
        out[key] = value


# ---------------------------------------------------------------------------------------------
# new Date(value).getTime()
# ---------------------------------------------------------------------------------------------

_MAX_TIME_MS = 8.64e15
_NAN = float("nan")

# ECMAScript's Date Time String Format (what Date.prototype.toISOString writes). V8 tries this
# strict grammar first: a date alone is UTC, a date-time without offset is local time.
_ISO_RE = re.compile(
    r"""
    \A(?P<year>[+-]\d{6}|\d{4})
    (?:-(?P<month>\d{2})(?:-(?P<day>\d{2}))?)?
    (?:
        T(?P<hour>\d{2}):(?P<minute>\d{2})
        (?::(?P<second>\d{2})(?:\.(?P<frac>\d+))?)?
        (?P<tz>Z|[+-]\d{2}:\d{2})?
    )?\Z
    """,
    re.VERBOSE,
)

# The part of V8's legacy fallback parser that pi_nb reproduces (checked against V8 differentially;
# V8 rejects the near misses, e.g. "T" after a one-digit day, one-digit seconds after "T", a blank
# between a "T" time and its zone): a 4-6 digit year >= 100; then either
#   * "YYYY-MM-DD" (4-digit year) "T"|"t" "HH:MM[:SS[.fff]]" directly followed by an optional Z|z|+HH:MM|+HHMM,
#   * (leading blanks allowed from here on) "YYYY-M-D" blanks "H:MM[:S[.fff]]", optional blanks, optional Z|z|+HH:MM|+HHMM or blank GMT/UTC,
#   * "YYYY-M-D" alone, with an optional Z|z.
# Without a zone *everything* here is local time, the date alone included.
_LEGACY_RE = re.compile(
    r"""
    \A[ \t]*(?P<year>\d{4,6})-
    (?:
        (?P<month_t>\d{2})-(?P<day_t>\d{2})[Tt](?P<hour_t>\d{2}):(?P<minute_t>\d{2})
        (?::(?P<second_t>\d{2})(?:\.(?P<frac_t>\d+))?)?
        (?P<tz_t>[Zz]|[+-]\d{2}:?\d{2})?
    |
        (?P<month_s>\d{1,2})-(?P<day_s>\d{1,2})[ \t]+(?P<hour_s>\d{1,2}):(?P<minute_s>\d{2})
        (?::(?P<second_s>\d{1,2})(?:\.(?P<frac_s>\d+))?)?
        (?:[ \t]*(?P<tz_s>[Zz]|[+-]\d{2}:?\d{2})|[ \t]+(?P<gmt_s>GMT|UTC))?
    |
        (?P<month_d>\d{1,2})-(?P<day_d>\d{1,2})(?P<tz_d>[Zz])?
    )\Z
    """,
    re.VERBOSE,
)


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (``day`` may overflow the month, as in JS)."""
    y = year - (1 if month <= 2 else 0)
    era = y // 400  # floor division, also for years before 0
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 + (day - 1)


def _offset_at_ms(instant_ms: int) -> int:
    """The local zone's UTC offset (ms) at a UTC instant (the current offset where the C library
    cannot tell, e.g. far outside its range)."""
    try:
        return int(time.localtime(instant_ms / 1000.0).tm_gmtoff) * 1000
    except (OverflowError, OSError, ValueError):
        return int(time.localtime().tm_gmtoff) * 1000


def _local_to_utc_ms(local_ms: int) -> int:
    """ECMAScript ``UTC(t)`` for a local wall-clock time ``t``.

    A wall time that occurs twice (DST ends) takes the earlier instant; one that does not occur
    (DST starts) is read with the offset in force before the transition.
    """
    day = 86_400_000
    before = _offset_at_ms(local_ms - day)
    offsets = {before, _offset_at_ms(local_ms), _offset_at_ms(local_ms + day)}
    valid = [local_ms - off for off in offsets if _offset_at_ms(local_ms - off) == off]
    if valid:
        return min(valid)
    return local_ms - before


def _compose(year: int, month: int, day: int, hour: int, minute: int, second: int, frac: str) -> int | None:
    """MakeDate(MakeDay, MakeTime) with V8's range checks; None where V8 rejects the fields."""
    # V8 checks the day against 1..31 only: "2026-02-31" is 3 March.
    if not (1 <= month <= 12 and 1 <= day <= 31 and minute <= 59 and second <= 59):
        return None
    if hour > 24 or (hour == 24 and (minute or second or (frac and int(frac)))):
        return None
    millis = int((frac + "00")[:3]) if frac else 0  # digits beyond milliseconds are dropped
    days = _days_from_civil(year, month, day)
    return ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis


def _offset_ms(tz: str) -> int:
    """``+HH:MM`` / ``+HHMM`` -> ms east of UTC."""
    body = tz[1:].replace(":", "")
    off = (int(body[:2]) * 60 + int(body[2:])) * 60_000
    return off if tz[0] == "+" else -off


def _time_clip(ms: int) -> int | float:
    return _NAN if abs(ms) > _MAX_TIME_MS else ms


def _parse_date_string(text: str) -> int | float:
    m = _ISO_RE.match(text)
    if m is not None:
        if m["year"] == "-000000":
            return _NAN  # ECMAScript forbids negative zero as an expanded year
        ms = _compose(
            int(m["year"]),
            int(m["month"] or 1),
            int(m["day"] or 1),
            int(m["hour"] or 0),
            int(m["minute"] or 0),
            int(m["second"] or 0),
            m["frac"] or "",
        )
        if ms is None:
            return _NAN
        tz = m["tz"]
        if tz is None:
            if m["hour"] is not None:  # a date-time without offset is local time; a date alone is UTC
                ms = _local_to_utc_ms(ms)
        elif tz != "Z":
            if int(tz[1:3]) > 23 or int(tz[4:6]) > 59:
                return _NAN
            ms -= _offset_ms(tz)
        return _time_clip(ms)
    m = _LEGACY_RE.match(text)
    if m is None or int(m["year"]) < 100:
        return _NAN  # (V8's legacy parser maps years below 100 in ways not reproduced here)
    form = "t" if m["month_t"] else ("s" if m["month_s"] else "d")
    if form == "t" and (len(m["year"]) != 4 or text[0] in " \t"):
        return _NAN  # V8's fallback rejects a "T" time after a 5-6 digit year or leading blanks
    ms = _compose(
        int(m["year"]),
        int(m["month_" + form]),
        int(m["day_" + form]),
        int(m["hour_" + form] or 0) if form != "d" else 0,
        int(m["minute_" + form] or 0) if form != "d" else 0,
        int(m["second_" + form] or 0) if form != "d" else 0,
        (m["frac_" + form] or "") if form != "d" else "",
    )
    if ms is None:
        return _NAN
    tz = m["tz_" + form] or (m["gmt_s"] if form == "s" else None)
    if tz is None:
        ms = _local_to_utc_ms(ms)
    elif tz not in ("Z", "z", "GMT", "UTC"):
        body = tz[1:].replace(":", "")
        # after a blank-separated time V8 takes any two-digit offset hour (+24:00 included)
        if (form == "t" and int(body[:2]) > 23) or int(body[2:]) > 59:
            return _NAN
        ms -= _offset_ms(tz)
    return _time_clip(ms)


def js_date_ms(value: Any) -> int | float:
    """``new Date(value).getTime()``: Unix milliseconds, or NaN where JavaScript gives NaN.

    Pi turns an entry's ISO ``timestamp`` into a message ``timestamp`` this way. Strings follow
    ECMAScript's date-time format (``2026-01-01T00:00:00.000Z``, ``...:00Z``, ``2026-01-01``,
    offsets, expanded years; a date-time without offset is local time, a date alone UTC; extra
    fraction digits are truncated; day 31 of a short month rolls over as in V8) plus the part of
    V8's legacy fallback described at ``_LEGACY_RE``. Other forms V8's legacy parser would still
    accept (``"Jan 1 2026"``, ``"2026/01/01"``, years below 100 outside the strict format) give NaN
    here. Numbers are time-clipped; ``null`` is 0; ``undefined`` (missing) is NaN; arrays are
    joined like ``String([...])``.
    """
    if value is UNDEFINED:
        return _NAN
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, (int, float)):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return _NAN
        if abs(value) > _MAX_TIME_MS:
            return _NAN
        return int(value)  # ToIntegerOrInfinity truncates toward zero
    if isinstance(value, (list, tuple)):
        return _parse_date_string(_js_string(value))
    if isinstance(value, str):
        return _parse_date_string(value)
    return _NAN


# ---------------------------------------------------------------------------------------------
# Builders and renderers (core/messages.ts)
# ---------------------------------------------------------------------------------------------


def block_text(
    content: object, separator: str = "\n", *, kind: str = "text", skip_non_string: bool = False
) -> str:
    """The text of a message's content: a string as is, else its ``kind`` blocks joined by ``separator``.

    ``kind`` is ``"text"`` (the ``text`` of text blocks) or ``"thinking"`` (the ``thinking`` of
    thinking blocks); blocks of other kinds are skipped. A ``kind`` block whose field is not a string
    counts as ``""`` (it still takes a separator), or is left out with ``skip_non_string``. Any
    other content (``None``, a number) gives ``""``. The one implementation behind every place that
    shows or counts the words of a message (pi-ai's ``contentText`` is the ``"text"``/``"\\n"`` case).
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == kind:
            value = block.get(kind)
            if isinstance(value, str):
                parts.append(value)
            elif not skip_non_string:
                parts.append("")
    return separator.join(parts)


def bash_execution_to_text(msg: Mapping[str, Any]) -> str:
    """Render a ``bashExecution`` message as the text of the user message the LLM sees.

    ``Ran `cmd```, then the output in a fenced block (or ``(no output)``), then either
    ``(command cancelled)`` or ``Command exited with code N`` (only for a non-zero, non-null code),
    then the truncation notice when ``truncated`` and a ``fullOutputPath`` are both set.
    """
    if not isinstance(msg, Mapping):
        raise InvalidMessageError(f"bashExecution message must be an object, got {type(msg).__name__}")
    text = f"Ran `{_js_string(_get(msg, 'command'))}`\n"
    output = _get(msg, "output")
    if _truthy(output):
        text += f"```\n{_js_string(output)}\n```"
    else:
        text += "(no output)"
    exit_code = _get(msg, "exitCode")
    if _truthy(_get(msg, "cancelled")):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code is not UNDEFINED and not _is_js_zero(exit_code):
        text += f"\n\nCommand exited with code {_js_string(exit_code)}"
    full_output_path = _get(msg, "fullOutputPath")
    if _truthy(_get(msg, "truncated")) and _truthy(full_output_path):
        text += f"\n\n[Output truncated. Full output: {_js_string(full_output_path)}]"
    return text


def _is_js_zero(value: Any) -> bool:
    """``value === 0`` (true for 0 and -0, false for "0", false, null)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


def create_branch_summary_message(summary: Any, from_id: Any, timestamp: Any) -> BranchSummaryMessage:
    """``createBranchSummaryMessage(summary, fromId, timestamp)``: the ISO ``timestamp`` becomes ms.

    Pass ``UNDEFINED`` for a value that is missing; its key is then left out, as in Pi's JSON.
    """
    out: dict[str, Any] = {"role": "branchSummary"}
    _put(out, "summary", summary)
    _put(out, "fromId", from_id)
    out["timestamp"] = js_date_ms(timestamp)
    return cast(BranchSummaryMessage, out)


def create_compaction_summary_message(
    summary: Any, tokens_before: Any, timestamp: Any
) -> CompactionSummaryMessage:
    """``createCompactionSummaryMessage(summary, tokensBefore, timestamp)``: ISO ``timestamp`` -> ms."""
    out: dict[str, Any] = {"role": "compactionSummary"}
    _put(out, "summary", summary)
    _put(out, "tokensBefore", tokens_before)
    out["timestamp"] = js_date_ms(timestamp)
    return cast(CompactionSummaryMessage, out)


def create_custom_message(
    custom_type: Any, content: Any, display: Any, details: Any, timestamp: Any
) -> CustomMessage:
    """``createCustomMessage(customType, content, display, details, timestamp)``: ISO ``timestamp`` -> ms.

    ``details`` is usually ``UNDEFINED`` (then absent from the message, as in Pi's JSON).
    """
    out: dict[str, Any] = {"role": "custom"}
    _put(out, "customType", custom_type)
    _put(out, "content", content)
    _put(out, "display", display)
    _put(out, "details", details)
    out["timestamp"] = js_date_ms(timestamp)
    return cast(CustomMessage, out)


_LLM_ROLES = frozenset({"user", "assistant", "toolResult"})


def _user_text(text: str, src: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": text}]}
    _put(out, "timestamp", _get(src, "timestamp"))
    return out


def _convert_one(m: Any) -> dict[str, Any] | None:
    if type(m) is dict:  # the common case first: a plain dict of an LLM role
        role = m.get("role")
        if type(role) is str and role in _LLM_ROLES:
            return dict(m)  # Pi passes the object itself; a new top-level dict shares the nested values
    if m is None or m is UNDEFINED:
        raise InvalidMessageError("message is null (Pi fails reading its role)")
    if not isinstance(m, Mapping):
        return None  # m.role is undefined: dropped by the switch's default branch
    role = _get(m, "role")
    if role == "bashExecution":
        if _truthy(_get(m, "excludeFromContext")):
            return None
        return _user_text(bash_execution_to_text(m), m)
    if role == "custom":
        content = _get(m, "content")
        out: dict[str, Any] = {"role": "user"}
        _put(out, "content", [{"type": "text", "text": content}] if isinstance(content, str) else content)
        _put(out, "timestamp", _get(m, "timestamp"))
        return out
    if role == "branchSummary":
        return _user_text(BRANCH_SUMMARY_PREFIX + _js_string(_get(m, "summary")) + BRANCH_SUMMARY_SUFFIX, m)
    if role == "compactionSummary":
        return _user_text(
            COMPACTION_SUMMARY_PREFIX + _js_string(_get(m, "summary")) + COMPACTION_SUMMARY_SUFFIX, m
        )
    if role in ("user", "assistant", "toolResult"):
        return dict(m)  # Pi passes the object itself; a new top-level dict shares the same nested values
    return None


def _block_images(msg: dict[str, Any]) -> dict[str, Any]:
    """sdk.ts ``convertToLlmWithBlockImages`` for one converted message."""
    if msg.get("role") not in ("user", "toolResult"):
        return msg
    content = msg.get("content")
    if not isinstance(content, list):
        return msg
    for c in content:
        if c is None:
            raise InvalidMessageError("content block is null (Pi fails reading its type)")
    if not any(isinstance(c, Mapping) and c.get("type") == "image" for c in content):
        return msg
    mapped = [
        {"type": "text", "text": IMAGE_BLOCKED_TEXT}
        if isinstance(c, Mapping) and c.get("type") == "image"
        else c
        for c in content
    ]

    def is_placeholder(c: Any) -> bool:
        return isinstance(c, Mapping) and c.get("type") == "text" and c.get("text") == IMAGE_BLOCKED_TEXT

    # Pi's filter compares each block with its predecessor in the *mapped* array, so a run of any
    # length collapses to one placeholder, and a text block that already says the same is merged too.
    filtered = [
        c for i, c in enumerate(mapped) if not (is_placeholder(c) and i > 0 and is_placeholder(mapped[i - 1]))
    ]
    return {**msg, "content": filtered}


def convert_to_llm(messages: Iterable[Any], *, block_images: bool = False) -> list[Message]:
    """``convertToLlm(messages)``: turn agent messages into the messages a provider understands.

    * ``bashExecution`` -> a user text message (:func:`bash_execution_to_text`); dropped entirely
      when ``excludeFromContext`` (the ``!!`` commands).
    * ``custom`` -> a user message with the same content (a string becomes one text block).
    * ``branchSummary`` / ``compactionSummary`` -> a user text message wrapped in the
      ``BRANCH_SUMMARY_*`` / ``COMPACTION_SUMMARY_*`` prefix and suffix.
    * ``user`` / ``assistant`` / ``toolResult`` pass through (as new top-level dicts); the message
      ``timestamp`` is kept everywhere; any other role is dropped.

    ``block_images=True`` applies the ``images.blockImages`` setting the way the coding agent's
    wrapper does: in user and toolResult messages with array content, every image block becomes the
    text ``Image reading is disabled.`` and consecutive such texts collapse into one. (The block is
    applied after conversion, so custom messages with images are covered too.)

    Raises :class:`~pi_nb.errors.InvalidMessageError` for a ``null`` message.
    """
    out: list[Message] = []
    for m in messages:
        converted = _convert_one(m)
        if converted is None:
            continue
        if block_images:
            converted = _block_images(converted)
        out.append(cast(Message, converted))
    return out


def format_tool_call_args(args: object) -> str:
    """A tool call's arguments as Pi's summaries write them: ``key=value`` pairs joined by ``, ``
    (values as JSON), in JavaScript's ``Object.entries`` order. Shared by the compaction's
    serialisation and the offline model's summaries."""
    if isinstance(args, Mapping):
        # Object.entries order: array-index keys ascending first (JSON.parse builds objects so too)
        entries = js_key_order(dict(args))
    elif isinstance(args, list):
        entries = [(str(i), v) for i, v in enumerate(args)]
    elif isinstance(args, str):
        entries = [(str(i), ch) for i, ch in enumerate(args)]
    else:
        raise CompactionError(f"tool call arguments must be an object, got {args!r}")
    return ", ".join(f"{k}={js_stringify(v)}" for k, v in entries)
