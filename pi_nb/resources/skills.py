"""Skills: discovery, validation, the system-prompt block and ``/skill:name`` expansion.

Mirrors Pi 0.85's ``core/skills.ts`` (``loadSkills``, ``loadSkillsFromDir``, ``formatSkillsForPrompt``),
the skill walk of ``core/package-manager.ts`` (``collectSkillEntries``, used by the resource loader
for every skill root) and ``AgentSession._expandSkillCommand``.

Discovery inside a root (both walks):

* names starting with ``.`` and ``node_modules`` are skipped; ``.gitignore``, ``.ignore`` and
  ``.fdignore`` of every visited directory are honoured, their patterns *re-rooted* by prefixing the
  directory's path relative to the root (Pi's quirk: ``foo`` in ``sub/.gitignore`` becomes
  ``sub/foo``, which then only matches directly under ``sub``; a leading ``/`` is dropped first,
  so ``/foo`` in the root's file matches ``foo`` at any depth). Matching follows the npm ``ignore``
  package, case-insensitively (:mod:`pi_nb.resources._ignore`);
* a directory holding a ``SKILL.md`` file (not ignored) is that skill: nothing else in it is read
  and it is not descended;
* otherwise ``mode="pi"`` roots (``<agentDir>/skills``, ``.pi/skills``, listed paths) take the
  root-level ``*.md`` files as skills and search subdirectories for ``SKILL.md`` only, while
  ``mode="agents"`` roots (``.agents/skills``) take **no** root-level ``*.md`` files but every
  ``*.md`` in subdirectories that have no ``SKILL.md``;
* directory entries are visited in byte order of their names (libuv sorts ``readdir``);
  symlinks are followed (broken ones skipped).

Deliberate difference: Pi follows directory symlinks without remembering where it has been, so a
symlink loop is walked ~40 levels deep (until the kernel's ``ELOOP``) and a skill inside it is found
once per level. pi_nb skips a directory whose real path is already on the current walk, so
discovery always terminates quickly and each skill in a loop is found once.

A non-``SKILL.md`` markdown file without a ``description`` is silently not a skill (no diagnostic:
0.85 behaviour); for ``SKILL.md`` files a missing description and YAML errors are warnings.
"""

from __future__ import annotations

import functools
import os
import re
import stat as _stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

from pi_nb._js import js_trim, utf16_len
from pi_nb.config import get_agent_dir
from pi_nb.errors import FrontmatterError
from pi_nb.resources._ignore import Ignore, IgnoreRuleError
from pi_nb.resources.frontmatter import parse_frontmatter
from pi_nb.resources.paths import (
    CONFIG_DIR_NAME,
    canonicalize_path,
    is_under_path,
    node_join,
    node_resolve,
    path_exists,
    read_text_js,
    resolve_path,
)

__all__ = [
    "MAX_SKILL_DESCRIPTION_LENGTH",
    "MAX_SKILL_NAME_LENGTH",
    "LoadSkillsResult",
    "LoadSkillsResultDict",
    "ResourceCollision",
    "ResourceCollisionDict",
    "ResourceDiagnostic",
    "ResourceDiagnosticDict",
    "Skill",
    "SkillDiagnostic",
    "SkillDict",
    "SkillRootMode",
    "SourceInfo",
    "SourceInfoDict",
    "collect_skill_entries",
    "create_synthetic_source_info",
    "expand_skill_command",
    "format_skills_for_prompt",
    "load_skill_from_file",
    "load_skills",
    "load_skills_from_dir",
]

#: Agent Skills spec limits (Pi warns, the skill still loads).
MAX_SKILL_NAME_LENGTH = 64
MAX_SKILL_DESCRIPTION_LENGTH = 1024

SkillRootMode = Literal["pi", "agents"]

_IGNORE_FILE_NAMES = (".gitignore", ".ignore", ".fdignore")


# ---------------------------------------------------------------------------------------------
# Value objects
# ---------------------------------------------------------------------------------------------


class SourceInfoDict(TypedDict):
    """:meth:`SourceInfo.to_dict`: Pi's ``{path, source, scope?, origin?, baseDir?}``."""

    path: str
    source: str
    scope: NotRequired[str]
    origin: NotRequired[str]
    baseDir: NotRequired[str]


