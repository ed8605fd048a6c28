"""Settings: ``{agent_dir}/settings.json`` deep-merged with the project's ``.pi/settings.json``
(Pi's ``core/settings-manager.ts``, the parts context engineering needs).

* Global settings always load. Project settings load only when the project is trusted
  (``project_trusted``; Pi's default for a bare manager is *trusted*). Untrusted, they read as
  ``{}`` and every project write raises
  :class:`~pi_nb.errors.ProjectNotTrustedError` ``"Project is not trusted; refusing to write
  project settings"``.
* Merge: project values override global ones; nested objects merge key by key (so a project
  ``{"compaction": {"reserveTokens": 8000}}`` keeps the global ``keepRecentTokens``); arrays and
  scalars are replaced whole.
* ``defaultProjectTrust`` is read from the **global** file only -- a project cannot vote itself
  trusted -- and anything but ``"always"``/``"never"`` means ``"ask"``.
* A file that is not valid JSON (or not a JSON object) is reported, not fatal: the scope reads as
  ``{}``, the error is kept for :meth:`SettingsManager.drain_errors`, and that scope is then never
  written (so a broken file is not overwritten with defaults). Pi does the same.
* Writes change memory at once and persist only the fields changed in this session, merged into
  the file's current content under ``settings.json.lock`` (10 x 20 ms retries), so two processes
  editing different keys do not clobber each other. pi_nb writes synchronously, through a temp
  file and ``os.replace``; a persistence failure is recorded for :meth:`drain_errors` (Pi's
  asynchronous write queue records it the same way).

:func:`settings_for_session` gives the settings a session ran under (its header's ``cwd`` as the
project), and :func:`compaction_settings_for_session` their compaction values: what every view
over a session file draws its threshold with.

Only the settings pi_nb uses have getters (compaction, branch summary, retry, project trust,
images, resource path lists, a few defaults); :meth:`SettingsManager.get` reads any other key of
the merged settings.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NotRequired, Protocol, TypeAlias, TypedDict

from pi_nb._fs import FileTooLargeError, SpecialFileError
from pi_nb._js import js_stringify_pretty
from pi_nb.config import get_agent_dir
from pi_nb.errors import ProjectNotTrustedError, SettingsFileError
from pi_nb.resources.paths import (
    CONFIG_DIR_NAME,
    MAX_JSON_DEPTH,
    LockContendedError,
    json_depth_over,
    json_parse,
    node_join,
    normalize_path,
    path_exists,
    pi_file_lock,
    read_text_js,
    resolve_path,
    strip_bom,
    write_file_atomic,
)

if TYPE_CHECKING:
    from pi_nb.compaction.settings import BranchSummarySettings, CompactionSettings, RetrySettings

__all__ = [
    "FileSettingsStorage",
    "InMemorySettingsStorage",
    "SettingsErrorRecord",
    "SettingsErrorRecordDict",
    "SettingsManager",
    "SettingsScope",
    "SettingsStorage",
    "compaction_settings_for_session",
    "session_cwd",
    "settings_for_session",
]

SettingsScope: TypeAlias = Literal["global", "project"]
#: A settings object as read from ``settings.json``: open JSON (Pi's ``Settings`` has dozens of optional
#: keys, old files carry renamed ones that :func:`migrate_settings` moves, and extensions add their
#: own). The getters of :class:`SettingsManager` check each value where it is read.
Settings: TypeAlias = dict[str, Any]

_UNTRUSTED_WRITE = "Project is not trusted; refusing to write project settings"


def deep_merge_settings(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> Settings:
    """Pi's ``deepMergeSettings``: overrides win, nested objects merge recursively."""
    result: Settings = dict(base)
    for key, override_value in overrides.items():
        base_value = base.get(key)
        if isinstance(base_value, dict) and isinstance(override_value, dict):
            result[key] = deep_merge_settings(base_value, override_value)
        else:
            result[key] = override_value
    return result


