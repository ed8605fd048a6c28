"""Prompt templates: ``/name args`` expanded into the user's input (Pi's ``core/prompt-templates.ts``).

A prompt template is a ``.md`` file in a prompt root (``<agentDir>/prompts``, ``<cwd>/.pi/prompts``,
paths from settings or ``--prompt-template``). Its name is the file name without ``.md``; the
frontmatter may give ``description`` and ``argument-hint``; the body (frontmatter stripped and
trimmed) is the template. Typing ``/name args`` sends the template with the arguments substituted.

Rules (taken from the Pi 0.85.0 sources, checked against the published ``dist``):

* ``/name`` must be followed by white space or the end of the text; ``name`` is everything up to the
  first white space. Only the **first** template with that name is used; an unknown name leaves the
  text unchanged. (The session expands ``/skill:`` commands first, then prompt templates.)
* Arguments are split like a shell, but simply: white space separates, ``"..."`` and ``'...'``
  group (the quotes are dropped; there are no escapes, an unclosed quote runs to the end), and
  quotes in the middle of a word join it (``a"b c"d`` is one argument ``ab cd``).
* Placeholders in the template (nothing is substituted recursively):
  ``$1``, ``$2`` ... a positional argument (``""`` when missing; ``$0`` is ``""``);
  ``$@`` and ``$ARGUMENTS`` all arguments joined by single spaces;
  ``${N:-default}`` argument N, or ``default`` when it is missing or empty;
  ``${@:-default}`` / ``${ARGUMENTS:-default}`` all arguments, or ``default`` when there are none;
  ``${@:N}`` the arguments from the N-th on; ``${@:N:L}`` L arguments from the N-th
  (``N`` = 0 counts as 1, as in bash).
* ``description`` is the frontmatter's when it is truthy (in JavaScript's sense, and kept as it
  is even when not a string), else the first non-blank line of the body cut to 60 UTF-16 code units
  plus ``"..."`` when longer.
* A file that cannot be read or whose frontmatter does not parse is skipped silently; a missing
  path is skipped silently (no diagnostics: ``loadPromptTemplates`` has none).
* Directory roots are read one level deep (no recursion), every ``*.md`` entry in byte order of the
  names, including dot files; the resource loader discovers its roots with
  :func:`collect_prompt_entries` instead, which skips dot files and ``node_modules`` and honours
  ``.gitignore``/``.ignore``/``.fdignore``. Name collisions are resolved by the loader
  (:func:`dedupe_prompts`: first wins, ``collision`` diagnostic ``name "/{name}" collision``).
"""

from __future__ import annotations

import os
import re
import stat as _stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

from pi_nb._js import js_trim, utf16_len
from pi_nb._js import js_truthy as _js_truthy
from pi_nb.config import get_agent_dir
from pi_nb.errors import FrontmatterError
from pi_nb.resources._ignore import Ignore, IgnoreRuleError
from pi_nb.resources.frontmatter import parse_frontmatter
from pi_nb.resources.paths import (
    CONFIG_DIR_NAME,
    is_under_path,
    node_join,
    node_resolve,
    path_exists,
    read_text_js,
    resolve_path,
)
from pi_nb.resources.skills import (
    ResourceCollision,
    ResourceDiagnostic,
    SourceInfo,
    SourceInfoDict,
    _add_ignore_rules,
    create_synthetic_source_info,
)

__all__ = [
    "PromptTemplate",
    "PromptTemplateDict",
    "collect_prompt_entries",
    "dedupe_prompts",
    "expand_prompt_template",
    "load_prompt_templates",
    "parse_command_args",
    "substitute_args",
]

_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_WS_RE = re.compile(f"[{_JS_WS}]")


class PromptTemplateDict(TypedDict):
    """:meth:`PromptTemplate.to_dict`: Pi's ``{name, description, argumentHint?, content, sourceInfo,
    filePath}`` (``description`` and ``argumentHint`` are frontmatter values: any YAML value)."""

    name: str
    description: Any
    argumentHint: NotRequired[Any]
    content: str
    sourceInfo: SourceInfoDict
    filePath: str


@dataclass(frozen=True)
class PromptTemplate:
    """A prompt template (Pi's ``PromptTemplate``).

    ``description`` and ``argument_hint`` hold what the frontmatter gave; Pi does not check their
    type, so they are normally strings but can be any YAML value. ``argument_hint`` is ``None``
    when the frontmatter has none (or a falsy one).
    """

    name: str
    description: Any
    content: str
    source_info: SourceInfo
    file_path: str
    argument_hint: Any = None

    def to_dict(self) -> PromptTemplateDict:
        if self.argument_hint is not None:  # Pi's key order: argumentHint before content
            return {
                "name": self.name,
                "description": self.description,
                "argumentHint": self.argument_hint,
                "content": self.content,
                "sourceInfo": self.source_info.to_dict(),
                "filePath": self.file_path,
            }
        return {
            "name": self.name,
            "description": self.description,
            "content": self.content,
            "sourceInfo": self.source_info.to_dict(),
            "filePath": self.file_path,
        }


