"""Project trust: which project resources pi_nb may load (Pi's ``trust-manager.ts`` and
``project-trust.ts``).

What trust gates, and what it does not: an untrusted project still gets its ``AGENTS.md`` /
``CLAUDE.md`` context files (they are plain text the user can read), but not its
``.pi/settings.json``, ``.pi/skills``, ``.pi/prompts``, ``.pi/SYSTEM.md``, ``.pi/APPEND_SYSTEM.md``
or the ``.agents/skills`` directories in ``cwd`` and its ancestors -- the channels that configure
behaviour. Trust is not a sandbox: it does not restrict tool calls.

The store (:class:`ProjectTrustStore`) is Pi's ``{agent_dir}/trust.json``, byte-compatible: a JSON
object mapping canonical directory paths to ``true``/``false`` (``null`` is accepted on read and a
``None`` update deletes the key), written with keys sorted, 2-space indentation and a trailing
newline. A decision applies to the directory and everything below it; the nearest saved ancestor
wins. Every read and write holds ``trust.json.lock`` (10 attempts, 20 ms apart, then
:class:`~pi_nb.errors.TrustStoreError`). A file that is not valid JSON, not an object, or holds a
value other than true/false/null raises :class:`~pi_nb.errors.TrustStoreError` with Pi's text and is
never overwritten. pi_nb writes through a temp file and ``os.replace`` (Pi writes in place), so a
reader never sees half a file.

Resolution (:func:`resolve_project_trusted`), first match wins -- Pi's order:

1. a per-run override (Pi's ``--approve`` / ``--no-approve``): ``trust_override=True/False``;
2. nothing in the project needs trust (:func:`has_trust_requiring_project_resources`) -> trusted;
3. ``project_trust`` hooks (Pi's extension event): each gets ``{"type": "project_trust", "cwd":
   cwd}`` and returns ``{"trusted": "yes" | "no" | "undecided", "remember"?: bool}`` or ``None``
   (= undecided); the first decision wins and ``remember: True`` saves it;
4. the saved decision of the nearest ancestor;
5. the global ``defaultProjectTrust`` setting, ``"always"`` or ``"never"``;
6. ``"ask"`` (the default) with no way to ask -> untrusted (Pi's print/json/rpc modes);
7. ask: the ``ask`` callable receives a :class:`TrustPrompt` carrying Pi's exact question and its
   five options; it returns the chosen option (or its label), or ``None`` when dismissed
   (untrusted). In a notebook the toolkit renders the prompt as buttons; tests pass a lambda.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, cast

from pi_nb._js import js_stringify, js_stringify_pretty
from pi_nb._wire import wire_dict
from pi_nb.errors import TrustStoreError
from pi_nb.resources.paths import (
    APP_NAME,
    CONFIG_DIR_NAME,
    LockContendedError,
    canonicalize_path,
    js_sorted_keys,
    json_parse,
    node_join,
    os_homedir,
    path_exists,
    pi_file_lock,
    read_text_js,
    resolve_path,
    strip_bom,
    write_file_atomic,
)

__all__ = [
    "TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES",
    "DefaultProjectTrust",
    "ProjectTrustDecision",
    "ProjectTrustEvent",
    "ProjectTrustHook",
    "ProjectTrustHookResult",
    "ProjectTrustOption",
    "ProjectTrustOptionDict",
    "ProjectTrustStore",
    "ProjectTrustStoreEntry",
    "ProjectTrustStoreEntryDict",
    "ProjectTrustUpdate",
    "ProjectTrustUpdateDict",
    "TrustAsk",
    "TrustPrompt",
    "TrustPromptDict",
    "TrustStore",
    "answer_trust_prompt",
    "decide_project_trust",
    "format_project_trust_prompt",
    "get_project_trust_options",
    "get_project_trust_parent_path",
    "has_trust_requiring_project_resources",
    "resolve_project_trust",
    "resolve_project_trusted",
]

#: ``True`` / ``False`` saved, ``None`` = no decision (or "delete the key" in an update).
ProjectTrustDecision: TypeAlias = bool | None
#: The global ``defaultProjectTrust`` setting.
DefaultProjectTrust: TypeAlias = Literal["ask", "always", "never"]


class ProjectTrustEvent(TypedDict):
    """What a ``project_trust`` hook receives (Pi's extension event): ``{type, cwd}``."""

    type: Literal["project_trust"]
    cwd: str


class ProjectTrustHookResult(TypedDict):
    """A ``project_trust`` hook's decision: ``{trusted: "yes" | "no" | "undecided", remember?}``.

    Hooks are extension code: what one returns is checked before it is used.
    """

    trusted: Literal["yes", "no", "undecided"]
    remember: NotRequired[bool]


#: A ``project_trust`` hook: ``{"type": "project_trust", "cwd": ...}`` -> decision dict or ``None``.
ProjectTrustHook: TypeAlias = Callable[[ProjectTrustEvent], "ProjectTrustHookResult | None"]

#: Entries of ``<cwd>/.pi/`` whose presence makes a project need a trust decision.
TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES: tuple[str, ...] = (
    "settings.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
)


class ProjectTrustStoreEntryDict(TypedDict):
    """:meth:`ProjectTrustStoreEntry.to_dict`: ``{path, decision}``."""

    path: str
    decision: bool


class ProjectTrustUpdateDict(TypedDict):
    """:meth:`ProjectTrustUpdate.to_dict`: ``{path, decision}`` (``None`` removes the entry)."""

    path: str
    decision: ProjectTrustDecision


class ProjectTrustOptionDict(TypedDict):
    """:meth:`ProjectTrustOption.to_dict`: ``{label, trusted, updates, savedPath?}``."""

    label: str
    trusted: bool
    updates: list[ProjectTrustUpdateDict]
    savedPath: NotRequired[str]


class TrustPromptDict(TypedDict):
    """:meth:`TrustPrompt.to_dict`: ``{cwd, message, options}``."""

    cwd: str
    message: str
    options: list[ProjectTrustOptionDict]


@dataclass(frozen=True)
class ProjectTrustStoreEntry:
    """The nearest saved decision: the directory it was saved for, and the decision."""

    path: str
    decision: bool

    def to_dict(self) -> ProjectTrustStoreEntryDict:
        return cast(ProjectTrustStoreEntryDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


@dataclass(frozen=True)
class ProjectTrustUpdate:
    """One change to the store: ``decision=None`` removes the directory's entry."""

    path: str
    decision: ProjectTrustDecision

    def to_dict(self) -> ProjectTrustUpdateDict:
        return cast(ProjectTrustUpdateDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


@dataclass(frozen=True)
class ProjectTrustOption:
    """One answer to the trust question: its label, its effect for this run, what it saves."""

    label: str
    trusted: bool
    updates: tuple[ProjectTrustUpdate, ...] = ()
    saved_path: str | None = None

    def to_dict(self) -> ProjectTrustOptionDict:
        out: ProjectTrustOptionDict = {
            "label": self.label,
            "trusted": self.trusted,
            "updates": [u.to_dict() for u in self.updates],
        }
        if self.saved_path is not None:
            out["savedPath"] = self.saved_path
        return out


def _normalize_cwd(cwd: str) -> str:
    return canonicalize_path(resolve_path(cwd))


def get_project_trust_parent_path(cwd: str) -> str | None:
    """The parent of the canonical *cwd*, or ``None`` at the filesystem root."""
    trust_path = _normalize_cwd(cwd)
    parent = os.path.dirname(trust_path)
    return None if parent == trust_path else parent


def get_project_trust_options(cwd: str, *, include_session_only: bool = False) -> list[ProjectTrustOption]:
    """Pi's answers, in Pi's order: Trust, Trust parent folder (...), [Trust (this session only)],
    Do not trust, [Do not trust (this session only)]."""
    trust_path = _normalize_cwd(cwd)
    options = [
        ProjectTrustOption(
            label="Trust",
            trusted=True,
            updates=(ProjectTrustUpdate(trust_path, True),),
            saved_path=trust_path,
        )
    ]
    parent_path = get_project_trust_parent_path(cwd)
    if parent_path is not None:
        options.append(
            ProjectTrustOption(
                label=f"Trust parent folder ({parent_path})",
                trusted=True,
                updates=(ProjectTrustUpdate(parent_path, True), ProjectTrustUpdate(trust_path, None)),
                saved_path=parent_path,
            )
        )
    if include_session_only:
        options.append(ProjectTrustOption(label="Trust (this session only)", trusted=True))
    options.append(
        ProjectTrustOption(
            label="Do not trust",
            trusted=False,
            updates=(ProjectTrustUpdate(trust_path, False),),
            saved_path=trust_path,
        )
    )
    if include_session_only:
        options.append(ProjectTrustOption(label="Do not trust (this session only)", trusted=False))
    return options


def format_project_trust_prompt(cwd: str) -> str:
    """Pi's question text (Pi shows *cwd* as given, not canonicalised)."""
    return (
        f"Trust project folder?\n{cwd}\n\nThis allows {APP_NAME} to load {CONFIG_DIR_NAME} settings and "
        "resources, install missing project packages, and execute project extensions."
    )


@dataclass(frozen=True)
class TrustPrompt:
    """The interactive trust question, as data a UI can render.

    ``message`` is Pi's exact text; ``options`` are the five answers with their effects
    (``trusted`` for this run, ``updates`` saved to the store). An ``ask`` callable receives this
    object and returns one of ``options`` (or its ``label``), or ``None`` when dismissed.
    """

    cwd: str
    message: str
    options: tuple[ProjectTrustOption, ...]

    @classmethod
    def for_cwd(cls, cwd: str) -> TrustPrompt:
        return cls(
            cwd=cwd,
            message=format_project_trust_prompt(cwd),
            options=tuple(get_project_trust_options(cwd, include_session_only=True)),
        )

    @property
    def labels(self) -> list[str]:
        return [o.label for o in self.options]

    def option(self, answer: ProjectTrustOption | str | None) -> ProjectTrustOption | None:
        """The option an answer names; ``None`` for a dismissal or a label that is not offered
        (Pi treats both as "untrusted, nothing saved")."""
        if answer is None:
            return None
        label = answer.label if isinstance(answer, ProjectTrustOption) else answer
        return next((o for o in self.options if o.label == label), None)

    def to_dict(self) -> TrustPromptDict:
        return {"cwd": self.cwd, "message": self.message, "options": [o.to_dict() for o in self.options]}


#: ``ask(prompt)`` -> the chosen option or label, or ``None`` when dismissed.
TrustAsk: TypeAlias = Callable[[TrustPrompt], "ProjectTrustOption | str | None"]


# ---------------------------------------------------------------------------------------------
# the store

_TrustFile: TypeAlias = dict[str, "bool | None"]


def _read_trust_file(path: str) -> _TrustFile:
    if not path_exists(path):
        return {}
    try:
        parsed = json_parse(strip_bom(read_text_js(path)))
    except (ValueError, OSError) as error:
        message = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise TrustStoreError(f"Failed to read trust store {path}: {message}") from error
    if not isinstance(parsed, dict):
        raise TrustStoreError(f"Invalid trust store {path}: expected an object")
    data: _TrustFile = {}
    for key, value in parsed.items():
        if value is not True and value is not False and value is not None:
            raise TrustStoreError(
                f"Invalid trust store {path}: value for {js_stringify(key)} must be true, false, or null"
            )
        data[key] = value
    return data


def _write_trust_file(path: str, data: _TrustFile) -> None:
    ordered = {key: data[key] for key in js_sorted_keys(data.keys())}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_file_atomic(path, js_stringify_pretty(ordered) + "\n")


def _find_nearest_trust_entry(data: _TrustFile, cwd: str) -> ProjectTrustStoreEntry | None:
    current = _normalize_cwd(cwd)
    while True:
        value = data.get(current)
        if value is True or value is False:
            return ProjectTrustStoreEntry(path=current, decision=value)
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


class ProjectTrustStore:
    """Pi's ``ProjectTrustStore``: ``{agent_dir}/trust.json`` behind ``trust.json.lock``."""

    def __init__(self, agent_dir: str) -> None:
        self._trust_path = node_join(resolve_path(agent_dir), "trust.json")

    @property
    def trust_path(self) -> str:
        return self._trust_path

    def __repr__(self) -> str:
        return f"ProjectTrustStore({os.path.dirname(self._trust_path)!r})"

    def _locked(self) -> Any:
        lock_path = f"{self._trust_path}.lock"
        try:
            os.makedirs(os.path.dirname(self._trust_path), exist_ok=True)
        except OSError as error:
            raise TrustStoreError(f"Failed to create {os.path.dirname(self._trust_path)}: {error}") from error
        return pi_file_lock(lock_path)

    def _with_lock(self, fn: Callable[[], Any]) -> Any:
        try:
            with self._locked():
                return fn()
        except LockContendedError as error:
            raise TrustStoreError(str(error)) from error
        except TrustStoreError:
            raise
        except OSError as error:
            raise TrustStoreError(f"Trust store {self._trust_path}: {error}") from error

    def get(self, cwd: str) -> ProjectTrustDecision:
        """The nearest saved decision for *cwd* (``None`` when there is none)."""
        entry = self.get_entry(cwd)
        return entry.decision if entry is not None else None

    def get_entry(self, cwd: str) -> ProjectTrustStoreEntry | None:
        """The nearest saved decision with the directory it was saved for."""
        result: ProjectTrustStoreEntry | None = self._with_lock(
            lambda: _find_nearest_trust_entry(_read_trust_file(self._trust_path), cwd)
        )
        return result

    def set(self, cwd: str, decision: ProjectTrustDecision) -> None:
        """Save *decision* for the canonical *cwd* (``None`` removes its entry)."""
        self.set_many([ProjectTrustUpdate(cwd, decision)])

    def set_many(self, decisions: Iterable[ProjectTrustUpdate | tuple[str, ProjectTrustDecision]]) -> None:
        """Apply several updates under one lock (Pi's ``setMany``)."""
        updates = [d if isinstance(d, ProjectTrustUpdate) else ProjectTrustUpdate(*d) for d in decisions]

        def apply() -> None:
            data = _read_trust_file(self._trust_path)
            for update in updates:
                key = _normalize_cwd(update.path)
                if update.decision is None:
                    data.pop(key, None)
                else:
                    data[key] = update.decision
            _write_trust_file(self._trust_path, data)

        self._with_lock(apply)


#: The name the interface notes use.
TrustStore = ProjectTrustStore


def has_trust_requiring_project_resources(cwd: str, *, home_dir: str | None = None) -> bool:
    """Whether *cwd* has project resources that only load when trusted.

    True when ``cwd/.pi/`` holds any of :data:`TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES` (only
    cwd's own ``.pi``), or ``.agents/skills`` exists in *cwd* or an ancestor -- except
    ``$HOME/.agents/skills``, a user-level directory that is always trusted (even when cwd is
    ``$HOME``). ``AGENTS.md``, ``CLAUDE.md`` or ``.pi/agent`` alone do not count. *home_dir*
    defaults to ``$HOME``.
    """
    home = canonicalize_path(resolve_path(home_dir if home_dir is not None else os_homedir()))
    user_agents_skills_dir = node_join(home, ".agents", "skills")
    current = canonicalize_path(resolve_path(cwd))
    config_dir = node_join(current, CONFIG_DIR_NAME)
    if any(path_exists(node_join(config_dir, entry)) for entry in TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES):
        return True
    while True:
        agents_skills_dir = node_join(current, ".agents", "skills")
        if agents_skills_dir != user_agents_skills_dir and path_exists(agents_skills_dir):
            return True
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent


# ---------------------------------------------------------------------------------------------
# resolution


def _run_hooks(
    hooks: Sequence[ProjectTrustHook],
    cwd: str,
    on_hook_error: Callable[[str], None] | None,
) -> ProjectTrustHookResult | None:
    event: ProjectTrustEvent = {"type": "project_trust", "cwd": cwd}
    for index, hook in enumerate(hooks):
        try:
            result = hook(event.copy())
            if result is None:
                continue
            if not isinstance(result, Mapping):
                raise TypeError(
                    f"project_trust hook must return a mapping or None, got {type(result).__name__}"
                )
            trusted = result.get("trusted")
            if trusted == "undecided":
                continue
            if trusted not in ("yes", "no"):
                raise ValueError(
                    f'project_trust hook returned trusted={trusted!r}; expected "yes", "no" or "undecided"'
                )
            return result
        except Exception as error:
            if on_hook_error is None:
                raise
            name = getattr(hook, "__qualname__", None) or f"<hook {index + 1}>"
            on_hook_error(f'Extension "{name}" project_trust error: {error}')
    return None


def decide_project_trust(
    cwd: str,
    trust_store: ProjectTrustStore,
    *,
    trust_override: bool | None = None,
    default_project_trust: DefaultProjectTrust | str | None = "ask",
    project_trust: ProjectTrustHook | Sequence[ProjectTrustHook] | None = None,
    on_hook_error: Callable[[str], None] | None = None,
) -> bool | TrustPrompt:
    """Steps 1-5 of the resolution: ``True``/``False`` when decided without asking, else the
    :class:`TrustPrompt` to put to the user.

    This is the two-phase form a notebook needs: a widget cannot be clicked while the cell that
    waits for it is still running, so the toolkit renders the returned prompt, and the click
    handler calls :func:`answer_trust_prompt` and then reloads. Hooks run here (and a hook's
    ``remember`` is saved here).
    """
    if trust_override is not None:
        return trust_override
    if not has_trust_requiring_project_resources(cwd):
        return True

    if project_trust is not None:
        hooks: Sequence[ProjectTrustHook] = (
            [project_trust] if callable(project_trust) else list(project_trust)
        )
        result = _run_hooks(hooks, cwd, on_hook_error)
        if result is not None:
            trusted = result.get("trusted") == "yes"
            if result.get("remember") is True:
                trust_store.set(cwd, trusted)
            return trusted

    decision = trust_store.get(cwd)
    if decision is not None:
        return decision

    if default_project_trust == "always":
        return True
    if default_project_trust == "never":
        return False
    return TrustPrompt.for_cwd(cwd)


def answer_trust_prompt(
    prompt: TrustPrompt, answer: ProjectTrustOption | str | None, trust_store: ProjectTrustStore
) -> bool:
    """Apply an answer to *prompt*: save the chosen option's updates, return whether this run is
    trusted. ``None`` (dismissed) or a label that is not offered: untrusted, nothing saved (Pi)."""
    selected = prompt.option(answer)
    if selected is None:
        return False
    if selected.updates:
        trust_store.set_many(selected.updates)
    return selected.trusted


def resolve_project_trusted(
    cwd: str,
    trust_store: ProjectTrustStore,
    *,
    trust_override: bool | None = None,
    default_project_trust: DefaultProjectTrust | str | None = "ask",
    project_trust: ProjectTrustHook | Sequence[ProjectTrustHook] | None = None,
    ask: TrustAsk | None = None,
    on_hook_error: Callable[[str], None] | None = None,
) -> bool:
    """Pi's ``resolveProjectTrusted``: decide whether *cwd*'s project resources load this run.

    See the module docstring for the order. ``project_trust`` is one hook or a sequence tried in
    order. A hook that raises (or answers something other than yes/no/undecided/None) propagates,
    unless ``on_hook_error`` is given: then it receives Pi's message
    ``Extension "{hook}" project_trust error: {error}`` and the next hook is tried, as Pi does.
    ``default_project_trust`` other than ``"always"``/``"never"`` means ``"ask"``; with no ``ask``
    callable "ask" means untrusted.
    """
    decision = decide_project_trust(
        cwd,
        trust_store,
        trust_override=trust_override,
        default_project_trust=default_project_trust,
        project_trust=project_trust,
        on_hook_error=on_hook_error,
    )
    if not isinstance(decision, TrustPrompt):
        return decision
    if ask is None:
        return False
    return answer_trust_prompt(decision, ask(decision), trust_store)


#: The name the interface notes use.
resolve_project_trust = resolve_project_trusted
