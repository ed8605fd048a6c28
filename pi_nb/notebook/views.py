"""Static views: the session tree, the token budget and truncation boundaries as HTML and text.

Everything here is plain data in, strings out: no ipywidgets, no pandas, no JavaScript. The
widgets in :mod:`pi_nb.notebook.widgets` draw the same HTML, and every view object renders as
``text/html`` + ``text/plain`` through ``_repr_mimebundle_``, so a notebook reads the same in
nbconvert HTML, on GitHub, in VS Code and in a headless browser.

The HTML uses inline ``style`` attributes only (no ``<style>`` block, no class-based CSS, no
CDN, no SVG that a sanitiser might strip), every user-supplied text is escaped, and the size is
bounded: the tree shows one page of rows and collapses long linear runs, and the truncation view
shows a window of lines around the cut, never the whole output.

* :class:`SessionTreeModel` - Pi's ``/tree`` selector as a model: entries flattened depth first
  with the active branch first, Pi's indentation and display text, Pi's filter modes, folding,
  collapsed runs, paging.
* :func:`render_budget_html` / :func:`render_budget_text` - the context window as a bar.
* :class:`TruncationReport` (:func:`truncation_report`, :func:`truncation_report_for_text`) -
  what the model saw of a tool output against the full output, down to the bytes at the cut.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pi_nb._js import UNDEFINED, Undefined, js_stringify, js_utf8_encode
from pi_nb.errors import NotebookError, TruncationError
from pi_nb.notebook.budget import TokenBudget, format_tokens
from pi_nb.session.context import build_context_entries, session_entry_to_context_messages
from pi_nb.session.jsonl import read_session_file
from pi_nb.session.manager import SessionManager, SessionTreeNode
from pi_nb.tokens import DEFAULT_ENCODING, count_message_tokens, estimate_tokens
from pi_nb.truncation import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    TruncationResult,
    format_size,
    truncate_head,
    truncate_tail,
)

__all__ = [
    "FILTER_MODES",
    "MIME_WIDGET",
    "SessionTreeModel",
    "StaticView",
    "TreeRow",
    "TruncationReport",
    "escape",
    "load_session",
    "render_budget_html",
    "render_budget_text",
    "render_tree_html",
    "render_tree_text",
    "render_truncation_html",
    "render_truncation_text",
    "truncation_report",
    "truncation_report_for_text",
]

MIME_WIDGET = "application/vnd.jupyter.widget-view+json"

FONT = "font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;line-height:1.45"
SANS = "font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;font-size:13px"

COLORS: dict[str, str] = {
    "system prompt": "#475569",
    "tool schemas": "#94a3b8",
    "context files": "#0891b2",
    "skills list": "#0d9488",
    "append": "#6366f1",
    "user": "#2563eb",
    "assistant": "#16a34a",
    "tool results": "#9333ea",
    "summaries": "#d97706",
    "free": "#f1f5f9",
    "reserve": "#fee2e2",
    "warning": "#d97706",
    "error": "#dc2626",
    "ok": "#15803d",
    "unknown": "#64748b",
    "usage": "#0f172a",
    "estimate": "#be123c",
    "keep": "#0369a1",
}
_EXTRA_PART_COLORS = ("#0e7490", "#7c3aed", "#db2777", "#65a30d", "#ea580c")


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` if it is a mapping, else an empty one (for optional object fields)."""
    return value if isinstance(value, Mapping) else {}


def escape(text: object) -> str:
    """HTML-escape any value (quotes too: the text may end up in an attribute)."""
    return html.escape(str(text), quote=True)


class StaticView:
    """Base of every view object: ``text/plain`` + ``text/html`` through ``_repr_mimebundle_``.

    Subclasses implement :meth:`to_html` and :meth:`to_text`. Widget views extend the bundle
    with the live widget when a kernel with comms is running (:mod:`pi_nb.notebook.widgets`).
    """

    def to_html(self) -> str:
        raise NotImplementedError

    def to_text(self) -> str:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return self.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return {"text/plain": self.to_text(), "text/html": self.to_html()}

    def __str__(self) -> str:
        return self.to_text()


# =============================================================================================
# sessions
# =============================================================================================


def load_session(
    source: SessionManager | str | os.PathLike[str] | Sequence[Mapping[str, Any]],
) -> SessionManager:
    """A :class:`SessionManager` for a view, without ever writing to disk.

    A path is read with :func:`pi_nb.session.jsonl.read_session_file` and loaded in memory (an
    old format is migrated in memory only, a torn last line is left as it is); a list of entries
    (header optional) is loaded in memory; a manager is used as it is.
    """
    if isinstance(source, SessionManager):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        contents = read_session_file(path)
        if not contents.exists:
            raise NotebookError(f"no such session file: {path}")
        if not contents.valid:
            raise NotebookError(f"not a pi session file: {path}")
        header = contents.entries[0]
        cwd = header.get("cwd") if isinstance(header.get("cwd"), str) else None
        return SessionManager.in_memory(cwd, entries=contents.entries)
    if isinstance(source, Sequence):
        return SessionManager.in_memory(None, entries=list(source))
    raise NotebookError(
        f"a session source must be a SessionManager, a path or a list of entries, got {type(source).__name__}"
    )


# =============================================================================================
# the session tree
# =============================================================================================

FilterMode = Literal["all", "default", "no-tools", "user-only", "labeled-only"]
FILTER_MODES: tuple[str, ...] = ("all", "default", "no-tools", "user-only", "labeled-only")
_SETTINGS_TYPES = frozenset({"label", "custom", "model_change", "thinking_level_change", "session_info"})


def _normalize(text: str) -> str:
    return text.replace("\n", " ").replace("\t", " ").strip()


def _extract_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        b.get("text", "")
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


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
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or ""
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
    prefix (``user:``, ``[compaction: 5k tokens]``...) and ``text`` the short text.
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


@dataclass
class _Flat:
    node: SessionTreeNode
    indent: int
    parent: str | None
    children: list[str] = field(default_factory=list)


