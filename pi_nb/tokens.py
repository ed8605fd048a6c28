"""Token accounting: Pi's chars/4 estimate, Pi's usage maths, and exact tiktoken counts.

Three sources of token numbers, always kept apart (see docs/design: "Token accounting"):

``usage``
    What the provider reported on an assistant message. :func:`calculate_context_tokens` and
    :func:`get_last_assistant_usage` are Pi's ``calculateContextTokens`` / ``getLastAssistantUsage``.
``estimate``
    Pi's ``estimateTokens`` heuristic (:func:`estimate_tokens`): characters / 4, rounded **up**,
    per message. Pi uses it for everything after the last usable usage
    (:func:`estimate_context_tokens`), for cut points and for branch-summary budgets, so it must
    match Pi to the character: lengths are JavaScript ``.length`` (UTF-16 code units, so an emoji
    counts 2), an image block counts 4800 characters, and a tool call counts its name plus
    ``JSON.stringify(arguments)`` (compact, JavaScript number printing and escaping).
``tiktoken``
    Exact counts with OpenAI's ``o200k_base`` / ``cl100k_base`` (:func:`count_tokens`,
    :func:`count_message_tokens`). The encodings ship inside the package (``pi_nb/_data``), are
    checked against OpenAI's sha256 before use and are loaded lazily on the first count: counting
    never touches the network and ``import pi_nb`` stays cheap.

Where Pi throws (``null`` content, a tool call without ``arguments``) or computes ``NaN`` (a
usage without ``input``), these functions raise :class:`~pi_nb.errors.InvalidMessageError`; where
Pi returns a number for an odd input, they return the same number.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import math
import threading
import zlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Final, TypedDict, cast

from pi_nb._js import js_stringify, js_type_name
from pi_nb._js import utf16_len as _utf16_len
from pi_nb._wire import wire_dict
from pi_nb.errors import InvalidMessageError, TokenizerError
from pi_nb.messages import AgentMessage, Usage

if TYPE_CHECKING:
    import tiktoken

    from pi_nb.session.types import SessionEntry

__all__ = [
    "DEFAULT_ENCODING",
    "ENCODING_NAMES",
    "ESTIMATED_IMAGE_CHARS",
    "ContextTokenEstimate",
    "ContextTokenEstimateDict",
    "MessageTokenBreakdown",
    "MessageTokenBreakdownDict",
    "calculate_context_tokens",
    "count_message_tokens",
    "count_tokens",
    "estimate_context_tokens",
    "estimate_tokens",
    "get_encoding",
    "get_last_assistant_usage",
    "message_token_breakdown",
]

_count_lock = threading.Lock()  # guards the count caches below

ESTIMATED_IMAGE_CHARS: Final = 4800
"""Characters Pi's estimate charges for one image block (``ESTIMATED_IMAGE_CHARS``): 1200 tokens."""

DEFAULT_ENCODING: Final = "o200k_base"

# ---------------------------------------------------------------------------------------------
# Pi's heuristic: estimateTokens
# ---------------------------------------------------------------------------------------------

_utf16_cache: OrderedDict[tuple[int, int], int] = OrderedDict()


def _cached_utf16_len(s: str) -> int:
    """JavaScript ``.length``; a long non-ASCII text's length is kept under its length and hash,
    so estimating a session that holds a huge entry does not re-encode it on every turn."""
    if len(s) < 16_384 or s.isascii():
        return _utf16_len(s)
    key = (len(s), hash(s))
    with _count_lock:
        cached = _utf16_cache.get(key)
        if cached is not None:
            return cached
    n = _utf16_len(s)
    with _count_lock:
        _utf16_cache[key] = n
        while len(_utf16_cache) > 4096:
            _utf16_cache.popitem(last=False)
    return n


_js_type = js_type_name


def _require_str(value: object, what: str) -> str:
    if isinstance(value, str):
        return value
    raise InvalidMessageError(f"{what} must be a string, got {_js_type(value)}")


