"""The ``edit`` tool: exact-text replacements, several per call (Pi's ``edit.ts``/``edit-diff.ts``).

Semantics, all Pi's:

* every ``edits[i].oldText`` is matched against the *original* file, never against the result of
  an earlier edit; matches must be unique and must not overlap; replacements are applied from the
  end so offsets stay valid;
* the file is read as UTF-8, a leading BOM is set aside (a model never types it), line endings are
  normalised to LF for matching (``oldText``/``newText`` too) and the file's original ending
  (CRLF if its first line break is CRLF) is restored on write, BOM included;
* when an ``oldText`` does not occur exactly, a fuzzy match is tried: NFKC, trailing whitespace
  stripped per line, curly quotes, Unicode dashes and special spaces folded to ASCII. Lines an edit
  does not touch keep their original bytes;
* the result text is ``Successfully replaced {n} block(s) in {path}.``; ``details`` carry a display
  ``diff``, a unified ``patch`` and ``firstChangedLine``.

``prepare_arguments`` repairs what models send: ``edits`` as a JSON string, a single edit object
instead of a list, and the legacy top-level ``oldText``/``newText`` pair (appended to ``edits``).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from pi_nb._fs import SpecialFileError, file_kind, is_special_file, open_regular, open_regular_for_write
from pi_nb._js import js_trim_end, js_utf8_encode, utf16_len
from pi_nb.errors import ToolError
from pi_nb.tools._node import error_code, node_fs_error
from pi_nb.tools.base import AbortSignal, AgentTool, AgentToolResult, ToolContext, ToolUpdateCallback
from pi_nb.tools.diff import diff_lines, generate_diff_string, generate_unified_patch
from pi_nb.tools.mutation_queue import with_file_mutation_queue
from pi_nb.tools.paths import resolve_to_cwd

__all__ = [
    "EditTool",
    "apply_edits_to_normalized_content",
    "create_edit_tool",
    "detect_line_ending",
    "fuzzy_find_text",
    "normalize_for_fuzzy_match",
    "normalize_to_lf",
    "restore_line_endings",
]

EDIT_PROMPT_SNIPPET = (
    "Make precise file edits with exact text replacement, including multiple disjoint edits in one call"
)
EDIT_PROMPT_GUIDELINES = (
    "Use edit for precise changes (edits[].oldText must match exactly)",
    "When changing multiple separate locations in one file, use one edit call with multiple entries in edits[] instead of multiple edit calls",
    "Each edits[].oldText is matched against the original file, not after earlier edits are applied. Do not emit overlapping or nested edits. Merge nearby changes into one edit.",
    "Keep edits[].oldText as small as possible while still being unique in the file. Do not pad with large unchanged regions.",
)
EDIT_DESCRIPTION = (
    "Change one file by exact text replacement. Each edits[].oldText must match exactly one region "
    "of the original file, and no two edits may overlap. When two changes touch the same or nearby "
    "lines, combine them into a single edit; do not pad oldText with long unchanged stretches to "
    "bridge distant changes."
)

EDIT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["path", "edits"],
    "properties": {
        "path": {"type": "string", "description": "Path to the file to edit (relative or absolute)"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["oldText", "newText"],
                "properties": {
                    "oldText": {
                        "type": "string",
                        "description": "Exact text for one targeted replacement. It must be unique in the original file and must not overlap with any other edits[].oldText in the same call.",
                    },
                    "newText": {"type": "string", "description": "Replacement text for this targeted edit."},
                },
            },
            "description": "One or more targeted replacements. Each edit is matched against the original file, not incrementally. Do not include overlapping or nested edits. If two changes touch the same block or nearby lines, merge them into one edit instead.",
        },
    },
}


def detect_line_ending(content: str) -> str:
    """``"\\r\\n"`` when the first line break is CRLF, else ``"\\n"``."""
    crlf = content.find("\r\n")
    lf = content.find("\n")
    if lf == -1 or crlf == -1:
        return "\n"
    return "\r\n" if crlf < lf else "\n"


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")


def normalize_for_fuzzy_match(text: str) -> str:
    """Pi's fuzzy normal form: NFKC, per-line trailing whitespace stripped, ASCII quotes/dashes/spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(js_trim_end(line) for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


@dataclass(frozen=True)
class FuzzyMatchResult:
    found: bool
    index: int
    match_length: int
    used_fuzzy_match: bool
    content_for_replacement: str


def fuzzy_find_text(content: str, old_text: str) -> FuzzyMatchResult:
    """Pi's ``fuzzyFindText``: exact ``indexOf`` first, then the same search in fuzzy normal form."""
    exact = content.find(old_text)
    if exact != -1:
        return FuzzyMatchResult(True, exact, len(old_text), False, content)
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    index = fuzzy_content.find(fuzzy_old)
    if index == -1:
        return FuzzyMatchResult(False, -1, 0, False, content)
    return FuzzyMatchResult(True, index, len(fuzzy_old), True, fuzzy_content)