def migrate_settings(settings: Settings) -> Settings:
    """Pi's ``migrateSettings`` (in place): ``queueMode`` -> ``steeringMode``, ``websockets`` ->
    ``transport``, the old ``skills`` object -> a path list, ``retry.maxDelayMs`` ->
    ``retry.provider.maxRetryDelayMs``."""
    if "queueMode" in settings and "steeringMode" not in settings:
        settings["steeringMode"] = settings.pop("queueMode")
    if "transport" not in settings and isinstance(settings.get("websockets"), bool):
        settings["transport"] = "websocket" if settings.pop("websockets") else "sse"
    skills = settings.get("skills")
    if "skills" in settings and isinstance(skills, dict):
        if "enableSkillCommands" in skills and settings.get("enableSkillCommands") is None:
            settings["enableSkillCommands"] = skills["enableSkillCommands"]
        custom = skills.get("customDirectories")
        if isinstance(custom, list) and len(custom) > 0:
            settings["skills"] = custom
        else:
            del settings["skills"]
    retry = settings.get("retry")
    if isinstance(retry, dict):
        provider = retry.get("provider") if isinstance(retry.get("provider"), dict) else None
        max_delay = retry.get("maxDelayMs")
        if (
            isinstance(max_delay, (int, float))
            and not isinstance(max_delay, bool)
            and (provider is None or provider.get("maxRetryDelayMs") is None)
        ):
            retry["provider"] = {**(provider or {}), "maxRetryDelayMs": max_delay}
        retry.pop("maxDelayMs", None)
    return settings


def _parse_settings(content: str, where: str) -> Settings:
    from pi_nb._js import js_json_parse_v8

    try:
        parsed = js_json_parse_v8(strip_bom(content))
    except ValueError as error:  # V8's words, as Pi records them
        raise SettingsFileError(f"Invalid JSON in {where}: {error}") from error
    except RecursionError as error:  # JavaScript parses any depth; Python's parser recurses
        raise SettingsFileError(f"Invalid JSON in {where}: nested too deeply to read") from error
    if not isinstance(parsed, dict):
        raise SettingsFileError(f"Invalid settings in {where}: expected an object")
    if json_depth_over(parsed):
        raise SettingsFileError(f"Invalid settings in {where}: nested more than {MAX_JSON_DEPTH} levels deep")
    return migrate_settings(parsed)


class SettingsStorage(Protocol):
    """Where settings live: ``with_lock(scope, fn)`` gives ``fn`` the current text (or ``None``)
    and writes what ``fn`` returns (``None`` = no write), atomically with respect to other users."""

    def with_lock(self, scope: SettingsScope, fn: Callable[[str | None], str | None]) -> None: ...


class FileSettingsStorage:
    """Pi's ``FileSettingsStorage``: ``{agent_dir}/settings.json`` and ``{cwd}/.pi/settings.json``.

    The lock (``settings.json.lock``) is taken only when the file exists or is being written, and
    the project's ``.pi`` directory is created only when something is actually written.
    """

    def __init__(self, cwd: str, agent_dir: str) -> None:
        self.global_settings_path = node_join(resolve_path(agent_dir), "settings.json")
        self.project_settings_path = node_join(resolve_path(cwd), CONFIG_DIR_NAME, "settings.json")

    def path_for(self, scope: SettingsScope) -> str:
        return self.global_settings_path if scope == "global" else self.project_settings_path

    def with_lock(self, scope: SettingsScope, fn: Callable[[str | None], str | None]) -> None:
        path = self.path_for(scope)
        lock_path = f"{path}.lock"
        try:
            if path_exists(path):
                with pi_file_lock(lock_path):
                    next_text = fn(read_text_js(path))
                    if next_text is not None:
                        write_file_atomic(path, next_text)
                return
            next_text = fn(None)
            if next_text is None:
                return
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with pi_file_lock(lock_path):
                write_file_atomic(path, next_text)
        except LockContendedError as error:
            raise SettingsFileError(str(error)) from error
        except (SpecialFileError, FileTooLargeError) as error:  # these name the file already
            raise SettingsFileError(str(error)) from error
        except OSError as error:
            raise SettingsFileError(f"{path}: {error}") from error


