"""Projection of a session tree to the LLM context (Pi 0.85.0 ``core/session-manager.ts``).

Pure functions over lists of entry dicts: ``build_session_context`` (messages + thinking level +
model for a leaf), ``build_context_entries`` (the compaction-aware entry list behind it),
``session_entry_to_context_messages`` (one entry -> messages), ``get_latest_compaction_entry`` and
``get_branch_entries`` (the root -> leaf path).

What the projection does, in Pi's words and with its surprises:

* The path is found by walking ``parentId`` links from the leaf to a root. The walk stops at a
  ``null``/empty parent *or at a parent id that is not in the session* (an orphan starts its own
  path). ``leaf_id=NO_LEAF`` (JS ``null``) means "before the first entry": an empty context. An
  omitted, empty or unknown ``leaf_id`` falls back to the *last entry of the list*, not to an error.
* Thinking level and model come from the whole path, including entries a compaction removed from
  the messages: the last ``thinking_level_change`` (default ``"off"``), and the last
  ``model_change`` or assistant message (``{provider, modelId}``; ``None`` if neither).
* With compactions on the path only the *latest* one counts: ``[compaction] + path entries from
  its firstKeptEntryId up to it (none if that id is not before it) + everything after it``.
* Entries are indexed by id once (the last entry with a given id wins, as in Pi's ``Map``), so a
  projection costs O(entries); pass ``by_id`` to reuse an index across calls.
* A ``parentId`` chain that loops (a self-parenting entry, a cycle) never ends in Pi
  (``RangeError: Invalid array length``); here it raises :class:`~pi_nb.errors.EntryCycleError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, repeat
from operator import eq
from typing import Any, NotRequired, TypedDict, cast

from pi_nb._js import UNDEFINED, Undefined
from pi_nb._js import js_truthy as _truthy
from pi_nb.errors import EntryCycleError, InvalidEntryError
from pi_nb.messages import (
    AgentMessage,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
)
from pi_nb.session.types import CompactionEntry, SessionEntry
from pi_nb.undefined import NoLeaf

__all__ = [
    "SessionContext",
    "SessionContextDict",
    "SessionContextModel",
    "build_context_entries",
    "build_entry_index",
    "build_session_context",
    "get_branch_entries",
    "get_latest_compaction_entry",
    "session_entry_to_context_messages",
]

#: ``{entry id: entry}`` (:func:`build_entry_index`). Keys are the entries' ``id`` values, which a
#: hand-edited file may make non-strings (a number, ``None``), hence ``Any``.
EntryIndex = Mapping[Any, SessionEntry]


class SessionContextModel(TypedDict):
    """:attr:`SessionContext.model`: Pi's ``{provider, modelId}`` (from the last ``model_change``
    entry or assistant message on the path). Pi copies the keys unchecked, so for a hand-edited
    entry lacking one the dict lacks it too."""

    provider: str
    modelId: str


class SessionContextDict(TypedDict):
    """:meth:`SessionContext.to_dict`: Pi's ``{messages, thinkingLevel, model}`` (``thinkingLevel``
    is left out when it is ``undefined``, as ``JSON.stringify`` does)."""

    messages: list[AgentMessage]
    thinkingLevel: NotRequired[str]
    model: SessionContextModel | None


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What the LLM sees for one leaf: Pi's ``SessionContext {messages, thinkingLevel, model}``.

    ``messages`` is a list built fresh by each call (the caller may keep and extend it; the message
    dicts are new top-level dicts that share nested values with the entries, as in Pi).
    ``thinking_level`` is ``"off"`` unless the path sets one; ``model`` is ``{"provider",
    "modelId"}`` or ``None``. Pi copies both from the entries unchecked, so a hand-edited entry
    lacking a key gives a dict lacking it (and a ``thinking_level_change`` without
    ``thinkingLevel`` gives ``UNDEFINED``, which :meth:`to_dict` leaves out like JSON does).
    """

    messages: list[AgentMessage] = field(default_factory=list)
    thinking_level: str = "off"
    model: SessionContextModel | None = None

    def to_dict(self) -> SessionContextDict:
        """Pi's camelCase JSON shape ``{messages, thinkingLevel, model}``."""
        messages = list(self.messages)
        model = None if self.model is None else cast(SessionContextModel, dict(self.model))  # a copy
        if isinstance(self.thinking_level, Undefined):
            return {"messages": messages, "model": model}
        return {"messages": messages, "thinkingLevel": self.thinking_level, "model": model}