class ResourceCollisionDict(TypedDict):
    """:meth:`ResourceCollision.to_dict`: ``{resourceType, name, winnerPath, loserPath,
    winnerSource?, loserSource?}``."""

    resourceType: Literal["extension", "skill", "prompt", "theme"]
    name: str
    winnerPath: str
    loserPath: str
    winnerSource: NotRequired[str]
    loserSource: NotRequired[str]


class ResourceDiagnosticDict(TypedDict):
    """:meth:`ResourceDiagnostic.to_dict`: Pi's ``{type, message, path?, collision?}``."""

    type: Literal["warning", "error", "collision"]
    message: str
    path: NotRequired[str]
    collision: NotRequired[ResourceCollisionDict]


class SkillDict(TypedDict):
    """:meth:`Skill.to_dict`: Pi's ``Skill`` with camelCase keys."""

    name: str
    description: str
    filePath: str
    baseDir: str
    sourceInfo: SourceInfoDict
    disableModelInvocation: bool


class LoadSkillsResultDict(TypedDict):
    """:meth:`LoadSkillsResult.to_dict`: ``{skills, diagnostics}``."""

    skills: list[SkillDict]
    diagnostics: list[ResourceDiagnosticDict]


@dataclass(frozen=True)
class SourceInfo:
    """Where a resource came from (Pi's ``SourceInfo``): ``source`` is ``"local"``, a package
    source, ``"builtin"`` ..., ``scope`` ``"user"``/``"project"``/``"temporary"``."""

    path: str
    source: str
    scope: str | None = "temporary"
    origin: str | None = "top-level"
    base_dir: str | None = None

    def to_dict(self) -> SourceInfoDict:
        """Pi's JSON shape (keys whose value is ``undefined`` in Pi are left out)."""
        out: SourceInfoDict = {"path": self.path, "source": self.source}
        if self.scope is not None:
            out["scope"] = self.scope
        if self.origin is not None:
            out["origin"] = self.origin
        if self.base_dir is not None:
            out["baseDir"] = self.base_dir
        return out


def create_synthetic_source_info(
    path: str,
    *,
    source: str,
    scope: str | None = None,
    origin: str | None = None,
    base_dir: str | None = None,
) -> SourceInfo:
    """Pi's ``createSyntheticSourceInfo``: scope defaults to ``"temporary"``, origin to ``"top-level"``."""
    return SourceInfo(
        path=path,
        source=source,
        scope=scope if scope is not None else "temporary",
        origin=origin if origin is not None else "top-level",
        base_dir=base_dir,
    )


@dataclass(frozen=True)
class ResourceCollision:
    """Two resources with one name: the first loaded (``winner_path``) is kept."""

    resource_type: Literal["extension", "skill", "prompt", "theme"]
    name: str
    winner_path: str
    loser_path: str
    winner_source: str | None = None
    loser_source: str | None = None

    def to_dict(self) -> ResourceCollisionDict:
        out: ResourceCollisionDict = {
            "resourceType": self.resource_type,
            "name": self.name,
            "winnerPath": self.winner_path,
            "loserPath": self.loser_path,
        }
        if self.winner_source is not None:
            out["winnerSource"] = self.winner_source
        if self.loser_source is not None:
            out["loserSource"] = self.loser_source
        return out


@dataclass(frozen=True)
class ResourceDiagnostic:
    """Pi's ``ResourceDiagnostic``: a problem found while loading resources (never raised)."""

    type: Literal["warning", "error", "collision"]
    message: str
    path: str | None = None
    collision: ResourceCollision | None = None

    def to_dict(self) -> ResourceDiagnosticDict:
        out: ResourceDiagnosticDict = {"type": self.type, "message": self.message}
        if self.path is not None:
            out["path"] = self.path
        if self.collision is not None:
            out["collision"] = self.collision.to_dict()
        return out


#: Skill diagnostics are Pi's general resource diagnostics.
SkillDiagnostic = ResourceDiagnostic


@dataclass(frozen=True)
class Skill:
    """A loaded skill (Pi's ``Skill``). ``base_dir`` is the directory of ``file_path``."""

    name: str
    description: str
    file_path: str
    base_dir: str
    source_info: SourceInfo
    disable_model_invocation: bool = False

    def to_dict(self) -> SkillDict:
        return {
            "name": self.name,
            "description": self.description,
            "filePath": self.file_path,
            "baseDir": self.base_dir,
            "sourceInfo": self.source_info.to_dict(),
            "disableModelInvocation": self.disable_model_invocation,
        }