class InMemorySettingsStorage:
    """Pi's ``InMemorySettingsStorage``: two strings, no files."""

    def __init__(self) -> None:
        self._text: dict[str, str | None] = {"global": None, "project": None}

    def with_lock(self, scope: SettingsScope, fn: Callable[[str | None], str | None]) -> None:
        next_text = fn(self._text[scope])
        if next_text is not None:
            self._text[scope] = next_text


class SettingsErrorRecordDict(TypedDict):
    """:meth:`SettingsErrorRecord.to_dict`: ``{scope, error, path?}`` (``error`` is its message)."""

    scope: SettingsScope
    error: str
    path: NotRequired[str]


@dataclass(frozen=True)
class SettingsErrorRecord:
    """Pi's ``SettingsError``: a load or save failure kept for :meth:`SettingsManager.drain_errors`."""

    scope: SettingsScope
    error: Exception
    path: str | None = None

    def to_dict(self) -> SettingsErrorRecordDict:
        out: SettingsErrorRecordDict = {"scope": self.scope, "error": str(self.error)}
        if self.path is not None:
            out["path"] = self.path
        return out


def _storage_path(storage: SettingsStorage, scope: SettingsScope) -> str | None:
    if isinstance(storage, FileSettingsStorage):
        return storage.path_for(scope)
    return None


def _load(storage: SettingsStorage, scope: SettingsScope, project_trusted: bool = True) -> Settings:
    if scope == "project" and not project_trusted:
        return {}
    box: list[str | None] = [None]

    def read(current: str | None) -> None:
        box[0] = current
        return None

    storage.with_lock(scope, read)
    content = box[0]
    if not content:
        return {}
    return _parse_settings(content, _storage_path(storage, scope) or f"{scope} settings")


def _try_load(
    storage: SettingsStorage, scope: SettingsScope, project_trusted: bool = True
) -> tuple[Settings, Exception | None]:
    try:
        return _load(storage, scope, project_trusted), None
    except (SettingsFileError, OSError) as error:
        return {}, error