def _check_entry(entry: object) -> SessionEntry:
    """An entry as parsed from a file, checked to be a JSON object. Nothing else is validated (old
    versions, forks and hand-edited files are read as Pi reads them), so the code below reads its
    fields with ``.get`` and checks what it needs."""
    if type(entry) is not dict and not isinstance(entry, Mapping):  # (fast path for plain dicts)
        raise InvalidEntryError(f"session entry must be an object, got {type(entry).__name__}: {entry!r:.80}")
    return cast(SessionEntry, entry)  # validated: an object; its fields are read tolerantly


def build_entry_index(entries: Sequence[SessionEntry]) -> dict[Any, SessionEntry]:
    """Pi's ``buildEntryIndex``: ``{entry id: entry}``; a later entry with the same id replaces an earlier one."""
    index: dict[Any, SessionEntry] = {}
    for entry in entries:
        if type(entry) is not dict:
            _check_entry(entry)
        try:
            index[entry.get("id")] = entry
        except TypeError as exc:  # an id that is a JSON object or array
            raise InvalidEntryError(
                f"session entry id must be a string, got {entry.get('id')!r:.80}"
            ) from exc
    return index


def _lookup(index: EntryIndex, key: Any) -> SessionEntry | None:
    try:
        found = index.get(key)
    except TypeError:  # unhashable: cannot be an id in the index
        return None
    return None if found is None else _check_entry(found)


def _walk_to_root(leaf: SessionEntry, index: EntryIndex) -> list[SessionEntry]:
    try:
        return _walk_plain(leaf, index)
    except (TypeError, AttributeError):  # an unhashable parentId, an entry that is not a mapping
        return _walk_checked(leaf, index)


def _walk_plain(leaf: SessionEntry, index: EntryIndex) -> list[SessionEntry]:
    """The walk for well-formed entries, with as little per step as possible. ``not parent_id``
    stops exactly where JavaScript's falsy test stops, or where the lookup would find nothing
    anyway (``[]``/``{}`` are truthy in JavaScript but can never be a key of the index)."""
    path: list[SessionEntry] = []
    append = path.append
    get = index.get
    current: Any = leaf  # (unchecked here: anything unusual raises and takes _walk_checked)
    for _ in range(len(index) + 1):
        append(current)
        parent_id = current.get("parentId")
        if not parent_id:
            break
        current = get(parent_id)
        if current is None:
            break
        if type(current) is not dict and not isinstance(current, Mapping):
            raise TypeError("not a mapping")  # the checked walk raises the real error
    else:
        raise EntryCycleError(
            f"Entry {leaf.get('id')} has a parentId chain that loops "
            f"(Pi's buildSessionPath never ends on it: RangeError: Invalid array length)"
        )
    path.reverse()
    return path


def _walk_checked(leaf: SessionEntry, index: EntryIndex) -> list[SessionEntry]:
    path: list[SessionEntry] = []
    append = path.append
    get = index.get
    current: SessionEntry = leaf
    found: SessionEntry | None
    # without a loop, a path holds at most every indexed entry plus the leaf
    for _ in range(len(index) + 1):
        append(current)
        parent_id = current.get("parentId")
        if type(parent_id) is str:  # the common case, kept fast: "" is falsy, the walk stops
            if not parent_id:
                break
            found = get(parent_id)
            if found is None:
                break
            if type(found) is not dict:
                _check_entry(found)
        else:
            found = _lookup(index, parent_id) if _truthy(parent_id) else None
            if found is None:
                break
        current = found
    else:
        raise EntryCycleError(
            f"Entry {leaf.get('id')} has a parentId chain that loops "
            f"(Pi's buildSessionPath never ends on it: RangeError: Invalid array length)"
        )
    path.reverse()
    return path


def _build_session_path(
    entries: Sequence[SessionEntry], leaf_id: Any, by_id: EntryIndex | None
) -> list[SessionEntry]:
    """Pi's private ``buildSessionPath``: root -> leaf entries for a leaf id (see module docstring).
    ``leaf_id`` is any JSON value (Pi's ``undefined``/``null``/an id, or a hand-edited oddity)."""
    if leaf_id is None:
        return []
    index = by_id if by_id is not None else build_entry_index(entries)
    leaf: SessionEntry | None = None
    if _truthy(leaf_id):
        leaf = _lookup(index, leaf_id)
    if leaf is None:
        if not entries:
            return []
        leaf = entries[-1]
    return _walk_to_root(_check_entry(leaf), index)