def _count_occurrences(content: str, old_text: str) -> int:
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    if fuzzy_old == "":  # JS "abc".split("") splits into UTF-16 code units
        return utf16_len(fuzzy_content) - 1 if fuzzy_content else -1
    return fuzzy_content.count(fuzzy_old)


@dataclass
class _Match:
    edit_index: int
    match_index: int
    match_length: int
    new_text: str


_LINES_WITH_ENDINGS = re.compile(r"[^\n]*\n|[^\n]+")


def _apply_replacements(content: str, replacements: list[_Match], offset: int = 0) -> str:
    result = content
    for r in reversed(replacements):
        i = r.match_index - offset
        result = result[:i] + r.new_text + result[i + r.match_length :]
    return result


def _apply_preserving_unchanged_lines(original: str, base: str, replacements: list[_Match]) -> str:
    original_lines = _LINES_WITH_ENDINGS.findall(original)
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in _LINES_WITH_ENDINGS.findall(base):
        spans.append((offset, offset + len(line)))
        offset += len(line)
    if len(original_lines) != len(spans):
        raise ToolError(
            "Cannot preserve unchanged lines because the base content has a different line count."
        )

    groups: list[list[Any]] = []  # [start_line, end_line, replacements]
    for r in sorted(replacements, key=lambda m: m.match_index):
        start_line = next((i for i, (s, e) in enumerate(spans) if s <= r.match_index < e), -1)
        if start_line == -1:
            raise ToolError("Replacement range is outside the base content.")
        end = r.match_index + r.match_length
        end_line = start_line
        while end_line < len(spans) and spans[end_line][1] < end:
            end_line += 1
        if end_line >= len(spans):
            raise ToolError("Replacement range is outside the base content.")
        end_line += 1
        if groups and start_line < groups[-1][1]:
            groups[-1][1] = max(groups[-1][1], end_line)
            groups[-1][2].append(r)
            continue
        groups.append([start_line, end_line, [r]])

    out: list[str] = []
    line_index = 0
    for start_line, end_line, reps in groups:
        out.extend(original_lines[line_index:start_line])
        start_off = spans[start_line][0]
        end_off = spans[end_line - 1][1]
        out.append(_apply_replacements(base[start_off:end_off], reps, start_off))
        line_index = end_line
    out.extend(original_lines[line_index:])
    return "".join(out)


def apply_edits_to_normalized_content(
    normalized_content: str, edits: list[dict[str, str]], path: str
) -> tuple[str, str]:
    """Pi's ``applyEditsToNormalizedContent``: ``(baseContent, newContent)`` or a ToolError."""
    normalized = [(normalize_to_lf(e["oldText"]), normalize_to_lf(e["newText"])) for e in edits]
    total = len(normalized)
    for i, (old, _new) in enumerate(normalized):
        if old == "":
            raise ToolError(
                f"oldText must not be empty in {path}."
                if total == 1
                else f"edits[{i}].oldText must not be empty in {path}."
            )
    initial = [fuzzy_find_text(normalized_content, old) for old, _new in normalized]
    used_fuzzy = any(m.used_fuzzy_match for m in initial)
    base = normalize_for_fuzzy_match(normalized_content) if used_fuzzy else normalized_content

    matches: list[_Match] = []
    for i, (old, new) in enumerate(normalized):
        m = fuzzy_find_text(base, old)
        if not m.found:
            if total == 1:
                raise ToolError(
                    f"Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
                )
            raise ToolError(
                f"Could not find edits[{i}] in {path}. The oldText must match exactly including all whitespace and newlines."
            )
        occurrences = _count_occurrences(base, old)
        if occurrences > 1:
            if total == 1:
                raise ToolError(
                    f"Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
                )
            raise ToolError(
                f"Found {occurrences} occurrences of edits[{i}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
            )
        matches.append(_Match(i, m.index, m.match_length, new))

    matches.sort(key=lambda m: m.match_index)
    for prev, cur in itertools.pairwise(matches):
        if prev.match_index + prev.match_length > cur.match_index:
            raise ToolError(
                f"edits[{prev.edit_index}] and edits[{cur.edit_index}] overlap in {path}. Merge them into one edit or target disjoint regions."
            )

    new_content = (
        _apply_preserving_unchanged_lines(normalized_content, base, matches)
        if used_fuzzy
        else _apply_replacements(base, matches)
    )
    if new_content == normalized_content:
        if total == 1:
            raise ToolError(
                f"No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
            )
        raise ToolError(f"No changes made to {path}. The replacements produced identical content.")
    return normalized_content, new_content


def _is_single_edit(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("oldText"), str)
        and isinstance(value.get("newText"), str)
    )


