"""Line diffs for the edit tool's ``details`` (a port of jsdiff 8.0.4 ``diffLines`` and
``createTwoFilesPatch``, plus Pi's ``generateDiffString``).

The edit tool reports two renderings of its change: ``patch``, a standard unified diff, and
``diff``, Pi's display diff with line numbers (``+ 3 new``, ``- 3 old``, `` 12 context``, ``...``
for skipped context). Both depend on *which* of several equally short edit scripts the diff
algorithm picks, so this is a faithful port of jsdiff's Myers variant (its diagonal pruning and
its preference for removals before insertions), not ``difflib``.

Cost: like jsdiff, O((N+M)·D) for N and M lines and D changed lines. Small edits finish in a few
scalar steps; past 64 edit lengths the search goes on one edit length at a time with numpy
(``pi_nb.tools._myers_np``), and a rest with no line in common is answered at once. Measured by
``benchmarks/tools.py --only edit`` against Pi in the same run: a 2,000-line file with every second
line changed in 0.23 s (Pi 0.49 s), a whole rewrite of 2,000 lines in 10 ms (Pi 0.82 s). The edit
tool computes the diff once, on a worker thread.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["DiffPart", "diff_lines", "generate_diff_string", "generate_unified_patch"]


@dataclass
class DiffPart:
    """One jsdiff change object: ``value`` (the joined lines), ``count``, ``added``, ``removed``."""

    value: str
    count: int
    added: bool
    removed: bool


_LINE_SPLIT = re.compile(r"(\n|\r\n)")


def _tokenize(value: str) -> list[str]:
    parts = _LINE_SPLIT.split(value)
    if parts and not parts[-1]:
        parts.pop()
    lines: list[str] = []
    for i, part in enumerate(parts):
        if i % 2:
            lines[-1] += part
        else:
            lines.append(part)
    return [line for line in lines if line]  # removeEmpty


# A change component is a tuple (count, added, removed, previous component): jsdiff's linked list.
_Comp = tuple[int, bool, bool, Any]


# Past this many tokens (after the common prefix) the search runs one edit length at a time with
# numpy (pi_nb.tools._myers_np): the same components, computed 10-40x faster on large rewrites.
_VECTOR_MIN_TOKENS = 400
# ... and only once the scalar search has run this many edit lengths (small edits end sooner)
_HANDOFF_STEPS = 64


def _numpy_available() -> bool:
    # found, not imported: a small edit never pays numpy's import
    return importlib.util.find_spec("numpy") is not None


def _parts(
    components: list[tuple[int, bool, bool]], old_tokens: list[str], new_tokens: list[str]
) -> list[DiffPart]:
    """jsdiff's ``buildValues``: the change components with their joined lines."""
    parts: list[DiffPart] = []
    new_pos = old_pos = 0
    for count, added, removed in components:
        if not removed:
            value = "".join(new_tokens[new_pos : new_pos + count])
            new_pos += count
            if not added:
                old_pos += count
        else:
            value = "".join(old_tokens[old_pos : old_pos + count])
            old_pos += count
        parts.append(DiffPart(value, count, added, removed))
    return parts