def get_branch_entries(
    entries: Sequence[SessionEntry],
    leaf_id: str | Undefined | None,
    by_id: EntryIndex | None = None,
) -> list[SessionEntry]:
    """The root -> ``leaf_id`` path by ``parentId`` (Pi's ``SessionManager.getBranch(fromId)``).

    Unlike the context projection there is no fallback: a ``None``, empty or unknown ``leaf_id``
    gives ``[]``. The walk stops at a missing parent, like everywhere in Pi.
    """
    if not _truthy(leaf_id):
        return []
    index = by_id if by_id is not None else build_entry_index(entries)
    leaf = _lookup(index, leaf_id)
    if leaf is None:
        return []
    return _walk_to_root(leaf, index)


def get_latest_compaction_entry(entries: Sequence[SessionEntry]) -> CompactionEntry | None:
    """``getLatestCompactionEntry``: the last ``compaction`` entry of the list (not of a path), or ``None``."""
    for entry in reversed(entries):
        checked = _check_entry(entry)
        if "type" in checked and checked["type"] == "compaction":
            return checked
    return None


def session_entry_to_context_messages(entry: SessionEntry) -> list[AgentMessage]:
    """``sessionEntryToContextMessages``: the messages one selected entry contributes to context.

    * ``message`` -> its message (a new top-level dict); a ``user``/``assistant``/``toolResult``
      message whose ``content`` is null or missing gets ``content: []`` (other roles are left as
      they are).
    * ``custom_message`` -> ``{role: "custom", customType, content (null/missing -> []), display,
      details, timestamp}``.
    * ``branch_summary`` with a truthy ``summary`` -> ``{role: "branchSummary", summary, fromId,
      timestamp}``; an empty summary contributes nothing.
    * ``compaction`` -> ``{role: "compactionSummary", summary, tokensBefore, timestamp}``.
    * anything else (model/thinking changes, labels, custom entries, session info) -> ``[]``.

    Timestamps of the built messages are the entry's ISO timestamp in ms
    (:func:`pi_nb.messages.js_date_ms`, NaN when it does not parse).
    """
    entry = _check_entry(entry)
    etype = entry.get("type")
    if etype == "message":
        message = entry.get("message")
        if type(message) is not dict and not isinstance(message, Mapping):
            raise InvalidEntryError(
                f"message entry {entry.get('id')!r} has no message object (got {type(message).__name__})"
            )
        # the message object of the file, checked to be an object; Pi passes it on as it is
        if message.get("role") in ("user", "assistant", "toolResult") and message.get("content") is None:
            return [cast(AgentMessage, {**message, "content": []})]
        return [cast(AgentMessage, dict(message))]
    if etype == "custom_message":
        content = entry.get("content")
        return [
            create_custom_message(
                entry.get("customType", UNDEFINED),
                [] if content is None else content,
                entry.get("display", UNDEFINED),
                entry.get("details", UNDEFINED),
                entry.get("timestamp", UNDEFINED),
            )
        ]
    if etype == "branch_summary":
        summary = entry.get("summary", UNDEFINED)
        if not _truthy(summary):
            return []
        return [
            create_branch_summary_message(
                summary, entry.get("fromId", UNDEFINED), entry.get("timestamp", UNDEFINED)
            )
        ]
    if etype == "compaction":
        return [
            create_compaction_summary_message(
                entry.get("summary", UNDEFINED),
                entry.get("tokensBefore", UNDEFINED),
                entry.get("timestamp", UNDEFINED),
            )
        ]
    return []


def _strict_eq(a: Any, b: Any) -> bool:
    """JavaScript ``a === b`` for JSON values (objects and arrays compare by identity)."""
    if type(a) is str and type(b) is str:  # the common case (ids), first and cheap
        return a == b
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _first_index_of(path: list[SessionEntry], stop: int, wanted: Any, ids: list[Any] | None = None) -> int:
    """The first ``i < stop`` with ``path[i].id === wanted`` (JavaScript's strict equality), or -1.

    ``ids`` (the ``id`` of every path entry, for plain dicts) lets the search run in C:
    ``list.index`` compares a str only equal to a str, which is ``===`` for strings."""
    if type(wanted) is str and ids is not None:
        try:
            return ids.index(wanted, 0, stop)
        except ValueError:
            return -1
    return next((i for i in range(stop) if _strict_eq(path[i].get("id", UNDEFINED), wanted)), -1)