class SessionTreeModel:
    """Pi's session tree selector as a model the widget and the static HTML share.

    Args:
        source: a :class:`SessionManager`, a session file path or a list of entries.
        leaf_id: the active leaf (default: the manager's).
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
        source: SessionManager | str | os.PathLike[str] | Sequence[Mapping[str, Any]],
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
        self.session = load_session(source)
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
        self.refresh()

    # -- building ---------------------------------------------------------------------------

    @property
    def leaf_id(self) -> str | None:
        if isinstance(self._leaf_override, Undefined):
            return self.session.get_leaf_id()
        return self._leaf_override

    def refresh(self) -> None:
        """Re-read the session (after new entries or a navigation) and keep fold state."""
        self._token_cache.clear()
        roots = self.session.get_tree()
        leaf = self.leaf_id
        self._flat: list[_Flat] = []
        self._by_id: dict[str, _Flat] = {}
        self._tool_calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
        self._active: set[str] = set()
        self._context_ids: set[str] = set()

        entries = self.session.get_entries()
        by_id_entry = {e.get("id"): e for e in entries}
        cur = leaf
        seen: set[str] = set()
        while cur is not None and cur not in seen and cur in by_id_entry:
            seen.add(cur)
            self._active.add(cur)
            cur = by_id_entry[cur].get("parentId")
        if leaf is not None and leaf in by_id_entry:
            self._context_ids = {e.get("id") for e in build_context_entries(entries, leaf)}  # type: ignore[misc]

        # containsActive (post-order, iterative)
        order: list[SessionTreeNode] = []
        stack = list(roots)
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(node.children)
        contains: dict[int, bool] = {}
        for node in reversed(order):
            has = leaf is not None and node.entry.get("id") == leaf
            if not has:
                has = any(contains.get(id(c), False) for c in node.children)
            contains[id(node)] = has

        multiple_roots = len(roots) > 1
        ordered_roots = sorted(roots, key=lambda r: not contains.get(id(r), False))
        work: list[tuple[SessionTreeNode, int, bool, str | None]] = [
            (r, 1 if multiple_roots else 0, multiple_roots, None) for r in reversed(ordered_roots)
        ]
        while work:
            node, indent, just_branched, parent = work.pop()
            entry = node.entry
            eid = str(entry.get("id"))
            if entry.get("type") == "message":
                msg = entry.get("message")
                if (
                    isinstance(msg, Mapping)
                    and msg.get("role") == "assistant"
                    and isinstance(msg.get("content"), list)
                ):
                    for block in msg["content"]:
                        if isinstance(block, Mapping) and block.get("type") == "toolCall":
                            args = block.get("arguments")
                            self._tool_calls[str(block.get("id"))] = (
                                str(block.get("name")),
                                args if isinstance(args, Mapping) else {},
                            )
            flat = _Flat(node, indent, parent)
            self._flat.append(flat)
            self._by_id[eid] = flat
            if parent is not None and parent in self._by_id:
                self._by_id[parent].children.append(eid)
            kids = sorted(node.children, key=lambda c: not contains.get(id(c), False))
            multiple = len(kids) > 1
            child_indent = indent + 1 if multiple or (just_branched and indent > 0) else indent
            for child in reversed(kids):
                work.append((child, child_indent, multiple, eid))

        # descendant counts (for folded rows), bottom-up over the pre-order list
        self._descendants: dict[str, int] = {}
        for flat in reversed(self._flat):
            eid = str(flat.node.entry.get("id"))
            self._descendants[eid] = sum(1 + self._descendants[c] for c in flat.children)
        self.folded &= set(self._by_id)
        if self.selected_id not in self._by_id:
            self.selected_id = leaf if leaf in self._by_id else None
        self._rows_cache: list[TreeRow] | None = None

    # -- counts -----------------------------------------------------------------------------

    @property
    def entry_count(self) -> int:
        return len(self._flat)

    def stats(self) -> dict[str, Any]:
        """Numbers for the header: entries, roots, branch points, leaves, compactions, labels."""
        types: dict[str, int] = {}
        leaves = branch_points = 0
        for flat in self._flat:
            t = str(flat.node.entry.get("type"))
            types[t] = types.get(t, 0) + 1
            n = len(flat.children)
            leaves += n == 0
            branch_points += n > 1
        return {
            "entries": len(self._flat),
            "roots": sum(1 for f in self._flat if f.parent is None),
            "leaves": leaves,
            "branchPoints": branch_points,
            "compactions": types.get("compaction", 0),
            "branchSummaries": types.get("branch_summary", 0),
            "labels": sum(1 for f in self._flat if f.node.label),
            "activePath": len(self._active),
            "inContext": len(self._context_ids),
            "leafId": self.leaf_id,
        }

    def tokens(self, entry_id: str) -> tuple[int, int]:
        """``(Pi's estimate, tiktoken)`` of the messages the entry puts in context (cached)."""
        hit = self._token_cache.get(entry_id)
        if hit is None:
            flat = self._by_id.get(entry_id)
            if flat is None:
                raise NotebookError(f"Entry {entry_id} not found")
            msgs = session_entry_to_context_messages(flat.node.entry)
            hit = (
                sum(estimate_tokens(m) for m in msgs),
                sum(count_message_tokens(m, self.encoding) for m in msgs),
            )
            self._token_cache[entry_id] = hit
        return hit

    # -- rows -------------------------------------------------------------------------------

    def _passes(self, flat: _Flat) -> bool:
        entry = flat.node.entry
        etype = entry.get("type")
        eid = entry.get("id")
        mode = self.filter_mode
        if mode == "all":
            return True
        if etype == "message" and eid != self.leaf_id:
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
            return flat.node.label is not None
        return etype not in _SETTINGS_TYPES

    def _visible(self) -> list[tuple[_Flat, int]]:
        """Filtered, unfolded nodes with Pi's recalculated indentation."""
        passing = [f for f in self._flat if self._passes(f)]
        if self.folded:
            skip: set[str] = set()
            for flat in self._flat:
                if flat.parent is not None and (flat.parent in self.folded or flat.parent in skip):
                    skip.add(str(flat.node.entry.get("id")))
            passing = [f for f in passing if str(f.node.entry.get("id")) not in skip]
        if self.filter_mode == "all":
            return [(f, f.indent) for f in passing]
        visible_ids = {str(f.node.entry.get("id")) for f in passing}
        ancestor_memo: dict[str, str | None] = {}

        def visible_ancestor(eid: str) -> str | None:
            chain: list[str] = []
            cur = self._by_id[eid].parent
            result: str | None = None
            while cur is not None:
                if cur in visible_ids:
                    result = cur
                    break
                if cur in ancestor_memo:
                    result = ancestor_memo[cur]
                    break
                chain.append(cur)
                cur = self._by_id[cur].parent
            for c in chain:
                ancestor_memo[c] = result
            return result

        children: dict[str | None, list[str]] = {None: []}
        for f in passing:
            eid = str(f.node.entry.get("id"))
            children.setdefault(visible_ancestor(eid), []).append(eid)
        roots = children[None]
        multiple = len(roots) > 1
        indents: dict[str, int] = {}
        stack: list[tuple[str, int, bool]] = [(r, 1 if multiple else 0, multiple) for r in reversed(roots)]
        while stack:
            eid, indent, just = stack.pop()
            indents[eid] = indent
            kids = children.get(eid, [])
            many = len(kids) > 1
            ci = indent + 1 if many or (just and indent > 0) else indent
            stack.extend((k, ci, many) for k in reversed(kids))
        return [(f, indents[str(f.node.entry.get("id"))]) for f in passing]

    def _row(self, flat: _Flat, indent: int) -> TreeRow:
        entry = flat.node.entry
        eid = str(entry.get("id"))
        title, text, kind, detail = self.display(entry)
        return TreeRow(
            entry_id=eid,
            parent_id=flat.parent,
            entry_type=str(entry.get("type")),
            kind=kind,
            title=title,
            text=text,
            indent=indent,
            label=flat.node.label,
            on_active_path=eid in self._active,
            is_leaf=eid == self.leaf_id,
            in_context=eid in self._context_ids,
            child_count=len(flat.children),
            folded=eid in self.folded,
            hidden_descendants=self._descendants.get(eid, 0) if eid in self.folded else 0,
            detail=detail,
        )

    def _special(self, flat: _Flat, indent: int, prev_indent: int | None) -> bool:
        entry = flat.node.entry
        eid = str(entry.get("id"))
        return (
            len(flat.children) != 1
            or flat.parent is None
            or prev_indent != indent
            or eid == self.leaf_id
            or eid == self.selected_id
            or eid in self.folded
            or flat.node.label is not None
            or entry.get("type") in ("compaction", "branch_summary")
            or (flat.parent is not None and len(self._by_id[flat.parent].children) > 1)
        )

    def rows(self) -> list[TreeRow]:
        """Every visible row: filtered, folded, long linear runs collapsed to a marker row."""
        if self._rows_cache is not None:
            return self._rows_cache
        visible = self._visible()
        out: list[TreeRow] = []
        run: list[tuple[_Flat, int]] = []

        def flush() -> None:
            if (
                len(run) > self.run_threshold
                and str(run[self.run_keep][0].node.entry.get("id")) not in self.expanded_runs
            ):
                k = self.run_keep
                out.extend(self._row(f, i) for f, i in run[:k])
                hidden = run[k:-k]
                first, last = str(hidden[0][0].node.entry.get("id")), str(hidden[-1][0].node.entry.get("id"))
                out.append(
                    TreeRow(
                        entry_id=first,
                        parent_id=hidden[0][0].parent,
                        entry_type="run",
                        kind="run",
                        title=f"⋯ {len(hidden)} entries",
                        text=f"{first} → {last}",
                        indent=hidden[0][1],
                        on_active_path=first in self._active,
                        run_length=len(hidden),
                        run_first=first,
                        run_last=last,
                    )
                )
                out.extend(self._row(f, i) for f, i in run[-k:])
            else:
                out.extend(self._row(f, i) for f, i in run)
            run.clear()

        prev_indent: int | None = None
        for flat, indent in visible:
            if self._special(flat, indent, prev_indent):
                flush()
                out.append(self._row(flat, indent))
            else:
                run.append((flat, indent))
            prev_indent = indent
        flush()
        self._rows_cache = out
        return out

    def _invalidate(self) -> None:
        self._rows_cache = None

    # -- state changes ----------------------------------------------------------------------

    def set_filter(self, mode: str) -> None:
        if mode not in FILTER_MODES:
            raise NotebookError(f"filter_mode must be one of {', '.join(FILTER_MODES)}, got {mode!r}")
        self.filter_mode = mode
        self._invalidate()

    def fold(self, entry_id: str) -> None:
        """Hide the descendants of an entry (it must have children)."""
        flat = self._require(entry_id)
        if not flat.children:
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
        for flat in self._flat:
            eid = str(flat.node.entry.get("id"))
            if flat.children and eid not in self._active and flat.parent in self._active:
                self.folded.add(eid)
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
        self._require(entry_id)
        self.selected_id = entry_id
        # a selected entry inside a collapsed run or a folded subtree becomes visible
        cur = self._by_id[entry_id].parent
        while cur is not None:
            self.folded.discard(cur)
            cur = self._by_id[cur].parent
        self._invalidate()
        if not any(r.entry_id == entry_id and r.run_length == 0 for r in self.rows()):
            for r in self.rows():
                if r.run_length and self._in_run(entry_id, r):
                    self.expanded_runs.add(r.entry_id)
                    self._invalidate()
                    break

    def _in_run(self, entry_id: str, row: TreeRow) -> bool:
        cur: str | None = row.run_last
        while cur is not None:
            if cur == entry_id:
                return True
            if cur == row.run_first:
                return False
            cur = self._by_id[cur].parent
        return False

    def _require(self, entry_id: str) -> _Flat:
        flat = self._by_id.get(entry_id)
        if flat is None:
            raise NotebookError(f"Entry {entry_id} not found")
        return flat

    def entry(self, entry_id: str) -> Mapping[str, Any]:
        return self._require(entry_id).node.entry

    # -- paging -----------------------------------------------------------------------------

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.rows()) // self.page_size))

    def page_rows(self, page: int) -> list[TreeRow]:
        if not 0 <= page < self.page_count:
            raise NotebookError(f"page {page} is out of range (0..{self.page_count - 1})")
        return self.rows()[page * self.page_size : (page + 1) * self.page_size]

    def page_of(self, entry_id: str | None) -> int:
        """The page that shows ``entry_id`` (or its nearest visible ancestor); 0 if none."""
        rows = self.rows()
        index = {r.entry_id: i for i, r in enumerate(rows) if not r.run_length}
        cur = entry_id
        while cur is not None:
            if cur in index:
                return index[cur] // self.page_size
            flat = self._by_id.get(cur)
            cur = flat.parent if flat else None
        return 0

    # -- display text -----------------------------------------------------------------------

    def display(self, entry: Mapping[str, Any]) -> tuple[str, str, str, str]:
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
                    format_tool_call(
                        str(b.get("name")),
                        _mapping(b.get("arguments")),
                    )
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
                call = self._tool_calls.get(str(msg.get("toolCallId")))
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