def _message_role(message: object) -> object:
    if not isinstance(message, Mapping):
        raise InvalidMessageError(f"a message must be a mapping with a 'role', got {_js_type(message)}")
    return message.get("role")


def _text_and_image_chars(content: object, role: str) -> int:
    """Pi's ``estimateTextAndImageContentChars`` (user, toolResult and custom content)."""
    if isinstance(content, str):
        return _cached_utf16_len(content)
    if not isinstance(content, (list, tuple)):
        raise InvalidMessageError(
            f"{role} message content must be a string or a list of content blocks, got {_js_type(content)}"
        )
    chars = 0
    for block in content:
        if not isinstance(block, Mapping):
            if block is None:
                raise InvalidMessageError(f"{role} message content contains null")
            continue  # Pi reads `.type` of a number or string: undefined, so it counts nothing
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            # Pi tests `block.text` for truthiness here (unlike in assistant messages), so a
            # missing or empty text is skipped rather than an error.
            if isinstance(text, str):
                chars += _cached_utf16_len(text)
            elif text is not None and text is not False and text != 0:
                raise InvalidMessageError(f"{role} text block 'text' must be a string, got {_js_type(text)}")
        elif kind == "image":
            chars += ESTIMATED_IMAGE_CHARS
    return chars


def _tool_call_arguments_json(block: Mapping[str, object]) -> str:
    if "arguments" not in block:
        # JSON.stringify(undefined) is undefined, and Pi then reads its .length: a TypeError
        raise InvalidMessageError("assistant toolCall block has no 'arguments'")
    try:
        return js_stringify(block["arguments"])
    except (TypeError, ValueError) as exc:
        raise InvalidMessageError(f"assistant toolCall 'arguments' are not JSON data: {exc}") from exc


def _assistant_chars(content: object) -> int:
    if isinstance(content, str):
        # `for (const block of "abc")` walks the characters; none has a `.type`, so Pi counts 0
        return 0
    if not isinstance(content, (list, tuple)):
        raise InvalidMessageError(
            f"assistant message content must be a list of blocks, got {_js_type(content)}"
        )
    chars = 0
    for block in content:
        if not isinstance(block, Mapping):
            if block is None:
                raise InvalidMessageError("assistant message content contains null")
            continue
        kind = block.get("type")
        if kind == "text":
            chars += _cached_utf16_len(_require_str(block.get("text"), "assistant text block 'text'"))
        elif kind == "thinking":
            chars += _cached_utf16_len(
                _require_str(block.get("thinking"), "assistant thinking block 'thinking'")
            )
        elif kind == "toolCall":
            name = _require_str(block.get("name"), "assistant toolCall 'name'")
            chars += _cached_utf16_len(name) + _cached_utf16_len(_tool_call_arguments_json(block))
    return chars


