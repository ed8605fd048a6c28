"""Pi's ``/tree`` selector as a model: the data behind the notebook's session-tree view.

Plain data in, plain data out (no HTML, no widgets): :class:`SessionTreeModel` flattens a
session's entry tree depth first with the active branch first, gives each entry Pi's indentation
and display text (:func:`format_tool_call`, :meth:`SessionTreeModel.display`), applies Pi's filter
modes, folds subtrees, collapses long linear runs into one marker row, and pages the rows.

An index is kept across :meth:`SessionTreeModel.refresh` calls. When the session only grew at its
leaf (the usual case: a turn appended messages), the index, the row groups and the counters are
extended by the new entries only, so a refresh costs the new entries, not the session. A
navigation, a rewritten session or a filter other than ``"all"`` with folds rebuilds what
depends on it.

The model reads its source through a small protocol (:class:`TreeSource`): a
:class:`~pi_nb.session.manager.SessionManager` satisfies it, and so does any object that can
list its entries, its leaf, an entry's label and the session name.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from pi_nb._js import UNDEFINED, Undefined, js_homedir, js_stringify
from pi_nb.errors import NotebookError
from pi_nb.messages import block_text
from pi_nb.session.context import context_entries_from_path, session_entry_to_context_messages
from pi_nb.session.jsonl import gc_paused
from pi_nb.session.manager import _sort_by_timestamp
from pi_nb.session.source import load_session_file, open_session_source
from pi_nb.session.types import FileEntry, SessionEntry
from pi_nb.tokens import DEFAULT_ENCODING, count_message_tokens, estimate_tokens

__all__ = [
    "FILTER_MODES",
    "FilterMode",
    "SessionTreeModel",
    "TreeRow",
    "TreeSource",
    "TreeStats",
    "format_tool_call",
    "load_session_file",
]

FilterMode = Literal["all", "default", "no-tools", "user-only", "labeled-only"]
FILTER_MODES: tuple[str, ...] = ("all", "default", "no-tools", "user-only", "labeled-only")
_SETTINGS_TYPES = frozenset({"label", "custom", "model_change", "thinking_level_change", "session_info"})
_CONTEXT_RESETS = frozenset({"compaction", "branch_summary"})


@runtime_checkable
class TreeSource(Protocol):
    """What the tree model reads from a session."""

    def get_entries(self) -> Sequence[SessionEntry]: ...

    def get_leaf_id(self) -> str | None: ...

    def get_label(self, entry_id: str) -> str | None: ...

    def get_session_name(self) -> str | None: ...


class TreeStats(TypedDict):
    """:meth:`SessionTreeModel.stats`: the numbers of the tree view's header."""

    entries: int
    roots: int
    leaves: int
    branchPoints: int
    compactions: int
    branchSummaries: int
    labels: int
    activePath: int
    inContext: int
    leafId: str | None


def _mapping(value: Any) -> Mapping[str, Any]:
    """A JSON object of the file read tolerantly (a message, a tool call's arguments, ``details``:
    anything its fields may hold), or ``{}`` for anything else."""
    return value if isinstance(value, Mapping) else {}


def _normalize(text: str) -> str:
    return text.replace("\n", " ").replace("\t", " ").strip()


def _extract_content(content: Any) -> str:
    return block_text(content, "", skip_non_string=True)