def _js_slice_utf16(s: str, end: int) -> str:
    """``s.slice(0, end)`` counting UTF-16 code units (may split a surrogate pair, as JS does)."""
    units = s.encode("utf-16-le", "surrogatepass")
    return units[: 2 * end].decode("utf-16-le", "surrogatepass")


# ---------------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------------


def parse_command_args(args_string: str) -> list[str]:
    """Split the arguments of ``/name args`` (Pi's ``parseCommandArgs``; see the module docstring)."""
    args: list[str] = []
    current = ""
    in_quote: str | None = None
    for char in args_string:
        if in_quote is not None:
            if char == in_quote:
                in_quote = None
            else:
                current += char
        elif char in ('"', "'"):
            in_quote = char
        elif _JS_WS_RE.match(char):
            if current:
                args.append(current)
                current = ""
        else:
            current += char
    if current:
        args.append(current)
    return args


_PLACEHOLDER = re.compile(
    r"\$\{([0-9]+|ARGUMENTS|@):-([^}]*)\}|\$\{@:([0-9]+)(?::([0-9]+))?\}|\$(ARGUMENTS|@|[0-9]+)"
)


def _positional(args: Sequence[str], number: str) -> str | None:
    index = int(number) - 1
    return args[index] if 0 <= index < len(args) else None


def substitute_args(content: str, args: Sequence[str]) -> str:
    """Replace the placeholders of a template (Pi's ``substituteArgs``; see the module docstring)."""
    all_args = " ".join(args)

    def replace(m: re.Match[str]) -> str:
        default_target, default_value, slice_start, slice_length, simple = m.groups()
        if default_target:
            value = all_args if default_target in ("@", "ARGUMENTS") else _positional(args, default_target)
            return value if value else default_value
        if slice_start:
            start = max(int(slice_start) - 1, 0)
            if slice_length:
                return " ".join(args[start : start + int(slice_length)])
            return " ".join(args[start:])
        if simple in ("ARGUMENTS", "@"):
            return all_args
        return _positional(args, simple) or ""

    return _PLACEHOLDER.sub(replace, content)


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


def _load_template_from_file(file_path: str, source_info: SourceInfo) -> PromptTemplate | None:
    try:
        raw = read_text_js(file_path)
        frontmatter, body = parse_frontmatter(raw)
    except (OSError, FrontmatterError):
        return None
    fm = frontmatter if isinstance(frontmatter, dict) else {}
    name = re.sub(r"\.md\Z", "", os.path.basename(file_path))
    description: Any = fm.get("description")
    if not _js_truthy(description):
        description = ""
        first_line = next((line for line in body.split("\n") if js_trim(line)), None)
        if first_line:
            description = _js_slice_utf16(first_line, 60)
            if utf16_len(first_line) > 60:
                description += "..."
    hint = fm.get("argument-hint")
    return PromptTemplate(
        name=name,
        description=description,
        content=body,
        source_info=source_info,
        file_path=file_path,
        argument_hint=hint if _js_truthy(hint) else None,
    )


def _sorted_entries(directory: str) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as it:
        return sorted(it, key=lambda e: os.fsencode(e.name))


def _is_file(entry: os.DirEntry[str], full_path: str) -> bool | None:
    """``isFile`` of a dirent, following symlinks; ``None`` for a broken symlink."""
    try:
        if entry.is_symlink():
            return _stat.S_ISREG(os.stat(full_path).st_mode)
        return entry.is_file(follow_symlinks=False)
    except (OSError, ValueError):
        return None


def _load_templates_from_dir(directory: str, get_source_info: Any) -> list[PromptTemplate]:
    templates: list[PromptTemplate] = []
    if not path_exists(directory):
        return templates
    try:
        for entry in _sorted_entries(directory):
            full_path = node_join(directory, entry.name)
            is_file = _is_file(entry, full_path)
            if is_file is None:
                continue
            if is_file and entry.name.endswith(".md"):
                template = _load_template_from_file(full_path, get_source_info(full_path))
                if template is not None:
                    templates.append(template)
    except (OSError, ValueError):
        return templates
    return templates


