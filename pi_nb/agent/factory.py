"""Building an :class:`~pi_nb.agent.session.AgentSession` from options (Pi's ``createAgentSession``).

:func:`create_agent_session` (also :meth:`AgentSession.create <pi_nb.agent.session.AgentSession.create>`)
puts together what a session needs, in Pi's order: the working directory and the agent directory,
the session manager (a new file in Pi's layout, a file opened, the most recent session of the cwd
continued, or one in memory), the project trust (decided without asking where it can be, else put
to an ``ask`` callback; no callback means untrusted), the settings (Pi's settings files, then the
caller's overrides), the model (an object, or a spec; none: the one a resumed session last ran on,
else the settings' default model when its key is set, else ``offline``), then the resource loader and the tools inside the session.

:func:`resolve_trust` and :func:`default_model_spec` are the two steps a front end also needs on
their own (a ``trust`` command asks again; a default model is shown before a session exists).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from pi_nb.agent.session import AgentSession, SessionHooks
    from pi_nb.providers.base import Model
    from pi_nb.resources.loader import ResourceLoader
    from pi_nb.resources.settings import SettingsManager
    from pi_nb.resources.trust import TrustAsk
    from pi_nb.session.manager import SessionManager
    from pi_nb.tools.base import AgentTool

__all__ = [
    "CreateSessionOptions",
    "create_agent_session",
    "default_model_spec",
    "resolve_trust",
]


class CreateSessionOptions(TypedDict, total=False):
    """The keyword options of :func:`create_agent_session` (every one optional; ``None`` is the default)."""

    cwd: str | None
    agent_dir: str | None
    model: Model | str | None
    context_window: int | None
    max_tokens: int | None
    thinking_level: str | None
    settings: SettingsManager | None
    settings_overrides: Mapping[str, Any] | None
    resource_loader: ResourceLoader | None
    project_trusted: bool | None
    ask: TrustAsk | None
    hooks: SessionHooks | None
    session_manager: SessionManager | None
    session_file: str | None
    continue_recent: bool
    in_memory: bool
    session_dir: str | None
    tools: Mapping[str, AgentTool] | Sequence[AgentTool] | None
    active_tools: Sequence[str] | None
    check: Callable[[Model, SettingsManager], None] | None


def resolve_trust(
    cwd: str,
    agent_dir: str | None = None,
    *,
    trust_override: bool | None = None,
    ask: TrustAsk | None = None,
    hooks: SessionHooks | None = None,
) -> bool:
    """Whether ``cwd``'s project resources load: Pi's order (an override; no project resources:
    trusted; the ``project_trust`` hooks; the saved decision; the global ``defaultProjectTrust``),
    then ``ask`` with the :class:`~pi_nb.resources.trust.TrustPrompt`; without ``ask``, untrusted.

    ``ask`` may answer ``None`` (dismissed): untrusted and nothing saved, so a front end that cannot
    block records the prompt and answers it later.
    """
    from pi_nb.resources.settings import SettingsManager
    from pi_nb.resources.trust import ProjectTrustStore, resolve_project_trusted
    from pi_nb.session.paths import get_agent_dir

    agent_dir = agent_dir or get_agent_dir()
    global_settings = SettingsManager.create(cwd, agent_dir, project_trusted=False)
    handlers = list(hooks.handlers("project_trust")) if hooks is not None else []
    return resolve_project_trusted(
        cwd,
        ProjectTrustStore(agent_dir),
        trust_override=trust_override,
        default_project_trust=global_settings.get_default_project_trust(),
        project_trust=handlers or None,
        ask=ask,
    )


def default_model_spec(settings: SettingsManager) -> str:
    """The settings' ``defaultProvider/defaultModel`` when that model exists and its key is set,
    else ``"offline"``."""
    from pi_nb.providers.registry import default_model_spec_from_settings

    return default_model_spec_from_settings(settings) or "offline"


def _restored_model(manager: SessionManager) -> Model | None:
    """The model a session with messages last ran on, when it still exists and its key is set
    (Pi's ``createAgentSession`` resumes on it then), else ``None``."""
    from pi_nb.errors import PiNbError
    from pi_nb.providers import get_model
    from pi_nb.providers.readiness import model_readiness

    context = manager.build_session_context()
    recorded = context.model
    if not context.messages or not recorded:
        return None
    provider, model_id = recorded.get("provider"), recorded.get("modelId")
    if not provider or not model_id:
        return None
    try:
        model = get_model(f"{provider}/{model_id}")
    except (PiNbError, ValueError):
        return None
    return model if model_readiness(model).key_env is None else None


def _session_manager(
    cwd: str,
    agent_dir: str,
    *,
    session_manager: SessionManager | None,
    session_file: str | None,
    continue_recent: bool,
    in_memory: bool,
    session_dir: str | None,
) -> SessionManager:
    from pi_nb.session.manager import SessionManager
    from pi_nb.session.paths import get_default_session_dir

    chosen = [
        name
        for name, given in (
            ("session_manager", session_manager is not None),
            ("session_file", session_file is not None),
            ("continue_recent", continue_recent),
            ("in_memory", in_memory),
        )
        if given
    ]
    if len(chosen) > 1:
        raise ValueError(f"create_agent_session: give one of {', '.join(chosen)}, not several")
    if session_manager is not None:
        return session_manager
    if session_file is not None:
        return SessionManager.open(session_file, session_dir)
    if in_memory:
        return SessionManager.in_memory(cwd)
    directory = session_dir or get_default_session_dir(cwd, agent_dir)
    if continue_recent:
        return SessionManager.continue_recent(cwd, directory)
    return SessionManager.create(cwd, directory)


def create_agent_session(
    *,
    cwd: str | None = None,
    agent_dir: str | None = None,
    model: Model | str | None = None,
    context_window: int | None = None,
    max_tokens: int | None = None,
    thinking_level: str | None = None,
    settings: SettingsManager | None = None,
    settings_overrides: Mapping[str, Any] | None = None,
    resource_loader: ResourceLoader | None = None,
    project_trusted: bool | None = None,
    ask: TrustAsk | None = None,
    hooks: SessionHooks | None = None,
    session_manager: SessionManager | None = None,
    session_file: str | None = None,
    continue_recent: bool = False,
    in_memory: bool = False,
    session_dir: str | None = None,
    tools: Mapping[str, AgentTool] | Sequence[AgentTool] | None = None,
    active_tools: Sequence[str] | None = None,
    check: Callable[[Model, SettingsManager], None] | None = None,
    session_class: type[AgentSession] | None = None,
) -> AgentSession:
    """A ready :class:`~pi_nb.agent.session.AgentSession` (see the module docstring).

    * ``cwd``: the agent's working directory (default: the process's); an opened
      ``session_file`` or a given ``session_manager`` brings its own.
    * ``agent_dir``: Pi's agent directory (default ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``).
    * the session: at most one of ``session_manager`` (used as it is), ``session_file`` (opened;
      a missing file becomes a new session written there), ``continue_recent`` (the newest session
      of ``cwd``, else a new one) and ``in_memory``; none: a new file under
      ``{agent_dir}/sessions/--<cwd>--/`` (or ``session_dir``).
    * ``project_trusted``: decide the trust without asking; else :func:`resolve_trust` with
      ``ask`` and the ``project_trust`` handlers of ``hooks``. Ignored when ``settings`` is given
      (they carry their own trust).
    * ``settings``: a settings manager used as it is; else Pi's settings files for ``cwd``,
      files that cannot be read reported as :class:`~pi_nb.errors.SettingsFileWarning`.
      ``settings_overrides`` (Pi's camelCase keys, e.g. ``{"compaction": {"reserveTokens": 2000}}``)
      are applied over either, in memory.
    * ``model``: a model object, or a spec such as ``"openai/gpt-4o"`` (with ``context_window`` /
      ``max_tokens`` overrides); none: a session with messages resumes on the model it last ran
      on when that model exists and its key is set, else :func:`default_model_spec`.
    * ``thinking_level``: explicit; else Pi's choice (the session's recorded level, the settings,
      ``"medium"``), clamped to the model.
    * ``resource_loader``, ``tools``, ``active_tools``, ``hooks``: as
      :class:`~pi_nb.agent.session.AgentSession` takes them.
    * ``check(model, settings)``: called once both are known and before anything is built on them;
      what it raises goes to the caller (a front end refuses a window the reserve does not fit).
    * ``session_class``: the class to build (default :class:`~pi_nb.agent.session.AgentSession`;
      :meth:`AgentSession.create` passes the class it is called on).
    """
    from pi_nb.agent.session import AgentSession, _warn_settings_errors
    from pi_nb.resources.settings import SettingsManager
    from pi_nb.session.paths import get_agent_dir

    agent_dir = os.path.abspath(os.path.expanduser(agent_dir)) if agent_dir else get_agent_dir()
    if session_manager is None and session_file is None:
        cwd = os.path.abspath(os.path.expanduser(cwd)) if cwd else os.getcwd()
    manager = _session_manager(
        cwd or os.getcwd(),
        agent_dir,
        session_manager=session_manager,
        session_file=session_file,
        continue_recent=continue_recent,
        in_memory=in_memory,
        session_dir=session_dir,
    )
    cwd = manager.get_cwd()
    if settings is None:
        trusted = resolve_trust(cwd, agent_dir, trust_override=project_trusted, ask=ask, hooks=hooks)
        settings = SettingsManager.create(cwd, agent_dir, project_trusted=trusted)
        _warn_settings_errors(settings)
    if settings_overrides:
        settings.apply_overrides(settings_overrides)
    if model is None:
        model = _restored_model(manager)
    if model is None or isinstance(model, str):
        from pi_nb.providers import get_model

        overrides: dict[str, int] = {}
        if context_window is not None:
            overrides["context_window"] = context_window
        if max_tokens is not None:
            overrides["max_tokens"] = max_tokens
        model = get_model(model or default_model_spec(settings), **overrides)
    elif context_window is not None or max_tokens is not None:
        changes = {
            k: v for k, v in (("context_window", context_window), ("max_tokens", max_tokens)) if v is not None
        }
        model = model.with_overrides(**changes)
    if check is not None:
        check(model, settings)
    return (session_class or AgentSession)(
        manager,
        model,
        agent_dir=agent_dir,
        settings=settings,
        resource_loader=resource_loader,
        tools=tools,
        active_tools=active_tools,
        thinking_level=thinking_level,
        hooks=hooks,
        project_trusted=settings.is_project_trusted(),
    )
