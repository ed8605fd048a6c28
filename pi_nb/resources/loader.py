"""The resource loader: every resource a session's context is built from, in one reload
(Pi's ``DefaultResourceLoader``, ``core/resource-loader.ts``, with the resource discovery of
``DefaultPackageManager.resolve``, ``core/package-manager.ts``).

Roots, in Pi's precedence order (the first skill/prompt of a name wins):

====================================================  ==========  ==================
root                                                  scope       gated by trust
====================================================  ==========  ==================
paths listed in ``<cwd>/.pi/settings.json``           project     yes (settings)
``<cwd>/.pi/skills``, ``<cwd>/.pi/prompts``           project     yes
``.agents/skills`` in cwd and ancestors up to the     project     yes
git root (not ``~/.agents/skills``)
paths listed in ``<agent_dir>/settings.json``         user        no
``<agent_dir>/skills``, ``<agent_dir>/prompts``       user        no
``~/.agents/skills``                                  user        no
``additional_skill_paths`` / ``..._prompt_...``       temporary   no (appended last:
                                                                  they *lose* name
                                                                  collisions)
====================================================  ==========  ==================

Listed paths resolve against the settings file's base directory (``<agent_dir>`` or
``<cwd>/.pi``; ``~`` expands). List entries starting with ``!`` (glob exclude), ``+`` (force
include, exact path) or ``-`` (force exclude, exact path) also apply to the auto-discovered
resources of the same scope; for a ``SKILL.md`` the skill's directory name/path matches too, so
``-skills/old-skill`` in the global settings disables ``<agent_dir>/skills/old-skill/SKILL.md``.
Plain entries containing ``*`` or ``?`` are include patterns, not paths (as in Pi).

Skill discovery per root follows Pi: in pi roots (``.pi/skills``, ``<agent_dir>/skills``, listed
directories) root-level ``*.md`` files are skills and subdirectories are searched for
``SKILL.md``; in ``.agents/skills`` roots root-level ``*.md`` files are *not* skills, but ``*.md``
files in grouping subdirectories are. Auto-discovered prompt roots are flat (top-level ``*.md``);
listed prompt directories are searched recursively. ``.gitignore``/``.ignore``/``.fdignore`` are
honoured while walking.

Then :meth:`ResourceLoader.reload` computes, in order: trust (optional resolver) and settings;
skills; prompt templates; context files (not gated by trust); the system prompt (the
``system_prompt`` option -- literal text or an existing file -- else ``<cwd>/.pi/SYSTEM.md`` when
trusted, else ``<agent_dir>/SYSTEM.md``); the append prompts (the ``append_system_prompt`` option
when given -- even an empty list stops discovery -- else ``.pi/APPEND_SYSTEM.md`` when trusted,
else ``<agent_dir>/APPEND_SYSTEM.md``). Each ``*_override`` callback receives the computed value and
its return **replaces** it (return the base plus extras to append). Getters return empty results
until the first reload.

What pi_nb leaves out, on purpose: Pi's extensions (TypeScript modules; pi_nb uses Python hooks
instead -- ``project_trust``, ``context``, ...), themes (a terminal concept) and packages
(npm/git installs). Their roots (``.pi/extensions``, ``.pi/themes``, ``packages``) are not read,
although ``.pi/extensions`` and ``.pi/themes`` still make a project *need* a trust decision,
exactly as in Pi (:func:`~pi_nb.resources.trust.has_trust_requiring_project_resources`).
"""

from __future__ import annotations

import dataclasses
import os
import stat as _stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, cast

from pi_nb._wire import wire_dict
from pi_nb.config import get_agent_dir
from pi_nb.errors import SettingsFileError
from pi_nb.resources._ignore import Ignore, IgnoreRuleError
from pi_nb.resources._minimatch import minimatch
from pi_nb.resources.context_files import ContextFile, load_project_context_files
from pi_nb.resources.paths import (
    CONFIG_DIR_NAME,
    canonicalize_path,
    is_local_path,
    is_under_path,
    node_join,
    node_resolve,
    os_homedir,
    path_exists,
    posix_rel,
    read_text_js,
    resolve_path,
    strip_bom,
)
from pi_nb.resources.prompt_templates import (
    PromptTemplate,
    PromptTemplateDict,
    collect_prompt_entries,
    dedupe_prompts,
    load_prompt_templates,
)
from pi_nb.resources.settings import SettingsManager
from pi_nb.resources.skills import (
    LoadSkillsResult,
    ResourceDiagnostic,
    ResourceDiagnosticDict,
    SourceInfo,
    _add_ignore_rules,
    collect_skill_entries,
    load_skills,
)