@dataclass(frozen=True)
class LoadSkillsResult:
    """``{skills, diagnostics}`` of a load."""

    skills: tuple[Skill, ...] = ()
    diagnostics: tuple[ResourceDiagnostic, ...] = field(default=())

    def to_dict(self) -> LoadSkillsResultDict:
        return {
            "skills": [s.to_dict() for s in self.skills],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


# ---------------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _is_normalized(p: str) -> bool:
    return p == os.path.normpath(p) and not p.startswith("//")


def _posix_relative(root: str, path: str) -> str:
    """``toPosixPath(relative(root, path))`` (fast when ``path`` is spelled below ``root``)."""
    if path == root:
        return ""
    if os.sep == "/" and _is_normalized(root) and path.startswith(root + "/"):
        return path[len(root) + 1 :]
    rel = os.path.relpath(path, root)
    if rel == ".":
        return ""
    return rel.replace(os.sep, "/")


def _prefix_ignore_pattern(line: str, prefix: str) -> str | None:
    trimmed = js_trim(line)
    if not trimmed:
        return None
    if trimmed.startswith("#") and not trimmed.startswith("\\#"):
        return None
    pattern = line
    negated = False
    if pattern.startswith("!"):
        negated = True
        pattern = pattern[1:]
    elif pattern.startswith("\\!"):
        pattern = pattern[1:]
    if pattern.startswith("/"):
        pattern = pattern[1:]
    prefixed = f"{prefix}{pattern}" if prefix else pattern
    return f"!{prefixed}" if negated else prefixed


def _add_ignore_rules(ig: Ignore, directory: str, root: str) -> None:
    relative_dir = _posix_relative(root, directory)
    prefix = f"{relative_dir}/" if relative_dir else ""
    for filename in _IGNORE_FILE_NAMES:
        ignore_path = node_join(directory, filename)
        if not path_exists(ignore_path):
            continue
        try:
            content = read_text_js(ignore_path)
        except OSError:
            continue
        patterns = [
            p for p in (_prefix_ignore_pattern(line, prefix) for line in re.split(r"\r?\n", content)) if p
        ]
        if patterns:
            ig.add(patterns)


def _byte_order(name: str) -> bytes:
    return os.fsencode(name)


def _entry_kind(entry: os.DirEntry[str], full_path: str) -> tuple[bool, bool] | None:
    """(is_dir, is_file), following a symlink; ``None`` for a broken symlink."""
    try:
        if entry.is_symlink():
            st = os.stat(full_path)
            return _stat.S_ISDIR(st.st_mode), _stat.S_ISREG(st.st_mode)
        return entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)
    except (OSError, ValueError):
        return None


def _skill_file_in(entries: Sequence[os.DirEntry[str]], directory: str, root: str, ig: Ignore) -> str | None:
    for entry in entries:
        if entry.name != "SKILL.md":
            continue
        full_path = node_join(directory, entry.name)
        if entry.is_symlink():
            try:
                is_file = _stat.S_ISREG(os.stat(full_path).st_mode)
            except (OSError, ValueError):
                continue
        else:
            is_file = entry.is_file(follow_symlinks=False)
        rel_path = _posix_relative(root, full_path)
        if is_file and not ig.ignores(rel_path):
            return full_path
    return None


def _walk(
    directory: str,
    mode: SkillRootMode,
    loader_style: bool,
    ig: Ignore,
    root: str,
    active: frozenset[str],
    out: list[str],
) -> None:
    """One directory of Pi's skill walk; appends skill file paths to ``out``.

    ``loader_style`` picks ``loadSkillsFromDirInternal`` (skills.ts) over ``collectSkillEntries``
    (package-manager.ts); they find the same files but consult the ignore rules in a different
    order, which matters only when a rule cannot be compiled (Pi then stops reading the directory).
    """
    if not path_exists(directory):
        return
    _add_ignore_rules(ig, directory, root)
    real = canonicalize_path(directory)
    active = active | {real}
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: _byte_order(e.name))
        skill_file = _skill_file_in(entries, directory, root, ig)
        if skill_file is not None:
            out.append(skill_file)
            return
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name == "node_modules":
                continue
            full_path = node_join(directory, name)
            kind = _entry_kind(entry, full_path)
            if kind is None:
                continue
            is_dir, is_file = kind
            rel_path = _posix_relative(root, full_path)
            if loader_style:
                if ig.ignores(f"{rel_path}/" if is_dir else rel_path):
                    continue
                if is_dir:
                    _recurse(full_path, mode, loader_style, ig, root, active, out)
                    continue
                if is_file and directory == root and name.endswith(".md"):
                    out.append(full_path)
                continue
            include_markdown = (
                is_file
                and name.endswith(".md")
                and not ig.ignores(rel_path)
                and ((mode == "pi" and directory == root) or (mode == "agents" and directory != root))
            )
            if include_markdown:
                out.append(full_path)
                continue
            if not is_dir:
                continue
            if ig.ignores(f"{rel_path}/"):
                continue
            _recurse(full_path, mode, loader_style, ig, root, active, out)
    except (OSError, ValueError, IgnoreRuleError):
        # Pi wraps the whole directory scan in try/catch: what was found so far is kept
        return