def load_prompt_templates(
    cwd: str,
    agent_dir: str | None = None,
    prompt_paths: Sequence[str] = (),
    include_defaults: bool = True,
) -> list[PromptTemplate]:
    """Templates from ``<agent_dir>/prompts`` and ``<cwd>/.pi/prompts`` (with ``include_defaults``),
    then from ``prompt_paths`` (directories read one level deep, ``.md`` files loaded; paths are
    resolved against ``cwd``, ``~`` expanded, trimmed). No de-duplication (Pi's
    ``loadPromptTemplates``). Source info: ``local`` with scope ``user``/``project`` under the
    default roots, else ``temporary`` with the directory as ``baseDir``.

    ``agent_dir`` defaults to :func:`pi_nb.config.get_agent_dir`.
    """
    if agent_dir is None:
        agent_dir = get_agent_dir()
    resolved_cwd = resolve_path(cwd)
    resolved_agent_dir = resolve_path(agent_dir)
    global_dir = node_join(resolved_agent_dir, "prompts")
    project_dir = node_resolve(resolved_cwd, CONFIG_DIR_NAME, "prompts")

    def get_source_info(resolved: str) -> SourceInfo:
        if is_under_path(resolved, global_dir):
            return create_synthetic_source_info(resolved, source="local", scope="user", base_dir=global_dir)
        if is_under_path(resolved, project_dir):
            return create_synthetic_source_info(
                resolved, source="local", scope="project", base_dir=project_dir
            )
        base_dir = resolved if _stat.S_ISDIR(os.stat(resolved).st_mode) else os.path.dirname(resolved)
        return create_synthetic_source_info(resolved, source="local", base_dir=base_dir)

    templates: list[PromptTemplate] = []
    if include_defaults:
        templates.extend(_load_templates_from_dir(global_dir, get_source_info))
        templates.extend(_load_templates_from_dir(project_dir, get_source_info))
    for raw_path in prompt_paths:
        resolved = resolve_path(raw_path, resolved_cwd, trim=True)
        if not path_exists(resolved):
            continue
        try:
            st = os.stat(resolved)
            if _stat.S_ISDIR(st.st_mode):
                templates.extend(_load_templates_from_dir(resolved, get_source_info))
            elif _stat.S_ISREG(st.st_mode) and resolved.endswith(".md"):
                template = _load_template_from_file(resolved, get_source_info(resolved))
                if template is not None:
                    templates.append(template)
        except OSError:
            continue
    return templates


def collect_prompt_entries(dir: str) -> list[str]:
    """The ``*.md`` files of a prompt root as the resource loader discovers them (Pi's
    ``collectAutoPromptEntries``): one level deep, byte order, dot files and ``node_modules``
    skipped, ``.gitignore``/``.ignore``/``.fdignore`` of the root honoured (npm ``ignore``
    semantics, case-insensitive)."""
    entries: list[str] = []
    if not path_exists(dir):
        return entries
    ig = Ignore()
    _add_ignore_rules(ig, dir, dir)
    try:
        for entry in _sorted_entries(dir):
            if entry.name.startswith(".") or entry.name == "node_modules":
                continue
            full_path = node_join(dir, entry.name)
            is_file = _is_file(entry, full_path)
            if is_file is None:
                continue
            rel_path = os.path.relpath(full_path, dir).replace(os.sep, "/")
            if ig.ignores(rel_path):
                continue
            if is_file and entry.name.endswith(".md"):
                entries.append(full_path)
    except (OSError, ValueError, IgnoreRuleError):
        return entries
    return entries


def dedupe_prompts(
    prompts: Iterable[PromptTemplate],
) -> tuple[list[PromptTemplate], list[ResourceDiagnostic]]:
    """First template of a name wins; each later one gives a ``collision`` diagnostic
    ``name "/{name}" collision`` (the resource loader's ``dedupePrompts``)."""
    seen: dict[str, PromptTemplate] = {}
    diagnostics: list[ResourceDiagnostic] = []
    for prompt in prompts:
        existing = seen.get(prompt.name)
        if existing is not None:
            diagnostics.append(
                ResourceDiagnostic(
                    "collision",
                    f'name "/{prompt.name}" collision',
                    prompt.file_path,
                    ResourceCollision("prompt", prompt.name, existing.file_path, prompt.file_path),
                )
            )
        else:
            seen[prompt.name] = prompt
    return list(seen.values()), diagnostics


_COMMAND = re.compile(f"/([^{_JS_WS}]+)(?:[{_JS_WS}]+([\\s\\S]*))?", re.DOTALL)


def expand_prompt_template(text: str, templates: Iterable[PromptTemplate]) -> str:
    """``/name args`` -> the template ``name`` with ``args`` substituted (Pi's ``expandPromptTemplate``).

    Text not starting with ``/``, or naming no template, is returned unchanged.
    """
    if not text.startswith("/"):
        return text
    m = _COMMAND.fullmatch(text)
    if m is None:
        return text
    template_name, args_string = m.group(1), m.group(2) or ""
    template = next((t for t in templates if t.name == template_name), None)
    if template is None:
        return text
    return substitute_args(template.content, parse_command_args(args_string))