def diff_lines(old: str, new: str, *, vectorized: bool | None = None) -> list[DiffPart]:
    """jsdiff ``diffLines(old, new)`` with default options.

    Tokens are interned to ints and the search state is kept in flat lists: this is jsdiff's
    algorithm step for step (same pruning, same tie-breaks), only without per-step objects. Large
    inputs run the same search one edit length at a time with numpy, and a rest with no line in
    common is answered at once. ``vectorized=False`` runs the plain scalar port only (the reference the
    tests compare with), ``True`` hands over to numpy at once, ``None`` decides by size.
    """
    old_tokens = _tokenize(old)
    new_tokens = _tokenize(new)
    ids: dict[str, int] = {}
    o = [ids.setdefault(t, len(ids)) for t in old_tokens]
    n = [ids.setdefault(t, len(ids)) for t in new_tokens]
    new_len, old_len = len(n), len(o)

    def build(last: _Comp | None) -> list[DiffPart]:
        components: list[tuple[int, bool, bool]] = []
        while last is not None:
            components.append((last[0], last[1], last[2]))
            last = last[3]
        components.reverse()
        return _parts(components, old_tokens, new_tokens)

    # seed: the common prefix (editLength 0)
    old_pos = -1
    new_pos = -1
    common = 0
    while new_pos + 1 < new_len and old_pos + 1 < old_len and o[old_pos + 1] == n[new_pos + 1]:
        new_pos += 1
        old_pos += 1
        common += 1
    seed: _Comp | None = (common, False, False, None) if common else None
    if old_pos + 1 >= old_len and new_pos + 1 >= new_len:
        return build(seed)
    if vectorized is not False and not set(o[common:]).intersection(n[common:]):
        # nothing left in common: jsdiff removes the rest of the old text, then adds the new one
        # (its search has no equal line to follow, so its tie-breaks alone decide, whatever the sizes)
        rest = [(common, False, False)] if common else []
        rest += [(old_len - common, False, True)] if old_len > common else []
        rest += [(new_len - common, True, False)] if new_len > common else []
        return _parts(rest, old_tokens, new_tokens)
    forced = vectorized is True
    if vectorized is None:
        vectorized = old_len + new_len - 2 * common >= _VECTOR_MIN_TOKENS and _numpy_available()
    # a small edit finishes in a few scalar steps; a large one continues with numpy after these
    handoff = (1 if forced else _HANDOFF_STEPS) if vectorized else -1

    max_edit = new_len + old_len
    offset = max_edit + 1
    # best[diagonal + offset] = old_pos of the furthest path on that diagonal, comps = its last component
    best_pos: list[int | None] = [None] * (2 * offset + 1)
    best_comp: list[_Comp | None] = [None] * (2 * offset + 1)
    best_pos[offset] = old_pos
    best_comp[offset] = seed
    min_diag = -max_edit - 1
    max_diag = max_edit + 1
    edit_length = 1
    while edit_length <= max_edit:
        if edit_length == handoff:
            from pi_nb.tools._myers_np import myers_components

            components = myers_components(o, n, best_pos, best_comp, min_diag, max_diag, edit_length)
            return _parts(components, old_tokens, new_tokens)
        diagonal = max(min_diag, -edit_length)
        while diagonal <= min(max_diag, edit_length):  # re-read each step: the bounds move
            i = diagonal + offset
            remove_pos = best_pos[i - 1]
            remove_comp = best_comp[i - 1]
            add_pos = best_pos[i + 1]
            if remove_pos is not None:
                best_pos[i - 1] = None
            can_add = add_pos is not None and 0 <= add_pos - diagonal < new_len
            can_remove = remove_pos is not None and remove_pos + 1 < old_len
            if not can_add and not can_remove:
                best_pos[i] = None
                diagonal += 2
                continue
            if not can_remove or (can_add and remove_pos < add_pos):  # type: ignore[operator]
                base_pos = add_pos
                last = best_comp[i + 1]
                added, removed = True, False
            else:
                base_pos = remove_pos + 1  # type: ignore[operator]
                last = remove_comp
                added, removed = False, True
            if last is not None and last[1] == added and last[2] == removed:
                comp: _Comp = (last[0] + 1, added, removed, last[3])
            else:
                comp = (1, added, removed, last)
            op = base_pos
            np_ = op - diagonal  # type: ignore[operator]
            common = 0
            while np_ + 1 < new_len and op + 1 < old_len and o[op + 1] == n[np_ + 1]:  # type: ignore[operator]
                np_ += 1
                op += 1  # type: ignore[operator]
                common += 1
            if common:
                comp = (common, False, False, comp)
            if op + 1 >= old_len and np_ + 1 >= new_len:  # type: ignore[operator]
                return build(comp)
            best_pos[i] = op
            best_comp[i] = comp
            if op + 1 >= old_len:  # type: ignore[operator]
                max_diag = min(max_diag, diagonal - 1)
            if np_ + 1 >= new_len:
                min_diag = max(min_diag, diagonal + 1)
            diagonal += 2
        edit_length += 1
    raise AssertionError("unreachable: jsdiff always finds an edit script")  # pragma: no cover


def _split_lines(text: str) -> list[str]:
    has_trailing = text.endswith("\n")
    result = [line + "\n" for line in text.split("\n")]
    if has_trailing:
        result.pop()
    else:
        result[-1] = result[-1][:-1]
    return result


