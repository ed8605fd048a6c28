"""Session file format migrations v1 -> v2 -> v3 (Pi's ``migrateSessionEntries``).

* v1 (no ``version`` in the header) had no tree: entries are given 8-hex ids and a linear
  ``parentId`` chain in file order, and a compaction's ``firstKeptEntryIndex`` (an index into the
  file's entry list, **header included**) becomes ``firstKeptEntryId``.
* v2 -> v3 renames the message role ``hookMessage`` to ``custom``.

The entries are changed in place (no copies: a migration of a 100 MB file must not double its
memory), exactly as Pi does, including where keys land: a v1 header gets ``version`` appended
after its other keys, an entry without an id gets ``id`` and ``parentId`` at the end.

One deliberate difference: Pi's v1 migration draws each id against an empty set (its collision
check never sees the ids it has already assigned). pi_nb checks against the ids assigned so far,
so a migrated file can never hold the same id twice; the ids are random either way.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pi_nb.session.ids import generate_id

__all__ = [
    "CURRENT_SESSION_VERSION",
    "migrate_session_entries",
    "migrate_to_current_version",
]

CURRENT_SESSION_VERSION = 3


# The entries migrated here are v1/v2 JSON objects (no ids, ``firstKeptEntryIndex``, ``hookMessage``
# roles): not yet the v3 ``FileEntry`` shapes of pi_nb.session.types, so they stay open dicts
# (``list[Any]`` in: a caller's list[FileEntry] is changed in place into v3 entries).


def _require_dict(entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        # Pi (an ES module, strict mode) throws here: it cannot set properties on a primitive.
        raise TypeError(f"session entries must be objects (dicts), got {type(entry).__name__}")
    return entry


_JS_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Infinity")
_JS_RADIX = re.compile(r"0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+")


def _js_number(v: Any) -> float:
    """``Number(v)`` for the JSON values a header's ``version`` can hold (for ``<`` and ``>=``)."""
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        text = v.strip(" \t\n\r\x0b\x0c\u00a0\u2028\u2029\ufeff")
        if text == "":
            return 0.0
        if _JS_DECIMAL.fullmatch(text):
            return float(text.replace("Infinity", "inf"))
        if _JS_RADIX.fullmatch(text):
            return float(int(text, 0))
        return math.nan
    if isinstance(v, list):
        # Number([]) is 0, Number([x]) is Number(String(x)), longer arrays are NaN
        if not v:
            return 0.0
        if len(v) == 1 and not isinstance(v[0], (list, dict)):
            inner = v[0]
            return 0.0 if inner is None else _js_number(inner if isinstance(inner, str) else str(inner))
        return math.nan
    return math.nan  # objects


def _migrate_v1_to_v2(entries: list[Any]) -> None:
    ids: set[str] = set()
    prev_id: str | None = None
    n = len(entries)
    for raw in entries:
        entry = _require_dict(raw)
        if entry.get("type") == "session":
            entry["version"] = 2
            continue
        new_id = generate_id(ids)
        ids.add(new_id)
        entry["id"] = new_id
        entry["parentId"] = prev_id
        prev_id = new_id
        if entry.get("type") == "compaction" and "firstKeptEntryIndex" in entry:
            index = entry["firstKeptEntryIndex"]
            if isinstance(index, (int, float)) and not isinstance(index, bool):
                # entries[index] in JS: only an integral, in-range index finds an entry
                target = None
                if (isinstance(index, int) or (math.isfinite(index) and index == int(index))) and (
                    0 <= int(index) < n
                ):
                    target = entries[int(index)]
                if target is not None and not (isinstance(target, dict) and target.get("type") == "session"):
                    if isinstance(target, dict) and "id" in target:
                        entry["firstKeptEntryId"] = target["id"]
                    else:
                        # JS assigns undefined: the key disappears from the written JSON
                        entry.pop("firstKeptEntryId", None)
                del entry["firstKeptEntryIndex"]


def _migrate_v2_to_v3(entries: list[Any]) -> None:
    for raw in entries:
        entry = _require_dict(raw)
        if entry.get("type") == "session":
            entry["version"] = 3
            continue
        if entry.get("type") == "message":
            message = entry.get("message")
            if isinstance(message, dict) and message.get("role") == "hookMessage":
                message["role"] = "custom"


def migrate_to_current_version(entries: list[Any]) -> bool:
    """Bring file entries (header included) to version 3, in place; True if anything was migrated.

    The version is read from the first header found anywhere in the list (``version`` missing or
    null means 1). A file that is already at version 3 or later is left alone.
    """
    header: dict[str, Any] | None = None
    for raw in entries:
        if raw is None:
            raise TypeError("session entries must be objects (dicts), got NoneType")
        if isinstance(raw, dict) and raw.get("type") == "session":
            header = raw
            break
    version_raw = header.get("version") if header is not None else None
    version = 1.0 if version_raw is None else _js_number(version_raw)
    if version >= CURRENT_SESSION_VERSION:
        return False
    if version < 2:
        _migrate_v1_to_v2(entries)
    if version < 3:
        _migrate_v2_to_v3(entries)
    return True


def migrate_session_entries(entries: list[Any]) -> bool:
    """Pi's ``migrateSessionEntries``: migrate ``entries`` in place to the current version.

    Returns whether a migration was applied (Pi's exported function returns nothing; the value is
    what its internal ``migrateToCurrentVersion`` returns).
    """
    return migrate_to_current_version(entries)