def _plain(path: Sequence[object]) -> bool:
    """Every entry is a plain dict (so ``dict.get`` can be mapped over the list in C)."""
    return not path or set(map(type, path)) == {dict}


def _as_dicts(path: list[SessionEntry]) -> list[dict[str, Any]]:
    """The path for the C fast paths that map ``dict.get`` over it: the caller has checked that
    every entry is a plain ``dict`` (:func:`_plain`); the values are the file's JSON."""
    return cast(list[dict[str, Any]], path)


def context_entries_from_path(path: list[SessionEntry], plain: bool | None = None) -> list[SessionEntry]:
    last = -1
    for i in range(len(path) - 1, -1, -1):
        if path[i].get("type") == "compaction":
            last = i
            break
    if last < 0:
        return path
    compaction = path[last]
    # Pi looks the compaction up again by id (findIndex); the first path entry with that id.
    comp_id = compaction.get("id", UNDEFINED)
    if plain is None:
        plain = _plain(path)
    ids = list(map(dict.get, _as_dicts(path)[: last + 1], repeat("id"))) if plain else None
    compaction_idx = _first_index_of(path, last + 1, comp_id, ids)
    if compaction_idx < 0:
        return path
    first_kept = compaction.get("firstKeptEntryId", UNDEFINED)
    out: list[SessionEntry] = [compaction]
    kept = _first_index_of(path, compaction_idx, first_kept, ids)
    if kept >= 0:
        out.extend(path[kept:compaction_idx])
    out.extend(path[compaction_idx + 1 :])
    return out


def _pi_leaf(leaf_id: object) -> Any:
    """A public ``leaf_id`` in the internal spelling: ``None``/omitted -> JS ``undefined``,
    :data:`~pi_nb.undefined.NO_LEAF` -> JS ``null`` (``None`` inside this module)."""
    if leaf_id is None:
        return UNDEFINED
    if isinstance(leaf_id, NoLeaf):
        return None
    return leaf_id


def build_context_entries(
    entries: Sequence[SessionEntry],
    leaf_id: str | Undefined | NoLeaf | None = None,
    by_id: EntryIndex | None = None,
) -> list[SessionEntry]:
    """``buildContextEntries(entries, leafId?)``: the entries whose messages form the context.

    ``leaf_id`` as in :func:`build_session_context` (``None`` or omitted: the last entry;
    :data:`~pi_nb.NO_LEAF`: Pi's ``null``, nothing).

    No compaction on the path -> the whole root -> leaf path. Otherwise, with ``C`` the latest
    compaction on the path: ``[C]``, then the path entries before ``C`` from the one whose id is
    ``C.firstKeptEntryId`` on (none if it is not there), then every entry after ``C``. The entries
    are the input objects themselves.
    """
    path = _build_session_path(entries, _pi_leaf(leaf_id), by_id)
    return context_entries_from_path(path)


def _last_index(items: list[Any], value: str) -> int:
    try:
        return len(items) - 1 - items[::-1].index(value)
    except ValueError:
        return -1


def _model(src: Mapping[str, Any], provider_key: str, model_key: str) -> SessionContextModel:
    """``{provider: src[provider_key], modelId: src[model_key]}``, each key only if ``src`` has it
    (Pi copies them unchecked: a hand-edited entry lacking one gives a model lacking it)."""
    model: dict[str, Any] = {}
    if provider_key in src:
        model["provider"] = src[provider_key]
    if model_key in src:
        model["modelId"] = src[model_key]
    return cast(SessionContextModel, model)  # Pi's shape, with the file's values as they are