def generate_unified_patch(
    path: str,
    old_content: str,
    new_content: str,
    context_lines: int = 4,
    *,
    parts: list[DiffPart] | None = None,
) -> str:
    """Pi's ``generateUnifiedPatch``: jsdiff ``createTwoFilesPatch`` with file headers only.

    ``parts`` may pass in ``diff_lines(old_content, new_content)`` when the caller has it already.
    """
    if parts is None:
        parts = diff_lines(old_content, new_content)
    entries: list[tuple[DiffPart | None, list[str]]] = [(p, _split_lines(p.value)) for p in parts]
    entries.append((None, []))
    context = context_lines
    hunks: list[tuple[int, int, int, int, list[str]]] = []
    old_range_start = new_range_start = 0
    cur: list[str] = []
    old_line = new_line = 1
    for i, (part, lines) in enumerate(entries):
        changed = part is not None and (part.added or part.removed)
        if changed:
            assert part is not None
            if not old_range_start:
                old_range_start, new_range_start = old_line, new_line
                if i > 0:
                    prev_lines = entries[i - 1][1]
                    cur = [" " + x for x in prev_lines[-context:]] if context > 0 else []
                    old_range_start -= len(cur)
                    new_range_start -= len(cur)
            cur.extend(("+" if part.added else "-") + x for x in lines)
            if part.added:
                new_line += len(lines)
            else:
                old_line += len(lines)
        else:
            if old_range_start:
                if len(lines) <= context * 2 and i < len(entries) - 2:
                    cur.extend(" " + x for x in lines)
                else:
                    size = min(len(lines), context)
                    cur.extend(" " + x for x in lines[:size])
                    hunks.append(
                        (
                            old_range_start,
                            old_line - old_range_start + size,
                            new_range_start,
                            new_line - new_range_start + size,
                            cur,
                        )
                    )
                    old_range_start = new_range_start = 0
                    cur = []
            old_line += len(lines)
            new_line += len(lines)

    out = [f"--- {path}", f"+++ {path}"]
    for old_start, old_lines, new_start, new_lines, hunk_lines in hunks:
        fixed: list[str] = []
        for line in hunk_lines:
            if line.endswith("\n"):
                fixed.append(line[:-1])
            else:
                fixed.append(line)
                fixed.append("\\ No newline at end of file")
        if old_lines == 0:
            old_start -= 1
        if new_lines == 0:
            new_start -= 1
        out.append(f"@@ -{old_start},{old_lines} +{new_start},{new_lines} @@")
        out.extend(fixed)
    return "\n".join(out) + "\n"


def generate_diff_string(
    old_content: str, new_content: str, context_lines: int = 4, *, parts: list[DiffPart] | None = None
) -> tuple[str, int | None]:
    """Pi's ``generateDiffString``: ``(diff, firstChangedLine)`` with numbered, trimmed context."""
    if parts is None:
        parts = diff_lines(old_content, new_content)
    output: list[str] = []
    width = len(str(max(len(old_content.split("\n")), len(new_content.split("\n")))))
    old_num = new_num = 1
    last_was_change = False
    first_changed: int | None = None

    def num(n: int) -> str:
        return str(n).rjust(width)

    blank = "".rjust(width)
    for i, part in enumerate(parts):
        raw = part.value.split("\n")
        if raw[-1] == "":
            raw.pop()
        if part.added or part.removed:
            if first_changed is None:
                first_changed = new_num
            for line in raw:
                if part.added:
                    output.append(f"+{num(new_num)} {line}")
                    new_num += 1
                else:
                    output.append(f"-{num(old_num)} {line}")
                    old_num += 1
            last_was_change = True
            continue
        next_is_change = i < len(parts) - 1 and (parts[i + 1].added or parts[i + 1].removed)
        if last_was_change and next_is_change:
            if len(raw) <= context_lines * 2:
                for line in raw:
                    output.append(f" {num(old_num)} {line}")
                    old_num += 1
                    new_num += 1
            else:
                leading = raw[:context_lines]
                trailing = raw[len(raw) - context_lines :]
                skipped = len(raw) - len(leading) - len(trailing)
                for line in leading:
                    output.append(f" {num(old_num)} {line}")
                    old_num += 1
                    new_num += 1
                output.append(f" {blank} ...")
                old_num += skipped
                new_num += skipped
                for line in trailing:
                    output.append(f" {num(old_num)} {line}")
                    old_num += 1
                    new_num += 1
        elif last_was_change:
            shown = raw[:context_lines]
            skipped = len(raw) - len(shown)
            for line in shown:
                output.append(f" {num(old_num)} {line}")
                old_num += 1
                new_num += 1
            if skipped > 0:
                output.append(f" {blank} ...")
                old_num += skipped
                new_num += skipped
        elif next_is_change:
            skipped = max(0, len(raw) - context_lines)
            if skipped > 0:
                output.append(f" {blank} ...")
                old_num += skipped
                new_num += skipped
            for line in raw[skipped:]:
                output.append(f" {num(old_num)} {line}")
                old_num += 1
                new_num += 1
        else:
            old_num += len(raw)
            new_num += len(raw)
        last_was_change = False
    return "\n".join(output), first_changed