def estimate_tokens(message: AgentMessage) -> int:
    """Pi's ``estimateTokens``: ``ceil(chars / 4)`` for one agent message.

    ====================================  ==================================================
    role                                  characters counted (JavaScript ``.length``)
    ====================================  ==================================================
    ``user``, ``toolResult``, ``custom``  string content, or text blocks + 4800 per image
    ``assistant``                         text + thinking + per tool call ``name`` and
                                          ``JSON.stringify(arguments)``
    ``bashExecution``                     ``command`` + ``output``
    ``branchSummary``,                    ``summary``
    ``compactionSummary``
    anything else                         0
    ====================================  ==================================================

    Lengths are UTF-16 code units (``"😀"`` counts 2) and each message is rounded up on its own,
    so ``"plain user"`` (10 characters) is 3 tokens. Only the key *order* of ``JSON.stringify`` is
    irrelevant here (it does not change the length); number printing and escaping are not
    (``1.0`` prints as ``1``, ``1e21`` as ``1e+21``, a lone surrogate as ``\\udXXX``).

    Raises:
        InvalidMessageError: where Pi would throw or produce ``NaN`` (``null`` content, a text
            block whose ``text`` is not a string, a tool call without ``arguments`` ...).
    """
    role = _message_role(message)
    raw: Mapping[str, object] = message  # read as Pi does: a message from a file may be malformed
    if role == "user" or role == "toolResult" or role == "custom":
        if "content" not in raw:
            raise InvalidMessageError(f"{role} message has no 'content'")
        chars = _text_and_image_chars(raw["content"], role)
    elif role == "assistant":
        if "content" not in raw:
            raise InvalidMessageError("assistant message has no 'content'")
        chars = _assistant_chars(raw["content"])
    elif role == "bashExecution":
        chars = _cached_utf16_len(
            _require_str(raw.get("command"), "bashExecution 'command'")
        ) + _cached_utf16_len(_require_str(raw.get("output"), "bashExecution 'output'"))
    elif role == "branchSummary" or role == "compactionSummary":
        chars = _cached_utf16_len(_require_str(raw.get("summary"), f"{role} 'summary'"))
    else:
        return 0
    return -(-chars // 4)


# ---------------------------------------------------------------------------------------------
# Pi's usage maths: calculateContextTokens, getLastAssistantUsage, estimateContextTokens
# ---------------------------------------------------------------------------------------------

_USAGE_PARTS: Final = ("input", "output", "cacheRead", "cacheWrite")


def _usage_number(usage: Mapping[str, object], key: str) -> int | float:
    value = usage[key]
    if value is None:
        return 0  # JavaScript arithmetic: 1 + null === 1
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidMessageError(f"usage '{key}' must be a number, got {_js_type(value)}")
    return value


def _context_tokens(usage: object) -> int | float | None:
    """``calculateContextTokens`` with JavaScript semantics; ``None`` where Pi gets ``NaN``."""
    if not isinstance(usage, Mapping):
        return None  # (5).totalTokens is undefined, and undefined + undefined is NaN
    total = usage.get("totalTokens")
    if total is not None:
        if isinstance(total, bool) or not isinstance(total, (int, float)):
            raise InvalidMessageError(f"usage 'totalTokens' must be a number, got {_js_type(total)}")
        if total and not math.isnan(total):
            return total  # `usage.totalTokens || ...`: any non-zero total wins, even a negative one
    if any(key not in usage for key in _USAGE_PARTS):
        return None
    parts = sum(_usage_number(usage, key) for key in _USAGE_PARTS)
    return None if isinstance(parts, float) and math.isnan(parts) else parts


def _as_token_count(value: int | float, what: str) -> int:
    if isinstance(value, int):
        return value
    if math.isfinite(value) and value.is_integer():
        return int(value)
    raise InvalidMessageError(f"{what} is not a whole number of tokens: {value!r}")


def calculate_context_tokens(usage: Usage) -> int:
    """Pi's ``calculateContextTokens``: ``totalTokens`` if non-zero, else the sum of the parts.

    The parts are ``input + output + cacheRead + cacheWrite``; a ``null`` part counts 0 (as in
    JavaScript arithmetic). A usage with neither a non-zero ``totalTokens`` nor all four parts is
    ``NaN`` in Pi and raises :class:`~pi_nb.errors.InvalidMessageError` here; so does a count that
    is not a whole number.
    """
    return checked_context_tokens(usage)


def checked_context_tokens(usage: object) -> int:
    """:func:`calculate_context_tokens` of a usage read from a file, not yet known to be one."""
    if not isinstance(usage, Mapping):
        raise InvalidMessageError(f"usage must be a mapping, got {_js_type(usage)}")
    value = _context_tokens(usage)
    if value is None:
        missing = [key for key in _USAGE_PARTS if key not in usage]
        raise InvalidMessageError(
            "usage has no non-zero 'totalTokens' and is missing " + ", ".join(repr(k) for k in missing)
            if missing
            else "usage adds up to NaN"
        )
    return _as_token_count(value, "usage")




def _assistant_usage(message: object) -> Mapping[str, object] | None:
    """Pi's private ``getAssistantUsage``: the usage of a successful assistant message, if any.

    Aborted and errored responses and all-zero usages do not count: their numbers do not
    describe the context that was sent.
    """
    if not isinstance(message, Mapping):
        raise InvalidMessageError(f"a message must be a mapping, got {_js_type(message)}")
    if message.get("role") != "assistant" or "usage" not in message:
        return None
    if message.get("stopReason") in ("aborted", "error"):
        return None
    usage = message["usage"]
    if not usage:
        return None
    tokens = _context_tokens(usage)
    if tokens is None or not tokens > 0:
        return None
    assert isinstance(usage, Mapping)  # _context_tokens returns None for anything else
    return usage


def get_last_assistant_usage(entries: Sequence[SessionEntry]) -> Usage | None:
    """Pi's ``getLastAssistantUsage``: the newest usable assistant usage among session entries.

    Scans ``message`` entries from the end; returns that usage object itself (a copy only if it
    is some other kind of mapping), or ``None`` (Pi: ``undefined``) when there is none.
    """
    for i in range(len(entries) - 1, -1, -1):
        entry = entries[i]
        if not isinstance(entry, Mapping):
            raise InvalidMessageError(f"session entry {i} must be a mapping, got {_js_type(entry)}")
        raw: Mapping[str, object] = entry  # read tolerantly: an entry from a file may be malformed
        if raw.get("type") == "message":
            if "message" not in raw:
                raise InvalidMessageError(f"message entry {i} has no 'message'")
            usage = _assistant_usage(raw["message"])
            if usage is not None:
                # checked by _assistant_usage: a usage whose context tokens are a positive number
                return cast(Usage, usage if isinstance(usage, dict) else dict(usage))
    return None


class ContextTokenEstimateDict(TypedDict):
    """:meth:`ContextTokenEstimate.to_dict`: ``{tokens, usageTokens, trailingTokens, lastUsageIndex}``."""

    tokens: int
    usageTokens: int
    trailingTokens: int
    lastUsageIndex: int | None


@dataclass(frozen=True)
class ContextTokenEstimate:
    """Pi's ``estimateContextTokens`` result: measured usage plus the estimate of what follows.

    ``tokens = usage_tokens + trailing_tokens``. ``last_usage_index`` is the index of the message
    whose usage was taken, or ``None`` when no message had a usable usage (then every message
    is estimated and ``usage_tokens`` is 0).
    """

    tokens: int
    usage_tokens: int
    trailing_tokens: int
    last_usage_index: int | None

    def to_dict(self) -> ContextTokenEstimateDict:
        return cast(ContextTokenEstimateDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


def estimate_context_tokens(messages: Sequence[AgentMessage]) -> ContextTokenEstimate:
    """Pi's (coding agent's) ``estimateContextTokens``: last usable usage + estimates after it.

    Takes the last message with a usable assistant usage (not aborted/error, non-zero), counts
    its ``calculate_context_tokens`` and adds :func:`estimate_tokens` of every later message.
    Without such a message, all messages are estimated. (pi-ai has a different, timestamp-based
    estimator of the same name; Pi's compaction does not use it.)
    """
    for index in range(len(messages) - 1, -1, -1):
        usage = _assistant_usage(messages[index])
        if usage is not None:
            usage_tokens = checked_context_tokens(usage)
            trailing = sum(estimate_tokens(m) for m in messages[index + 1 :])
            return ContextTokenEstimate(usage_tokens + trailing, usage_tokens, trailing, index)
    estimated = sum(estimate_tokens(m) for m in messages)
    return ContextTokenEstimate(estimated, 0, estimated, None)


# ---------------------------------------------------------------------------------------------
# Exact counts: the bundled tiktoken encodings
# ---------------------------------------------------------------------------------------------

_ENDOFTEXT = "<|endoftext|>"
_FIM_PREFIX = "<|fim_prefix|>"
_FIM_MIDDLE = "<|fim_middle|>"
_FIM_SUFFIX = "<|fim_suffix|>"
_ENDOFPROMPT = "<|endofprompt|>"


@dataclass(frozen=True)
class _EncodingSpec:
    """What ``tiktoken_ext.openai_public`` defines for an encoding (tiktoken 0.14)."""

    file: str
    sha256: str  # of the decompressed .tiktoken file: OpenAI's `expected_hash`
    pat_str: str
    special_tokens: Mapping[str, int]


# Copied from tiktoken_ext/openai_public.py (tiktoken 0.14); tests/test_tokens_encodings.py
# checks them against the installed tiktoken's own definitions.
_SPECS: Final[Mapping[str, _EncodingSpec]] = {
    "o200k_base": _EncodingSpec(
        file="o200k_base.tiktoken.gz",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str="|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        special_tokens={_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    ),
    "cl100k_base": _EncodingSpec(
        file="cl100k_base.tiktoken.gz",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",
        special_tokens={
            _ENDOFTEXT: 100257,
            _FIM_PREFIX: 100258,
            _FIM_MIDDLE: 100259,
            _FIM_SUFFIX: 100260,
            _ENDOFPROMPT: 100276,
        },
    ),
}

ENCODING_NAMES: Final[tuple[str, ...]] = tuple(sorted(_SPECS))
"""The encodings that ship with pi_nb: ``("cl100k_base", "o200k_base")``."""

_cache: dict[str, tiktoken.Encoding] = {}
_cache_lock = threading.Lock()


def _read_ranks(name: str, data: bytes, spec: _EncodingSpec, source: str) -> dict[bytes, int]:
    """Decompress, check the sha256 of the raw ``.tiktoken`` text, parse ``base64 rank`` lines."""
    try:
        raw = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise TokenizerError(f"bundled encoding {name!r} ({source}) is not valid gzip data: {exc}") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec.sha256:
        raise TokenizerError(
            f"bundled encoding {name!r} ({source}) fails its sha256 check: expected {spec.sha256}, "
            f"got {digest}; reinstall pi_nb"
        )
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(raw.splitlines(), 1):
        if not line:
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError as exc:  # binascii.Error is a ValueError
            raise TokenizerError(f"bundled encoding {name!r}: line {number} is not 'base64 rank'") from exc
    return ranks


def _build_encoding(name: str, data: bytes, source: str) -> tiktoken.Encoding:
    import tiktoken  # the Rust extension loads on the first count, not at `import pi_nb`

    spec = _SPECS[name]
    ranks = _read_ranks(name, data, spec, source)
    return tiktoken.Encoding(
        name, pat_str=spec.pat_str, mergeable_ranks=ranks, special_tokens=dict(spec.special_tokens)
    )


def _read_bundled(name: str) -> tuple[bytes, str]:
    resource = resources.files("pi_nb").joinpath("_data").joinpath(_SPECS[name].file)
    try:
        return resource.read_bytes(), str(resource)
    except OSError as exc:
        raise TokenizerError(
            f"bundled encoding {name!r} is missing: cannot read {resource} ({exc.strerror or exc}); "
            "reinstall pi_nb"
        ) from exc


def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """The ``tiktoken.Encoding`` for ``o200k_base`` or ``cl100k_base``, built from pi_nb's own files.

    Never downloads: tiktoken's ``get_encoding`` would fetch the rank file from OpenAI (or a cache
    directory); this builds the encoding from ``pi_nb/_data/{name}.tiktoken.gz`` after checking the
    sha256 of the decompressed file against OpenAI's published hash, with the ``pat_str`` and
    special tokens of ``tiktoken_ext.openai_public``. Built once per process (thread-safe) and
    cached; the first call takes about half a second.

    Raises:
        TokenizerError: an unknown name, or a bundled file that is missing, unreadable or fails
            its sha256 check.
    """
    enc = _cache.get(name)
    if enc is not None:
        return enc
    if name not in _SPECS:
        raise TokenizerError(f"unknown encoding {name!r}; bundled encodings: {', '.join(ENCODING_NAMES)}")
    with _cache_lock:
        enc = _cache.get(name)
        if enc is None:
            data, source = _read_bundled(name)
            enc = _build_encoding(name, data, source)
            _cache[name] = enc
    return enc


def count_tokens(text: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Exact number of tokens of ``text`` in ``encoding`` (``o200k_base`` or ``cl100k_base``).

    Special-token strings such as ``<|endoftext|>`` are counted as ordinary text, which is what a
    chat API does with user-supplied text. Lone surrogates count as U+FFFD (tiktoken's rule, and
    what ``Buffer.from`` sends in Pi).
    """
    if not isinstance(text, str):
        raise TypeError(f"count_tokens() needs a str, got {type(text).__name__}")
    enc = get_encoding(encoding)
    if not text:
        return 0
    if len(text) < _CACHE_MIN_CHARS:
        return len(enc.encode_ordinary(text))
    # a long text (a big tool result) is counted once per process: its count is kept under its
    # length and hash (CPython caches a str's hash, so a repeated lookup costs nothing)
    key = (encoding, len(text), hash(text))
    with _count_lock:
        cached = _count_cache.get(key)
        if cached is not None:
            _count_cache.move_to_end(key)
            return cached
    count = len(enc.encode_ordinary(text))
    with _count_lock:
        _count_cache[key] = count
        while len(_count_cache) > _CACHE_ENTRIES:
            _count_cache.popitem(last=False)
    return count


_CACHE_MIN_CHARS: Final = 16_384
"""Texts at least this long have their counts cached (see :func:`count_tokens`)."""
_CACHE_ENTRIES: Final = 4096
_count_cache: OrderedDict[tuple[str, int, int], int] = OrderedDict()


class MessageTokenBreakdownDict(TypedDict):
    """:meth:`MessageTokenBreakdown.to_dict`: ``{encoding, text, thinking, toolCalls, images, total}``."""

    encoding: str
    text: int
    thinking: int
    toolCalls: int
    images: int
    total: int


@dataclass(frozen=True)
class MessageTokenBreakdown:
    """Exact tokens of one message, by part (see :func:`message_token_breakdown`).

    ``images`` is a *number of image blocks*, not tokens: how a provider charges for an image
    depends on the provider and the image size, so images are reported but counted as 0 tokens.
    """

    encoding: str
    text: int = 0
    thinking: int = 0
    tool_calls: int = 0
    images: int = 0

    @property
    def total(self) -> int:
        """Text + thinking + tool-call tokens (images excluded)."""
        return self.text + self.thinking + self.tool_calls

    def to_dict(self) -> MessageTokenBreakdownDict:
        return {
            "encoding": self.encoding,
            "text": self.text,
            "thinking": self.thinking,
            "toolCalls": self.tool_calls,
            "images": self.images,
            "total": self.total,
        }


def _content_text_and_images(content: object, role: str, encoding: str) -> tuple[int, int]:
    if isinstance(content, str):
        return count_tokens(content, encoding), 0
    if not isinstance(content, (list, tuple)):
        raise InvalidMessageError(
            f"{role} message content must be a string or a list of content blocks, got {_js_type(content)}"
        )
    text_tokens = images = 0
    for block in content:
        if not isinstance(block, Mapping):
            raise InvalidMessageError(
                f"{role} message content block must be a mapping, got {_js_type(block)}"
            )
        kind = block.get("type")
        if kind == "text":
            text = block.get("text")
            if isinstance(text, str):
                text_tokens += count_tokens(text, encoding)
            elif text is not None:
                raise InvalidMessageError(f"{role} text block 'text' must be a string, got {_js_type(text)}")
        elif kind == "image":
            images += 1
    return text_tokens, images


def message_token_breakdown(message: AgentMessage, encoding: str = DEFAULT_ENCODING) -> MessageTokenBreakdown:
    """Exact tokens of the text the model sees for one agent message, by part.

    What is counted (each piece tokenized on its own, then summed; no per-message chat-format
    overhead, which differs between providers):

    * ``user`` / ``toolResult``: string content, or each text block (``text``); image blocks are
      counted in ``images`` and cost 0 tokens.
    * ``assistant``: text blocks (``text``), thinking blocks (``thinking``), and for each tool
      call its name plus ``JSON.stringify(arguments)`` (``tool_calls``), the same JSON Pi's
      estimate measures.
    * ``bashExecution``, ``custom``, ``branchSummary``, ``compactionSummary``: the user message
      :func:`pi_nb.messages.convert_to_llm` renders for them (``text``/``images``), so a
      summary includes its ``<summary>`` wrapper and a ``!!`` command excluded from context
      counts 0.
    * any other role: nothing (``convert_to_llm`` drops it).
    """
    role = _message_role(message)
    raw: Mapping[str, object] = message  # read tolerantly: a message from a file may be malformed
    if role == "user" or role == "toolResult":
        if "content" not in raw:
            raise InvalidMessageError(f"{role} message has no 'content'")
        text_tokens, images = _content_text_and_images(raw["content"], str(role), encoding)
        return MessageTokenBreakdown(encoding, text=text_tokens, images=images)
    if role == "assistant":
        content = raw.get("content")
        if isinstance(content, str):
            # Pi reads an assistant's content as blocks: `for (const block of "abc")` walks the
            # characters, none has a `.type`, nothing is counted (as in the estimate above)
            return MessageTokenBreakdown(encoding)
        if not isinstance(content, (list, tuple)):
            raise InvalidMessageError(
                f"assistant message content must be a list of blocks, got {_js_type(content)}"
            )
        text_tokens = thinking = tool_calls = 0
        for block in content:
            if not isinstance(block, Mapping):
                raise InvalidMessageError(f"assistant content block must be a mapping, got {_js_type(block)}")
            kind = block.get("type")
            if kind == "text":
                text_tokens += count_tokens(
                    _require_str(block.get("text"), "assistant text block 'text'"), encoding
                )
            elif kind == "thinking":
                thinking += count_tokens(
                    _require_str(block.get("thinking"), "assistant thinking block 'thinking'"), encoding
                )
            elif kind == "toolCall":
                name = _require_str(block.get("name"), "assistant toolCall 'name'")
                tool_calls += count_tokens(name, encoding) + count_tokens(
                    _tool_call_arguments_json(block), encoding
                )
        return MessageTokenBreakdown(encoding, text=text_tokens, thinking=thinking, tool_calls=tool_calls)
    if role in ("bashExecution", "custom", "branchSummary", "compactionSummary"):
        from pi_nb.messages import convert_to_llm

        text_tokens = images = 0
        for rendered in convert_to_llm([message]):
            t, i = _content_text_and_images(rendered["content"], str(role), encoding)
            text_tokens += t
            images += i
        return MessageTokenBreakdown(encoding, text=text_tokens, images=images)
    get_encoding(encoding)  # an unknown encoding is an error whatever the role
    return MessageTokenBreakdown(encoding)


def count_message_tokens(message: AgentMessage, encoding: str = DEFAULT_ENCODING) -> int:
    """Exact tokens of one agent message: ``message_token_breakdown(message, encoding).total``.

    Images count 0 (see :class:`MessageTokenBreakdown`); use :func:`estimate_tokens` for Pi's own
    heuristic, which charges 1200 tokens per image.
    """
    return message_token_breakdown(message, encoding).total