__all__ = [
    "PathMetadata",
    "PathMetadataDict",
    "PromptSource",
    "PromptSourceDict",
    "PromptsResult",
    "PromptsResultDict",
    "ResolvedPathsDict",
    "ResolvedResource",
    "ResolvedResourceDict",
    "ResourceLoader",
    "resolve_resource_paths",
]

ResourceType: TypeAlias = Literal["skills", "prompts"]
_RESOURCE_TYPES: tuple[ResourceType, ...] = ("skills", "prompts")


# ---------------------------------------------------------------------------------------------
# value objects


class PathMetadataDict(TypedDict):
    """:meth:`PathMetadata.to_dict`: Pi's ``{source, scope, origin, baseDir?}``."""

    source: str
    scope: Literal["user", "project", "temporary"]
    origin: Literal["top-level", "package"]
    baseDir: NotRequired[str]


class ResolvedResourceDict(TypedDict):
    """:meth:`ResolvedResource.to_dict`: ``{path, enabled, metadata}``."""

    path: str
    enabled: bool
    metadata: PathMetadataDict


class ResolvedPathsDict(TypedDict):
    """:meth:`ResolvedPaths.to_dict`: ``{skills, prompts}``."""

    skills: list[ResolvedResourceDict]
    prompts: list[ResolvedResourceDict]


class PromptsResultDict(TypedDict):
    """:meth:`PromptsResult.to_dict`: ``{prompts, diagnostics}``."""

    prompts: list[PromptTemplateDict]
    diagnostics: list[ResourceDiagnosticDict]


class PromptSourceDict(TypedDict):
    """:meth:`PromptSource.to_dict`: Pi's ``{path}``."""

    path: str


@dataclass(frozen=True)
class PathMetadata:
    """Where a discovered path came from (Pi's ``PathMetadata``).

    ``source`` is ``"auto"`` (found in a root) or ``"local"`` (listed in settings); ``scope`` is
    ``"user"``, ``"project"`` or ``"temporary"``.
    """

    source: str
    scope: Literal["user", "project", "temporary"]
    origin: Literal["top-level", "package"] = "top-level"
    base_dir: str | None = None

    def to_dict(self) -> PathMetadataDict:
        out: PathMetadataDict = {"source": self.source, "scope": self.scope, "origin": self.origin}
        if self.base_dir is not None:
            out["baseDir"] = self.base_dir
        return out

    def source_info(self, path: str) -> SourceInfo:
        """Pi's ``createSourceInfo(path, metadata)``."""
        return SourceInfo(
            path=path, source=self.source, scope=self.scope, origin=self.origin, base_dir=self.base_dir
        )


@dataclass(frozen=True)
class ResolvedResource:
    """One discovered file, whether the settings overrides leave it enabled, and its metadata."""

    path: str
    enabled: bool
    metadata: PathMetadata

    def to_dict(self) -> ResolvedResourceDict:
        return {"path": self.path, "enabled": self.enabled, "metadata": self.metadata.to_dict()}


@dataclass(frozen=True)
class ResolvedPaths:
    """Discovered skill and prompt files, in precedence order (project local, project auto, user
    local, user auto), each real path once."""

    skills: tuple[ResolvedResource, ...] = ()
    prompts: tuple[ResolvedResource, ...] = ()

    def to_dict(self) -> ResolvedPathsDict:
        return {"skills": [r.to_dict() for r in self.skills], "prompts": [r.to_dict() for r in self.prompts]}


