"""The system prompt (Pi 0.85's ``core/system-prompt.ts`` ``buildSystemPrompt``), as a pure function.

Two paths, with Pi's exact structure:

* **custom** (``custom_prompt`` non-empty: a ``SYSTEM.md`` or ``--system-prompt``): the custom text,
  then the append section, the ``<project_context>`` block, the skills block, and
  ``"\\nCurrent working directory: {cwd}\\n"`` -- with a trailing newline. Byte-identical to Pi.
* **default**: the intro sentence, ``Available tools:`` (one ``- name: snippet`` line per selected
  tool that has a snippet, in selection order, or ``(none)``), the custom-tools sentence,
  ``Guidelines:`` (see below), the documentation block, then the same append / context / skills
  tail and ``"\\nCurrent working directory: {cwd}"`` -- *no* trailing newline, and only one
  newline before it, so without context files or skills it follows the last documentation line
  directly.

Guidelines, de-duplicated in this order: the file-exploration line when bash and/or PowerShell is
selected but none of grep/find/ls (three wordings); the caller's ``prompt_guidelines`` (trimmed,
blanks dropped); ``Be concise in your responses``; ``Show file paths clearly when working with
files``.

The skills block (:func:`~pi_nb.resources.skills.format_skills_for_prompt`) is only added when a
tool can read the skill files: ``read`` (the block says "Use the read tool") or else ``bash``
("Use bash"); with neither, skills are left out entirely. Context files are written unescaped.
``cwd`` has its backslashes turned into slashes.

What differs from Pi, on purpose: the default path's *prose* is pi_nb's own. Its intro sentence
names pi_nb (:data:`PI_NB_INTRO`) and the documentation block points at pi_nb's documentation
(:class:`DocPaths`; same eight-line structure as Pi's). Everything else -- headings, tool lines,
guideline texts and order, separators -- is Pi's, so a Pi prompt with those two pieces swapped is
byte-equal to ours (tested against the real Pi).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from pi_nb._js import js_trim
from pi_nb.resources.context_files import ContextFileDict
from pi_nb.resources.skills import Skill, format_skills_for_prompt
from pi_nb.tools.bash import BASH_PROMPT_GUIDELINES, BASH_PROMPT_SNIPPET
from pi_nb.tools.edit import EDIT_PROMPT_GUIDELINES, EDIT_PROMPT_SNIPPET
from pi_nb.tools.find import FIND_PROMPT_SNIPPET
from pi_nb.tools.grep import GREP_PROMPT_SNIPPET
from pi_nb.tools.ls import LS_PROMPT_SNIPPET
from pi_nb.tools.read import READ_PROMPT_GUIDELINES, READ_PROMPT_SNIPPET
from pi_nb.tools.write import WRITE_PROMPT_GUIDELINES, WRITE_PROMPT_SNIPPET

__all__ = [
    "BUILTIN_TOOL_GUIDELINES",
    "BUILTIN_TOOL_SNIPPETS",
    "DEFAULT_SELECTED_TOOLS",
    "PI_NB_INTRO",
    "DocPaths",
    "build_system_prompt",
    "collect_tool_prompt_options",
    "get_doc_paths",
    "normalize_prompt_guidelines",
    "normalize_prompt_snippet",
]

#: The tools Pi selects when the caller gives none (``selectedTools`` undefined).
DEFAULT_SELECTED_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")

#: Pi's one-line snippets of the built-in tools (the texts live next to each tool in
#: :mod:`pi_nb.tools`); a tool appears under "Available tools" only with a snippet.
BUILTIN_TOOL_SNIPPETS: Mapping[str, str] = MappingProxyType(
    {
        "read": READ_PROMPT_SNIPPET,
        "bash": BASH_PROMPT_SNIPPET,
        "edit": EDIT_PROMPT_SNIPPET,
        "write": WRITE_PROMPT_SNIPPET,
        "grep": GREP_PROMPT_SNIPPET,
        "find": FIND_PROMPT_SNIPPET,
        "ls": LS_PROMPT_SNIPPET,
    }
)

#: Pi's guidelines of the built-in tools. bash's one only applies while the bash tool exposes the
#: session's ``PI_*`` environment variables (Pi's default; the tool drops it otherwise).
BUILTIN_TOOL_GUIDELINES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "read": tuple(READ_PROMPT_GUIDELINES),
        "bash": tuple(BASH_PROMPT_GUIDELINES),
        "edit": tuple(EDIT_PROMPT_GUIDELINES),
        "write": tuple(WRITE_PROMPT_GUIDELINES),
        "grep": (),
        "find": (),
        "ls": (),
    }
)

#: The first paragraph of the default prompt (Pi's names pi; the rest of its structure is Pi's).
PI_NB_INTRO = (
    "You are an expert coding assistant operating inside pi_nb, a coding agent harness for Python "
    "and Jupyter notebooks. You help users by reading files, executing commands, editing code, and "
    "writing new files."
)

_CUSTOM_TOOLS_LINE = (
    "In addition to the tools above, you may have access to other custom tools depending on the project."
)


@dataclass(frozen=True)
class DocPaths:
    """Where pi_nb's documentation is, for the default prompt's documentation block."""

    readme: str
    docs: str
    examples: str


def get_doc_paths() -> DocPaths:
    """pi_nb's documentation: ``README.md``, ``docs/`` and ``notebooks/`` of the package root.

    The root is ``$PI_NB_PACKAGE_DIR`` when set (like Pi's ``PI_PACKAGE_DIR``), else the directory
    that contains the ``pi_nb`` package (the project root of a source checkout or editable
    install). Pass ``docs=`` to :func:`build_system_prompt` to point elsewhere.
    """
    root = os.environ.get("PI_NB_PACKAGE_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return DocPaths(
        readme=os.path.join(root, "README.md"),
        docs=os.path.join(root, "docs"),
        examples=os.path.join(root, "notebooks"),
    )


def _docs_block(paths: DocPaths) -> str:
    # Pi's block has these eight lines; the wording is pi_nb's.
    return "\n".join(
        [
            "pi_nb documentation (read only when the user asks about pi_nb itself, its Python API, "
            "notebook magics, sessions, skills, or prompt templates):",
            f"- Main documentation: {paths.readme}",
            f"- Additional docs: {paths.docs}",
            f"- Examples: {paths.examples} (notebooks, Python API, custom tools)",
            "- When reading pi_nb docs or examples, resolve docs/... under Additional docs and "
            "examples/... under Examples, not the current working directory",
            "- When asked about: notebook magics, widgets and views, sessions and the session tree, "
            "compaction, skills, prompt templates, tools, or model providers, look for the matching "
            ".md file under Additional docs and the matching notebook under Examples",
            "- When working on pi_nb topics, read the docs and examples, and follow .md "
            "cross-references before implementing",
            "- Always read pi_nb .md files completely and follow links to related docs",
        ]
    )


class _ContextFileLike(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def content(self) -> str: ...


def _path_content(f: _ContextFileLike | ContextFileDict) -> tuple[str, str]:
    if isinstance(f, Mapping):
        return str(f["path"]), str(f["content"])
    return f.path, f.content


def build_system_prompt(
    *,
    cwd: str,
    custom_prompt: str | None = None,
    selected_tools: Sequence[str] | None = None,
    tool_snippets: Mapping[str, str] | None = None,
    prompt_guidelines: Iterable[str] | None = None,
    append_system_prompt: str | None = None,
    context_files: Iterable[_ContextFileLike | ContextFileDict] | None = None,
    skills: Sequence[Skill] | None = None,
    docs: DocPaths | None = None,
) -> str:
    """Pi's ``buildSystemPrompt`` (see the module docstring).

    ``selected_tools=None`` means Pi's default ``read, bash, edit, write``; an empty list means no
    tools. ``tool_snippets`` and ``prompt_guidelines`` are taken as given (the agent session
    passes the active tools' texts, see :func:`collect_tool_prompt_options`); no snippets means
    ``(none)`` under "Available tools". ``context_files`` are objects with ``path`` and
    ``content`` (e.g. :class:`~pi_nb.resources.context_files.ContextFile`) or such mappings.
    ``docs`` only matters on the default path (default: :func:`get_doc_paths`).
    """
    prompt_cwd = cwd.replace("\\", "/")
    append_section = f"\n\n{append_system_prompt}" if append_system_prompt else ""
    files = [_path_content(f) for f in (context_files or ())]
    skill_list = list(skills or ())
    tools = list(selected_tools) if selected_tools is not None else list(DEFAULT_SELECTED_TOOLS)
    skill_file_read_tool = next((t for t in ("read", "bash") if t in tools), None)

    def tail() -> str:
        out = append_section
        if files:
            out += "\n\n<project_context>\n\n"
            out += "Project-specific instructions and guidelines:\n\n"
            for file_path, content in files:
                out += f'<project_instructions path="{file_path}">\n{content}\n</project_instructions>\n\n'
            out += "</project_context>\n"
        if skill_file_read_tool is not None and skill_list:
            out += format_skills_for_prompt(skill_list, "read" if skill_file_read_tool == "read" else "bash")
        return out

    if custom_prompt:
        return f"{custom_prompt}{tail()}\nCurrent working directory: {prompt_cwd}\n"

    snippets = tool_snippets or {}
    visible = [name for name in tools if snippets.get(name)]
    tools_list = "\n".join(f"- {name}: {snippets[name]}" for name in visible) if visible else "(none)"

    guidelines: list[str] = []

    def add(guideline: str) -> None:
        if guideline not in guidelines:
            guidelines.append(guideline)

    has_bash, has_powershell = "bash" in tools, "powershell" in tools
    if (has_bash or has_powershell) and not any(t in tools for t in ("grep", "find", "ls")):
        if has_bash and has_powershell:
            add("Use bash or PowerShell for file operations like listing, searching, and finding files")
        elif has_powershell:
            add("Use PowerShell for file operations like listing, searching, and finding files")
        else:
            add("Use bash for file operations like ls, rg, find")
    for guideline in prompt_guidelines or ():
        normalized = js_trim(guideline)
        if normalized:
            add(normalized)
    add("Be concise in your responses")
    add("Show file paths clearly when working with files")
    guideline_lines = "\n".join(f"- {g}" for g in guidelines)

    prompt = (
        f"{PI_NB_INTRO}\n\n"
        f"Available tools:\n{tools_list}\n\n"
        f"{_CUSTOM_TOOLS_LINE}\n\n"
        f"Guidelines:\n{guideline_lines}\n\n"
        f"{_docs_block(docs if docs is not None else get_doc_paths())}"
    )
    return f"{prompt}{tail()}\nCurrent working directory: {prompt_cwd}"


# ---------------------------------------------------------------------------------------------
# What the agent session passes in (AgentSession._rebuildSystemPrompt)
# ---------------------------------------------------------------------------------------------

_JS_WS_RUN = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")


def normalize_prompt_snippet(text: str | None) -> str | None:
    """A tool's snippet collapsed to one line (``AgentSession._normalizePromptSnippet``):
    line breaks and white-space runs become single spaces, then trimmed; ``None`` when empty."""
    if not text:
        return None
    one_line = js_trim(_JS_WS_RUN.sub(" ", re.sub(r"[\r\n]+", " ", text)))
    return one_line or None


def normalize_prompt_guidelines(guidelines: Iterable[str] | None) -> list[str]:
    """A tool's guidelines trimmed, blanks dropped, duplicates removed (first kept)."""
    out: list[str] = []
    for guideline in guidelines or ():
        normalized = js_trim(guideline)
        if normalized and normalized not in out:
            out.append(normalized)
    return out


def collect_tool_prompt_options(
    tool_names: Iterable[str],
    snippets: Mapping[str, str | None] = BUILTIN_TOOL_SNIPPETS,
    guidelines: Mapping[str, Iterable[str] | None] = BUILTIN_TOOL_GUIDELINES,
) -> tuple[dict[str, str], list[str]]:
    """``tool_snippets`` and ``prompt_guidelines`` for :func:`build_system_prompt`, the way Pi's
    session gathers them for the active tools: each tool's normalised snippet, and the tools'
    normalised guidelines concatenated in tool order (the prompt de-duplicates across tools)."""
    out_snippets: dict[str, str] = {}
    out_guidelines: list[str] = []
    for name in tool_names:
        snippet = normalize_prompt_snippet(snippets.get(name))
        if snippet:
            out_snippets[name] = snippet
        out_guidelines.extend(normalize_prompt_guidelines(guidelines.get(name)))
    return out_snippets, out_guidelines
