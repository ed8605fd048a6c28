"""Context files: ``AGENTS.md`` / ``CLAUDE.md`` instructions, found the way Pi finds them.

Pi's ``loadProjectContextFiles({cwd, agentDir})`` (``core/resource-loader.ts``):

* In each directory the first existing *regular file* among ``AGENTS.override.md``,
  ``AGENTS.md``, ``AGENTS.MD``, ``CLAUDE.md``, ``CLAUDE.MD`` wins -- one file per directory.
  ``AGENTS.override.md`` therefore only beats its own directory's ``AGENTS.md``; it does not
  hide files in other directories. A directory *named* like a candidate is skipped silently; a
  file that cannot be read is reported (a warning on the ``pi_nb.resources`` logger, as Pi writes
  to stderr) and the next candidate is tried. The names are checked one by one, not by a
  case-insensitive scan: on a case-sensitive file system ``agents.md`` is not a context file.
* The list starts with the global file from ``agent_dir``, then the files from the filesystem
  root down to ``cwd`` (parents before children: general rules first, specific rules last).
  Pi does not reconcile contradictions; the order is the whole policy.
* Content is UTF-8 (invalid bytes become U+FFFD) with one leading BOM removed; each file keeps
  its path (``join(dir, name)``, not canonicalised) as provenance.
* A path already listed (exact string: e.g. ``cwd`` inside ``agent_dir``) is not listed twice.
* Linked worktrees: when ``cwd`` is in a git worktree nested *inside* its main checkout and the
  worktree root has its own context file, the main checkout's file **of the same name** is
  skipped -- both describe the same repository, and loading both would apply it twice. Bare
  layouts, submodules, sibling worktrees, differently named files and a broken ``gitdir:`` all
  climb normally (:func:`find_shadowed_context_file`).
* Context files are **not** gated by project trust: they load for untrusted projects too.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass
from typing import TypedDict, cast

from pi_nb._js import js_trim
from pi_nb._wire import wire_dict
from pi_nb.resources.paths import (
    canonicalize_path,
    node_join,
    node_resolve,
    path_exists,
    read_text_js,
    resolve_path,
    strip_bom,
)

__all__ = [
    "CONTEXT_FILE_CANDIDATES",
    "ContextFile",
    "ContextFileDict",
    "GitPaths",
    "GitPathsDict",
    "find_git_paths",
    "find_shadowed_context_file",
    "load_context_file_from_dir",
    "load_project_context_files",
]

logger = logging.getLogger("pi_nb.resources")

#: The names Pi checks, in order, in every directory.
CONTEXT_FILE_CANDIDATES: tuple[str, ...] = (
    "AGENTS.override.md",
    "AGENTS.md",
    "AGENTS.MD",
    "CLAUDE.md",
    "CLAUDE.MD",
)


class ContextFileDict(TypedDict):
    """:meth:`ContextFile.to_dict`: Pi's ``{path, content}``."""

    path: str
    content: str


class GitPathsDict(TypedDict):
    """:meth:`GitPaths.to_dict`: ``{repoDir, commonGitDir, headPath}``."""

    repoDir: str
    commonGitDir: str
    headPath: str