_KIND_COLORS = {
    "user": "#2563eb",
    "assistant": "#16a34a",
    "toolResult": "#7e22ce",
    "bashExecution": "#475569",
    "custom": "#a21caf",
    "compaction": "#0369a1",
    "branch_summary": "#b45309",
    "meta": "#64748b",
    "run": "#64748b",
}


def _tree_row_html(model: SessionTreeModel, row: TreeRow, *, show_tokens: bool) -> str:
    pad = 6 + row.indent * 16
    border = "#f59e0b" if row.on_active_path else "transparent"
    bg = (
        "#fef3c7"
        if row.is_leaf
        else ("#eff6ff" if row.entry_id == model.selected_id and not row.run_length else "transparent")
    )
    color = _KIND_COLORS.get(row.kind, "#334155")
    if row.run_length:
        return (
            f'<div title="{escape(row.text)}" style="padding:1px 6px 1px {pad}px;border-left:3px solid {border};'
            f'color:#64748b;font-style:italic">{escape(row.title)} ({escape(row.text)}) folded into one row</div>'
        )
    glyph = "⊞" if row.folded else ("⊟" if row.child_count > 1 else "─")
    parts = [
        f'<div data-entry-id="{escape(row.entry_id)}" style="padding:1px 6px 1px {pad}px;border-left:3px solid {border};'
        f'background:{bg};white-space:nowrap;overflow:hidden;text-overflow:ellipsis">',
        f'<span style="color:#94a3b8">{glyph} </span>',
        f'<span style="color:#94a3b8">{escape(row.entry_id)} </span>',
        f'<span style="color:{color};font-weight:600">{escape(row.title)}</span> ',
        f'<span style="color:{"#0f172a" if row.on_active_path else "#475569"}">{escape(row.text)}</span>',
    ]
    if row.detail:
        parts.append(f' <span style="color:#94a3b8">{escape(row.detail)}</span>')
    if row.folded:
        parts.append(
            f' <span style="color:#0369a1;background:#e0f2fe;border-radius:3px;padding:0 4px">'
            f"+{row.hidden_descendants} folded</span>"
        )
    if row.label:
        parts.append(
            f' <span style="color:#fff;background:#7c3aed;border-radius:3px;padding:0 4px">🏷 {escape(row.label)}</span>'
        )
    if row.is_leaf:
        parts.append(
            ' <span style="color:#fff;background:#d97706;border-radius:3px;padding:0 4px">● leaf</span>'
        )
    if show_tokens:
        est, tik = model.tokens(row.entry_id)
        if est or tik:
            parts.append(
                f' <span title="Pi estimate {est} · tiktoken {tik} ({escape(model.encoding)})" '
                f'style="color:#64748b;float:right">{tik} tok{"" if row.in_context else " (not in context)"}</span>'
            )
    parts.append("</div>")
    return "".join(parts)