def _recurse(
    directory: str,
    mode: SkillRootMode,
    loader_style: bool,
    ig: Ignore,
    root: str,
    active: frozenset[str],
    out: list[str],
) -> None:
    if canonicalize_path(directory) in active:
        return  # a symlink loop (see the module docstring)
    try:
        _walk(directory, mode, loader_style, ig, root, active, out)
    except RecursionError:
        return


def collect_skill_entries(dir: str, mode: SkillRootMode = "pi") -> list[str]:
    """The skill files in a root, in Pi's order (``collectSkillEntries`` of the package manager).

    ``mode="pi"`` for ``<agentDir>/skills``, ``<cwd>/.pi/skills`` and directories listed in
    settings or ``--skill``; ``mode="agents"`` for ``~/.agents/skills`` and the project's
    ``.agents/skills`` directories (root-level ``*.md`` files are not skills there, but ``*.md``
    files in grouping subdirectories are). The resource loader passes these paths to
    :func:`load_skills` (``include_defaults=False``), as Pi does.
    """
    out: list[str] = []
    _walk(dir, mode, False, Ignore(), dir, frozenset(), out)
    return out


# ---------------------------------------------------------------------------------------------
# Loading one file
# ---------------------------------------------------------------------------------------------

_NODE_ERRNO_TEXT = {
    "EACCES": "permission denied",
    "ENOENT": "no such file or directory",
    "EISDIR": "illegal operation on a directory",
    "ELOOP": "too many symbolic links encountered",
    "EIO": "i/o error",
}


def _node_fs_message(exc: OSError, path: str) -> str:
    """A Node-style fs error message (``EACCES: permission denied, open '/x'``)."""
    import errno as _errno

    code = _errno.errorcode.get(exc.errno or 0, "EIO")
    text = _NODE_ERRNO_TEXT.get(code, (exc.strerror or "unknown error").lower())
    if code == "EISDIR":
        return f"{code}: {text}, read"
    return f"{code}: {text}, open '{path}'"


def _validate_name(name: str) -> list[str]:
    errors: list[str] = []
    n = utf16_len(name)
    if n > MAX_SKILL_NAME_LENGTH:
        errors.append(f"name exceeds {MAX_SKILL_NAME_LENGTH} characters ({n})")
    if not re.fullmatch(r"[a-z0-9-]+", name):
        errors.append("name contains invalid characters (must be lowercase a-z, 0-9, hyphens only)")
    if name.startswith("-") or name.endswith("-"):
        errors.append("name must not start or end with a hyphen")
    if "--" in name:
        errors.append("name must not contain consecutive hyphens")
    return errors


def _validate_description(description: Any) -> list[str]:
    if not isinstance(description, str) or js_trim(description) == "":
        return ["description is required"]
    n = utf16_len(description)
    if n > MAX_SKILL_DESCRIPTION_LENGTH:
        return [f"description exceeds {MAX_SKILL_DESCRIPTION_LENGTH} characters ({n})"]
    return []


def _node_dirname(path: str) -> str:
    d = os.path.dirname(path.rstrip("/") or path) if path not in ("/", "") else path
    return d or "."


def _create_skill_source_info(file_path: str, base_dir: str, source: str) -> SourceInfo:
    if source == "user":
        return create_synthetic_source_info(file_path, source="local", scope="user", base_dir=base_dir)
    if source == "project":
        return create_synthetic_source_info(file_path, source="local", scope="project", base_dir=base_dir)
    if source == "path":
        return create_synthetic_source_info(file_path, source="local", base_dir=base_dir)
    return create_synthetic_source_info(file_path, source=source, base_dir=base_dir)


