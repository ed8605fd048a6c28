"""The text of V8's ``SyntaxError`` for ``JSON.parse(text)`` (Node 22), for error messages pi-ai
writes from a failed ``JSON.parse`` (a thinking signature that is not JSON, an SSE ``data:`` line
the SDK cannot parse).

A validating scan that follows V8's ``JsonParser`` (src/json/json-parser.cc): the same tokens,
the same expected-token messages in objects and arrays, positions in UTF-16 code units and the
``(line L column C)`` suffix counted as V8 counts it (``\\r\\n`` is one line break), and V8's
context rule for an unexpected token (the whole text when it is at most 20 units long, else 10
units either side of the position). :func:`v8_json_parse_error` returns ``None`` for valid JSON.
"""

from __future__ import annotations

__all__ = ["v8_json_parse_error"]

_WS = frozenset((0x20, 0x09, 0x0A, 0x0D))
_MAX_CONTEXT = 10
_MIN_LENGTH_FOR_CONTEXT = _MAX_CONTEXT * 2 + 1
_SPECIAL = frozenset({"NaN", "Infinity", "undefined", "[object Object]"})


class _Fail(Exception):
    def __init__(self, pos: int, message: str | None = None) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


def _units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [data[i] | (data[i + 1] << 8) for i in range(0, len(data), 2)]


class _Scanner:
    def __init__(self, units: list[int]) -> None:
        self.u = units
        self.n = len(units)
        self.pos = 0

    def peek(self) -> int | None:
        return self.u[self.pos] if self.pos < self.n else None

    def skip_ws(self) -> None:
        while self.pos < self.n and self.u[self.pos] in _WS:
            self.pos += 1

    def value(self) -> None:
        self.skip_ws()
        c = self.peek()
        if c is None:
            raise _Fail(self.pos)
        if c == 0x7B:  # {
            self.obj()
        elif c == 0x5B:  # [
            self.arr()
        elif c == 0x22:  # "
            self.string()
        elif c == 0x2D or 0x30 <= c <= 0x39:
            self.number()
        elif c in (0x74, 0x66, 0x6E):  # t f n
            self.literal({0x74: "true", 0x66: "false", 0x6E: "null"}[c])
        else:
            raise _Fail(self.pos)

    def literal(self, word: str) -> None:
        for ch in word:
            if self.pos >= self.n:
                raise _Fail(self.pos)
            if self.u[self.pos] != ord(ch):
                raise _Fail(self.pos)
            self.pos += 1

    def expect(self, unit: int, message: str) -> None:
        self.skip_ws()
        if self.peek() != unit:
            raise _Fail(self.pos, message)
        self.pos += 1

    def obj(self) -> None:
        self.pos += 1
        self.skip_ws()
        if self.peek() == 0x7D:
            self.pos += 1
            return
        if self.peek() != 0x22:
            raise _Fail(self.pos, "Expected property name or '}' in JSON")
        while True:
            self.string()
            self.expect(0x3A, "Expected ':' after property name in JSON")
            self.value()
            self.skip_ws()
            c = self.peek()
            if c == 0x2C:
                self.pos += 1
                self.skip_ws()
                if self.peek() != 0x22:
                    raise _Fail(self.pos, "Expected double-quoted property name in JSON")
                continue
            if c == 0x7D:
                self.pos += 1
                return
            raise _Fail(self.pos, "Expected ',' or '}' after property value in JSON")

    def arr(self) -> None:
        self.pos += 1
        self.skip_ws()
        if self.peek() == 0x5D:
            self.pos += 1
            return
        while True:
            self.value()
            self.skip_ws()
            c = self.peek()
            if c == 0x2C:
                self.pos += 1
                continue
            if c == 0x5D:
                self.pos += 1
                return
            raise _Fail(self.pos, "Expected ',' or ']' after array element in JSON")

    def string(self) -> None:
        self.pos += 1
        while True:
            if self.pos >= self.n:
                raise _Fail(self.pos, "Unterminated string in JSON")
            c = self.u[self.pos]
            if c == 0x22:
                self.pos += 1
                return
            if c < 0x20:
                raise _Fail(self.pos, "Bad control character in string literal in JSON")
            if c == 0x5C:
                self.pos += 1
                if self.pos >= self.n:
                    raise _Fail(self.pos)  # V8: the end of the input, not an unterminated string
                e = self.u[self.pos]
                if e == 0x75:  # u
                    for k in range(1, 5):
                        if self.pos + k >= self.n:
                            raise _Fail(self.pos + k, "Bad Unicode escape in JSON")
                        h = self.u[self.pos + k]
                        if not (0x30 <= h <= 0x39 or 0x41 <= h <= 0x46 or 0x61 <= h <= 0x66):
                            raise _Fail(self.pos + k, "Bad Unicode escape in JSON")
                    self.pos += 5
                    continue
                if e not in (0x22, 0x5C, 0x2F, 0x62, 0x66, 0x6E, 0x72, 0x74):
                    # V8 names a bad one-byte escape; any other unit after a backslash is an unexpected token
                    raise _Fail(self.pos, "Bad escaped character in JSON" if e < 0x100 else None)
                self.pos += 1
                continue
            self.pos += 1

    def digits(self) -> int:
        start = self.pos
        while self.pos < self.n and 0x30 <= self.u[self.pos] <= 0x39:
            self.pos += 1
        return self.pos - start

    def number(self) -> None:
        if self.peek() == 0x2D:
            self.pos += 1
            c = self.peek()
            if c is None or not 0x30 <= c <= 0x39:
                raise _Fail(self.pos, "No number after minus sign in JSON")
        if self.peek() == 0x30:
            self.pos += 1
            c = self.peek()
            if c is not None and 0x30 <= c <= 0x39:
                raise _Fail(self.pos, "Unexpected number in JSON")
        else:
            self.digits()
        if self.peek() == 0x2E:
            self.pos += 1
            if self.digits() == 0:
                raise _Fail(self.pos, "Unterminated fractional number in JSON")
        if self.peek() in (0x65, 0x45):
            self.pos += 1
            if self.peek() in (0x2B, 0x2D):
                self.pos += 1
            if self.digits() == 0:
                raise _Fail(self.pos, "Exponent part is missing a number in JSON")