def render_tree_html(model: SessionTreeModel, *, page: int | None = None, show_tokens: bool = True) -> str:
    """One page of the tree (default: the page that shows the selected entry or the leaf)."""
    if page is None:
        page = model.page_of(model.selected_id or model.leaf_id)
    stats = model.stats()
    rows = model.page_rows(page)
    name = model.session.get_session_name() if hasattr(model.session, "get_session_name") else None
    head = (
        f'<div style="{SANS};margin-bottom:4px"><b>Session tree</b>'
        f"{' · ' + escape(name) if name else ''} · {stats['entries']} entries · "
        f"{stats['branchPoints']} branch points · {stats['leaves']} leaves · {stats['compactions']} compactions · "
        f"{stats['branchSummaries']} branch summaries · {stats['labels']} labels · "
        f"leaf <code>{escape(stats['leafId'])}</code> · filter <code>{escape(model.filter_mode)}</code> · "
        f"page {page + 1}/{model.page_count}</div>"
    )
    legend = (
        f'<div style="{SANS};color:#64748b;font-size:11px;margin-bottom:4px">'
        '<span style="border-left:3px solid #f59e0b;padding-left:4px">active branch</span> · '
        '<span style="background:#fef3c7;padding:0 3px">leaf</span> · ⊟ branch point · ⊞ folded · '
        "tokens: tiktoken of what the entry puts in context (hover for Pi's estimate)</div>"
    )
    body = "".join(_tree_row_html(model, r, show_tokens=show_tokens) for r in rows)
    more = ""
    if model.page_count > 1:
        more = (
            f'<div style="{SANS};color:#64748b;font-size:11px;margin-top:4px">showing rows '
            f"{page * model.page_size + 1}-{page * model.page_size + len(rows)} of {len(model.rows())} "
            "(use the widget or <code>render_tree_html(model, page=n)</code> for other pages)</div>"
        )
    return (
        f'<div class="pi-nb-tree" style="border:1px solid #e2e8f0;border-radius:6px;padding:8px;background:#fff;color:#0f172a">'
        f'{head}{legend}<div style="{FONT}">{body}</div>{more}</div>'
    )


def render_tree_text(model: SessionTreeModel, *, page: int | None = None) -> str:
    """The same page as plain text (one line per row, Pi-like)."""
    if page is None:
        page = model.page_of(model.selected_id or model.leaf_id)
    stats = model.stats()
    lines = [
        f"Session tree: {stats['entries']} entries, {stats['branchPoints']} branch points, "
        f"{stats['compactions']} compactions, leaf {stats['leafId']} "
        f"(filter {model.filter_mode}, page {page + 1}/{model.page_count})"
    ]
    for r in model.page_rows(page):
        mark = "*" if r.on_active_path else " "
        if r.run_length:
            lines.append(f"{mark} {'  ' * r.indent}{r.title} ({r.text})")
            continue
        glyph = "⊞" if r.folded else ("⊟" if r.child_count > 1 else "─")
        text = f"{mark} {'  ' * r.indent}{glyph} {r.entry_id} {r.title} {r.text}".rstrip()
        if r.detail:
            text += f"  ({r.detail})"
        if r.folded:
            text += f"  [+{r.hidden_descendants} folded]"
        if r.label:
            text += f"  [label: {r.label}]"
        if r.is_leaf:
            text += "  <- leaf"
        lines.append(text)
    return "\n".join(lines)


# =============================================================================================
# the token budget
# =============================================================================================


def _category_color(name: str, index: int) -> str:
    return COLORS.get(name) or _EXTRA_PART_COLORS[index % len(_EXTRA_PART_COLORS)]


def _pct(tokens: float, window: int) -> float:
    return max(0.0, min(100.0, tokens / window * 100)) if window else 0.0


def _fmt_pct(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".") if x else "0"


def _level_text(budget: TokenBudget) -> tuple[str, str]:
    if budget.unknown or budget.percent is None:
        return (f"?/{format_tokens(budget.context_window)}", COLORS["unknown"])
    return (f"{budget.percent:.1f}%/{format_tokens(budget.context_window)}", COLORS[budget.level])


