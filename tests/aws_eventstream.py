"""Encode AWS event-stream messages (``application/vnd.amazon.eventstream``), the binary framing
Bedrock's ConverseStream answers in: a test helper to build canned answers and replay recorded
ones (botocore has the parser, :mod:`botocore.eventstream`, but no encoder).

A message is a 12-byte prelude (total length, headers length, CRC32 of those 8 bytes), the
headers (name length, name, type 7 = string, value length, value), the payload and a CRC32 of
everything before it.
"""

from __future__ import annotations

import binascii
import json
import struct
from collections.abc import Iterable, Mapping
from typing import Any


def _headers(headers: Mapping[str, str]) -> bytes:
    out = b""
    for name, value in headers.items():
        n, v = name.encode("utf-8"), value.encode("utf-8")
        out += struct.pack(">B", len(n)) + n + b"\x07" + struct.pack(">H", len(v)) + v
    return out


def message(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message."""
    head = _headers(headers)
    total = 12 + len(head) + len(payload) + 4
    prelude = struct.pack(">II", total, len(head))
    prelude += struct.pack(">I", binascii.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + head + payload
    return body + struct.pack(">I", binascii.crc32(body) & 0xFFFFFFFF)


def event(event_type: str, payload: Any) -> bytes:
    """A ConverseStream event (``messageStart``, ``contentBlockDelta``, ``metadata``...)."""
    data = json.dumps(payload, separators=(",", ":")).encode("utf-8")
    return message(
        {":event-type": event_type, ":content-type": "application/json", ":message-type": "event"}, data
    )


def exception(exception_type: str, text: str) -> bytes:
    """A modeled exception inside the stream (``modelStreamErrorException``, ``throttlingException``...)."""
    data = json.dumps({"message": text}, separators=(",", ":")).encode("utf-8")
    return message(
        {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        data,
    )


def stream(events: Iterable[tuple[str, Any]]) -> bytes:
    """``(type, payload)`` events as one body; a type ending in ``Exception`` is an exception message."""
    out = b""
    for kind, payload in events:
        if kind.endswith("Exception"):
            out += exception(kind, payload["message"] if isinstance(payload, Mapping) else str(payload))
        else:
            out += event(kind, payload)
    return out