def _has_text(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        return any(
            isinstance(b, Mapping)
            and b.get("type") == "text"
            and isinstance(b.get("text"), str)
            and b["text"].strip()
            for b in content
        )
    return False


def _shorten_path(p: str) -> str:
    home = js_homedir()
    if home and p.startswith(home):
        return "~" + p[len(home) :]
    return p


def _js_string(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return js_stringify(value)
    return str(value)


def format_tool_call(name: str, args: Mapping[str, Any]) -> str:
    """Pi's tree-selector ``formatToolCall``: ``[read: path:1-20]``, ``[bash: cmd...]``..."""

    def arg(*keys: str, default: str = "") -> str:
        for k in keys:
            v = args.get(k)
            if v:
                return _js_string(v)
        return default

    if name == "read":
        display = _shorten_path(arg("path", "file_path"))
        offset, limit = args.get("offset"), args.get("limit")
        if offset is not None or limit is not None:
            start = offset if offset is not None else 1
            end = (
                start + limit - 1
                if isinstance(limit, (int, float)) and isinstance(start, (int, float))
                else ""
            )
            display += f":{start}" + (f"-{end}" if end else "")
        return f"[read: {display}]"
    if name in ("write", "edit"):
        return f"[{name}: {_shorten_path(arg('path', 'file_path'))}]"
    if name == "bash":
        raw = arg("command")
        cmd = raw.replace("\n", " ").replace("\t", " ").strip()[:50]
        return f"[bash: {cmd}{'...' if len(raw) > 50 else ''}]"
    if name == "grep":
        return f"[grep: /{arg('pattern')}/ in {_shorten_path(arg('path', default='.'))}]"
    if name == "find":
        return f"[find: {arg('pattern')} in {_shorten_path(arg('path', default='.'))}]"
    if name == "ls":
        return f"[ls: {_shorten_path(arg('path', default='.'))}]"
    text = js_stringify(dict(args))
    return f"[{name}: {text[:40]}{'...' if len(text) > 40 else ''}]"


@dataclass(frozen=True)
class TreeRow:
    """One row of the tree view (an entry, or a marker for a collapsed run of entries).

    ``kind`` is the colour class (``user``, ``assistant``, ``toolResult``, ``bashExecution``,
    ``custom``, ``compaction``, ``branch_summary``, ``meta``, ``run``); ``title`` is Pi's
    prefix (``user:``, ``[compaction: 5k tokens]``...) and ``text`` the short text (Pi's
    length limits; the whole text is :meth:`SessionTreeModel.full_text`).
    """

    entry_id: str
    parent_id: str | None
    entry_type: str
    kind: str
    title: str
    text: str
    indent: int
    label: str | None = None
    on_active_path: bool = False
    is_leaf: bool = False
    in_context: bool = False
    child_count: int = 0
    folded: bool = False
    hidden_descendants: int = 0
    detail: str = ""
    run_length: int = 0
    """> 0 for a collapsed-run marker: how many entries it stands for."""
    run_first: str | None = None
    run_last: str | None = None

    @property
    def can_fold(self) -> bool:
        """Whether fold / unfold means anything here (an entry with children, or a folded one)."""
        return not self.run_length and (self.child_count > 0 or self.folded)


class _Node:
    __slots__ = ("children", "entry", "id", "indent", "just_branched", "parent", "visited")

    def __init__(self, entry: SessionEntry, eid: str) -> None:
        self.entry = entry
        self.id = eid
        self.parent: _Node | None = None
        self.children: list[_Node] = []
        self.indent = 0
        self.just_branched = False
        self.visited = False


class _Group:
    """Consecutive visible rows: one special entry, or a run of ordinary ones."""

    __slots__ = ("items", "special")

    def __init__(self, special: bool, items: list[tuple[_Node, int]]) -> None:
        self.special = special
        self.items = items


class SessionTreeModel:
    """Pi's session tree selector as a model the widget and the static HTML share.

    Args:
        source: a :class:`SessionManager` (or any :class:`TreeSource`), a session file path or a
            list of entries.
        leaf_id: the active leaf (default: the source's, followed live on every refresh).
        filter_mode: ``"all"`` (every entry; the default here, since a notebook view is for
            looking at everything), or Pi's ``"default"`` (hides model/thinking/label/custom/
            session-info entries and assistant messages that only call tools), ``"no-tools"``,
            ``"user-only"``, ``"labeled-only"``.
        page_size: rows per page.
        run_threshold: a linear run (single child after single child, nothing special) longer
            than this is shown as its first and last ``run_keep`` rows and one marker row.
        encoding: tiktoken encoding for the per-row token counts (counted only for rows shown).
    """

    def __init__(
        self,
        source: TreeSource | str | os.PathLike[str] | Sequence[FileEntry],
        *,
        leaf_id: str | Undefined | None = UNDEFINED,
        filter_mode: str = "all",
        page_size: int = 100,
        run_threshold: int = 40,
        run_keep: int = 3,
        encoding: str = DEFAULT_ENCODING,
    ) -> None:
        if filter_mode not in FILTER_MODES:
            raise NotebookError(f"filter_mode must be one of {', '.join(FILTER_MODES)}, got {filter_mode!r}")
        if page_size < 1:
            raise NotebookError(f"page_size must be at least 1, got {page_size}")
        if run_keep < 1 or run_threshold < 2 * run_keep + 1:
            raise NotebookError("run_threshold must be more than 2 * run_keep, and run_keep at least 1")
        self.session: TreeSource = source if isinstance(source, TreeSource) else open_session_source(source)
        self._leaf_override = leaf_id
        self.filter_mode: str = filter_mode
        self.page_size = page_size
        self.run_threshold = run_threshold
        self.run_keep = run_keep
        self.encoding = encoding
        self.folded: set[str] = set()
        self.expanded_runs: set[str] = set()
        self.selected_id: str | None = None
        self._token_cache: dict[str, tuple[int, int]] = {}
        self._display_cache: dict[str, tuple[str, str, str, str]] = {}
        self.rebuilds = 0
        """How many times the index was built from scratch (the rest were extensions)."""
        self.version = 0
        """Bumped whenever the rows may have changed (a view compares it to redraw only then)."""
        self._seen = 0
        self._last_entry: SessionEntry | None = None
        self._shown_leaf: str | None = None
        self._positions: dict[str, int] | None = None
        self._positions_version = -1
        self._groups: list[_Group] = []
        self._groups_dirty = True
        self._leaf_group = -1
        self._row_total = -1
        self._build()

    # -- building ---------------------------------------------------------------------------

    @property
    def leaf_id(self) -> str | None:
        """The leaf this model reflects (as of the last :meth:`refresh`)."""
        return self._shown_leaf

    def _source_leaf(self) -> str | None:
        if isinstance(self._leaf_override, Undefined):
            return self.session.get_leaf_id()
        return self._leaf_override

    def is_current(self) -> bool:
        """True when the source has neither new entries nor a moved leaf since the last refresh."""
        entries = self.session.get_entries()
        return (
            len(entries) == self._seen
            and (self._seen == 0 or entries[self._seen - 1] is self._last_entry)
            and self._source_leaf() == self._shown_leaf
        )

    def refresh(self) -> bool:
        """Catch up with the source (new entries, a moved leaf); keep fold and selection state.

        Returns ``True`` if anything changed. Entries appended at the leaf extend the index;
        anything else (entries removed or replaced, a navigation) rebuilds what depends on it.
        """
        entries = self.session.get_entries()
        leaf = self._source_leaf()
        if self._seen and self.selected_id == self._shown_leaf:
            self._follow_selection = True
        n = len(entries)
        prefix_ok = n >= self._seen and (self._seen == 0 or entries[self._seen - 1] is self._last_entry)
        if prefix_ok and n == self._seen:
            if leaf == self._shown_leaf:
                return False
            self._shown_leaf = leaf
            self._flatten()
            self._changed()
            return True
        if prefix_ok and self._seen and self._extend(entries, leaf):
            self._changed()
            return True
        self._build(entries)
        return True

    _follow_selection = False

    def _changed(self) -> None:
        if self._follow_selection:
            self.selected_id = self._shown_leaf
            self._follow_selection = False
        self.version += 1
        self._descendant_cache: dict[str, int] = {}
        if self.selected_id not in self._nodes or not self._nodes[self.selected_id].visited:
            self.selected_id = None
        if self.selected_id is None and self._shown_leaf in self._nodes:
            self.selected_id = self._shown_leaf
        self.folded = {f for f in self.folded if f in self._nodes}

    def _build(self, entries: Sequence[SessionEntry] | None = None) -> None:
        """The whole index from the source's entries."""
        with gc_paused():  # one node per entry: the collector's passes would cost as much as the build
            self._build_unpaused(entries)

    def _build_unpaused(self, entries: Sequence[SessionEntry] | None = None) -> None:
        self.rebuilds += 1
        self._display_cache.clear()
        self._token_cache.clear()
        if entries is None:
            entries = self.session.get_entries()
        self._entries_ref = entries
        self._nodes: dict[str, _Node] = {}
        # call id -> (tool name, arguments: open JSON, the tool's own schema)
        self._tool_calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
        self._calls_scanned: set[str] = set()
        self._all_calls_scanned = False
        self._labeled: set[str] = set()
        self._roots: list[_Node] = []
        nodes = self._nodes
        duplicate = False
        for entry in entries:
            eid = entry.get("id")
            if not isinstance(eid, str) or eid in nodes:
                duplicate = True
                break
            nodes[eid] = _Node(entry, eid)
        self._missing_parents: set[str] = set()
        self._exact_tree = duplicate
        if duplicate:
            self._build_from_tree()
        else:
            for node in nodes.values():
                pid = node.entry.get("parentId")
                parent = nodes.get(pid) if isinstance(pid, str) and pid != node.id else None
                if parent is None:
                    if isinstance(pid, str) and pid != node.id:
                        self._missing_parents.add(pid)
                    self._roots.append(node)
                else:
                    node.parent = parent
                    parent.children.append(node)
            for node in nodes.values():
                if len(node.children) > 1:
                    self._sort_children(node)
            for node in nodes.values():
                if node.entry.get("type") == "label":
                    self._index_entry(node)
        self._seen = len(entries)
        self._last_entry = entries[-1] if entries else None
        self._shown_leaf = self._source_leaf()
        self._flatten()
        self._changed()

    def _build_from_tree(self) -> None:
        """Duplicate or odd ids: take the source's own tree (exactly Pi's, slower)."""
        get_tree = getattr(self.session, "get_tree", None)
        if get_tree is None:
            raise NotebookError("entries with duplicate or non-string ids need a SessionManager source")
        self._nodes = {}
        self._roots = []

        def add(tree_node: Any, parent: _Node | None) -> None:
            stack = [(tree_node, parent)]
            while stack:
                tn, par = stack.pop()
                node = _Node(tn.entry, str(tn.entry.get("id")))
                node.parent = par
                self._nodes[node.id] = node
                if par is None:
                    self._roots.append(node)
                else:
                    par.children.append(node)
                self._index_entry(node)
                stack.extend((c, node) for c in reversed(tn.children))

        for root in get_tree():
            add(root, None)

    def _sort_children(self, node: _Node) -> None:
        by_entry = {id(c.entry): c for c in node.children}
        ordered = _sort_by_timestamp([c.entry for c in node.children])
        node.children = [by_entry[id(e)] for e in ordered]

    def _tool_call(self, entry: SessionEntry, call_id: str) -> tuple[str, Mapping[str, Any]] | None:
        """The tool call a tool result answers: looked up on the result's ancestors (the calling
        assistant message is usually its parent), then anywhere; cached."""
        hit = self._tool_calls.get(call_id)
        if hit is not None or call_id in self._calls_scanned:
            return hit
        node = self._nodes.get(str(entry.get("id")))
        cur = node.parent if node is not None else None
        steps = 0
        while cur is not None and steps < 64:
            if self._scan_calls(cur.entry, call_id):
                return self._tool_calls[call_id]
            cur = cur.parent
            steps += 1
        if not self._all_calls_scanned:
            for other in self._nodes.values():
                self._scan_calls(other.entry, call_id)
            self._all_calls_scanned = True
        self._calls_scanned.add(call_id)
        return self._tool_calls.get(call_id)

    def _scan_calls(self, entry: SessionEntry, call_id: str) -> bool:
        if entry.get("type") != "message":
            return False
        msg = entry.get("message")
        if (
            not isinstance(msg, Mapping)
            or msg.get("role") != "assistant"
            or not isinstance(msg.get("content"), list)
        ):
            return False
        found = False
        for block in msg["content"]:
            if isinstance(block, Mapping) and block.get("type") == "toolCall":
                args = block.get("arguments")
                bid = str(block.get("id"))
                self._tool_calls.setdefault(
                    bid, (str(block.get("name")), args if isinstance(args, Mapping) else {})
                )
                found = found or bid == call_id
        return found

    def _index_entry(self, node: _Node) -> None:
        entry = node.entry
        etype = entry.get("type")
        if etype == "label":
            target = entry.get("targetId")
            if isinstance(target, str):
                if self.session.get_label(target):
                    self._labeled.add(target)
                else:
                    self._labeled.discard(target)

    def _flatten(self) -> None:
        """Depth first, the child holding the leaf first at every level, Pi's indentation."""
        leaf = self._shown_leaf
        path: list[_Node] = []
        cur = self._nodes.get(leaf) if leaf is not None else None
        seen: set[str] = set()
        while cur is not None and cur.id not in seen:
            seen.add(cur.id)
            path.append(cur)
            cur = cur.parent
        path.reverse()
        self._active: set[str] = seen
        self._path = path
        self._compute_context()
        for node in self._nodes.values():
            node.visited = False
        roots = self._roots
        if len(roots) > 1 and path and path[0] in roots:
            roots = [path[0], *(r for r in roots if r is not path[0])]
        multiple_roots = len(roots) > 1
        flat: list[_Node] = []
        work: list[tuple[_Node, int, bool]] = [
            (r, 1 if multiple_roots else 0, multiple_roots) for r in reversed(roots)
        ]
        active = self._active
        while work:
            node, indent, just_branched = work.pop()
            if node.visited:
                continue
            node.visited = True
            node.indent = indent
            node.just_branched = just_branched
            flat.append(node)
            kids = node.children
            if len(kids) > 1 and node.id in active:
                kids = sorted(kids, key=lambda c: c.id not in active)
            multiple = len(kids) > 1
            child_indent = indent + 1 if multiple or (just_branched and indent > 0) else indent
            for child in reversed(kids):
                work.append((child, child_indent, multiple))
        self._flat = flat
        self._stats_counts()
        self._groups_dirty = True

    def _compute_context(self) -> None:
        leaf = self._shown_leaf
        if leaf is not None and leaf in self._nodes and self._path:
            # the same selection as build_context_entries, on the path already walked
            path = [n.entry for n in self._path]
            self._context_ids: set[str] = {str(e.get("id")) for e in context_entries_from_path(path)}
        else:
            self._context_ids = set()

    def _stats_counts(self) -> None:
        types: dict[str, int] = {}
        leaves = branch_points = roots = 0
        for node in self._flat:
            t = str(node.entry.get("type"))
            types[t] = types.get(t, 0) + 1
            n = len(node.children)
            leaves += n == 0
            branch_points += n > 1
            roots += node.parent is None
        self._types = types
        self._leaves = leaves
        self._branch_points = branch_points
        self._root_count = roots

    def _extend(self, entries: Sequence[SessionEntry], leaf: str | None) -> bool:
        """Index the entries after ``self._seen`` (an append-only session). When they continue
        the shown leaf as one chain, the flat order and the row groups are extended too; else
        only what depends on the leaf is redone. ``False``: the index cannot be extended (an id
        seen before, or one that earlier entries named as a missing parent) - rebuild."""
        if self._exact_tree:
            return False
        new = entries[self._seen :]
        old_leaf = self._nodes.get(self._shown_leaf) if self._shown_leaf is not None else None
        chain = (
            old_leaf is not None
            and not old_leaf.children
            and old_leaf.visited
            and old_leaf.id not in self.folded
            and isinstance(self._leaf_override, Undefined)
        )
        made: dict[str, _Node] = {}
        parent_id = old_leaf.id if old_leaf is not None else None
        for entry in new:
            eid = entry.get("id")
            if not isinstance(eid, str) or eid in self._nodes or eid in made or eid in self._missing_parents:
                return False
            made[eid] = _Node(entry, eid)
            if entry.get("parentId") != parent_id or eid == parent_id:
                chain = False
            parent_id = eid
        if not made:
            return False
        nodes = list(made.values())
        chain = chain and nodes[-1].id == leaf
        # commit: the index
        self._calls_scanned.clear()
        self._all_calls_scanned = False
        self._nodes.update(made)
        for node in nodes:
            pid = node.entry.get("parentId")
            parent = self._nodes.get(pid) if isinstance(pid, str) and pid != node.id else None
            if parent is None:
                if isinstance(pid, str) and pid != node.id:
                    self._missing_parents.add(pid)
                self._roots.append(node)
            else:
                node.parent = parent
                parent.children.append(node)
                if len(parent.children) > 1:
                    self._sort_children(parent)
            if node.entry.get("type") == "label":
                self._index_entry(node)
        self._seen = len(entries)
        self._last_entry = entries[-1]
        if not chain or old_leaf is None:
            self._shown_leaf = leaf
            self._flatten()
            return True
        if self._follow_selection:
            self.selected_id = leaf
        prev = old_leaf
        for node in nodes:
            node.visited = True
            node.indent = prev.indent if not (prev.just_branched and prev.indent > 0) else prev.indent + 1
            node.just_branched = False
            self._active.add(node.id)
            self._path.append(node)
            t = str(node.entry.get("type"))
            self._types[t] = self._types.get(t, 0) + 1
            prev = node
        # leaves, branch points and roots are unchanged: the old leaf had no children, the chain is linear
        pos = len(self._path) - len(nodes)  # the old leaf is at pos - 1 in the flat order
        self._flat[pos:pos] = nodes
        self._shown_leaf = leaf
        if any(n.entry.get("type") in _CONTEXT_RESETS for n in nodes) or not self._context_ids:
            self._compute_context()
        else:
            self._context_ids.update(n.id for n in nodes)
        if (
            self._groups_dirty
            or self.filter_mode != "all"
            or self.folded
            or any(n.entry.get("type") == "label" for n in nodes)
        ):
            self._groups_dirty = True
        else:
            self._extend_groups(old_leaf, nodes)
        return True

    def _extend_groups(self, old_leaf: _Node, made: list[_Node]) -> None:
        """The row groups after a chain was appended under the old leaf (filter "all")."""
        groups = self._groups
        gi = self._leaf_group
        assert groups[gi].special and groups[gi].items[0][0] is old_leaf
        flat_pos = len(self._path) - len(made) - 1
        prev_indent = self._flat[flat_pos - 1].indent if flat_pos > 0 else None
        items: list[tuple[tuple[_Node, int], bool]] = []
        items.append(((old_leaf, old_leaf.indent), self._special(old_leaf, old_leaf.indent, prev_indent)))
        p = old_leaf.indent
        for node in made:
            items.append(((node, node.indent), self._special(node, node.indent, p)))
            p = node.indent
        del groups[gi]
        insert_at = gi
        tail: list[_Group] = []
        before = groups[gi - 1] if gi > 0 else None
        current: _Group | None = before if before is not None and not before.special else None
        for item, special in items:
            if special:
                current = None
                tail.append(_Group(True, [item]))
            elif current is None:
                current = _Group(False, [item])
                tail.append(current)
            else:
                current.items.append(item)
        groups[insert_at:insert_at] = tail
        self._leaf_group = insert_at + len(tail) - 1
        self._row_total = -1

    # -- groups (the rows, lazily) -----------------------------------------------------------

    def _passes(self, node: _Node) -> bool:
        entry = node.entry
        etype = entry.get("type")
        mode = self.filter_mode
        if mode == "all":
            return True
        if etype == "message" and node.id != self._shown_leaf:
            msg = entry.get("message")
            if isinstance(msg, Mapping) and msg.get("role") == "assistant":
                stop = msg.get("stopReason")
                if not _has_text(msg.get("content")) and not (stop and stop not in ("stop", "toolUse")):
                    return False
        role = _mapping(entry.get("message")).get("role") if etype == "message" else None
        if mode == "user-only":
            return etype == "message" and role == "user"
        if mode == "no-tools":
            return etype not in _SETTINGS_TYPES and role != "toolResult"
        if mode == "labeled-only":
            return node.id in self._labeled
        return etype not in _SETTINGS_TYPES

    def _visible(self) -> list[tuple[_Node, int]]:
        """Filtered, unfolded nodes with Pi's recalculated indentation."""
        flat = self._flat
        if self.folded:
            skip: set[str] = set()
            for node in flat:
                if node.parent is not None and (node.parent.id in self.folded or node.parent.id in skip):
                    skip.add(node.id)
            flat = [n for n in flat if n.id not in skip]
        if self.filter_mode == "all":
            return [(n, n.indent) for n in flat]
        passing = [n for n in flat if self._passes(n)]
        visible_ids = {n.id for n in passing}
        memo: dict[str, _Node | None] = {}

        def visible_ancestor(node: _Node) -> _Node | None:
            chain: list[str] = []
            cur = node.parent
            result: _Node | None = None
            while cur is not None:
                if cur.id in visible_ids:
                    result = cur
                    break
                if cur.id in memo:
                    result = memo[cur.id]
                    break
                chain.append(cur.id)
                cur = cur.parent
            for c in chain:
                memo[c] = result
            return result

        children: dict[str | None, list[_Node]] = {None: []}
        for n in passing:
            anc = visible_ancestor(n)
            children.setdefault(anc.id if anc else None, []).append(n)
        roots = children[None]
        multiple = len(roots) > 1
        indents: dict[str, int] = {}
        stack: list[tuple[_Node, int, bool]] = [(r, 1 if multiple else 0, multiple) for r in reversed(roots)]
        while stack:
            node, indent, just = stack.pop()
            indents[node.id] = indent
            kids = children.get(node.id, [])
            many = len(kids) > 1
            ci = indent + 1 if many or (just and indent > 0) else indent
            stack.extend((k, ci, many) for k in reversed(kids))
        return [(n, indents[n.id]) for n in passing]

    def _special(self, node: _Node, indent: int, prev_indent: int | None) -> bool:
        return (
            len(node.children) != 1
            or node.parent is None
            or prev_indent != indent
            or node.id == self._shown_leaf
            or node.id == self.selected_id
            or node.id in self.folded
            or node.id in self._labeled
            or node.entry.get("type") in _CONTEXT_RESETS
            or len(node.parent.children) > 1
        )

    def _ensure_groups(self) -> list[_Group]:
        if not self._groups_dirty:
            return self._groups
        with gc_paused():
            return self._regroup()

    def _regroup(self) -> list[_Group]:
        groups: list[_Group] = []
        run: list[tuple[_Node, int]] = []
        prev_indent: int | None = None
        leaf_group = -1
        leaf, sel, folded, labeled = self._shown_leaf, self.selected_id, self.folded, self._labeled
        for node, indent in self._visible():
            # _special(), inlined: this loop runs once per entry
            parent = node.parent
            if (
                len(node.children) != 1
                or parent is None
                or prev_indent != indent
                or len(parent.children) > 1
                or node.id == leaf
                or node.id == sel
                or node.id in folded
                or node.id in labeled
                or node.entry.get("type") in _CONTEXT_RESETS
            ):
                if run:
                    groups.append(_Group(False, run))
                    run = []
                if node.id == self._shown_leaf:
                    leaf_group = len(groups)
                groups.append(_Group(True, [(node, indent)]))
            else:
                run.append((node, indent))
            prev_indent = indent
        if run:
            groups.append(_Group(False, run))
        self._groups = groups
        self._leaf_group = leaf_group
        self._groups_dirty = False
        self._row_total = -1
        return groups

    def _collapsed(self, group: _Group) -> bool:
        items = group.items
        return (
            not group.special
            and len(items) > self.run_threshold
            and items[self.run_keep][0].id not in self.expanded_runs
        )

    def _group_rows(self, group: _Group) -> int:
        return 2 * self.run_keep + 1 if self._collapsed(group) else len(group.items)

    def _materialize(self, group: _Group) -> Iterator[TreeRow]:
        if not self._collapsed(group):
            for node, indent in group.items:
                yield self._row(node, indent)
            return
        k = self.run_keep
        items = group.items
        for node, indent in items[:k]:
            yield self._row(node, indent)
        hidden = items[k:-k]
        first, last = hidden[0][0], hidden[-1][0]
        yield TreeRow(
            entry_id=first.id,
            parent_id=first.parent.id if first.parent else None,
            entry_type="run",
            kind="run",
            title=f"⋯ {len(hidden)} entries",
            text=f"{first.id} … {last.id}",
            indent=hidden[0][1],
            on_active_path=first.id in self._active,
            run_length=len(hidden),
            run_first=first.id,
            run_last=last.id,
        )
        for node, indent in items[-k:]:
            yield self._row(node, indent)

    def _row(self, node: _Node, indent: int) -> TreeRow:
        entry = node.entry
        eid = node.id
        shown = self._display_cache.get(eid)
        if shown is None:  # entries never change: their display text is computed once
            shown = self._display_cache[eid] = self.display(entry)
        title, text, kind, detail = shown
        folded = eid in self.folded
        return TreeRow(
            entry_id=eid,
            parent_id=node.parent.id if node.parent else None,
            entry_type=str(entry.get("type")),
            kind=kind,
            title=title,
            text=text,
            indent=indent,
            label=self.session.get_label(eid) if eid in self._labeled else None,
            on_active_path=eid in self._active,
            is_leaf=eid == self._shown_leaf,
            in_context=eid in self._context_ids,
            child_count=len(node.children),
            folded=folded,
            hidden_descendants=self._descendants(node) if folded else 0,
            detail=detail,
        )

    def _descendants(self, node: _Node) -> int:
        hit = self._descendant_cache.get(node.id)
        if hit is None:
            count = 0
            stack = list(node.children)
            while stack:
                n = stack.pop()
                count += 1
                stack.extend(n.children)
            self._descendant_cache[node.id] = hit = count
        return hit

    def rows(self) -> list[TreeRow]:
        """Every visible row: filtered, folded, long linear runs collapsed to a marker row."""
        return [row for g in self._ensure_groups() for row in self._materialize(g)]

    @property
    def row_count(self) -> int:
        groups = self._ensure_groups()
        if self._row_total < 0:
            self._row_total = sum(self._group_rows(g) for g in groups)
        return self._row_total

    # -- counts -----------------------------------------------------------------------------

    @property
    def entry_count(self) -> int:
        return len(self._flat)

    def stats(self) -> TreeStats:
        """Numbers for the header: entries, roots, branch points, leaves, compactions, labels."""
        return {
            "entries": len(self._flat),
            "roots": self._root_count,
            "leaves": self._leaves,
            "branchPoints": self._branch_points,
            "compactions": self._types.get("compaction", 0),
            "branchSummaries": self._types.get("branch_summary", 0),
            "labels": len(self._labeled),
            "activePath": len(self._active),
            "inContext": len(self._context_ids),
            "leafId": self._shown_leaf,
        }

    def tokens(self, entry_id: str) -> tuple[int, int]:
        """``(Pi's estimate, tiktoken)`` of the messages the entry puts in context (cached)."""
        hit = self._token_cache.get(entry_id)
        if hit is None:
            msgs = session_entry_to_context_messages(self._require(entry_id).entry)
            hit = (
                sum(estimate_tokens(m) for m in msgs),
                sum(count_message_tokens(m, self.encoding) for m in msgs),
            )
            self._token_cache[entry_id] = hit
        return hit

    # -- state changes ----------------------------------------------------------------------

    def _invalidate(self) -> None:
        self._groups_dirty = True
        self.version += 1

    def set_filter(self, mode: str) -> None:
        if mode not in FILTER_MODES:
            raise NotebookError(f"filter_mode must be one of {', '.join(FILTER_MODES)}, got {mode!r}")
        self.filter_mode = mode
        self._invalidate()

    def can_fold(self, entry_id: str) -> bool:
        """Whether :meth:`toggle_fold` has anything to do for this entry."""
        node = self._require(entry_id)
        return bool(node.children) or entry_id in self.folded

    def fold(self, entry_id: str) -> None:
        """Hide the descendants of an entry (it must have children)."""
        node = self._require(entry_id)
        if not node.children:
            raise NotebookError(f"Entry {entry_id} has no children to fold")
        self.folded.add(entry_id)
        self._invalidate()

    def unfold(self, entry_id: str) -> None:
        self._require(entry_id)
        self.folded.discard(entry_id)
        self._invalidate()

    def toggle_fold(self, entry_id: str) -> None:
        if entry_id in self.folded:
            self.unfold(entry_id)
        else:
            self.fold(entry_id)

    def fold_branches(self) -> None:
        """Fold every branch that does not hold the active leaf (a compact overview)."""
        for node in self._flat:
            if (
                node.children
                and node.id not in self._active
                and node.parent is not None
                and node.parent.id in self._active
            ):
                self.folded.add(node.id)
        self._invalidate()

    def unfold_all(self) -> None:
        self.folded.clear()
        self._invalidate()

    def expand_run(self, entry_id: str) -> None:
        """Show every entry of the collapsed run that starts at ``entry_id``."""
        self._require(entry_id)
        self.expanded_runs.add(entry_id)
        self._invalidate()

    def select(self, entry_id: str) -> None:
        node = self._require(entry_id)
        if self.selected_id == entry_id:
            return
        self.selected_id = entry_id
        # a selected entry inside a folded subtree becomes visible
        cur = node.parent
        while cur is not None:
            self.folded.discard(cur.id)
            cur = cur.parent
        self._invalidate()

    def _require(self, entry_id: str) -> _Node:
        node = self._nodes.get(entry_id) if isinstance(entry_id, str) else None
        if node is None or not node.visited:
            raise NotebookError(f"Entry {entry_id} not found")
        return node

    def entry(self, entry_id: str) -> SessionEntry:
        return self._require(entry_id).entry

    def path_to(self, entry_id: str) -> list[str]:
        """Ids from the root down to ``entry_id``."""
        out: list[str] = []
        cur: _Node | None = self._require(entry_id)
        while cur is not None:
            out.append(cur.id)
            cur = cur.parent
        out.reverse()
        return out

    # -- paging -----------------------------------------------------------------------------

    @property
    def page_count(self) -> int:
        return max(1, -(-self.row_count // self.page_size))

    def page_rows(self, page: int) -> list[TreeRow]:
        if not 0 <= page < self.page_count:
            raise NotebookError(f"page {page} is out of range (0..{self.page_count - 1})")
        start, stop = page * self.page_size, (page + 1) * self.page_size
        out: list[TreeRow] = []
        at = 0
        for group in self._ensure_groups():
            n = self._group_rows(group)
            if at + n > start:
                for i, row in enumerate(self._materialize(group)):
                    if start <= at + i < stop:
                        out.append(row)
            at += n
            if at >= stop:
                break
        return out

    def row_index(self, entry_id: str | None) -> int | None:
        """Index of the row that shows ``entry_id`` (or its nearest visible ancestor; the marker
        row of a collapsed run for an entry inside it)."""
        groups = self._ensure_groups()
        if entry_id is None:
            return None
        if entry_id == self._shown_leaf and 0 <= self._leaf_group < len(groups):
            return sum(self._group_rows(g) for g in groups[: self._leaf_group])
        if self._positions_version != self.version or self._positions is None:
            positions: dict[str, int] = {}
            at = 0
            k = self.run_keep
            for group in groups:
                items = group.items
                if self._collapsed(group):
                    last = len(items) - k
                    for j, (node, _i) in enumerate(items):
                        positions[node.id] = (
                            at + j if j < k else (at + k if j < last else at + j - last + k + 1)
                        )
                else:
                    for j, (node, _i) in enumerate(items):
                        positions[node.id] = at + j
                at += self._group_rows(group)
            self._positions = positions
            self._positions_version = self.version
        cur = self._nodes.get(entry_id) if isinstance(entry_id, str) else None
        seen: set[str] = set()
        while cur is not None and cur.id not in seen:
            seen.add(cur.id)
            hit = self._positions.get(cur.id)
            if hit is not None:
                return hit
            cur = cur.parent
        return None

    def page_of(self, entry_id: str | None) -> int:
        """The page that shows ``entry_id`` (or its nearest visible ancestor); 0 if none."""
        idx = self.row_index(entry_id)
        return 0 if idx is None else idx // self.page_size

    # -- display text -----------------------------------------------------------------------

    def full_text(self, entry: SessionEntry) -> str:
        """The whole text of an entry (what the row shortens): a message's text, a summary."""
        etype = entry.get("type")
        if etype == "message":
            msg = _mapping(entry.get("message"))
            if msg.get("role") == "bashExecution":
                return f"$ {msg.get('command') or ''}\n{msg.get('output') or ''}"
            text = _extract_content(msg.get("content"))
            if not text and msg.get("errorMessage"):
                text = str(msg.get("errorMessage"))
            return text
        if etype == "custom_message":
            content = entry.get("content")
            return content if isinstance(content, str) else _extract_content(content)
        if etype in _CONTEXT_RESETS:
            return str(entry.get("summary") or "")
        return ""

    def display(self, entry: SessionEntry) -> tuple[str, str, str, str]:
        """``(title, text, kind, detail)`` as Pi's tree selector shows the entry."""
        etype = entry.get("type")
        if etype == "message":
            msg = _mapping(entry.get("message"))
            role = msg.get("role")
            if role == "user":
                return "user:", _normalize(_extract_content(msg.get("content")))[:200], "user", ""
            if role == "assistant":
                text = _normalize(_extract_content(msg.get("content")))[:200]
                calls = [
                    format_tool_call(str(b.get("name")), _mapping(b.get("arguments")))
                    for b in msg.get("content") or []
                    if isinstance(b, Mapping) and b.get("type") == "toolCall"
                ]
                detail = " ".join(calls)
                if not text:
                    if msg.get("stopReason") == "aborted":
                        text = "(aborted)"
                    elif msg.get("errorMessage"):
                        text = _normalize(str(msg.get("errorMessage")))[:80]
                    elif calls:
                        text = detail
                        detail = ""
                    else:
                        text = "(no content)"
                return "assistant:", text, "assistant", detail
            if role == "toolResult":
                call = self._tool_call(entry, str(msg.get("toolCallId")))
                title = format_tool_call(*call) if call else f"[{msg.get('toolName') or 'tool'}]"
                details = _mapping(msg.get("details"))
                trunc = details.get("truncation") if isinstance(details.get("truncation"), Mapping) else None
                note = ""
                if trunc and trunc.get("truncated"):
                    note = f"truncated by {trunc.get('truncatedBy')}"
                if msg.get("isError"):
                    note = ("error; " + note) if note else "error"
                return title, _normalize(_extract_content(msg.get("content")))[:120], "toolResult", note
            if role == "bashExecution":
                return "[bash]:", _normalize(str(msg.get("command") or "")), "bashExecution", ""
            return f"[{role}]", "", "meta", ""
        if etype == "custom_message":
            content = entry.get("content")
            text = content if isinstance(content, str) else _extract_content(content)
            return f"[{entry.get('customType')}]:", _normalize(text)[:200], "custom", ""
        if etype == "compaction":
            tb = entry.get("tokensBefore")
            k = round(tb / 1000) if isinstance(tb, (int, float)) else "?"
            detail = f"tokensBefore {tb}, keeps from {entry.get('firstKeptEntryId')}"
            if entry.get("fromHook"):
                detail += ", from a hook"
            return (
                f"[compaction: {k}k tokens]",
                _normalize(str(entry.get("summary") or ""))[:160],
                "compaction",
                detail,
            )
        if etype == "branch_summary":
            return (
                "[branch summary]:",
                _normalize(str(entry.get("summary") or ""))[:200],
                "branch_summary",
                f"from {entry.get('fromId')}",
            )
        if etype == "model_change":
            return f"[model: {entry.get('modelId')}]", "", "meta", str(entry.get("provider") or "")
        if etype == "thinking_level_change":
            return f"[thinking: {entry.get('thinkingLevel')}]", "", "meta", ""
        if etype == "custom":
            return f"[custom: {entry.get('customType')}]", "", "meta", ""
        if etype == "label":
            label = entry.get("label")
            return f"[label: {label if label else '(cleared)'}]", "", "meta", f"on {entry.get('targetId')}"
        if etype == "session_info":
            return f"[title: {entry.get('name') or 'empty'}]", "", "meta", ""
        return f"[{etype}]", "", "meta", ""