def render_budget_html(budget: TokenBudget, *, title: str = "Token budget") -> str:
    """The context window as one bar: categories, free space, reserve zone, threshold marker,
    keep-recent window, and the three token sources labelled."""
    window = budget.context_window
    segs: list[str] = []
    for i, cat in enumerate(budget.categories):
        if cat.tokens <= 0:
            continue
        w = cat.tokens / window * 100
        segs.append(
            f'<div title="{escape(cat.name)}: {cat.tokens} tokens" style="width:{w:.4f}%;'
            f'background:{_category_color(cat.name, i)};height:100%;flex:none"></div>'
        )
    threshold_pct = _pct(budget.threshold, window)
    level_str, level_color = _level_text(budget)
    markers: list[str] = [
        # reserve zone: from the threshold to the end of the window, hatched
        f'<div title="reserve: {budget.reserve_tokens} tokens kept free for the response" '
        f'style="position:absolute;left:{threshold_pct:.4f}%;right:0;top:0;bottom:0;'
        "background:repeating-linear-gradient(45deg,rgba(220,38,38,.18) 0 6px,rgba(220,38,38,.05) 6px 12px);"
        'pointer-events:none"></div>',
        f'<div title="threshold: context_window - reserve_tokens = {budget.threshold}" '
        f'style="position:absolute;left:{threshold_pct:.4f}%;top:-6px;bottom:-6px;border-left:2px dashed {COLORS["error"]}"></div>',
    ]
    if budget.usage_tokens is not None:
        markers.append(
            f'<div title="provider usage: {budget.usage_tokens}" style="position:absolute;left:{_pct(budget.usage_tokens, window):.4f}%;'
            f'top:-4px;bottom:-4px;border-left:2px solid {COLORS["usage"]}"></div>'
        )
    if budget.estimate_tokens is not None:
        markers.append(
            f'<div title="Pi\'s estimate: {budget.estimate_tokens}" style="position:absolute;'
            f'left:{_pct(budget.estimate_tokens, window):.4f}%;top:-4px;bottom:-4px;border-left:2px dotted {COLORS["estimate"]}"></div>'
        )
    bar = (
        f'<div style="position:relative;height:26px;margin:10px 0 4px 0;border:1px solid #cbd5e1;border-radius:4px;'
        f'background:{COLORS["free"]}">'
        f'<div style="display:flex;height:100%;overflow:hidden;border-radius:3px">{"".join(segs)}</div>'
        f"{''.join(markers)}</div>"
    )
    # keep-recent bracket: the newest messages, drawn at the right end of the used part
    kr = budget.keep_recent
    kept_end = _pct(budget.tokens, window)
    kept_start = _pct(max(0, budget.tokens - kr.tokens), window)
    bracket = (
        f'<div style="position:relative;height:16px">'
        f'<div title="keep-recent window: the newest {kr.message_count} messages ({kr.tokens} tiktoken, '
        f'{kr.estimate_tokens} Pi estimate) a compaction now would keep" style="position:absolute;left:{kept_start:.4f}%;'
        f'width:{max(kept_end - kept_start, 0.3):.4f}%;top:0;height:6px;border:2px solid {COLORS["keep"]};border-top:none"></div>'
        f'<div style="position:absolute;left:{threshold_pct:.4f}%;top:0;transform:translateX(-100%);'
        f'padding-right:4px;color:{COLORS["error"]};font-size:11px;white-space:nowrap">'
        f"compact above {format_tokens(budget.threshold)} ▸</div></div>"
    )
    legend_items = []
    for i, cat in enumerate(budget.categories):
        value = f"{cat.tokens:,}" if cat.known else "unknown"
        legend_items.append(
            f'<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;width:10px;height:10px;'
            f'background:{_category_color(cat.name, i)};border-radius:2px;margin-right:3px"></span>'
            f"{escape(cat.name)} <b>{value}</b></span>"
        )
    legend_items.append(
        f'<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;width:10px;height:10px;'
        f'background:{COLORS["free"]};border:1px solid #cbd5e1;border-radius:2px;margin-right:3px"></span>'
        f"free <b>{max(budget.free_tokens, 0):,}</b></span>"
    )
    legend_items.append(
        '<span style="white-space:nowrap;margin-right:10px"><span style="display:inline-block;width:10px;height:10px;'
        "background:repeating-linear-gradient(45deg,rgba(220,38,38,.35) 0 3px,rgba(220,38,38,.1) 3px 6px);"
        f'border-radius:2px;margin-right:3px"></span>reserve <b>{budget.reserve_tokens:,}</b></span>'
    )
    if budget.unknown:
        pi_line = (
            f'<span style="color:{COLORS["unknown"]}"><b>Pi estimate:</b> unknown until the next response '
            f"(a compaction happened and no response has reported usage since; the stale figure would be "
            f"{budget.estimate.tokens:,})</span>"
        )
    else:
        est = budget.estimate
        if est.last_usage_index is None:
            how = f"chars/4 of all {budget.message_count} messages: no usage yet"
        else:
            after = budget.message_count - est.last_usage_index - 1
            how = f"usage {est.usage_tokens:,} + chars/4 of the {after} messages after it: {est.trailing_tokens:,}"
        pi_line = f'<span style="color:{COLORS["estimate"]}"><b>Pi estimate:</b> {budget.estimate_tokens:,}</span> ({how})'
    usage_line = (
        f'<span style="color:{COLORS["usage"]}"><b>provider usage:</b> '
        + (f"{budget.usage_tokens:,}" if budget.usage_tokens is not None else "none yet")
        + (
            "</span> (from before the compaction)"
            if budget.unknown and budget.usage_tokens is not None
            else "</span>"
        )
    )
    tik_line = (
        f"<span><b>tiktoken</b> ({escape(budget.encoding)}): {budget.tokens:,}"
        + ("" if budget.system_prompt_known else " (system prompt unknown: not counted)")
        + "</span>"
    )
    compact_line = ""
    if budget.should_compact:
        compact_line = f' · <b style="color:{COLORS["error"]}">Pi would compact now</b>'
    elif budget.should_compact is False:
        left = budget.threshold - (budget.estimate_tokens or 0)
        compact_line = f" · {left:,} tokens until Pi compacts"
    head = (
        f'<div style="display:flex;justify-content:space-between;align-items:baseline">'
        f"<b>{escape(title)}</b>"
        f'<span style="color:{level_color};font-weight:700" title="Pi footer: warning above 70%, error above 90%">'
        f"{escape(level_str)}</span></div>"
    )
    return (
        f'<div class="pi-nb-budget" style="{SANS};border:1px solid #e2e8f0;border-radius:6px;padding:8px 10px;'
        f'background:#fff;color:#0f172a;max-width:900px">{head}{bar}{bracket}'
        f'<div style="font-size:12px;line-height:1.8">{"".join(legend_items)}</div>'
        f'<div style="font-size:12px;line-height:1.6;margin-top:4px">{pi_line}<br>{usage_line}<br>{tik_line}<br>'
        f"window {budget.context_window:,} · threshold {budget.threshold:,} (window − reserve {budget.reserve_tokens:,})"
        f"{compact_line}<br>"
        f'<span style="color:{COLORS["keep"]}">keep-recent window</span>: the newest {kr.message_count} of '
        f"{budget.message_count} messages, {kr.estimate_tokens:,} estimated / {kr.tokens:,} tiktoken tokens "
        f"(keepRecentTokens {budget.keep_recent_tokens:,}{'' if kr.reached else '; everything fits'})</div></div>"
    )


def render_budget_text(budget: TokenBudget, *, width: int = 60) -> str:
    """The budget as text: a character bar plus the numbers."""
    window = budget.context_window
    cells: list[str] = []
    marks = {
        "system prompt": "S",
        "tool schemas": "T",
        "user": "U",
        "assistant": "A",
        "tool results": "R",
        "summaries": "C",
    }
    for cat in budget.categories:
        n = round(cat.tokens / window * width) if window else 0
        if cat.tokens > 0 and n == 0:
            n = 1
        cells.extend(marks.get(cat.name, cat.name[:1].upper()) * n)
    cells = cells[:width]
    t = min(width - 1, max(0, round(budget.threshold / window * width)))
    bar = [cells[i] if i < len(cells) else "." for i in range(width)]
    for i in range(t, width):
        if bar[i] == ".":
            bar[i] = "/"
    bar.insert(t, "|")
    level_str, _ = _level_text(budget)
    lines = [
        f"Token budget {level_str} [{''.join(bar)}]",
        "  " + ", ".join(f"{c.name} {c.tokens if c.known else 'unknown'}" for c in budget.categories),
        f"  free {max(budget.free_tokens, 0)}, reserve {budget.reserve_tokens}, threshold {budget.threshold} "
        f"(window {window} - reserve)",
    ]
    if budget.unknown:
        lines.append("  Pi estimate: unknown until the next response (compacted since the last usage)")
    else:
        lines.append(f"  Pi estimate: {budget.estimate_tokens} ({budget.level})")
    lines.append(f"  provider usage: {budget.usage_tokens if budget.usage_tokens is not None else 'none'}")
    lines.append(f"  tiktoken ({budget.encoding}): {budget.tokens}")
    kr = budget.keep_recent
    lines.append(
        f"  keep-recent window: newest {kr.message_count} messages, {kr.estimate_tokens} estimated / {kr.tokens} tiktoken"
    )
    if budget.should_compact:
        lines.append("  Pi would compact now")
    return "\n".join(lines)


# =============================================================================================
# truncation boundaries
# =============================================================================================

_TAIL_TOOLS = frozenset({"bash"})
_HEAD_TOOLS = frozenset({"read", "grep", "find", "ls"})