_FRONTMATTER_CACHE_SIZE = 4096
# path -> (stat key, frontmatter or the FrontmatterError it raised); see _cached_frontmatter
_frontmatter_cache: dict[str, tuple[tuple[int, ...], Any]] = {}


def _stat_key(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


def _cached_frontmatter(file_path: str) -> Any:
    """The parsed frontmatter of ``file_path``, parsed again only when the file changed.

    Skills are loaded again on every resource reload, and parsing YAML is most of that work. The
    result is kept per path with the file's modification time (ns), size, inode, device and
    status-change time: any write, replacement or ``touch`` changes one of them, so a changed file
    is always read again. A file whose frontmatter failed to parse keeps failing (the same
    :class:`~pi_nb.errors.FrontmatterError`) until it changes. The frontmatter is shared between
    loads: callers only read it. At most 4,096 paths are kept (the oldest go first).
    """
    st = os.stat(file_path)
    key = _stat_key(st)
    hit = _frontmatter_cache.get(file_path)
    if hit is not None and hit[0] == key:
        if isinstance(hit[1], FrontmatterError):
            raise FrontmatterError(*hit[1].args)  # a fresh error (no traceback kept growing)
        return hit[1]
    raw = read_text_js(file_path)
    try:
        after = _stat_key(os.stat(file_path))
    except OSError:
        after = ()
    try:
        result: Any = parse_frontmatter(raw)[0]
    except FrontmatterError as exc:
        result = exc
    if after == key:  # not changed while it was read: safe to reuse for this stat
        if len(_frontmatter_cache) >= _FRONTMATTER_CACHE_SIZE:
            _frontmatter_cache.pop(next(iter(_frontmatter_cache)))
        _frontmatter_cache[file_path] = (key, result)
    if isinstance(result, FrontmatterError):
        raise result
    return result


def clear_frontmatter_cache() -> None:
    """Forget every cached skill frontmatter (the next load parses each file again)."""
    _frontmatter_cache.clear()


def load_skill_from_file(
    file_path: str, source: str = "path"
) -> tuple[Skill | None, list[ResourceDiagnostic]]:
    """Load one markdown file as a skill (Pi's module-private ``loadSkillFromFile``).

    ``source`` ``"user"``/``"project"``/``"path"`` become a ``local`` source info with that scope
    (``path`` -> ``temporary``); any other string is used as the source itself. Returns the skill
    (``None`` when it is not one) and the diagnostics (validation warnings never stop a skill that
    has a description from loading).
    """
    diagnostics: list[ResourceDiagnostic] = []
    is_declared_skill = os.path.basename(file_path) == "SKILL.md"
    try:
        frontmatter = _cached_frontmatter(file_path)
    except OSError as exc:
        diagnostics.append(ResourceDiagnostic("warning", _node_fs_message(exc, file_path), file_path))
        return None, diagnostics
    except FrontmatterError as exc:
        if is_declared_skill:
            diagnostics.append(
                ResourceDiagnostic("warning", str(exc) or "failed to parse skill file", file_path)
            )
        return None, diagnostics
    fm: Mapping[str, Any] = frontmatter if isinstance(frontmatter, dict) else {}  # YAML: open data
    description = fm.get("description")
    has_description = isinstance(description, str) and js_trim(description) != ""
    if not is_declared_skill and not has_description:
        return None, diagnostics
    skill_dir = _node_dirname(file_path)
    parent_dir_name = os.path.basename(skill_dir)
    for message in _validate_description(description):
        diagnostics.append(ResourceDiagnostic("warning", message, file_path))
    fm_name = fm.get("name")
    name = fm_name if isinstance(fm_name, str) and fm_name else parent_dir_name
    for message in _validate_name(name):
        diagnostics.append(ResourceDiagnostic("warning", message, file_path))
    if not has_description:
        return None, diagnostics
    assert isinstance(description, str)
    return (
        Skill(
            name=name,
            description=description,
            file_path=file_path,
            base_dir=skill_dir,
            source_info=_create_skill_source_info(file_path, skill_dir, source),
            disable_model_invocation=fm.get("disable-model-invocation") is True,
        ),
        diagnostics,
    )


def _load_files(paths: Iterable[str], source: str) -> LoadSkillsResult:
    skills: list[Skill] = []
    diagnostics: list[ResourceDiagnostic] = []
    for path in paths:
        skill, diags = load_skill_from_file(path, source)
        if skill is not None:
            skills.append(skill)
        diagnostics.extend(diags)
    return LoadSkillsResult(tuple(skills), tuple(diagnostics))


def load_skills_from_dir(dir: str, source: str = "path", *, mode: SkillRootMode = "pi") -> LoadSkillsResult:
    """All skills of one root (Pi's ``loadSkillsFromDir({dir, source})`` for ``mode="pi"``).

    No name de-duplication happens here (use :func:`load_skills` for that). ``mode="agents"``
    walks the root with the ``.agents/skills`` rules of Pi's package manager instead (see
    :func:`collect_skill_entries`). A missing directory gives an empty result, no diagnostic.
    """
    paths: list[str] = []
    _walk(dir, mode, mode == "pi", Ignore(), dir, frozenset(), paths)
    return _load_files(paths, source)


# ---------------------------------------------------------------------------------------------
# Loading many roots with collisions
# ---------------------------------------------------------------------------------------------


class _SkillSet:
    """Pi's ``addSkills`` closure: first name wins, duplicate files (same real path) are skipped."""

    def __init__(self) -> None:
        self.by_name: dict[str, Skill] = {}
        self.real_paths: set[str] = set()
        self.diagnostics: list[ResourceDiagnostic] = []
        self.collisions: list[ResourceDiagnostic] = []

    def add(self, result: LoadSkillsResult) -> None:
        self.diagnostics.extend(result.diagnostics)
        for skill in result.skills:
            real_path = canonicalize_path(skill.file_path)
            if real_path in self.real_paths:
                continue
            existing = self.by_name.get(skill.name)
            if existing is not None:
                self.collisions.append(
                    ResourceDiagnostic(
                        "collision",
                        f'name "{skill.name}" collision',
                        skill.file_path,
                        ResourceCollision("skill", skill.name, existing.file_path, skill.file_path),
                    )
                )
            else:
                self.by_name[skill.name] = skill
                self.real_paths.add(real_path)

    def result(self) -> LoadSkillsResult:
        return LoadSkillsResult(tuple(self.by_name.values()), tuple(self.diagnostics + self.collisions))


def load_skills(
    cwd: str,
    agent_dir: str | None = None,
    skill_paths: Sequence[str] = (),
    include_defaults: bool = True,
) -> LoadSkillsResult:
    """Skills from the default roots and explicit paths (Pi's ``loadSkills``).

    With ``include_defaults`` the roots ``<agent_dir>/skills`` (source ``user``) and
    ``<cwd>/.pi/skills`` (``project``) are loaded first. Then each of ``skill_paths`` (resolved
    against ``cwd``, ``~`` expanded, trimmed): a directory is walked, a ``.md`` file is loaded,
    anything else gives a warning (``skill path does not exist`` / ``skill path is not a markdown
    file``). Without defaults, paths under the two default roots keep their ``user``/``project``
    scope. The first skill of a name wins; later ones give ``collision`` diagnostics, listed after
    all others; the same file reached twice (symlinks) is skipped silently.

    ``agent_dir`` defaults to :func:`pi_nb.config.get_agent_dir` (``$PI_CODING_AGENT_DIR``
    or ``~/.pi/agent``).
    """
    if agent_dir is None:
        agent_dir = get_agent_dir()
    resolved_cwd = resolve_path(cwd)
    resolved_agent_dir = resolve_path(agent_dir)
    user_skills_dir = node_join(resolved_agent_dir, "skills")
    project_skills_dir = node_resolve(resolved_cwd, CONFIG_DIR_NAME, "skills")
    acc = _SkillSet()
    if include_defaults:
        acc.add(load_skills_from_dir(user_skills_dir, "user"))
        acc.add(load_skills_from_dir(project_skills_dir, "project"))

    def get_source(resolved: str) -> str:
        if not include_defaults:
            if is_under_path(resolved, user_skills_dir):
                return "user"
            if is_under_path(resolved, project_skills_dir):
                return "project"
        return "path"

    for raw_path in skill_paths:
        resolved = resolve_path(raw_path, resolved_cwd, trim=True)
        if not path_exists(resolved):
            acc.diagnostics.append(ResourceDiagnostic("warning", "skill path does not exist", resolved))
            continue
        try:
            st = os.stat(resolved)
            source = get_source(resolved)
            if _stat.S_ISDIR(st.st_mode):
                acc.add(load_skills_from_dir(resolved, source))
            elif _stat.S_ISREG(st.st_mode) and resolved.endswith(".md"):
                skill, diags = load_skill_from_file(resolved, source)
                if skill is not None:
                    acc.add(LoadSkillsResult((skill,), tuple(diags)))
                else:
                    acc.diagnostics.extend(diags)
            else:
                acc.diagnostics.append(
                    ResourceDiagnostic("warning", "skill path is not a markdown file", resolved)
                )
        except OSError as exc:
            acc.diagnostics.append(ResourceDiagnostic("warning", _node_fs_message(exc, resolved), resolved))
    return acc.result()


# ---------------------------------------------------------------------------------------------
# Prompt block and /skill: expansion
# ---------------------------------------------------------------------------------------------


def _escape_xml(s: str) -> str:
    return (
        s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&apos;")
    )


def format_skills_for_prompt(
    skills: Iterable[Skill], file_read_tool: Literal["read", "bash"] = "read"
) -> str:
    """The ``<available_skills>`` block of the system prompt, byte for byte as Pi writes it.

    Skills with ``disable_model_invocation`` are left out (they can still be invoked with
    ``/skill:name``); with none left the result is ``""``. The block starts with two newlines
    and has no trailing newline; name, description and location are XML-escaped. With
    ``file_read_tool="bash"`` (no read tool) the instruction says to load skills with bash.
    """
    visible = [s for s in skills if not s.disable_model_invocation]
    if not visible:
        return ""
    lines = [
        "\n\nThe following skills provide specialized instructions for specific tasks.",
        "Use the read tool to load a skill's file when the task matches its description."
        if file_read_tool == "read"
        else "Use bash to load a skill's file when the task matches its description.",
        "When a skill file references a relative path, resolve it against the skill directory "
        "(parent of SKILL.md / dirname of the path) and use that absolute path in tool commands.",
        "",
        "<available_skills>",
    ]
    for skill in visible:
        lines.append("  <skill>")
        lines.append(f"    <name>{_escape_xml(skill.name)}</name>")
        lines.append(f"    <description>{_escape_xml(skill.description)}</description>")
        lines.append(f"    <location>{_escape_xml(skill.file_path)}</location>")
        lines.append("  </skill>")
    lines.append("</available_skills>")
    return "\n".join(lines)


def expand_skill_command(
    text: str,
    skills: Iterable[Skill],
    *,
    on_error: Callable[[Skill, Exception], None] | None = None,
) -> str:
    """Expand ``/skill:name args`` into the skill's instructions (``AgentSession._expandSkillCommand``).

    ``name`` runs from ``/skill:`` to the first space (``" "`` only; a tab or newline stays part of
    the name, as in Pi); ``args`` is the rest, trimmed. Text that does not start with ``/skill:``
    or names no loaded skill is returned unchanged. Otherwise the skill file is read, its body
    (frontmatter stripped, trimmed) is wrapped as::

        <skill name="{name}" location="{filePath}">
        References are relative to {baseDir}.

        {body}
        </skill>

    followed by ``"\\n\\n" + args`` when there are args. Name and path are not escaped. Skills
    with ``disable_model_invocation`` expand too.

    When the file cannot be read (:class:`OSError`) or its frontmatter does not parse
    (:class:`~pi_nb.errors.FrontmatterError`), the error is raised -- unless ``on_error`` is given:
    then it is called with the skill and the exception and the original text is returned, which
    is what Pi's session does (it emits an extension error event, ``event: "skill_expansion"``).
    """
    if not text.startswith("/skill:"):
        return text
    space_index = text.find(" ")
    skill_name = text[7:] if space_index == -1 else text[7:space_index]
    args = "" if space_index == -1 else js_trim(text[space_index + 1 :])
    skill = next((s for s in skills if s.name == skill_name), None)
    if skill is None:
        return text
    try:
        body = js_trim(parse_frontmatter(read_text_js(skill.file_path))[1])
    except (OSError, FrontmatterError) as exc:
        if on_error is None:
            raise
        on_error(skill, exc)
        return text
    skill_block = (
        f'<skill name="{skill.name}" location="{skill.file_path}">\n'
        f"References are relative to {skill.base_dir}.\n\n{body}\n</skill>"
    )
    return f"{skill_block}\n\n{args}" if args else skill_block
