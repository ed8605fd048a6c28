"""YAML frontmatter of skills and prompt templates (Pi's ``utils/frontmatter.ts``).

Pi strips a BOM, normalises ``\\r\\n`` and ``\\r`` to ``\\n``, and treats the text as having
frontmatter only when it starts with ``---`` *and* a later ``"\\n---"`` exists (searched from index
3). The YAML is the text from index 4 up to that marker; the body is everything after the four
characters ``\\n---`` (so the rest of the closing line belongs to the body) with JavaScript's
``trim()`` applied. Without frontmatter the body is the whole normalised text, *not* trimmed.

YAML: Pi parses with the JavaScript ``yaml`` library (2.x, YAML 1.2 core schema). PyYAML implements
YAML 1.1, which differs in ways that matter for skills (``yes``/``no``/``on``/``off`` are booleans,
``2024-01-01`` is a date, ``012`` is octal 10, ``1_000`` is 1000, ``<<`` merges, duplicate keys
silently overwrite). So this module only uses PyYAML's *parser and composer* (a real, maintained
YAML parser) and turns the node graph into values itself, following the ``yaml`` library:

* plain scalars resolve with the 1.2 core schema: ``null``/``Null``/``NULL``/``~``/empty -> ``None``;
  ``true``/``True``/``TRUE``/``false``/... -> bool; ``[-+]?[0-9]+``, ``0o17``, ``0x1F`` -> int;
  ``1.5``, ``1e3``, ``.inf``, ``.nan`` -> float; *everything else is a string* (dates, ``yes``,
  ``1_000``, ``1:30``, ``=``);
* integers beyond 2**53 become floats (JavaScript numbers are doubles);
* explicit core tags only apply when the text matches the tag's test (``!!int '7'`` -> 7, but
  ``!!float 1`` stays the string ``"1"``, as in the ``yaml`` library); ``!!binary`` -> bytes,
  ``!!timestamp`` -> an aware ``datetime``, ``!!set`` -> list, ``!!omap`` -> dict; unknown tags (``!custom x``) are ignored (the ``yaml`` library only warns);
* mapping keys become strings as in a JavaScript object: ``1`` -> ``"1"``, ``true`` -> ``"true"``,
  ``null`` -> ``""``; collection keys become a YAML flow string (``"[ a, b ]"``; an approximation of
  the library's stringifier); array-index keys (``"0"``, ``"12"``) come first, as JS orders them;
* duplicate keys are an error (``Map keys must be unique``), ``<<`` is an ordinary key, anchors may
  be redefined, aliases share one object, and the ``yaml`` library's alias-expansion limit (100) is
  enforced.

The parser itself is PyYAML's with a few YAML 1.2 / JS-library rules patched in: tabs are white
space between tokens (``key:\tvalue``, ``a\tb``) but not indentation (``Tabs are not allowed as
indentation``); an empty key (``: value``) is allowed; a stream of just ``...`` is empty; a comment
needs white space before it (``"x"#c`` is an error); quoted scalars and flow collections continued
on another line must be indented more than the enclosing block (a closing bracket may sit at its
column); control characters, U+0085, U+2028, U+2029, lone surrogates are ordinary characters; a
block scalar at the end of the frontmatter keeps its final newline (``|`` -> ``"text\n"``).

Speed: where libyaml is available (PyYAML's ``CParser``, in PyYAML's wheels) and the text has none of
the constructs the patches above change (tabs, glued comments, multi-line quoted or flow content,
unusual tags, directives, special characters...), libyaml composes the node graph and the same
converter builds the values, about 7x faster; any doubt or error goes to the exact parser, so values
and messages do not depend on it (tests/test_frontmatter_fast.py compares both on generated YAML).

Parse errors raise :class:`pi_nb.errors.FrontmatterError`; the message names the line and column
(``... at line 2, column 14``, relative to the first YAML line) but its wording is PyYAML's, not the
JS library's.

Known differences left (found by fuzzing both parsers with token soup; none seen in realistic
frontmatter): a top-level block scalar whose lines start at column 0 (``---\n|\ntext``: Pi reads
it, pi_nb refuses), ``? key`` followed by a ``- item`` line at column 0 (Pi drops the item),
a tab right after ``- ``/``? ``/``: `` before a tag, anchor or nested block collection (Pi refuses),
and the text of collection-valued keys.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import math
import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml.events import AliasEvent, ScalarEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pi_nb._js import is_array_index as _is_array_index
from pi_nb._js import js_number_to_string, js_trim
from pi_nb.errors import FrontmatterError
from pi_nb.resources.paths import strip_bom

__all__ = ["parse_frontmatter", "strip_frontmatter"]


def _normalize_newlines(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n")


def _extract_frontmatter(content: str) -> tuple[str | None, str]:
    normalized = _normalize_newlines(strip_bom(content))
    if not normalized.startswith("---"):
        return None, normalized
    end_index = normalized.find("\n---", 3)
    if end_index == -1:
        return None, normalized
    return normalized[4:end_index], js_trim(normalized[end_index + 4 :])


def parse_frontmatter(content: str) -> tuple[Any, str]:
    """Split ``content`` into (frontmatter, body) exactly as Pi's ``parseFrontmatter``.

    The frontmatter is normally a ``dict``, but like Pi it is whatever the YAML document holds: a
    list, a string or ``False`` stay as they are; only an empty document (or ``null``) gives
    ``{}``. Callers that need a mapping look keys up only when it is a ``dict`` (Pi's
    ``frontmatter.description`` on a string is simply ``undefined``).

    Raises :class:`~pi_nb.errors.FrontmatterError` when the YAML does not parse (Pi lets the
    ``yaml`` library's error propagate).
    """
    yaml_string, body = _extract_frontmatter(content)
    if not yaml_string:
        return {}, body
    parsed = _parse_simple(yaml_string)
    if parsed is None:
        parsed = _parse_yaml(yaml_string)
    return ({} if parsed is None else parsed), body


# The common frontmatter of a skill or a prompt template is a few ``key: words`` lines. Those are
# read here directly, about 20x faster than the full parser; anything else (quotes, colons, '#',
# indentation, flow or block collections, block scalars, non-ASCII, a value YAML would read as a
# boolean or null, a repeated key) goes to the exact parser below. What the shortcut accepts is
# exactly what the full parser gives for it (tests/test_frontmatter.py checks both on random input).
_SIMPLE_LINE = re.compile(
    r"([A-Za-z_][A-Za-z0-9_-]*): ([A-Za-z](?:[A-Za-z0-9 .,;()/_'-]*[A-Za-z0-9.,;()/_'-])?)"
)
_NOT_STRINGS = frozenset({"true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL"})


def _parse_simple(text: str) -> dict[str, str] | None:
    """``key: plain words`` lines only (blank lines allowed): their mapping; else ``None``."""
    out: dict[str, str] = {}
    match = _SIMPLE_LINE.fullmatch
    for line in text.split("\n"):
        if not line:
            continue
        m = match(line)
        if m is None:
            return None
        key, value = m.groups()
        if key in out or value in _NOT_STRINGS or key in _NOT_STRINGS:
            return None
        out[key] = value
    return out or None


def strip_frontmatter(content: str) -> str:
    """The body of ``content`` (Pi's ``stripFrontmatter``: ``parseFrontmatter(content).body``).

    It parses the YAML too, so invalid frontmatter raises :class:`~pi_nb.errors.FrontmatterError`
    here as well, like Pi.
    """
    return parse_frontmatter(content)[1]


# ---------------------------------------------------------------------------------------------
# YAML: PyYAML parser/composer, JS `yaml` 2.x (core schema) value semantics
# ---------------------------------------------------------------------------------------------

_PLAIN_TAG = "!pi_nb:plain"  # an untagged plain scalar: resolved below with the core schema
_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_BINARY = "tag:yaml.org,2002:binary"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_SET = "tag:yaml.org,2002:set"
_OMAP = "tag:yaml.org,2002:omap"

_MAX_ALIAS_COUNT = 100  # the yaml library's default `maxAliasCount`
_MAX_SAFE_INTEGER = 2**53


class _AliasRef:
    """An alias occurrence in the composed graph (PyYAML returns the anchored node itself)."""

    __slots__ = ("mark", "target")

    def __init__(self, target: Node, mark: Any) -> None:
        self.target = target
        self.mark = mark


class _Loader(yaml.SafeLoader):
    """PyYAML's parser with a composer that keeps alias positions and allows anchor redefinition.

    Only parsing and composing are used; values are built by :class:`_Converter`.
    """

    # every untagged plain scalar gets _PLAIN_TAG; the core schema is applied in _Converter
    yaml_implicit_resolvers: dict[Any, list[tuple[str, re.Pattern[str]]]] = {  # noqa: RUF012
        None: [(_PLAIN_TAG, re.compile(r"(?s).*"))]
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.pi_anchored: set[int] = set()  # ids of anchored nodes

    # --- tabs: YAML 1.2 (and the JS library) allow tabs as separating white space; PyYAML only
    # accepts spaces there ("found character '\t' that cannot start any token"). Tabs are still
    # refused as *indentation* of block content, with the library's message.

    def _check_tab_indent(self, line_start: int, continuation: bool) -> None:
        # A tab in the leading white space of a line, at or left of the block's indentation
        # (a continuation line of a top-level plain scalar may start with one; a node may not).
        if self.flow_level:
            return
        ws = self.buffer[line_start : self.pointer]
        tab_col = ws.find("\t")
        if tab_col == -1 or self.peek() in "\0\r\n#":
            return
        if tab_col <= (self.indent if continuation else max(self.indent, 0)):
            raise yaml.scanner.ScannerError(
                None, None, "Tabs are not allowed as indentation", self.get_mark()
            )

    # --- flow content (quoted scalars, [..], {..}) continued on a new line inside a block collection
    # must be indented more than that block (a closing bracket may sit at its column); PyYAML does
    # not check this, the JS library refuses such text.

    def _check_flow_indent(self, line_start: int, what: str) -> None:
        ch = self.peek()
        if ch in "\0\r\n#" or self.indent < 0:
            return
        spaces = 0
        while self.buffer[line_start + spaces] == " ":
            spaces += 1
        if spaces > self.indent or (ch in "]}" and what != "quoted" and spaces >= self.indent):
            return
        message = (
            "Missing closing quote: continuation lines must be indented more than the block"
            if what == "quoted"
            else "Flow collection in block collection must be sufficiently indented"
        )
        raise yaml.scanner.ScannerError(None, None, message, self.get_mark())

    def scan_flow_scalar_breaks(self, double: bool, start_mark: Any) -> list[str]:
        chunks: list[str] = []
        while True:
            prefix = self.prefix(3)
            if (prefix == "---" or prefix == "...") and self.peek(3) in "\0 \t\r\n":
                raise yaml.scanner.ScannerError(
                    "while scanning a quoted scalar",
                    start_mark,
                    "found unexpected document separator",
                    self.get_mark(),
                )
            line_start = self.pointer
            while self.peek() in " \t":
                self.forward()
            if self.peek() in "\r\n":
                chunks.append(self.scan_line_break())  # type: ignore[no-untyped-call]
            else:
                self._check_flow_indent(line_start, "quoted")
                return chunks

    def scan_to_next_token(self) -> None:
        if self.index == 0 and self.peek() == "\ufeff":
            self.forward()
        found = False
        line_start = self.pointer if self.column == 0 else -1
        while not found:
            while self.peek() in " \t":
                self.forward()
            if line_start != -1:
                self._check_tab_indent(line_start, continuation=False)
                if self.flow_level:
                    self._check_flow_indent(line_start, "flow")
            if self.peek() == "#":
                if self.pointer > 0 and self.buffer[self.pointer - 1] not in " \t\r\n\ufeff":
                    raise yaml.scanner.ScannerError(
                        None,
                        None,
                        "Comments must be separated from other tokens by white space characters",
                        self.get_mark(),
                    )
                while self.peek() not in "\0\r\n":
                    self.forward()
            if self.scan_line_break():  # type: ignore[no-untyped-call]
                if not self.flow_level:
                    self.allow_simple_key = True
                line_start = self.pointer
            else:
                found = True

    def scan_plain_spaces(self, indent: int, start_mark: Any) -> list[str] | None:
        chunks: list[str] = []
        length = 0
        while self.peek(length) in " \t":
            length += 1
        whitespaces = self.prefix(length)
        self.forward(length)
        ch = self.peek()
        if ch in "\r\n":
            line_break = self.scan_line_break()  # type: ignore[no-untyped-call]
            self.allow_simple_key = True
            prefix = self.prefix(3)
            if (prefix == "---" or prefix == "...") and self.peek(3) in "\0 \t\r\n":
                return None
            breaks: list[str] = []
            line_start = self.pointer
            while self.peek() in " \t\r\n":
                if self.peek() in " \t":
                    self.forward()
                else:
                    breaks.append(self.scan_line_break())  # type: ignore[no-untyped-call]
                    line_start = self.pointer
                    prefix = self.prefix(3)
                    if (prefix == "---" or prefix == "...") and self.peek(3) in "\0 \t\r\n":
                        return None
            self._check_tab_indent(line_start, continuation=True)
            if self.flow_level:
                self._check_flow_indent(line_start, "flow")
            if line_break != "\n":
                chunks.append(line_break)
            elif not breaks:
                chunks.append(" ")
            chunks.extend(breaks)
        elif whitespaces:
            chunks.append(whitespaces)
        return chunks

    def scan_block_scalar_indicators(self, start_mark: Any) -> tuple[bool | None, int | None]:
        # `|`/`>` header: chomping (+/-) and indentation (1-9) indicators, then white space
        # (a tab too) or the end of the line
        chomping: bool | None = None
        increment: int | None = None
        for _ in range(2):
            ch = self.peek()
            if ch in "+-" and chomping is None:
                chomping = ch == "+"
                self.forward()
            elif ch in "0123456789" and increment is None:
                if ch == "0":
                    raise yaml.scanner.ScannerError(
                        "while scanning a block scalar",
                        start_mark,
                        "expected indentation indicator in the range 1-9, but found 0",
                        self.get_mark(),
                    )
                increment = int(ch)
                self.forward()
        ch = self.peek()
        if ch not in "\0 \t\r\n":
            raise yaml.scanner.ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected chomping or indentation indicators, but found {ch!r}",
                self.get_mark(),
            )
        return chomping, increment

    def scan_block_scalar_ignored_line(self, start_mark: Any) -> None:
        # the rest of a `|`/`>` header line: white space (tabs too), a comment, the line break
        while self.peek() in " \t":
            self.forward()
        if self.peek() == "#":
            while self.peek() not in "\0\r\n":
                self.forward()
        ch = self.peek()
        if ch not in "\0\r\n":
            raise yaml.scanner.ScannerError(
                "while scanning a block scalar",
                start_mark,
                f"expected a comment or a line break, but found {ch!r}",
                self.get_mark(),
            )
        self.scan_line_break()  # type: ignore[no-untyped-call]

    # --- a stream holding only a document-end marker (`...`) is an empty document.

    def parse_implicit_document_start(self) -> Any:
        if self.check_token(yaml.tokens.DocumentEndToken):
            return self.parse_document_start()  # type: ignore[no-untyped-call]
        return super().parse_implicit_document_start()  # type: ignore[no-untyped-call]

    # --- an empty implicit key (`: value`) is valid YAML 1.2; PyYAML's block parser refuses it.

    def parse_block_mapping_key(self) -> Any:
        if self.check_token(yaml.tokens.ValueToken):
            self.state = self._parse_empty_key_value
            return self.process_empty_scalar(self.peek_token().start_mark)  # type: ignore[no-untyped-call]
        return super().parse_block_mapping_key()  # type: ignore[no-untyped-call]

    def _parse_empty_key_value(self) -> Any:
        # parse_block_mapping_value for an empty key; like the JS library, a block collection may
        # not start on the same line (`: a: b`, `: - x`)
        token = self.get_token()  # type: ignore[no-untyped-call]
        t = yaml.tokens
        if self.check_token(t.BlockMappingStartToken, t.BlockSequenceStartToken, t.BlockEntryToken):
            nxt = self.peek_token()  # type: ignore[no-untyped-call]
            if nxt.start_mark.line == token.start_mark.line:
                raise yaml.parser.ParserError(
                    None, None, "Nested mappings are not allowed in compact mappings", nxt.start_mark
                )
        if not self.check_token(t.KeyToken, t.ValueToken, t.BlockEndToken):
            self.states.append(self.parse_block_mapping_key)
            return self.parse_block_node_or_indentless_sequence()  # type: ignore[no-untyped-call]
        self.state = self.parse_block_mapping_key
        return self.process_empty_scalar(token.end_mark)

    def compose_node(self, parent: Node | None, index: Any) -> Any:
        if self.check_event(AliasEvent):
            event = self.get_event()  # type: ignore[no-untyped-call]
            anchor = event.anchor
            if anchor not in self.anchors:
                raise yaml.composer.ComposerError(
                    None,
                    None,
                    f"Unresolved alias (the anchor must be set before the alias): {anchor}",
                    event.start_mark,
                )
            return _AliasRef(self.anchors[anchor], event.start_mark)
        event = self.peek_event()  # type: ignore[no-untyped-call]
        anchor = event.anchor
        # YAML 1.2 (and the JS library) allow an anchor to be redefined: later aliases see the new one.
        if anchor is not None:
            self.anchors.pop(anchor, None)
        node: Node
        if self.check_event(ScalarEvent):
            if event.tag == "!":  # the non-specific tag: always a string
                event = self.get_event()  # type: ignore[no-untyped-call]
                node = ScalarNode(_STR, event.value, event.start_mark, event.end_mark, style=event.style)
                if anchor is not None:
                    self.anchors[anchor] = node
            else:
                node = self.compose_scalar_node(anchor)
        elif self.check_event(SequenceStartEvent):
            node = self.compose_sequence_node(anchor)
        else:
            node = self.compose_mapping_node(anchor)
        if anchor is not None:
            self.pi_anchored.add(id(node))
        return node


_CORE_NULL = re.compile(r"^(?:~|[Nn]ull|NULL)?$")
_CORE_BOOL = re.compile(r"^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$")
_CORE_INT_OCT = re.compile(r"^0o[0-7]+$")
_CORE_INT = re.compile(r"^[-+]?[0-9]+$")
_CORE_INT_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_CORE_FLOAT_NAN = re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$")
_CORE_FLOAT_EXP = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")
_CORE_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$")


def _js_int(text: str, radix: int) -> int | float:
    value = int(text, radix)
    if abs(value) > _MAX_SAFE_INTEGER:
        try:
            return float(value)  # a double in JavaScript
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return value


def _float_nan(text: str) -> float:
    if text[-3:].lower() == "nan":
        return math.nan
    return -math.inf if text[0] == "-" else math.inf


# (tag, test, resolve) in the core schema's order (null, bool, int oct/dec/hex, float nan/exp/plain)
_CORE_SCALARS: list[tuple[str, re.Pattern[str], Callable[[str], Any]]] = [
    (_NULL, _CORE_NULL, lambda s: None),
    (_BOOL, _CORE_BOOL, lambda s: s[0] in "tT"),
    (_INT, _CORE_INT_OCT, lambda s: _js_int(s[2:], 8)),
    (_INT, _CORE_INT, lambda s: _js_int(s, 10)),
    (_INT, _CORE_INT_HEX, lambda s: _js_int(s[2:], 16)),
    (_FLOAT, _CORE_FLOAT_NAN, _float_nan),
    (_FLOAT, _CORE_FLOAT_EXP, float),
    (_FLOAT, _CORE_FLOAT, float),
]
_CORE_TAGS = {tag for tag, _, _ in _CORE_SCALARS}


def _resolve_plain(text: str) -> Any:
    # the `yaml` library tests the full string with `^...$` regexes: no trailing-newline slack
    if "\n" in text:
        return text
    for _tag, test, resolve in _CORE_SCALARS:
        if test.match(text):
            return resolve(text)
    return text


def _resolve_tagged_scalar(tag: str, text: str, mark: Any) -> Any:
    if tag == _STR:
        return text
    if tag in _CORE_TAGS:
        if "\n" not in text:
            for t, test, resolve in _CORE_SCALARS:
                if t == tag and test.match(text):
                    return resolve(text)
        return text  # "Unresolved tag": the library warns and keeps the string
    if tag == _BINARY:
        try:
            return base64.b64decode(re.sub(r"\s+", "", text), validate=False)
        except (binascii.Error, ValueError):
            return text
    if tag == _TIMESTAMP:
        return _timestamp(text, mark)
    return text  # unknown tag: warning only


_TIMESTAMP_RE = re.compile(
    r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})"
    r"(?:(?:t|T|[ \t]+)([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2}(?:\.[0-9]+)?)"
    r"(?:[ \t]*(Z|[-+][012]?[0-9](?::[0-9]{2})?))?)?$"
)


def _timestamp(text: str, mark: Any) -> Any:
    m = _TIMESTAMP_RE.match(text)
    if not m:
        return text
    year, month, day, hour, minute, second, tz = m.groups()
    try:
        sec = float(second or 0)
        base = _dt.datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(sec), tzinfo=_dt.UTC
        )
        base += _dt.timedelta(milliseconds=round((sec - int(sec)) * 1000))
    except ValueError:
        return text
    if tz and tz != "Z":
        sign = -1 if tz[0] == "-" else 1
        hh, _, mm = tz[1:].partition(":")
        base -= sign * _dt.timedelta(hours=int(hh), minutes=int(mm or 0))
    return base


def _flow_string(value: Any) -> str:
    """A YAML flow rendering of a collection key (how the `yaml` library names such keys)."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_flow_string(k)}: {_flow_string(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[ " + ", ".join(_flow_string(v) for v in value) + " ]"
    return _key_string(value)


def _key_string(value: Any) -> str:
    if value is None:
        return ""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return js_number_to_string(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return _flow_string(value)
    if isinstance(value, _dt.datetime):
        return value.isoformat().replace("+00:00", "Z")
    return str(value)


def _js_object_order(d: dict[str, Any]) -> dict[str, Any]:
    if not any(_is_array_index(k) for k in d):
        return d
    index = sorted((k for k in d if _is_array_index(k)), key=int)
    ordered = {k: d[k] for k in index}
    ordered.update((k, v) for k, v in d.items() if not _is_array_index(k))
    d.clear()
    d.update(ordered)  # keep the identity: aliases may already point at this dict
    return d


def _same_scalar_key(a: Any, b: Any) -> bool:
    """JavaScript ``a.value === b.value`` for two resolved scalar keys."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b  # NaN != NaN, 0 == -0: as ===
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return False  # objects (dates, bytes) compare by identity, and are never the same object


def _error(message: str, mark: Any, source: str) -> FrontmatterError:
    if mark is None:
        return FrontmatterError(message)
    lines = source.split("\n")
    line, column = mark.line, mark.column
    if line >= len(lines) - 1 and len(lines) > 1 and lines[-1] == "":
        # at the end of the stream: point just past the last line instead
        line, column = len(lines) - 2, len(lines[-2])
    text = lines[line] if line < len(lines) else ""
    return FrontmatterError(
        f"{message} at line {line + 1}, column {column + 1}:\n\n{text}\n{' ' * column}^\n"
    )


class _Converter:
    """Node graph -> plain values, like the `yaml` library's ``toJS`` (shared aliases, alias limit)."""

    def __init__(self, source: str, anchored: set[int], unmap: dict[int, int] | None) -> None:
        self.source = source
        self.anchored = anchored
        self.unmap = unmap
        # anchored node id -> [count, alias_count, result]
        self.anchors: dict[int, list[Any]] = {}

    def convert(self, item: Node | _AliasRef) -> Any:
        if isinstance(item, _AliasRef):
            return self._alias(item)
        node = item
        anchored = id(node) in self.anchored
        if isinstance(node, ScalarNode):
            value = self._scalar(node)
            if anchored:
                self.anchors[id(node)] = [1, 0, value]
            return value
        if isinstance(node, SequenceNode):
            return self._sequence(node, anchored)
        assert isinstance(node, MappingNode)
        return self._mapping(node, anchored)

    def _alias(self, ref: _AliasRef) -> Any:
        data = self.anchors.get(id(ref.target))
        if data is None:
            # the anchor is an ancestor still being built: a recursive structure
            raise _error("Unresolved alias (the anchor must be set before the alias)", ref.mark, self.source)
        data[0] += 1
        if data[1] == 0:
            data[1] = self._alias_count(ref.target)
        if data[0] * data[1] > _MAX_ALIAS_COUNT:
            raise _error(
                "Excessive alias count indicates a resource exhaustion attack", ref.mark, self.source
            )
        return data[2]

    def _alias_count(self, item: Node | _AliasRef) -> int:
        if isinstance(item, _AliasRef):
            data = self.anchors.get(id(item.target))
            return int(data[0] * data[1]) if data else 0
        if isinstance(item, SequenceNode):
            return max((self._alias_count(x) for x in item.value), default=0)
        if isinstance(item, MappingNode):
            return max(
                (max(self._alias_count(k), self._alias_count(v)) for k, v in item.value),
                default=0,
            )
        return 1

    def _scalar(self, node: ScalarNode) -> Any:
        text: str = node.value
        if self.unmap is not None:
            text = text.translate(self.unmap)
        if node.tag == _PLAIN_TAG:
            return _resolve_plain(text)
        return _resolve_tagged_scalar(node.tag, text, node.start_mark)

    def _sequence(self, node: SequenceNode, anchored: bool) -> Any:
        out: list[Any] = []
        if anchored:
            self.anchors[id(node)] = [1, 0, out]
        for item in node.value:
            out.append(self.convert(item))
        if node.tag == _OMAP:
            # an ordered map: a sequence of one-pair mappings -> one mapping (a JS Map)
            merged: dict[str, Any] = {}
            for pair in out:
                if isinstance(pair, dict):
                    merged.update(pair)
            if anchored:
                self.anchors[id(node)][2] = merged
            return merged
        return out

    def _mapping(self, node: MappingNode, anchored: bool) -> Any:
        if node.tag == _SET:
            keys: list[Any] = []
            if anchored:
                self.anchors[id(node)] = [1, 0, keys]
            for k, _v in node.value:
                key = self.convert(k)
                if key not in keys:
                    keys.append(key)
            return keys
        out: dict[str, Any] = {}
        if anchored:
            self.anchors[id(node)] = [1, 0, out]
        seen: list[Any] = []  # resolved plain/tagged scalar keys, for the uniqueness check
        for k, v in node.value:
            key = self.convert(k)
            if isinstance(k, ScalarNode):
                if any(_same_scalar_key(key, s) for s in seen):
                    raise _error("Map keys must be unique", k.start_mark, self.source)
                seen.append(key)
            value = self.convert(v)
            out[_key_string(key)] = value
        return _js_object_order(out)


_SPECIAL_CHARS = re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_STAND_IN_BASE = 0xF0000
_STAND_INS = re.compile("[\U000f0000-\U000fffff]")


# --- the C fast path: libyaml (PyYAML's CParser) composes the node graph; the same _Converter turns
# it into values. It is only used where libyaml and the exact parser above read the text the same
# way: no tab, BOM, directive, document marker, comment glued to a token (`"x"#c`), special
# character (_SPECIAL_CHARS), multi-line quoted scalar or flow collection (the overrides above change
# how those are scanned), and no error (duplicate anchors, undefined aliases, syntax errors, duplicate
# keys, the alias limit...). Anything else, and any failure, goes to the exact parser, so values and
# error messages are the exact parser's (tests/test_frontmatter_fast.py compares both on generated YAML).

try:
    import yaml.cyaml as _cyaml
except ImportError:  # PyYAML built without libyaml: the exact parser only
    _cyaml = None  # type: ignore[assignment]

# ... and tags only of the forms `!!name` and `!name` (libyaml scans other tag text, `!:!`, `!<x>`,
# `!a!b`, differently; its composer resolves the non-specific `! x` as a plain scalar)
_NOT_FAST = re.compile(
    r"[\t\ufeff]|[^ \n]#|^(?:%|---|\.\.\.)|(?:^|[ \[{,])!(?!!?[A-Za-z0-9][A-Za-z0-9-]*[ \n])", re.MULTILINE
)


class _Unsafe(Exception):
    """The composed graph has a construct whose scanning the exact parser changes."""


if _cyaml is not None:

    class _CLoader(_cyaml.CBaseLoader):
        """libyaml's parser and composer; untagged plain scalars get _PLAIN_TAG, as in _Loader."""

        yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers


_FLOW_PLAIN_UNSAFE = re.compile(r"[:?]")


def _with_alias_refs(node: Node, seen: set[int], aliased: set[int], flow: bool) -> None:
    """Check ``node``'s subtree for the constructs above (and, inside a flow collection, a plain
    scalar holding ``:`` or ``?``, which libyaml scans more leniently); a node met again is an
    alias: replace that occurrence by an :class:`_AliasRef` (the exact composer's graph) and record
    its target."""
    seen.add(id(node))
    if isinstance(node, ScalarNode):
        if not node.style:  # plain ('' from libyaml's composer)
            if flow and _FLOW_PLAIN_UNSAFE.search(node.value):
                raise _Unsafe
        elif node.style in ("'", '"') and node.start_mark.line != node.end_mark.line:
            raise _Unsafe
        return
    if getattr(node, "flow_style", None):
        if node.start_mark.line != node.end_mark.line:
            raise _Unsafe
        flow = True
    items = node.value
    if isinstance(node, SequenceNode):
        for i, child in enumerate(items):
            if id(child) in seen:
                aliased.add(id(child))
                items[i] = _AliasRef(child, child.start_mark)
            else:
                _with_alias_refs(child, seen, aliased, flow)
        return
    for i, (key, value) in enumerate(items):
        pair: list[Any] = [key, value]
        for j, child in enumerate(pair):
            if id(child) in seen:
                aliased.add(id(child))
                pair[j] = _AliasRef(child, child.start_mark)
            else:
                _with_alias_refs(child, seen, aliased, flow)
        if pair[0] is not key or pair[1] is not value:
            items[i] = (pair[0], pair[1])


_NO_RESULT = object()


def _parse_yaml_fast(text: str) -> Any:
    """``text`` (ending in a line break) through libyaml, or ``_NO_RESULT`` when the exact parser
    must read it."""
    if _cyaml is None or _NOT_FAST.search(text) or _SPECIAL_CHARS.search(text):
        return _NO_RESULT
    try:
        loader = _CLoader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
        if root is None:
            return None
        aliased: set[int] = set()
        _with_alias_refs(root, set(), aliased, False)
        return _Converter(text, aliased, None).convert(root)
    except Exception:  # any error or doubt: the exact parser decides (and words the error)
        return _NO_RESULT


def _parse_yaml(text: str) -> Any:
    # The YAML ends where the closing `---` line starts, i.e. without a final line break. The JS
    # library still ends a clipped/kept block scalar (`|`, `>`, `|+`) with "\n" there; PyYAML does
    # not unless the stream ends with one, so give it one (line/column positions are unchanged).
    if not text.endswith("\n"):
        text += "\n"
    fast = _parse_yaml_fast(text)
    if fast is not _NO_RESULT:
        return fast
    return _parse_yaml_exact(text)


def _parse_yaml_exact(text: str) -> Any:
    source = text
    # Characters PyYAML refuses (control characters, lone surrogates, U+FFFE) or reads as line
    # breaks (YAML 1.1's U+0085, U+2028, U+2029) are ordinary characters in YAML 1.2 and in the
    # JS library: hand them to PyYAML as private-use stand-ins and map them back in the values.
    unmap: dict[int, int] | None = None
    if _SPECIAL_CHARS.search(text) and not _STAND_INS.search(text):
        unmap = {}

        def stand_in(m: re.Match[str]) -> str:
            o = ord(m.group(0))
            assert unmap is not None
            unmap[_STAND_IN_BASE + o] = o
            return chr(_STAND_IN_BASE + o)

        text = _SPECIAL_CHARS.sub(stand_in, text)
    try:
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
        if root is None:
            return None
        return _Converter(source, loader.pi_anchored, unmap).convert(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "Invalid YAML"
        raise _error(problem[:1].upper() + problem[1:], mark, source) from None
    except yaml.YAMLError as exc:
        raise FrontmatterError(f"Invalid YAML at line 1, column 1: {exc}") from None
    except RecursionError:
        raise FrontmatterError("YAML nesting is too deep at line 1, column 1") from None