@dataclass(frozen=True)
class TruncationReport:
    """What the model saw of one output against the full output.

    Attributes:
        mode: ``"head"`` (read, grep, find, ls keep the beginning) or ``"tail"`` (bash keeps the
            end).
        truncation: the result Pi stored (``details.truncation``), or the one computed here.
        model_text: the text the model saw (content + notice).
        notice: the bracketed notice Pi appended (``[Showing lines ...]``), if any.
        full_text: the full output when known (``None``: only the stored numbers can be shown).
        recomputed: ``truncate_head``/``truncate_tail`` of ``full_text`` with the stored limits.
        matches: whether ``recomputed`` agrees with ``truncation`` (``None`` without full text).
        cut_offset: byte offset of the cut in the UTF-8 of the full text (head: end of the kept
            part; tail: start of the kept part).
        naive_cut_offset: tail with a partial line only: where ``max_bytes`` alone would have cut;
            the bytes between it and ``cut_offset`` are UTF-8 continuation bytes skipped so the
            kept text does not start inside a character.
    """

    mode: Literal["head", "tail"]
    truncation: TruncationResult | None
    model_text: str
    notice: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    tool_call_args: Mapping[str, Any] | None = None
    is_error: bool = False
    full_output_path: str | None = None
    full_output_exists: bool = False
    full_text: str | None = None
    full_text_source: str | None = None
    recomputed: TruncationResult | None = None
    matches: bool | None = None
    mismatches: tuple[str, ...] = ()
    cut_offset: int | None = None
    naive_cut_offset: int | None = None
    extra_notes: tuple[str, ...] = ()

    @property
    def truncated(self) -> bool:
        return bool(self.truncation and self.truncation.truncated)

    @property
    def full_bytes(self) -> bytes | None:
        return None if self.full_text is None else js_utf8_encode(self.full_text)

    def kept_range(self) -> tuple[int, int] | None:
        """``(start, end)`` byte offsets of the kept text inside the full text."""
        if self.full_text is None or self.truncation is None:
            return None
        full = js_utf8_encode(self.full_text)
        kept = js_utf8_encode(self.truncation.content)
        if self.mode == "head":
            if full.startswith(kept):
                return (0, len(kept))
            return None
        end = len(full) - (1 if full.endswith(b"\n") and self.truncation.truncated else 0)
        if full[:end].endswith(kept):
            return (end - len(kept), end)
        at = full.rfind(kept)
        return (at, at + len(kept)) if at >= 0 else None

    def hex_window(self, radius: int = 12) -> list[tuple[int, int, str]]:
        """Bytes around the cut: ``(offset, byte, role)``, role ``kept``/``dropped``/``skipped``."""
        if self.full_text is None or self.cut_offset is None:
            return []
        full = js_utf8_encode(self.full_text)
        rng = self.kept_range()
        lo, hi = max(0, self.cut_offset - radius), min(len(full), self.cut_offset + radius)
        out: list[tuple[int, int, str]] = []
        for i in range(lo, hi):
            role = "kept" if rng and rng[0] <= i < rng[1] else "dropped"
            if self.naive_cut_offset is not None and self.naive_cut_offset <= i < self.cut_offset:
                role = "skipped"
            out.append((i, full[i], role))
        return out

    def summary_lines(self) -> list[str]:
        """The facts, one per line (shared by the text and HTML renderings)."""
        t = self.truncation
        lines: list[str] = []
        who = f"{self.tool_name} result" if self.tool_name else "output"
        if t is None:
            lines.append(f"{who}: no truncation details (the tool did not truncate, or does not record it)")
            return lines
        if not t.truncated:
            lines.append(f"{who}: not truncated ({t.total_lines} lines, {format_size(t.total_bytes)})")
            return lines
        keep = "beginning" if self.mode == "head" else "end"
        lines.append(f"{who}: {self.mode} truncation (kept the {keep})")
        lines.append(
            f"kept {t.output_lines} of {t.total_lines} lines, {t.output_bytes} of {t.total_bytes} bytes "
            f"({format_size(t.output_bytes)} of {format_size(t.total_bytes)})"
        )
        dropped_lines = t.total_lines - t.output_lines
        limit = (
            f"maxLines={t.max_lines}"
            if t.truncated_by == "lines"
            else f"maxBytes={t.max_bytes} ({format_size(t.max_bytes)})"
        )
        lines.append(
            f"cut by {t.truncated_by}: {limit}; dropped {dropped_lines} lines, {t.total_bytes - t.output_bytes} bytes"
        )
        if t.first_line_exceeds_limit:
            lines.append(f"the first line alone is over {format_size(t.max_bytes)}: nothing was kept")
        if t.last_line_partial:
            lines.append(f"kept only the last {t.output_bytes} bytes of one over-long line (a partial line)")
        if t.truncated_by == "lines" and t.output_lines == t.total_lines:
            lines.append(
                "quirk: no line was dropped; only the trailing newline pushed the total over the byte limit "
                "(Pi reports it as truncated by lines)"
            )
        if self.cut_offset is not None:
            lines.append(f"cut at byte {self.cut_offset} of the full output")
        if (
            self.cut_offset is not None
            and self.naive_cut_offset is not None
            and self.naive_cut_offset != self.cut_offset
        ):
            lines.append(
                f"UTF-8 boundary: {self.cut_offset - self.naive_cut_offset} continuation byte(s) skipped "
                f"after byte {self.naive_cut_offset} so the kept text starts on a whole character"
            )
        return lines


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    return ""


def _split_notice(model_text: str, kept: str | None) -> tuple[str, str | None]:
    """``(what the model saw before the notice, the notice)``."""
    if kept is not None and model_text.startswith(kept):
        rest = model_text[len(kept) :]
        stripped = rest.lstrip("\n")
        if stripped.startswith("["):
            return kept, stripped
        if not rest:
            return kept, None
    if model_text.startswith("[") and model_text.endswith("]") and "\n" not in model_text:
        return "", model_text
    at = model_text.rfind("\n\n[")
    if at >= 0 and model_text.endswith("]"):
        return model_text[:at], model_text[at + 2 :]
    return model_text, None


def _compare(stored: TruncationResult, computed: TruncationResult) -> tuple[str, ...]:
    a, b = stored.to_dict(), computed.to_dict()
    return tuple(k for k in a if a[k] != b[k])


def _cut_offsets(report: TruncationReport) -> tuple[int | None, int | None]:
    t = report.truncation
    if t is None or not t.truncated or report.full_text is None:
        return None, None
    rng = report.kept_range()
    if rng is None:
        return None, None
    if report.mode == "head":
        return rng[1], None
    naive = None
    if t.last_line_partial:
        naive = max(rng[1] - t.max_bytes, 0)
    return rng[0], naive