@dataclass(frozen=True)
class ContextFile:
    """One loaded context file: where it came from and what it says."""

    path: str
    content: str

    def to_dict(self) -> ContextFileDict:
        """Pi's ``{path, content}``."""
        return cast(ContextFileDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


@dataclass(frozen=True)
class GitPaths:
    """Pi's ``findGitPaths`` result: the checkout holding ``.git``, its common git dir, its HEAD."""

    repo_dir: str
    common_git_dir: str
    head_path: str

    def to_dict(self) -> GitPathsDict:
        return cast(GitPathsDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


def load_context_file_from_dir(dir: str) -> ContextFile | None:
    """The first candidate in *dir* that exists and is a regular file (``loadContextFileFromDir``)."""
    for filename in CONTEXT_FILE_CANDIDATES:
        file_path = node_join(dir, filename)
        if not path_exists(file_path):
            continue
        try:
            if not stat.S_ISREG(os.stat(file_path).st_mode):
                continue
            return ContextFile(path=file_path, content=strip_bom(read_text_js(file_path)))
        except OSError as error:
            logger.warning("Warning: Could not read %s: %s", file_path, error)
    return None


def _read_trimmed(path: str) -> str:
    return js_trim(read_text_js(path))


def find_git_paths(cwd: str) -> GitPaths | None:
    """Pi's ``findGitPaths``: walk up from *cwd* for ``.git``.

    A ``.git`` directory is a normal checkout; a ``.git`` file ``gitdir: X`` points at the git dir
    (``X`` resolved against the file's directory), whose ``commondir`` file, if any, names the
    shared git dir. A git dir without ``HEAD`` means "no git" (``None``), and so does any read
    error. A ``.git`` file that does not start with ``gitdir: `` is passed over and the walk
    goes on, as in Pi.
    """
    dir = cwd
    while True:
        git_path = node_join(dir, ".git")
        if path_exists(git_path):
            try:
                st = os.stat(git_path)
                if stat.S_ISREG(st.st_mode):
                    content = _read_trimmed(git_path)
                    if content.startswith("gitdir: "):
                        git_dir = node_resolve(dir, js_trim(content[8:]))
                        head_path = node_join(git_dir, "HEAD")
                        if not path_exists(head_path):
                            return None
                        common_dir_path = node_join(git_dir, "commondir")
                        common_git_dir = (
                            node_resolve(git_dir, _read_trimmed(common_dir_path))
                            if path_exists(common_dir_path)
                            else git_dir
                        )
                        return GitPaths(repo_dir=dir, common_git_dir=common_git_dir, head_path=head_path)
                elif stat.S_ISDIR(st.st_mode):
                    head_path = node_join(git_path, "HEAD")
                    if not path_exists(head_path):
                        return None
                    return GitPaths(repo_dir=dir, common_git_dir=git_path, head_path=head_path)
            except OSError:
                return None
        parent = os.path.dirname(dir)
        if parent == dir:
            return None
        dir = parent


def find_shadowed_context_file(cwd: str) -> str | None:
    """The main checkout's context file that a nested linked worktree's own file shadows.

    Returned canonicalised (realpath): ``git worktree add`` writes the ``gitdir:`` target in
    realpath form while *cwd* may still go through a symlink. ``None`` when nothing is shadowed:
    an ordinary repo (worktree root == main root), a sibling worktree (main root not an ancestor),
    a bare layout or a submodule (the common git dir is not ``<main root>/.git``), or a worktree
    root without a context file of its own.
    """
    git_paths = find_git_paths(cwd)
    if git_paths is None:
        return None
    common_git_dir = canonicalize_path(git_paths.common_git_dir)
    worktree_root = canonicalize_path(git_paths.repo_dir)
    main_repo_root = os.path.dirname(common_git_dir)
    if not worktree_root.startswith(f"{main_repo_root}{os.sep}"):
        return None
    if canonicalize_path(node_join(main_repo_root, ".git")) != common_git_dir:
        return None
    worktree_context_file = load_context_file_from_dir(worktree_root)
    if worktree_context_file is None:
        return None
    return node_join(main_repo_root, os.path.basename(worktree_context_file.path))


def load_project_context_files(
    cwd: str, agent_dir: str, *, no_context_files: bool = False
) -> list[ContextFile]:
    """Pi's ``loadProjectContextFiles``: the global file, then root -> *cwd*, one per directory.

    ``no_context_files=True`` is Pi's ``--no-context-files`` / loader ``noContextFiles``: load none.
    Both paths are resolved Pi's way (``~`` expanded, relative to the process cwd).
    """
    if no_context_files:
        return []
    resolved_cwd = resolve_path(cwd)
    resolved_agent_dir = resolve_path(agent_dir)

    context_files: list[ContextFile] = []
    seen_paths: set[str] = set()

    global_context = load_context_file_from_dir(resolved_agent_dir)
    if global_context is not None:
        context_files.append(global_context)
        seen_paths.add(global_context.path)

    ancestor_context_files: list[ContextFile] = []
    shadowed = find_shadowed_context_file(resolved_cwd)
    current_dir = resolved_cwd
    while True:
        context_file = load_context_file_from_dir(current_dir)
        is_shadowed = (
            shadowed is not None
            and canonicalize_path(context_file.path if context_file is not None else "") == shadowed
        )
        if context_file is not None and not is_shadowed and context_file.path not in seen_paths:
            ancestor_context_files.insert(0, context_file)
            seen_paths.add(context_file.path)
        parent_dir = os.path.dirname(current_dir)
        if parent_dir == current_dir:
            break
        current_dir = parent_dir

    context_files.extend(ancestor_context_files)
    return context_files