def _location(units: list[int], pos: int) -> str:
    line, last_break, i = 1, 0, 0
    while i < pos:
        if units[i] == 0x0D and i < pos - 1 and units[i + 1] == 0x0A:
            i += 1
        if units[i] in (0x0D, 0x0A):
            line += 1
            last_break = i + 1
        i += 1
    return f"at position {pos} (line {line} column {1 + i - last_break})"


def _text(units: list[int]) -> str:
    data = b"".join(u.to_bytes(2, "little") for u in units)
    return data.decode("utf-16-le", "surrogatepass")


def v8_json_parse_error(text: str) -> str | None:
    """The message of the ``SyntaxError`` V8's ``JSON.parse(text)`` throws, or ``None`` if valid."""
    units = _units(text)
    scanner = _Scanner(units)
    try:
        scanner.value()
        scanner.skip_ws()
        if scanner.pos < scanner.n:
            raise _Fail(scanner.pos, "Unexpected non-whitespace character after JSON")
        return None
    except _Fail as fail:
        pos, n = fail.pos, len(units)
        if fail.message is not None:
            return f"{fail.message} {_location(units, pos)}"
        if pos >= n:
            return "Unexpected end of JSON input"
        c = units[pos]
        if c == 0x22:
            return f"Unexpected string in JSON {_location(units, pos)}"
        if c == 0x2D or 0x30 <= c <= 0x39:
            return f"Unexpected number in JSON {_location(units, pos)}"
        token = _text([c])
        if text in _SPECIAL:  # String(value) of a value that is not JSON
            return f'"{text}" is not valid JSON'
        if n < _MIN_LENGTH_FOR_CONTEXT:
            return f"Unexpected token '{token}', \"{_text(units)}\" is not valid JSON"
        if pos < _MAX_CONTEXT:
            return (
                f"Unexpected token '{token}', \"{_text(units[: pos + _MAX_CONTEXT])}\"... is not valid JSON"
            )
        if pos < n - _MAX_CONTEXT:
            snippet = _text(units[pos - _MAX_CONTEXT : pos + _MAX_CONTEXT])
            return f"Unexpected token '{token}', ...\"{snippet}\"... is not valid JSON"
        return f"Unexpected token '{token}', ...\"{_text(units[pos - _MAX_CONTEXT :])}\" is not valid JSON"