def _read_full_output(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def _read_tool_text(args: Mapping[str, Any], cwd: str) -> str | None:
    """The text Pi's read tool truncated: the file's lines from ``offset`` for ``limit`` lines."""
    raw = args.get("path")
    if not isinstance(raw, str):
        return None
    path = raw[1:] if raw.startswith("@") else raw
    path = os.path.expanduser(path)
    if not os.path.isabs(path):
        path = os.path.join(cwd, path)
    try:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    lines = text.split("\n")
    offset = args.get("offset")
    start = max(0, int(offset) - 1) if isinstance(offset, (int, float)) and offset else 0
    limit = args.get("limit")
    end = min(start + int(limit), len(lines)) if isinstance(limit, (int, float)) else len(lines)
    return "\n".join(lines[start:end])


def truncation_report(
    tool_result: Mapping[str, Any],
    *,
    full_text: str | bytes | None = None,
    tool_call: Mapping[str, Any] | None = None,
    cwd: str | None = None,
    mode: Literal["head", "tail"] | None = None,
    base_dir: str | None = None,
) -> TruncationReport:
    """A :class:`TruncationReport` for a stored ``toolResult`` message (or its session entry).

    The full output comes from ``full_text`` if given, else from ``details.fullOutputPath`` when
    that file still exists (bash; a relative path is taken from ``base_dir``), else - for a
    ``read`` result with ``tool_call`` and ``cwd`` - from re-reading the file (it may have
    changed since; ``matches`` tells).
    """
    msg = tool_result.get("message") if tool_result.get("type") == "message" else tool_result
    if not isinstance(msg, Mapping) or msg.get("role") != "toolResult":
        raise NotebookError("truncation_report() needs a toolResult message (or its session entry)")
    details = _mapping(msg.get("details"))
    stored_dict = details.get("truncation")
    stored: TruncationResult | None = None
    if isinstance(stored_dict, Mapping):
        try:
            stored = TruncationResult.from_dict(dict(stored_dict))
        except TruncationError as exc:
            raise NotebookError(f"details.truncation is not a truncation result: {exc}") from None
    tool_name = msg.get("toolName") if isinstance(msg.get("toolName"), str) else None
    if mode is None:
        if stored is not None and stored.last_line_partial:
            mode = "tail"
        elif stored is not None and stored.first_line_exceeds_limit:
            mode = "head"
        else:
            mode = "tail" if tool_name in _TAIL_TOOLS else "head"
    path = details.get("fullOutputPath") if isinstance(details.get("fullOutputPath"), str) else None
    args = (
        tool_call.get("arguments") if tool_call and isinstance(tool_call.get("arguments"), Mapping) else None
    )
    source = None
    text: str | None
    if isinstance(full_text, bytes):
        text, source = full_text.decode("utf-8", "replace"), "given"
    else:
        text, source = full_text, "given" if full_text is not None else None
    resolved = path
    if path and base_dir is not None and not os.path.isabs(path):
        resolved = os.path.join(base_dir, path)
    exists = bool(resolved and os.path.isfile(resolved))
    if text is None and resolved and exists:
        text = _read_full_output(resolved)
        source = "fullOutputPath" if text is not None else None
    if text is None and tool_name == "read" and args is not None and cwd is not None:
        text = _read_tool_text(args, cwd)
        source = "re-read file" if text is not None else None
    model_text = _text_of(msg.get("content"))
    _, notice = _split_notice(model_text, stored.content if stored else None)
    report = TruncationReport(
        mode=mode,
        truncation=stored,
        model_text=model_text,
        notice=notice,
        tool_name=tool_name,
        tool_call_id=msg.get("toolCallId") if isinstance(msg.get("toolCallId"), str) else None,
        tool_call_args=args,
        is_error=bool(msg.get("isError")),
        full_output_path=path,
        full_output_exists=exists,
        full_text=text,
        full_text_source=source,
    )
    return _with_recomputed(report)


def _with_recomputed(report: TruncationReport) -> TruncationReport:
    if report.full_text is None:
        return report
    limits = report.truncation
    max_lines = limits.max_lines if limits else DEFAULT_MAX_LINES
    max_bytes = limits.max_bytes if limits else DEFAULT_MAX_BYTES
    fn = truncate_head if report.mode == "head" else truncate_tail
    recomputed = fn(report.full_text, max_lines=max_lines, max_bytes=max_bytes)
    mismatches = _compare(limits, recomputed) if limits else ()
    notes: list[str] = []
    if report.tool_name == "grep" and limits is not None and limits.max_lines != recomputed.max_lines:
        notes.append("grep truncates by bytes only")
    report = replace(
        report,
        recomputed=recomputed,
        matches=None if limits is None else not mismatches,
        mismatches=mismatches,
        truncation=limits or recomputed,
        extra_notes=tuple(notes),
    )
    cut, naive = _cut_offsets(report)
    return replace(report, cut_offset=cut, naive_cut_offset=naive)


def truncation_report_for_text(
    full_text: str | bytes,
    mode: Literal["head", "tail"] = "head",
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TruncationReport:
    """Run :func:`pi_nb.truncation.truncate_head` / ``truncate_tail`` on a text and report the cut."""
    if mode not in ("head", "tail"):
        raise NotebookError(f"mode must be 'head' or 'tail', got {mode!r}")
    text = full_text.decode("utf-8", "replace") if isinstance(full_text, bytes) else full_text
    if not isinstance(text, str):
        raise NotebookError(f"full_text must be str or bytes, got {type(full_text).__name__}")
    fn = truncate_head if mode == "head" else truncate_tail
    result = fn(text, max_lines=max_lines, max_bytes=max_bytes)
    report = TruncationReport(
        mode=mode, truncation=result, model_text=result.content, full_text=text, full_text_source="given"
    )
    report = replace(report, recomputed=result, matches=True)
    cut, naive = _cut_offsets(report)
    return replace(report, cut_offset=cut, naive_cut_offset=naive)


def _lines_window(text: str, *, first: bool, n: int, width: int = 240) -> list[str]:
    if n <= 0:
        return []
    lines = text.split("\n")
    pick = lines[:n] if first else lines[-n:]
    return [ln if len(ln) <= width else ln[:width] + f"… (+{len(ln) - width} chars)" for ln in pick]


def _dropped_text(report: TruncationReport) -> str | None:
    rng = report.kept_range()
    full = report.full_bytes
    if rng is None or full is None:
        return None
    part = full[rng[1] :] if report.mode == "head" else full[: rng[0]]
    return part.decode("utf-8", "replace")


def render_truncation_text(report: TruncationReport, *, context_lines: int = 3) -> str:
    lines = list(report.summary_lines())
    lines.extend(report.extra_notes)
    if report.notice:
        lines.append(f"notice: {report.notice}")
    if report.full_output_path:
        state = "exists" if report.full_output_exists else "missing"
        lines.append(f"full output: {report.full_output_path} ({state})")
    if report.matches is False:
        lines.append(f"the full output gives a different cut ({', '.join(report.mismatches)} differ)")
    if report.full_text is None and report.truncated:
        lines.append("full output not available: only the stored numbers are shown")
    hx = report.hex_window(8)
    if hx:
        lines.append(
            "bytes at the cut: "
            + " ".join(f"{'|' if o == report.cut_offset else ''}{b:02x}" for o, b, _ in hx)
        )
    t = report.truncation
    if t is not None and t.truncated and context_lines:
        dropped = _dropped_text(report)
        if report.mode == "head":
            lines.append("… last kept lines:")
            lines.extend("  " + ln for ln in _lines_window(t.content, first=False, n=context_lines))
            if dropped is not None:
                lines.append("… first dropped lines:")
                lines.extend(
                    "  " + ln for ln in _lines_window(dropped.lstrip("\n"), first=True, n=context_lines)
                )
        else:
            if dropped is not None:
                lines.append("… last dropped lines:")
                lines.extend("  " + ln for ln in _lines_window(dropped, first=False, n=context_lines))
            lines.append("… first kept lines:")
            lines.extend("  " + ln for ln in _lines_window(t.content, first=True, n=context_lines))
    return "\n".join(lines)


def _hex_html(report: TruncationReport) -> str:
    hx = report.hex_window(12)
    if not hx:
        return ""
    cells = []
    for off, byte, role in hx:
        bg = {"kept": "#dcfce7", "dropped": "#fee2e2", "skipped": "#fde68a"}[role]
        cont = (byte & 0xC0) == 0x80
        char = chr(byte) if 0x20 <= byte < 0x7F else ("↵" if byte == 0x0A else ("·" if cont else "…"))
        sep = (
            f'<span style="display:inline-block;width:2px;background:{COLORS["error"]};margin:0 2px">&nbsp;</span>'
            if off == report.cut_offset
            else ""
        )
        cells.append(
            f'{sep}<span title="byte {off}: 0x{byte:02x}{" (continuation byte)" if cont else ""} ({role})" '
            f'style="display:inline-block;text-align:center;background:{bg};margin:0 1px;padding:0 2px;border-radius:2px">'
            f'{byte:02x}<br><span style="color:#64748b">{escape(char)}</span></span>'
        )
    legend = (
        '<span style="background:#dcfce7;padding:0 3px">kept</span> '
        '<span style="background:#fee2e2;padding:0 3px">dropped</span> '
        '<span style="background:#fde68a;padding:0 3px">skipped continuation bytes</span> '
        f'<span style="color:{COLORS["error"]}">|</span> the cut'
    )
    return (
        f'<div style="margin-top:6px"><b>bytes at the cut</b> (UTF-8, byte {hx[0][0]}..{hx[-1][0]}) {legend}'
        f'<div style="{FONT};margin-top:3px">{"".join(cells)}</div></div>'
    )


def _pre(lines: Iterable[str], bg: str, border: str) -> str:
    body = "\n".join(escape(ln) for ln in lines)
    return (
        f'<pre style="{FONT};background:{bg};border-left:3px solid {border};margin:2px 0;padding:4px 6px;'
        f'white-space:pre-wrap;word-break:break-all;max-height:260px;overflow:auto">{body}</pre>'
    )


def render_truncation_html(report: TruncationReport, *, context_lines: int = 6) -> str:
    t = report.truncation
    facts = report.summary_lines() + list(report.extra_notes)
    status_color = COLORS["error"] if report.truncated else COLORS["ok"]
    head = (
        f'<div style="display:flex;justify-content:space-between"><b>Truncation boundary</b>'
        f'<span style="color:{status_color};font-weight:700">'
        f"{'truncated by ' + str(t.truncated_by) if t and t.truncated else 'complete'}</span></div>"
    )
    bars = ""
    if t is not None and t.total_bytes:
        kb = t.output_bytes / t.total_bytes * 100 if t.total_bytes else 100
        kl = t.output_lines / t.total_lines * 100 if t.total_lines else 100
        lim_b = min(100.0, t.max_bytes / t.total_bytes * 100) if t.total_bytes else 100
        lim_l = min(100.0, t.max_lines / t.total_lines * 100) if t.total_lines else 100
        left = report.mode == "head"

        def bar(label: str, kept_pct: float, limit_pct: float, text: str) -> str:
            pos = "left:0" if left else "right:0"
            lim = f"left:{limit_pct:.3f}%" if left else f"right:{limit_pct:.3f}%"
            return (
                f'<div style="display:flex;align-items:center;gap:6px;margin:3px 0"><span style="width:44px">{label}</span>'
                f'<div style="position:relative;flex:1;height:14px;background:#fee2e2;border:1px solid #cbd5e1;border-radius:3px">'
                f'<div style="position:absolute;{pos};top:0;bottom:0;width:{kept_pct:.3f}%;background:#86efac"></div>'
                f'<div title="limit" style="position:absolute;{lim};top:-3px;bottom:-3px;border-left:2px dashed {COLORS["error"]}"></div>'
                f'</div><span style="width:230px;font-size:11px">{escape(text)}</span></div>'
            )

        bars = bar(
            "bytes", kb, lim_b, f"{t.output_bytes:,} / {t.total_bytes:,} (limit {format_size(t.max_bytes)})"
        ) + bar("lines", kl, lim_l, f"{t.output_lines:,} / {t.total_lines:,} (limit {t.max_lines:,})")
    fact_html = "".join(f"<li>{escape(f)}</li>" for f in facts)
    extra = []
    if report.full_output_path:
        state = "exists" if report.full_output_exists else "no longer exists"
        extra.append(f"<li>full output file: <code>{escape(report.full_output_path)}</code> ({state})</li>")
    if report.full_text_source:
        extra.append(f"<li>full text from: {escape(report.full_text_source)}</li>")
    elif report.truncated:
        extra.append("<li>full output not available: only the stored numbers are shown</li>")
    if report.matches is True:
        extra.append(
            f'<li style="color:{COLORS["ok"]}">re-running pi_nb.truncation on the full text gives the same cut</li>'
        )
    elif report.matches is False:
        extra.append(
            f'<li style="color:{COLORS["error"]}">re-running pi_nb.truncation on the full text gives a different cut '
            f"({escape(', '.join(report.mismatches))} differ): the file changed, or the tool post-processed it</li>"
        )
    panes = []
    if t is not None and t.truncated and context_lines > 0:
        dropped = _dropped_text(report)
        kept_lines = (
            _lines_window(t.content, first=report.mode != "head", n=context_lines)
            if t.content
            else ["(nothing kept)"]
        )
        if report.mode == "head":
            panes.append('<div style="margin-top:6px"><b>the model saw</b> (last kept lines)</div>')
            panes.append(_pre(kept_lines, "#f0fdf4", "#16a34a"))
            if report.notice:
                panes.append(_pre([report.notice], "#fffbeb", "#d97706"))
            if dropped is not None:
                panes.append("<div><b>dropped</b> (first lines after the cut)</div>")
                panes.append(
                    _pre(
                        _lines_window(dropped.lstrip("\n"), first=True, n=context_lines), "#fef2f2", "#dc2626"
                    )
                )
        else:
            if dropped is not None:
                panes.append('<div style="margin-top:6px"><b>dropped</b> (last lines before the cut)</div>')
                panes.append(_pre(_lines_window(dropped, first=False, n=context_lines), "#fef2f2", "#dc2626"))
            panes.append("<div><b>the model saw</b> (first kept lines)</div>")
            panes.append(_pre(kept_lines, "#f0fdf4", "#16a34a"))
            if report.notice:
                panes.append(_pre([report.notice], "#fffbeb", "#d97706"))
    elif report.notice:
        panes.append(_pre([report.notice], "#fffbeb", "#d97706"))
    return (
        f'<div class="pi-nb-truncation" style="{SANS};border:1px solid #e2e8f0;border-radius:6px;padding:8px 10px;'
        f'background:#fff;color:#0f172a;max-width:900px">{head}{bars}'
        f'<ul style="margin:4px 0;padding-left:18px;font-size:12px">{fact_html}{"".join(extra)}</ul>'
        f"{''.join(panes)}{_hex_html(report)}</div>"
    )