def _decode_utf8(data: bytes) -> str:
    """``buffer.toString("utf-8")``: invalid sequences become U+FFFD (WHATWG decoder)."""
    return data.decode("utf-8", errors="replace")


class EditTool(AgentTool):
    """Pi's ``edit`` tool (see the module docstring)."""

    def __init__(self, cwd: str) -> None:
        super().__init__(
            name="edit",
            label="edit",
            description=EDIT_DESCRIPTION,
            parameters=EDIT_PARAMETERS,
            prompt_snippet=EDIT_PROMPT_SNIPPET,
            prompt_guidelines=EDIT_PROMPT_GUIDELINES,
            cwd=cwd,
        )

    def prepare_arguments(self, args: Any) -> Any:
        """Pi's ``prepareEditArguments`` (returns a new dict; the input is not changed)."""
        if not isinstance(args, dict):
            return args
        out = dict(args)
        edits = out.get("edits")
        if isinstance(edits, str):
            try:
                parsed = json.loads(edits)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                out["edits"] = parsed
            elif _is_single_edit(parsed):
                out["edits"] = [parsed]
        elif _is_single_edit(edits):
            out["edits"] = [edits]
        old_text, new_text = out.get("oldText"), out.get("newText")
        if not isinstance(old_text, str) or not isinstance(new_text, str):
            return out
        merged = list(out["edits"]) if isinstance(out.get("edits"), list) else []
        merged.append({"oldText": old_text, "newText": new_text})
        rest = {k: v for k, v in out.items() if k not in ("oldText", "newText")}
        rest["edits"] = merged
        return rest

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None = None,
        on_update: ToolUpdateCallback | None = None,
        ctx: ToolContext | None = None,
    ) -> AgentToolResult:
        edits = params.get("edits")
        if not isinstance(edits, list) or len(edits) == 0:
            raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
        path: str = params["path"]
        absolute = resolve_to_cwd(path, self.effective_cwd(ctx))

        def throw_if_aborted() -> None:
            if signal is not None and signal.aborted:
                raise ToolError("Operation aborted")

        async def mutate() -> AgentToolResult:
            throw_if_aborted()
            try:
                mode = os.stat(absolute).st_mode
                if is_special_file(mode):  # reading a FIFO by name blocks, /dev/zero never ends
                    raise ToolError(
                        f"Could not edit file: {path}. It is {file_kind(mode)}, not a regular file."
                    )
                if not os.access(absolute, os.R_OK | os.W_OK):
                    raise PermissionError(13, "Permission denied")
            except OSError as exc:
                throw_if_aborted()
                raise ToolError(f"Could not edit file: {path}. Error code: {error_code(exc)}.") from None
            throw_if_aborted()
            try:
                # checked again on the open descriptor: swapped for a FIFO since the stat, it
                # is refused instead of blocking the edit
                with open_regular(absolute) as f:
                    raw = _decode_utf8(f.read(os.fstat(f.fileno()).st_size))
            except SpecialFileError as exc:
                if exc.kind == "a directory":
                    raise node_fs_error(IsADirectoryError(21, "Is a directory"), "read") from None
                raise ToolError(
                    f"Could not edit file: {path}. It is {exc.kind}, not a regular file."
                ) from None
            except IsADirectoryError as exc:
                raise node_fs_error(exc, "read") from None
            except OSError as exc:
                raise node_fs_error(exc, "open", absolute) from None
            throw_if_aborted()
            bom = "\ufeff" if raw.startswith("\ufeff") else ""
            content = raw[1:] if bom else raw
            ending = detect_line_ending(content)
            base, new_content = apply_edits_to_normalized_content(normalize_to_lf(content), edits, path)
            throw_if_aborted()
            final = bom + restore_line_endings(new_content, ending)
            try:
                with open_regular_for_write(absolute) as f:
                    f.write(js_utf8_encode(final))
            except SpecialFileError as exc:  # swapped for a FIFO or device since it was read
                raise ToolError(
                    f"Could not edit file: {path}. It is {exc.kind}, not a regular file."
                ) from None
            except OSError as exc:
                raise node_fs_error(exc, "open", absolute) from None
            throw_if_aborted()
            parts = await asyncio.to_thread(diff_lines, base, new_content)
            diff, first_changed = generate_diff_string(base, new_content, parts=parts)
            patch = generate_unified_patch(path, base, new_content, parts=parts)
            details: dict[str, Any] = {"diff": diff, "patch": patch}
            if first_changed is not None:
                details["firstChangedLine"] = first_changed
            return AgentToolResult(
                content=[{"type": "text", "text": f"Successfully replaced {len(edits)} block(s) in {path}."}],
                details=details,
            )

        return await with_file_mutation_queue(absolute, mutate)


def create_edit_tool(cwd: str) -> EditTool:
    """Pi's ``createEditTool(cwd)``."""
    return EditTool(cwd)