def _context_settings(
    path: list[SessionEntry], plain: bool | None = None
) -> tuple[Any, SessionContextModel | None]:
    """Thinking level and model of a path: the last ``thinking_level_change``, and the last of
    ``model_change`` / assistant message. For plain dicts the scan runs in C (types mapped out
    once, the last of each found by index); anything unusual takes the entry-by-entry loop, which
    raises where Pi throws. The thinking level is the file's value (``UNDEFINED`` when missing)."""
    if not path or not (_plain(path) if plain is None else plain):
        return _context_settings_loop(path)
    dicts = _as_dicts(path)
    types = list(map(dict.get, dicts, repeat("type")))
    is_message = list(map(eq, types, repeat("message")))
    # the message objects of the message entries (anything, until checked to be dicts just below)
    messages: list[dict[str, Any]] = list(map(dict.get, compress(dicts, is_message), repeat("message")))  # type: ignore[arg-type]
    if messages and set(map(type, messages)) != {dict}:
        return _context_settings_loop(path)  # a message entry without a message object: raises
    thinking_at = _last_index(types, "thinking_level_change")
    thinking_level: Any = path[thinking_at].get("thinkingLevel", UNDEFINED) if thinking_at >= 0 else "off"
    model_change_at = _last_index(types, "model_change")
    assistant: dict[str, Any] | None = None
    assistant_at = -1
    if messages:
        for k in range(len(messages) - 1, -1, -1):
            if messages[k].get("role") == "assistant":
                assistant = messages[k]
                # its place on the path: the (k+1)-th message entry
                positions = list(compress(range(len(path)), is_message))
                assistant_at = positions[k]
                break
    if assistant is not None and assistant_at > model_change_at:
        return thinking_level, _model(assistant, "provider", "model")
    if model_change_at >= 0:
        return thinking_level, _model(dicts[model_change_at], "provider", "modelId")
    return thinking_level, None


def _context_settings_loop(path: list[SessionEntry]) -> tuple[Any, SessionContextModel | None]:
    thinking_level: Any = "off"
    model: SessionContextModel | None = None
    for entry in path:
        etype = entry.get("type")
        if etype == "message":  # most entries: tested first
            message = entry.get("message")
            if type(message) is not dict and not isinstance(message, Mapping):
                raise InvalidEntryError(
                    f"message entry {entry.get('id')!r} has no message object (got {type(message).__name__})"
                )
            if message.get("role") == "assistant":
                model = _model(message, "provider", "model")
        elif etype == "thinking_level_change":
            thinking_level = entry.get("thinkingLevel", UNDEFINED)
        elif etype == "model_change":
            model = _model(entry, "provider", "modelId")
    return thinking_level, model


def build_session_context(
    entries: Sequence[SessionEntry],
    leaf_id: str | Undefined | NoLeaf | None = None,
    by_id: EntryIndex | None = None,
) -> SessionContext:
    """``buildSessionContext(entries, leafId?)``: messages, thinking level and model for a leaf.

    ``leaf_id`` omitted or ``None`` (JS ``undefined``), empty or unknown -> the last entry of
    ``entries``; :data:`~pi_nb.NO_LEAF` (JS ``null``, "before the first entry") -> an empty context.
    See the module docstring for the rules. O(len(entries)); pass ``by_id`` (from
    ``build_entry_index``) to skip re-indexing.
    """
    return context_from_path(_build_session_path(entries, _pi_leaf(leaf_id), by_id))


def context_from_path(path: Sequence[SessionEntry], plain: bool | None = None) -> SessionContext:
    """The :class:`SessionContext` of an already walked root -> leaf ``path`` (what
    :func:`build_session_context` does after the walk; a caller that keeps the path of its leaf
    across appends, like :class:`~pi_nb.session.manager.SessionManager`, skips the walk).
    ``plain``: the caller knows every entry is a plain ``dict`` (``None``: checked here)."""
    path = path if isinstance(path, list) else list(path)
    if plain is None:
        plain = _plain(path)
    thinking_level, model = _context_settings(path, plain)
    messages = context_messages(context_entries_from_path(path, plain))
    return SessionContext(messages=messages, thinking_level=thinking_level, model=model)


def context_messages(entries: Sequence[SessionEntry]) -> list[AgentMessage]:
    """The messages of the context entries (what :func:`context_from_path` does after choosing
    them; the lazy session entries choose them from their index, see :mod:`pi_nb.session.lazy`)."""
    messages: list[AgentMessage] = []
    append = messages.append
    for entry in entries:
        if entry.get("type") == "message":
            message = entry.get("message")
            if type(message) is dict and message.get("content") is not None:
                # the common case of session_entry_to_context_messages, inlined: a message object
                # of the file (checked to be a dict), passed on as it is
                append(cast(AgentMessage, message.copy()))
                continue
        messages.extend(session_entry_to_context_messages(entry))
    return messages