@dataclass(frozen=True)
class PromptsResult:
    """``{prompts, diagnostics}`` of the loader (Pi's ``getPrompts()``)."""

    prompts: tuple[PromptTemplate, ...] = ()
    diagnostics: tuple[ResourceDiagnostic, ...] = field(default=())

    def to_dict(self) -> PromptsResultDict:
        return {
            "prompts": [p.to_dict() for p in self.prompts],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


@dataclass(frozen=True)
class PromptSource:
    """A system-prompt input that came from an existing file (Pi's ``{path}``)."""

    path: str

    def to_dict(self) -> PromptSourceDict:
        return cast(PromptSourceDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


# ---------------------------------------------------------------------------------------------
# discovery (the resource half of DefaultPackageManager.resolve)


def _scandir_sorted(directory: str) -> list[os.DirEntry[str]]:
    # libuv's scandir sorts entries by name (strcmp); os.scandir does not
    with os.scandir(directory) as it:
        entries = list(it)
    entries.sort(key=lambda e: os.fsencode(e.name))
    return entries


def _kind(entry: os.DirEntry[str]) -> tuple[bool, bool] | None:
    """(is_dir, is_file) following symlinks; ``None`` for a broken link."""
    try:
        if entry.is_symlink():
            st = os.stat(entry.path)
            return _stat.S_ISDIR(st.st_mode), _stat.S_ISREG(st.st_mode)
        return entry.is_dir(follow_symlinks=False), entry.is_file(follow_symlinks=False)
    except OSError:
        return None


def _collect_files(
    directory: str,
    suffix: str,
    ig: Ignore | None = None,
    root: str | None = None,
    active: frozenset[str] = frozenset(),
) -> list[str]:
    """Pi's ``collectFiles``: every ``*suffix`` file below *directory* (recursive, ignore files
    honoured, dot entries and ``node_modules`` skipped)."""
    files: list[str] = []
    if not path_exists(directory):
        return files
    root = root if root is not None else directory
    ig = ig if ig is not None else Ignore()
    real = canonicalize_path(directory)
    if real in active:
        return files  # a symlink loop: Pi would walk it until ELOOP
    try:
        _add_ignore_rules(ig, directory, root)
        for entry in _scandir_sorted(directory):
            if entry.name.startswith(".") or entry.name == "node_modules":
                continue
            full = node_join(directory, entry.name)
            kind = _kind(entry)
            if kind is None:
                continue
            is_dir, is_file = kind
            rel = posix_rel(root, full)
            if ig.ignores(f"{rel}/" if is_dir else rel):
                continue
            if is_dir:
                files.extend(_collect_files(full, suffix, ig, root, active | {real}))
            elif is_file and entry.name.endswith(suffix):
                files.append(full)
    except (OSError, IgnoreRuleError, ValueError):
        pass
    return files


def _collect_resource_files(directory: str, resource_type: ResourceType) -> list[str]:
    if resource_type == "skills":
        return collect_skill_entries(directory, "pi")
    return _collect_files(directory, ".md")


def _find_git_repo_root(start_dir: str) -> str | None:
    d = node_resolve(start_dir)
    while True:
        if path_exists(node_join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _collect_ancestor_agents_skill_dirs(start_dir: str) -> list[str]:
    """``.agents/skills`` of *start_dir* and each ancestor, up to and including the git root."""
    dirs: list[str] = []
    resolved = node_resolve(start_dir)
    git_root = _find_git_repo_root(resolved)
    d = resolved
    while True:
        dirs.append(node_join(d, ".agents", "skills"))
        if git_root is not None and d == git_root:
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return dirs


def _is_pattern(s: str) -> bool:
    return s.startswith(("!", "+", "-")) or "*" in s or "?" in s


def _to_posix(p: str) -> str:
    return p.replace(os.sep, "/") if os.sep != "/" else p


def _matches_any_pattern(file_path: str, patterns: Sequence[str], base_dir: str) -> bool:
    rel = posix_rel(base_dir, file_path)
    name = os.path.basename(file_path)
    file_posix = _to_posix(file_path)
    is_skill_file = name == "SKILL.md"
    parent = os.path.dirname(file_path)
    for pattern in patterns:
        p = _to_posix(pattern)
        if minimatch(rel, p) or minimatch(name, p) or minimatch(file_posix, p):
            return True
        if is_skill_file and (
            minimatch(posix_rel(base_dir, parent), p)
            or minimatch(os.path.basename(parent), p)
            or minimatch(_to_posix(parent), p)
        ):
            return True
    return False


def _normalize_exact_pattern(pattern: str) -> str:
    normalized = pattern[2:] if pattern.startswith(("./", ".\\")) else pattern
    return _to_posix(normalized)


def _matches_any_exact_pattern(file_path: str, patterns: Sequence[str], base_dir: str) -> bool:
    if not patterns:
        return False
    rel = posix_rel(base_dir, file_path)
    file_posix = _to_posix(file_path)
    is_skill_file = os.path.basename(file_path) == "SKILL.md"
    parent = os.path.dirname(file_path)
    for pattern in patterns:
        normalized = _normalize_exact_pattern(pattern)
        if normalized in (rel, file_posix):
            return True
        if is_skill_file and normalized in (posix_rel(base_dir, parent), _to_posix(parent)):
            return True
    return False


def _is_enabled_by_overrides(file_path: str, patterns: Sequence[str], base_dir: str) -> bool:
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    force_includes = [p[1:] for p in patterns if p.startswith("+")]
    force_excludes = [p[1:] for p in patterns if p.startswith("-")]
    enabled = True
    if excludes and _matches_any_pattern(file_path, excludes, base_dir):
        enabled = False
    if force_includes and _matches_any_exact_pattern(file_path, force_includes, base_dir):
        enabled = True
    if force_excludes and _matches_any_exact_pattern(file_path, force_excludes, base_dir):
        enabled = False
    return enabled


def _apply_patterns(all_paths: Sequence[str], patterns: Sequence[str], base_dir: str) -> set[str]:
    includes = [p for p in patterns if not p.startswith(("+", "-", "!"))]
    excludes = [p[1:] for p in patterns if p.startswith("!")]
    force_includes = [p[1:] for p in patterns if p.startswith("+")]
    force_excludes = [p[1:] for p in patterns if p.startswith("-")]
    result = (
        list(all_paths)
        if not includes
        else [f for f in all_paths if _matches_any_pattern(f, includes, base_dir)]
    )
    if excludes:
        result = [f for f in result if not _matches_any_pattern(f, excludes, base_dir)]
    if force_includes:
        for f in all_paths:
            if f not in result and _matches_any_exact_pattern(f, force_includes, base_dir):
                result.append(f)
    if force_excludes:
        result = [f for f in result if not _matches_any_exact_pattern(f, force_excludes, base_dir)]
    return set(result)


def _precedence_rank(m: PathMetadata) -> int:
    if m.origin == "package":
        return 4
    return (0 if m.scope == "project" else 2) + (0 if m.source == "local" else 1)


_Accumulator: TypeAlias = dict[str, tuple[PathMetadata, bool]]


def _add_resource(target: _Accumulator, path: str, metadata: PathMetadata, enabled: bool) -> None:
    if path and path not in target:
        target[path] = (metadata, enabled)


def _collect_files_from_paths(paths: Sequence[str], resource_type: ResourceType) -> list[str]:
    files: list[str] = []
    for p in paths:
        if not path_exists(p):
            continue
        try:
            st = os.stat(p)
        except OSError:
            continue
        if _stat.S_ISREG(st.st_mode):
            files.append(p)
        elif _stat.S_ISDIR(st.st_mode):
            files.extend(_collect_resource_files(p, resource_type))
    return files


def _resolve_local_entries(
    entries: Sequence[str],
    resource_type: ResourceType,
    target: _Accumulator,
    metadata: PathMetadata,
    base_dir: str,
    home: str,
) -> None:
    if not entries:
        return
    plain = [e for e in entries if not _is_pattern(e)]
    patterns = [e for e in entries if _is_pattern(e)]
    resolved_plain = [resolve_path(p, base_dir, home_dir=home, trim=True) for p in plain]
    all_files = _collect_files_from_paths(resolved_plain, resource_type)
    enabled = _apply_patterns(all_files, patterns, base_dir)
    for f in all_files:
        _add_resource(target, f, metadata, f in enabled)


def _string_list(value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsFileError(f"settings resource lists must be arrays of strings, got {value!r}")
    return list(value)


def resolve_resource_paths(cwd: str, agent_dir: str, settings_manager: SettingsManager) -> ResolvedPaths:
    """Discover skill and prompt files (Pi's ``DefaultPackageManager.resolve``, without packages).

    Project roots and project settings lists are only read when ``settings_manager`` says the
    project is trusted (an untrusted manager holds ``{}`` as project settings).
    """
    cwd = resolve_path(cwd)
    agent_dir = resolve_path(agent_dir)
    home = os_homedir()
    global_settings = settings_manager.get_global_settings()
    project_settings = settings_manager.get_project_settings()
    project_trusted = settings_manager.is_project_trusted()
    global_base = agent_dir
    project_base = node_join(cwd, CONFIG_DIR_NAME)
    targets: dict[ResourceType, _Accumulator] = {"skills": {}, "prompts": {}}

    for rtype in _RESOURCE_TYPES:
        _resolve_local_entries(
            _string_list(project_settings.get(rtype)),
            rtype,
            targets[rtype],
            PathMetadata("local", "project"),
            project_base,
            home,
        )
        _resolve_local_entries(
            _string_list(global_settings.get(rtype)),
            rtype,
            targets[rtype],
            PathMetadata("local", "user"),
            global_base,
            home,
        )

    user_meta = PathMetadata("auto", "user", base_dir=global_base)
    project_meta = PathMetadata("auto", "project", base_dir=project_base)
    user_overrides = {t: _string_list(global_settings.get(t)) for t in _RESOURCE_TYPES}
    project_overrides = {t: _string_list(project_settings.get(t)) for t in _RESOURCE_TYPES}
    user_agents_skills_dir = node_join(home, ".agents", "skills")
    project_agents_skill_dirs = (
        [
            d
            for d in _collect_ancestor_agents_skill_dirs(cwd)
            if node_resolve(d) != node_resolve(user_agents_skills_dir)
        ]
        if project_trusted
        else []
    )

    def add(
        rtype: ResourceType, paths: Sequence[str], meta: PathMetadata, overrides: Sequence[str], base: str
    ) -> None:
        for p in paths:
            _add_resource(targets[rtype], p, meta, _is_enabled_by_overrides(p, overrides, base))

    if project_trusted:
        add(
            "skills",
            collect_skill_entries(node_join(project_base, "skills"), "pi"),
            project_meta,
            project_overrides["skills"],
            project_base,
        )
    for agents_skills_dir in project_agents_skill_dirs:
        agents_base = os.path.dirname(agents_skills_dir)
        add(
            "skills",
            collect_skill_entries(agents_skills_dir, "agents"),
            dataclasses.replace(project_meta, base_dir=agents_base),
            project_overrides["skills"],
            agents_base,
        )
    if project_trusted:
        add(
            "prompts",
            collect_prompt_entries(node_join(project_base, "prompts")),
            project_meta,
            project_overrides["prompts"],
            project_base,
        )
    add(
        "skills",
        collect_skill_entries(node_join(global_base, "skills"), "pi"),
        user_meta,
        user_overrides["skills"],
        global_base,
    )
    user_agents_base = os.path.dirname(user_agents_skills_dir)
    add(
        "skills",
        collect_skill_entries(user_agents_skills_dir, "agents"),
        dataclasses.replace(user_meta, base_dir=user_agents_base),
        user_overrides["skills"],
        user_agents_base,
    )
    add(
        "prompts",
        collect_prompt_entries(node_join(global_base, "prompts")),
        user_meta,
        user_overrides["prompts"],
        global_base,
    )

    def finish(acc: _Accumulator) -> tuple[ResolvedResource, ...]:
        ranked = sorted(acc.items(), key=lambda kv: _precedence_rank(kv[1][0]))
        seen: set[str] = set()
        out: list[ResolvedResource] = []
        for path, (meta, enabled) in ranked:
            canonical = canonicalize_path(path)
            if canonical in seen:
                continue
            seen.add(canonical)
            out.append(ResolvedResource(path=path, enabled=enabled, metadata=meta))
        return tuple(out)

    return ResolvedPaths(skills=finish(targets["skills"]), prompts=finish(targets["prompts"]))


# ---------------------------------------------------------------------------------------------
# the loader


def _resolve_prompt_input(value: str | None, description: str) -> str | None:
    """Pi's ``resolvePromptInput``: an existing path -> its content (BOM stripped), else the text."""
    if not value:
        return None
    if path_exists(value):
        try:
            return strip_bom(read_text_js(value))
        except OSError as error:
            import logging

            logging.getLogger("pi_nb.resources").warning(
                "Warning: Could not read %s file %s: %s", description, value, error
            )
            return value
    return value


SkillsOverride: TypeAlias = Callable[[LoadSkillsResult], LoadSkillsResult]
PromptsOverride: TypeAlias = Callable[[PromptsResult], PromptsResult]
AgentsFilesOverride: TypeAlias = Callable[[list[ContextFile]], Sequence[ContextFile]]
SystemPromptOverride: TypeAlias = Callable[[str | None], str | None]
AppendSystemPromptOverride: TypeAlias = Callable[[list[str]], Sequence[str]]


class ResourceLoader:
    """Pi's ``DefaultResourceLoader`` (skills, prompt templates, context files, system prompts).

    Nothing is read until :meth:`reload`. ``agent_dir`` defaults to
    :func:`pi_nb.config.get_agent_dir`; ``settings_manager`` to
    ``SettingsManager.create(cwd, agent_dir)`` (project trusted, as in Pi -- pass
    ``resolve_project_trust`` to :meth:`reload` or a manager built with ``project_trusted=False``
    to gate the project).
    """

    def __init__(
        self,
        cwd: str,
        agent_dir: str | None = None,
        *,
        settings_manager: SettingsManager | None = None,
        additional_skill_paths: Sequence[str] = (),
        additional_prompt_template_paths: Sequence[str] = (),
        no_skills: bool = False,
        no_prompt_templates: bool = False,
        no_context_files: bool = False,
        system_prompt: str | None = None,
        append_system_prompt: Sequence[str] | None = None,
        skills_override: SkillsOverride | None = None,
        prompts_override: PromptsOverride | None = None,
        agents_files_override: AgentsFilesOverride | None = None,
        system_prompt_override: SystemPromptOverride | None = None,
        append_system_prompt_override: AppendSystemPromptOverride | None = None,
    ) -> None:
        if agent_dir is None:
            agent_dir = get_agent_dir()
        self.cwd = resolve_path(cwd)
        self.agent_dir = resolve_path(agent_dir)
        self.settings_manager = (
            settings_manager
            if settings_manager is not None
            else SettingsManager.create(self.cwd, self.agent_dir)
        )
        self.additional_skill_paths = list(additional_skill_paths)
        self.additional_prompt_template_paths = list(additional_prompt_template_paths)
        self.no_skills = no_skills
        self.no_prompt_templates = no_prompt_templates
        self.no_context_files = no_context_files
        self._system_prompt_source = system_prompt
        self._append_system_prompt_source = (
            list(append_system_prompt) if append_system_prompt is not None else None
        )
        self._skills_override = skills_override
        self._prompts_override = prompts_override
        self._agents_files_override = agents_files_override
        self._system_prompt_override = system_prompt_override
        self._append_system_prompt_override = append_system_prompt_override

        self._skills = LoadSkillsResult()
        self._prompts = PromptsResult()
        self._agents_files: list[ContextFile] = []
        self._system_prompt: str | None = None
        self._system_prompt_source_path: str | None = None
        self._append_system_prompt: list[str] = []
        self._append_system_prompt_source_paths: list[str] = []
        self._metadata_by_path: dict[str, PathMetadata] = {}
        self._extension_skill_infos: dict[str, SourceInfo] = {}
        self._extension_prompt_infos: dict[str, SourceInfo] = {}
        self._last_skill_paths: list[str] = []
        self._last_prompt_paths: list[str] = []
        self._loaded = False

    # --- getters (empty until reload)

    @property
    def loaded(self) -> bool:
        return self._loaded

    def get_skills(self) -> LoadSkillsResult:
        return self._skills

    def get_prompts(self) -> PromptsResult:
        return self._prompts

    def get_agents_files(self) -> list[ContextFile]:
        return list(self._agents_files)

    def get_system_prompt(self) -> str | None:
        return self._system_prompt

    def get_system_prompt_source(self) -> PromptSource | None:
        return PromptSource(self._system_prompt_source_path) if self._system_prompt_source_path else None

    def get_append_system_prompt(self) -> list[str]:
        return list(self._append_system_prompt)

    def get_append_system_prompt_sources(self) -> list[PromptSource]:
        return [PromptSource(p) for p in self._append_system_prompt_source_paths]

    def get_diagnostics(self) -> list[ResourceDiagnostic]:
        """Skill diagnostics, then prompt diagnostics."""
        return [*self._skills.diagnostics, *self._prompts.diagnostics]

    # --- reload

    def reload(self, *, resolve_project_trust: Callable[[], bool] | None = None) -> None:
        """Re-discover everything. ``resolve_project_trust`` (e.g. a closure over
        :func:`~pi_nb.resources.trust.resolve_project_trusted`) decides trust first; otherwise the
        settings manager's current trust state is kept."""
        if resolve_project_trust is not None:
            self.settings_manager.set_project_trusted(False)
            self.settings_manager.reload()
            self.settings_manager.set_project_trusted(bool(resolve_project_trust()))
        self.settings_manager.reload()

        resolved = resolve_resource_paths(self.cwd, self.agent_dir, self.settings_manager)
        metadata: dict[str, PathMetadata] = {}
        self._metadata_by_path = metadata
        self._extension_skill_infos = {}
        self._extension_prompt_infos = {}

        def enabled(resources: Sequence[ResolvedResource]) -> list[ResolvedResource]:
            for r in resources:
                metadata.setdefault(r.path, r.metadata)
            return [r for r in resources if r.enabled]

        enabled_skills = [self._map_skill_path(r, metadata) for r in enabled(resolved.skills)]
        enabled_prompts = [r.path for r in enabled(resolved.prompts)]

        skill_paths = self._merge_paths([] if self.no_skills else enabled_skills, self.additional_skill_paths)
        self._last_skill_paths = skill_paths
        self._update_skills(skill_paths)
        missing_skill_diags = []
        for p in self.additional_skill_paths:
            if is_local_path(p):
                r = self._resolve(p)
                if not path_exists(r) and not any(d.path == r for d in self._skills.diagnostics):
                    missing_skill_diags.append(ResourceDiagnostic("error", "Skill path does not exist", r))
        if missing_skill_diags:
            self._skills = dataclasses.replace(
                self._skills, diagnostics=(*self._skills.diagnostics, *missing_skill_diags)
            )

        prompt_paths = self._merge_paths(
            [] if self.no_prompt_templates else enabled_prompts, self.additional_prompt_template_paths
        )
        self._last_prompt_paths = prompt_paths
        self._update_prompts(prompt_paths)
        missing_prompt_diags = []
        for p in self.additional_prompt_template_paths:
            if is_local_path(p):
                r = self._resolve(p)
                if not path_exists(r) and not any(d.path == r for d in self._prompts.diagnostics):
                    missing_prompt_diags.append(
                        ResourceDiagnostic("error", "Prompt template path does not exist", r)
                    )
        if missing_prompt_diags:
            self._prompts = dataclasses.replace(
                self._prompts, diagnostics=(*self._prompts.diagnostics, *missing_prompt_diags)
            )

        agents_files = load_project_context_files(
            self.cwd, self.agent_dir, no_context_files=self.no_context_files
        )
        self._agents_files = (
            list(self._agents_files_override(agents_files)) if self._agents_files_override else agents_files
        )

        source = (
            self._system_prompt_source
            if self._system_prompt_source is not None
            else self._discover("SYSTEM.md")
        )
        base_prompt = _resolve_prompt_input(source, "system prompt")
        self._system_prompt = (
            self._system_prompt_override(base_prompt) if self._system_prompt_override else base_prompt
        )
        self._system_prompt_source_path = resolve_path(source) if source and path_exists(source) else None

        append_sources = self._append_system_prompt_source
        if append_sources is None:
            discovered = self._discover("APPEND_SYSTEM.md")
            append_sources = [discovered] if discovered else []
        base_append = [
            text
            for text in (_resolve_prompt_input(s, "append system prompt") for s in append_sources)
            if text is not None
        ]
        self._append_system_prompt = (
            list(self._append_system_prompt_override(base_append))
            if self._append_system_prompt_override
            else base_append
        )
        self._append_system_prompt_source_paths = [resolve_path(s) for s in append_sources if path_exists(s)]
        self._loaded = True

    def extend_resources(
        self,
        *,
        skill_paths: Sequence[tuple[str, PathMetadata]] = (),
        prompt_paths: Sequence[tuple[str, PathMetadata]] = (),
    ) -> None:
        """Pi's ``extendResources`` (used by hooks): add paths with their metadata to the last
        path lists and reload just those kinds. Without a prior :meth:`reload` only the extra paths
        load."""
        skills = [(self._resolve(p), self._normalize_meta(m)) for p, m in skill_paths]
        prompts = [(self._resolve(p), self._normalize_meta(m)) for p, m in prompt_paths]
        for p, m in skills:
            self._extension_skill_infos[p] = m.source_info(p)
        for p, m in prompts:
            self._extension_prompt_infos[p] = m.source_info(p)
        if skills:
            self._last_skill_paths = self._merge_paths(self._last_skill_paths, [p for p, _ in skills])
            self._update_skills(self._last_skill_paths)
        if prompts:
            self._last_prompt_paths = self._merge_paths(self._last_prompt_paths, [p for p, _ in prompts])
            self._update_prompts(self._last_prompt_paths)

    # --- internals

    def _resolve(self, p: str) -> str:
        return resolve_path(p, self.cwd, trim=True)

    def _normalize_meta(self, m: PathMetadata) -> PathMetadata:
        return dataclasses.replace(m, base_dir=self._resolve(m.base_dir)) if m.base_dir else m

    def _merge_paths(self, primary: Sequence[str], additional: Sequence[str]) -> list[str]:
        merged: list[str] = []
        seen: set[str] = set()
        for p in [*primary, *additional]:
            resolved = self._resolve(p)
            canonical = canonicalize_path(resolved)
            if canonical in seen:
                continue
            seen.add(canonical)
            merged.append(resolved)
        return merged

    @staticmethod
    def _map_skill_path(resource: ResolvedResource, metadata: dict[str, PathMetadata]) -> str:
        if resource.metadata.source != "auto" and resource.metadata.origin != "package":
            return resource.path
        try:
            if not _stat.S_ISDIR(os.stat(resource.path).st_mode):
                return resource.path
        except OSError:
            return resource.path
        skill_file = node_join(resource.path, "SKILL.md")
        if path_exists(skill_file):
            metadata.setdefault(skill_file, resource.metadata)
            return skill_file
        return resource.path

    def _discover(self, name: str) -> str | None:
        project_path = node_join(self.cwd, CONFIG_DIR_NAME, name)
        if self.settings_manager.is_project_trusted() and path_exists(project_path):
            return project_path
        global_path = node_join(self.agent_dir, name)
        return global_path if path_exists(global_path) else None

    def _find_source_info(self, resource_path: str, extra: Mapping[str, SourceInfo]) -> SourceInfo | None:
        if not resource_path:
            return None
        if resource_path.startswith("<"):
            return self._default_source_info(resource_path)
        normalized = node_resolve(resource_path)
        for source_path, info in extra.items():
            ns = node_resolve(source_path)
            if normalized == ns or normalized.startswith(ns + os.sep):
                return dataclasses.replace(info, path=resource_path)
        exact = self._metadata_by_path.get(normalized) or self._metadata_by_path.get(resource_path)
        if exact is not None:
            return exact.source_info(resource_path)
        for source_path, meta in self._metadata_by_path.items():
            ns = node_resolve(source_path)
            if normalized == ns or normalized.startswith(ns + os.sep):
                return meta.source_info(resource_path)
        return None

    def _default_source_info(self, file_path: str) -> SourceInfo:
        if file_path.startswith("<") and file_path.endswith(">"):
            return SourceInfo(
                path=file_path, source=file_path[1:-1].split(":")[0] or "temporary", scope="temporary"
            )
        normalized = node_resolve(file_path)
        for root in (node_join(self.agent_dir, "skills"), node_join(self.agent_dir, "prompts")):
            if is_under_path(normalized, root):
                return SourceInfo(path=file_path, source="local", scope="user", base_dir=root)
        for root in (
            node_join(self.cwd, CONFIG_DIR_NAME, "skills"),
            node_join(self.cwd, CONFIG_DIR_NAME, "prompts"),
        ):
            if is_under_path(normalized, root):
                return SourceInfo(path=file_path, source="local", scope="project", base_dir=root)
        try:
            base = normalized if os.path.isdir(normalized) else os.path.dirname(normalized)
        except OSError:
            base = os.path.dirname(normalized)
        return SourceInfo(path=file_path, source="local", scope="temporary", base_dir=base)

    def _update_skills(self, skill_paths: list[str]) -> None:
        if self.no_skills and not skill_paths:
            result = LoadSkillsResult()
        else:
            result = load_skills(self.cwd, self.agent_dir, skill_paths, include_defaults=False)
        if self._skills_override is not None:
            result = self._skills_override(result)
        skills = tuple(
            dataclasses.replace(
                s,
                source_info=self._find_source_info(s.file_path, self._extension_skill_infos)
                or s.source_info
                or self._default_source_info(s.file_path),
            )
            for s in result.skills
        )
        self._skills = LoadSkillsResult(skills, tuple(result.diagnostics))

    def _update_prompts(self, prompt_paths: list[str]) -> None:
        if self.no_prompt_templates and not prompt_paths:
            result = PromptsResult()
        else:
            templates = load_prompt_templates(self.cwd, self.agent_dir, prompt_paths, include_defaults=False)
            kept, collisions = dedupe_prompts(templates)
            result = PromptsResult(tuple(kept), tuple(collisions))
        if self._prompts_override is not None:
            result = self._prompts_override(result)
        prompts = tuple(
            dataclasses.replace(
                p,
                source_info=self._find_source_info(p.file_path, self._extension_prompt_infos)
                or p.source_info
                or self._default_source_info(p.file_path),
            )
            for p in result.prompts
        )
        self._prompts = PromptsResult(prompts, tuple(result.diagnostics))