class SettingsManager:
    """Pi's ``SettingsManager``: global + (trusted) project settings, merged.

    Build one with :meth:`create` (files), :meth:`in_memory` (tests, notebooks without a home
    directory) or :meth:`from_storage`.
    """

    def __init__(
        self,
        storage: SettingsStorage,
        initial_global: Settings,
        initial_project: Settings,
        global_load_error: Exception | None = None,
        project_load_error: Exception | None = None,
        initial_errors: list[SettingsErrorRecord] | None = None,
        project_trusted: bool = True,
    ) -> None:
        self._storage = storage
        self._global: Settings = initial_global
        self._project: Settings = initial_project
        self._project_trusted = project_trusted
        self._global_load_error = global_load_error
        self._project_load_error = project_load_error
        self._errors: list[SettingsErrorRecord] = list(initial_errors or [])
        self._modified: dict[SettingsScope, dict[str, set[str] | None]] = {"global": {}, "project": {}}
        self._overrides: Settings = {}
        self._settings: Settings = self._merged()
        # get_compaction_settings(): the raw values (with their types) and the checked result
        self._compaction_cache: tuple[list[tuple[type, Any]], CompactionSettings] | None = None

    # --- construction

    @classmethod
    def create(
        cls, cwd: str, agent_dir: str | None = None, *, project_trusted: bool = True
    ) -> SettingsManager:
        """Settings from ``{agent_dir}/settings.json`` and ``{cwd}/.pi/settings.json``.

        ``agent_dir`` defaults to :func:`pi_nb.config.get_agent_dir` (``$PI_CODING_AGENT_DIR``
        or ``~/.pi/agent``).
        """
        if agent_dir is None:
            agent_dir = get_agent_dir()
        return cls.from_storage(FileSettingsStorage(cwd, agent_dir), project_trusted=project_trusted)

    @classmethod
    def from_storage(cls, storage: SettingsStorage, *, project_trusted: bool = True) -> SettingsManager:
        global_settings, global_error = _try_load(storage, "global")
        project_settings, project_error = _try_load(storage, "project", project_trusted)
        errors: list[SettingsErrorRecord] = []
        if global_error is not None:
            errors.append(SettingsErrorRecord("global", global_error, _storage_path(storage, "global")))
        if project_error is not None:
            errors.append(SettingsErrorRecord("project", project_error, _storage_path(storage, "project")))
        return cls(
            storage,
            global_settings,
            project_settings,
            global_error,
            project_error,
            errors,
            project_trusted,
        )

    @classmethod
    def in_memory(
        cls, settings: Mapping[str, Any] | None = None, *, project_trusted: bool = True
    ) -> SettingsManager:
        """A manager over :class:`InMemorySettingsStorage` whose *global* settings start as
        *settings* (Pi's ``SettingsManager.inMemory``)."""
        storage = InMemorySettingsStorage()
        initial = migrate_settings(copy.deepcopy(dict(settings or {})))
        storage.with_lock("global", lambda _current: js_stringify_pretty(initial))
        return cls.from_storage(storage, project_trusted=project_trusted)

    # --- state

    @property
    def storage(self) -> SettingsStorage:
        return self._storage

    def get_global_settings(self) -> Settings:
        return copy.deepcopy(self._global)

    def get_project_settings(self) -> Settings:
        return copy.deepcopy(self._project)

    def get_settings(self) -> Settings:
        """The merged settings (a copy)."""
        return copy.deepcopy(self._settings)

    def get(self, key: str, default: Any = None) -> Any:
        """Any merged setting by its Pi (camelCase) key (a copy)."""
        return copy.deepcopy(self._settings.get(key, default))

    def is_project_trusted(self) -> bool:
        return self._project_trusted

    def set_project_trusted(self, trusted: bool) -> None:
        """Switch trust: untrusted drops the project settings, trusted (re)loads them."""
        if self._project_trusted == trusted:
            return
        self._project_trusted = trusted
        self._modified["project"] = {}
        if not trusted:
            self._project = {}
            self._project_load_error = None
            self._settings = self._merged()
            return
        project, error = _try_load(self._storage, "project", trusted)
        self._project = project
        self._project_load_error = error
        if error is not None:
            self._record_error("project", error)
        self._settings = self._merged()

    def reload(self) -> None:
        """Re-read both files (the project one only when trusted). A file that fails to load keeps
        the previous values of its scope; the failure is recorded."""
        global_settings, global_error = _try_load(self._storage, "global")
        if global_error is None:
            self._global = global_settings
            self._global_load_error = None
        else:
            self._global_load_error = global_error
            self._record_error("global", global_error)
        self._modified = {"global": {}, "project": {}}
        project_settings, project_error = _try_load(self._storage, "project", self._project_trusted)
        if project_error is None:
            self._project = project_settings
            self._project_load_error = None
        else:
            self._project_load_error = project_error
            self._record_error("project", project_error)
        self._settings = self._merged()

    def apply_overrides(self, overrides: Mapping[str, Any]) -> None:
        """Merge *overrides* over the current merged settings, in memory only (Pi's CLI flags).

        They stay in force across :meth:`reload` and trust changes (a reload re-reads the files and
        merges the overrides again), as Pi's CLI flags do for the whole run."""
        self._overrides = deep_merge_settings(self._overrides, overrides)
        self._settings = self._merged()

    def _merged(self) -> Settings:
        merged = deep_merge_settings(self._global, self._project)
        return deep_merge_settings(merged, self._overrides) if self._overrides else merged

    def flush(self) -> None:
        """Writes are synchronous in pi_nb; kept for Pi's API shape."""

    def drain_errors(self) -> list[SettingsErrorRecord]:
        """The load/save failures since the last call, oldest first."""
        drained, self._errors = self._errors, []
        return drained

    # --- persistence

    def _record_error(self, scope: SettingsScope, error: Exception) -> None:
        self._errors.append(SettingsErrorRecord(scope, error, _storage_path(self._storage, scope)))

    def _mark(self, scope: SettingsScope, field: str, nested_key: str | None = None) -> None:
        fields = self._modified[scope]
        if nested_key is None:
            fields[field] = None if field not in fields else fields[field]
            return
        nested = fields.get(field)
        if nested is None:
            nested = set()
            fields[field] = nested
        nested.add(nested_key)

    def _persist(self, scope: SettingsScope, snapshot: Settings) -> None:
        modified = {k: (set(v) if v is not None else None) for k, v in self._modified[scope].items()}

        def merge(current: str | None) -> str:
            file_settings = _parse_settings(current, f"{scope} settings") if current else {}
            merged: Settings = dict(file_settings)
            for field, nested_keys in modified.items():
                value = snapshot.get(field, _MISSING)
                if nested_keys and isinstance(value, dict):
                    base_nested = file_settings.get(field)
                    merged_nested = dict(base_nested) if isinstance(base_nested, dict) else {}
                    for nested_key in nested_keys:
                        if nested_key in value:
                            merged_nested[nested_key] = value[nested_key]
                        else:
                            merged_nested.pop(nested_key, None)
                    merged[field] = merged_nested
                elif value is _MISSING:
                    merged.pop(field, None)
                else:
                    merged[field] = value
            return js_stringify_pretty(merged)

        try:
            self._storage.with_lock(scope, merge)
            self._modified[scope] = {}
        except (SettingsFileError, OSError) as error:
            self._record_error(scope, error)

    def _save_global(self) -> None:
        self._settings = self._merged()
        if self._global_load_error is not None:
            return
        self._persist("global", copy.deepcopy(self._global))

    def _assert_project_trusted_for_write(self) -> None:
        if not self._project_trusted:
            raise ProjectNotTrustedError(_UNTRUSTED_WRITE)

    def _update_project(self, field: str, value: Any) -> None:
        self._assert_project_trusted_for_write()
        project = copy.deepcopy(self._project)
        project[field] = value
        self._mark("project", field)
        self._project = project
        self._settings = self._merged()
        if self._project_load_error is not None:
            return
        self._persist("project", copy.deepcopy(self._project))

    def _set_global(self, field: str, value: Any) -> None:
        if value is _MISSING:
            self._global.pop(field, None)
        else:
            self._global[field] = value
        self._mark("global", field)
        self._save_global()

    def _set_global_nested(self, field: str, key: str, value: Any) -> None:
        section = self._global.get(field)
        if not isinstance(section, dict):
            section = {}
            self._global[field] = section
        section[key] = value
        self._mark("global", field, key)
        self._save_global()

    # --- compaction / branch summary / retry

    def get_compaction_enabled(self) -> bool:
        return bool(_nested(self._settings, "compaction", "enabled", True))

    def set_compaction_enabled(self, enabled: bool) -> None:
        self._set_global_nested("compaction", "enabled", enabled)

    def set_compaction_settings(self, **values: Any) -> None:
        """Set ``compaction`` keys in the global settings by their Pi names (``reserveTokens=...``,
        ``keepRecentTokens=...``, ``maxAutoCompactionsPerPrompt=...``, ``enabled=...``); the merged
        result is checked first, so a refused value (a negative reserve, say) changes nothing."""
        from pi_nb.compaction.settings import CompactionSettings

        merged = {**self.get_compaction_settings().to_dict(), **values}
        CompactionSettings.from_dict(merged)  # raises before anything is written
        for key, value in values.items():
            self._set_global_nested("compaction", key, value)

    def get_compaction_reserve_tokens(self) -> int:
        from pi_nb.compaction.settings import DEFAULT_RESERVE_TOKENS

        value: int = _nested(self._settings, "compaction", "reserveTokens", DEFAULT_RESERVE_TOKENS)
        return value

    def get_compaction_keep_recent_tokens(self) -> int:
        from pi_nb.compaction.settings import DEFAULT_KEEP_RECENT_TOKENS

        value: int = _nested(self._settings, "compaction", "keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS)
        return value

    def get_compaction_settings(self) -> CompactionSettings:
        """Pi's ``getCompactionSettings()`` as a :class:`~pi_nb.compaction.settings.CompactionSettings`
        (a non-numeric or non-boolean value raises :class:`~pi_nb.errors.CompactionError`)."""
        from pi_nb.compaction.settings import CompactionSettings

        raw = {
            "enabled": _nested(self._settings, "compaction", "enabled", True),
            "reserveTokens": self.get_compaction_reserve_tokens(),
            "keepRecentTokens": self.get_compaction_keep_recent_tokens(),
            "maxAutoCompactionsPerPrompt": _nested(
                self._settings, "compaction", "maxAutoCompactionsPerPrompt", 3
            ),
        }
        # the checked value of the same raw values (same types too: True is not 1 here) is reused:
        # a turn asks several times, the settings rarely change
        key = [(type(v), v) for v in raw.values()]
        cached = self._compaction_cache
        if cached is not None and cached[0] == key:
            return cached[1]
        result = CompactionSettings.from_dict(raw)
        self._compaction_cache = (key, result)
        return result

    def get_branch_summary_settings(self) -> BranchSummarySettings:
        """Pi's ``getBranchSummarySettings()`` (``reserveTokens`` 16384, ``skipPrompt`` false)."""
        from pi_nb.compaction.settings import DEFAULT_RESERVE_TOKENS, BranchSummarySettings

        return BranchSummarySettings.from_dict(
            {
                "reserveTokens": _nested(
                    self._settings, "branchSummary", "reserveTokens", DEFAULT_RESERVE_TOKENS
                ),
                "skipPrompt": _nested(self._settings, "branchSummary", "skipPrompt", False),
            }
        )

    def get_branch_summary_skip_prompt(self) -> bool:
        return bool(_nested(self._settings, "branchSummary", "skipPrompt", False))

    def get_retry_enabled(self) -> bool:
        return bool(_nested(self._settings, "retry", "enabled", True))

    def set_retry_enabled(self, enabled: bool) -> None:
        self._set_global_nested("retry", "enabled", enabled)

    def get_retry_settings(self) -> RetrySettings:
        """Pi's ``getRetrySettings()`` (enabled true, maxRetries 3, baseDelayMs 2000)."""
        from pi_nb.compaction.settings import RetrySettings

        return RetrySettings.from_dict(
            {
                "enabled": _nested(self._settings, "retry", "enabled", True),
                "maxRetries": _nested(self._settings, "retry", "maxRetries", 3),
                "baseDelayMs": _nested(self._settings, "retry", "baseDelayMs", 2000),
            }
        )

    # --- project trust

    def get_default_project_trust(self) -> Literal["ask", "always", "never"]:
        """From the **global** settings only; an invalid value means ``"ask"``."""
        value = self._global.get("defaultProjectTrust")
        if value == "always":
            return "always"
        if value == "never":
            return "never"
        return "ask"

    def set_default_project_trust(self, value: Literal["ask", "always", "never"]) -> None:
        self._set_global("defaultProjectTrust", value)

    # --- images

    def get_block_images(self) -> bool:
        return bool(_nested(self._settings, "images", "blockImages", False))

    def set_block_images(self, blocked: bool) -> None:
        self._set_global_nested("images", "blockImages", blocked)

    def get_image_auto_resize(self) -> bool:
        return bool(_nested(self._settings, "images", "autoResize", True))

    # --- resource path lists

    def get_extension_paths(self) -> list[str]:
        return list(self._settings.get("extensions") or [])

    def set_extension_paths(self, paths: list[str]) -> None:
        self._set_global("extensions", list(paths))

    def set_project_extension_paths(self, paths: list[str]) -> None:
        self._update_project("extensions", list(paths))

    def get_skill_paths(self) -> list[str]:
        return list(self._settings.get("skills") or [])

    def set_skill_paths(self, paths: list[str]) -> None:
        self._set_global("skills", list(paths))

    def set_project_skill_paths(self, paths: list[str]) -> None:
        self._update_project("skills", list(paths))

    def get_prompt_template_paths(self) -> list[str]:
        return list(self._settings.get("prompts") or [])

    def set_prompt_template_paths(self, paths: list[str]) -> None:
        self._set_global("prompts", list(paths))

    def set_project_prompt_template_paths(self, paths: list[str]) -> None:
        self._update_project("prompts", list(paths))

    def get_enable_skill_commands(self) -> bool:
        value = self._settings.get("enableSkillCommands")
        return True if value is None else bool(value)

    def set_enable_skill_commands(self, enabled: bool) -> None:
        self._set_global("enableSkillCommands", enabled)

    # --- defaults for a session

    def get_default_provider(self) -> str | None:
        return self._settings.get("defaultProvider")

    def get_default_model(self) -> str | None:
        return self._settings.get("defaultModel")

    def set_default_model_and_provider(self, provider: str, model_id: str) -> None:
        self._global["defaultProvider"] = provider
        self._global["defaultModel"] = model_id
        self._mark("global", "defaultProvider")
        self._mark("global", "defaultModel")
        self._save_global()

    def get_default_thinking_level(self) -> str | None:
        """``defaultThinkingLevel`` (``None`` when unset); a value outside Pi's thinking levels
        raises :class:`~pi_nb.errors.InvalidValueError` naming the setting."""
        value = self._settings.get("defaultThinkingLevel")
        if value is None:
            return None
        from pi_nb.messages import validate_thinking_level

        return validate_thinking_level(value, "settings defaultThinkingLevel")

    def get_model_thinking_level(self, provider: str, model_id: str) -> str | None:
        """``modelThinkingLevels["provider/id"]``: the level Pi remembers for one model (``None``
        when unset); a value outside Pi's levels raises :class:`~pi_nb.errors.InvalidValueError`."""
        levels = self._settings.get("modelThinkingLevels")
        value = levels.get(f"{provider}/{model_id}") if isinstance(levels, dict) else None
        if value is None:
            return None
        from pi_nb.messages import validate_thinking_level

        return validate_thinking_level(value, f'settings modelThinkingLevels["{provider}/{model_id}"]')

    def get_all_model_thinking_levels(self) -> dict[str, str]:
        levels = self._settings.get("modelThinkingLevels")
        return dict(levels) if isinstance(levels, dict) else {}

    def get_default_model_spec(self) -> str | None:
        """``"defaultProvider/defaultModel"`` when both are set (what Pi starts a new session on
        when no model is chosen), else ``None``."""
        provider, model_id = self.get_default_provider(), self.get_default_model()
        if isinstance(provider, str) and provider and isinstance(model_id, str) and model_id:
            return f"{provider}/{model_id}"
        return None

    def set_default_thinking_level(self, level: str) -> None:
        from pi_nb.messages import validate_thinking_level

        self._set_global("defaultThinkingLevel", validate_thinking_level(level, "defaultThinkingLevel"))

    def get_session_dir(self) -> str | None:
        value = self._settings.get("sessionDir")
        return normalize_path(value) if isinstance(value, str) and value else value

    def get_hide_thinking_block(self) -> bool:
        return bool(self._settings.get("hideThinkingBlock") or False)

    def get_steering_mode(self) -> str:
        return self._settings.get("steeringMode") or "one-at-a-time"

    def get_follow_up_mode(self) -> str:
        return self._settings.get("followUpMode") or "one-at-a-time"


class _Missing:
    pass


_MISSING: Any = _Missing()


def _nested(settings: Mapping[str, Any], section: str, key: str, default: Any) -> Any:
    """``settings.section?.key ?? default`` (``null`` counts as missing, as ``??`` does)."""
    value = settings.get(section)
    if not isinstance(value, dict):
        return default
    got = value.get(key)
    return default if got is None else got


# --- the settings a session ran under


def _read_session_header(path: str) -> Mapping[str, Any] | None:
    """The header (first line) of a session file, ``None`` when it has none (all file reading of
    session headers for settings is here)."""

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline(1 << 20)
    except OSError:
        return None
    try:
        header = json_parse(strip_bom(first))
    except ValueError:
        return None
    return header if isinstance(header, dict) and header.get("type") == "session" else None


def session_cwd(source: Any) -> str | None:
    """The working directory a session ran in: its header's ``cwd``. ``source`` is a session file
    path, a header mapping, a session manager (``get_cwd()``) or an ``AgentSession``."""
    if isinstance(source, Mapping):
        cwd = source.get("cwd")
        return cwd if isinstance(cwd, str) and cwd else None
    if isinstance(source, (str, os.PathLike)):
        header = _read_session_header(os.fspath(source))
        return session_cwd(header) if header is not None else None
    get_header = getattr(source, "get_header", None)
    header = get_header() if callable(get_header) else None
    if isinstance(header, Mapping):
        return session_cwd(header)
    get_cwd = getattr(source, "get_cwd", None)
    if callable(get_cwd):
        cwd = get_cwd()
        return cwd if isinstance(cwd, str) and cwd else None
    manager = getattr(source, "session_manager", None)
    return session_cwd(manager) if manager is not None else None


def settings_for_session(source: Any, agent_dir: str | None = None) -> SettingsManager:
    """The settings a session runs under: the agent dir's ``settings.json`` with the project's
    ``.pi/settings.json`` of the session's own directory (its header's ``cwd``) over it.

    ``source`` is a session file path, a header, a session manager or an ``AgentSession`` (whose
    own settings are returned). The project's settings count unless the project is known to be
    untrusted (a saved "no", or ``defaultProjectTrust: "never"``): a view reads them as the
    numbers Pi would have used when it was trusted, and reading numbers runs nothing. A session
    without a readable ``cwd`` gets the global settings alone.
    """
    own = getattr(source, "settings", None)
    if isinstance(own, SettingsManager):
        return own
    if agent_dir is None:
        agent_dir = get_agent_dir()
    cwd = session_cwd(source)
    if cwd is None:
        return SettingsManager.create(os.getcwd(), agent_dir, project_trusted=False)
    return SettingsManager.create(cwd, agent_dir, project_trusted=_view_trust(cwd, agent_dir))


def _view_trust(cwd: str, agent_dir: str) -> bool:
    from pi_nb.resources.trust import ProjectTrustStore, decide_project_trust

    global_only = SettingsManager.create(cwd, agent_dir, project_trusted=False)
    try:
        decision = decide_project_trust(
            cwd,
            ProjectTrustStore(agent_dir),
            default_project_trust=global_only.get_default_project_trust(),
        )
    except Exception:  # a broken trust store leaves the project settings readable for a view
        return True
    return decision if isinstance(decision, bool) else True


def compaction_settings_for_session(source: Any, agent_dir: str | None = None) -> CompactionSettings:
    """:meth:`SettingsManager.get_compaction_settings` of :func:`settings_for_session`: the
    reserve, keep-recent and enabled values Pi compacts a session with. A settings value Pi would
    refuse falls back to Pi's defaults (a view must still draw)."""
    from pi_nb.compaction.settings import CompactionSettings
    from pi_nb.errors import CompactionError

    try:
        return settings_for_session(source, agent_dir).get_compaction_settings()
    except (CompactionError, ValueError, TypeError):
        return CompactionSettings()
