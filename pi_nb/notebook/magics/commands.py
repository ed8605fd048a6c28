"""The ``%pi`` commands: each one's arguments declared beside its handler, and :data:`COMMANDS`, the
table the dispatcher, the help texts and Tab completion read.

A command is a :class:`~pi_nb.notebook.magics.parsing.Command`: its name, usage line, meaning, a
function that adds its arguments to a parser, and its handler ``(magics, args) -> shown``. Adding
one is one entry in :data:`COMMANDS` (the functions may live in any module); the table's order is
the order of ``%pi help``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shlex
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from IPython.core.error import UsageError
from IPython.display import display

from pi_nb.notebook._base import is_message_entry
from pi_nb.notebook.magics.cell import CELL
from pi_nb.notebook.magics.checks import (
    _FIX_SESSION,
    _check_room,
    _field,
    _known_providers,
    _model_specs,
    _provider_key_envs,
)
from pi_nb.notebook.magics.parsing import Command, _no_arguments, _option_rows, _positive, _whole
from pi_nb.notebook.turn import TurnView
from pi_nb.tools.base import tool_schema

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pi_nb.messages import AgentMessage
    from pi_nb.notebook.magics import PiMagics
    from pi_nb.session.types import SessionEntry

_COMPACTION_KEYS = ("reserveTokens", "keepRecentTokens", "enabled")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


class CompactionSettingsReport(TypedDict):
    """The compaction settings in force, as ``%pi settings`` shows them (Pi's camelCase keys)."""

    enabled: bool
    reserveTokens: int
    keepRecentTokens: int


class SettingsReport(TypedDict):
    """What ``%pi settings`` returns: the compaction settings, the model's context window and the
    compaction threshold (``contextWindow - reserveTokens``)."""

    compaction: CompactionSettingsReport
    contextWindow: int
    threshold: int


def _recent(m: PiMagics, cwd_arg: str, where: str) -> str:
    """The most recent session file of ``cwd_arg`` (empty: the kernel's working directory)."""
    from pi_nb.session.paths import find_most_recent_session, get_default_session_dir

    cwd = os.path.abspath(os.path.expanduser(cwd_arg)) if cwd_arg else m._cwd()
    path = find_most_recent_session(get_default_session_dir(cwd), cwd)
    if path is None:
        raise UsageError(
            f"{where} --recent: no session for {cwd} — run a %%pi cell there first, or give a PATH"
        )
    return str(path)


def _resolve_entry(s: Any, target: str, where: str) -> str:
    """An entry id, or the id of the one entry whose label is ``target``."""
    sm = s.session_manager
    if sm.get_entry(target) is not None:
        return target
    labelled = [e["id"] for e in sm.get_entries() if e.get("id") and sm.get_label(e["id"]) == target]
    if len(labelled) == 1:
        return str(labelled[0])
    if len(labelled) > 1:
        raise UsageError(f"{where}: the label {target!r} is on {len(labelled)} entries — give the id")
    raise UsageError(
        f"{where}: no entry {target!r} in this session (neither an id nor a label) — "
        "see the ids with %pi entries or %pi tree (Tab completes ids and labels)"
    )


# -- new ------------------------------------------------------------------------------------------


def _new_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--in-memory", action="store_true", help="keep the session in memory (no file)")
    p.add_argument("--cwd", metavar="DIR", help="the agent's working directory (an existing folder)")


def _new(m: PiMagics, a: argparse.Namespace) -> str:
    s = m._new_session(in_memory=a.in_memory or None, cwd=a.cwd, where="%pi new")
    return f"new session {s.session_id} ({'in memory' if not s.session_file else s.session_file})"


# -- open -----------------------------------------------------------------------------------------


def _open_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="a session file (.jsonl) of Pi or pi_nb")
    p.add_argument(
        "--recent",
        nargs="?",
        const="",
        metavar="CWD",
        help="the most recent session of CWD (default: the kernel's working directory)",
    )


def _open(m: PiMagics, a: argparse.Namespace) -> str:
    if a.recent is not None:
        path = _recent(m, a.recent, "%pi open")
    elif a.path:
        path = os.path.abspath(os.path.expanduser(a.path))
    else:
        raise UsageError("%pi open: give a session file or --recent [CWD] (Tab completes paths)")
    if os.path.isdir(path):
        raise UsageError(
            f"%pi open: {path} is a folder, not a session file — "
            "give a .jsonl file (%pi list DIR shows the sessions of a working directory)"
        )
    s = m._new_session(path=path, where="%pi open")
    return f"opened {path} ({len(s.session_manager.get_entries())} entries, leaf {s.session_manager.get_leaf_id()})"


# -- list -----------------------------------------------------------------------------------------


def _list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("cwd", nargs="?", metavar="CWD", help="a working directory (default: the kernel's)")


def _list(m: PiMagics, a: argparse.Namespace) -> Any:
    from pi_nb.session.paths import list_sessions

    cwd = os.path.abspath(os.path.expanduser(a.cwd)) if a.cwd else m._cwd()
    if not os.path.isdir(cwd):
        raise UsageError(f"%pi list: no such folder: {cwd} — give the working directory of the sessions")
    from pi_nb.notebook.frames import session_list_df

    return session_list_df(list_sessions(cwd))


# -- model ----------------------------------------------------------------------------------------


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "spec", nargs="?", metavar="SPEC", help="offline | provider/model-id (none: show the model)"
    )
    p.add_argument("--context-window", metavar="N", type=_positive, help="override the context window")
    p.add_argument("--max-tokens", metavar="N", type=_positive, help="override the max output tokens")


def _model(m: PiMagics, a: argparse.Namespace) -> str:
    s = m._ensure_session("%pi model")
    if a.spec is None and a.context_window is None and a.max_tokens is None:
        return repr(s.model)
    if a.spec:
        model = m._make_model(a.spec, a.context_window, a.max_tokens, where="%pi model")
    else:
        changes = {
            k: v
            for k, v in (("context_window", a.context_window), ("max_tokens", a.max_tokens))
            if v is not None
        }
        model = s.model.with_overrides(**changes)
    _check_room(
        model.context_window,
        s.settings.get_compaction_settings().reserve_tokens,
        "%pi model",
        _FIX_SESSION,
    )
    s.set_model(model)
    return f"model: {model!r}"


# -- models ---------------------------------------------------------------------------------------


def _models_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "filter", nargs="?", metavar="PROVIDER|TEXT", help="one provider, or text in the model's id or name"
    )


#: ``%pi models``' columns and their dtypes (the frames' conventions: snake_case, nullable dtypes)
_MODELS_DTYPES = {
    "model": "string",
    "provider": "string",
    "name": "string",
    "api": "string",
    "context_window": "Int64",
    "max_tokens": "Int64",
    "reasoning": "boolean",
    "input": "string",
    "cost_input": "Float64",
    "cost_output": "Float64",
    "key_env": "string",
    "key_set": "boolean",
    "key_source": "string",
    "ready": "boolean",
    "missing": "string",
}


def _key_columns(provider: str, env: str | None, source: str) -> dict[str, Any]:
    """The credential columns of one ``%pi models`` row: the key's variable, whether a credential is
    present and where it comes from (environment, auth.json, an OAuth sign-in, AWS's or Google's
    own credentials; never its value); ``None`` for a provider that sends no key. Their dtypes:
    :data:`_MODELS_DTYPES`."""
    present = bool(source) or bool(env and os.environ.get(env, "").strip())
    return {"key_env": env, "key_set": present if (env or source) else None, "key_source": source or None}


def _models(m: PiMagics, a: argparse.Namespace) -> Any:
    import pandas as pd

    specs, source = _model_specs()
    if a.filter:
        wanted = a.filter.lower()
        providers = {str(_field(s, "provider")).lower() for s in specs}
        if wanted in providers:
            specs = [s for s in specs if str(_field(s, "provider")).lower() == wanted]
        else:
            specs = [
                s
                for s in specs
                if wanted in f"{_field(s, 'provider')}/{_field(s, 'id')} {_field(s, 'name') or ''}".lower()
            ]
        if not specs:
            raise UsageError(
                f"%pi models: no model matches {a.filter!r} — %pi models lists them all "
                f"(providers: {', '.join(_known_providers())})"
            )
    key_envs = _provider_key_envs(specs)
    from pi_nb.notebook.login import credential_source_column
    from pi_nb.providers.readiness import spec_readiness

    names = sorted({str(_field(s, "provider")) for s in specs})
    sources = dict(zip(names, credential_source_column(names), strict=True))
    rows = []
    for s in specs:
        provider = str(_field(s, "provider"))
        cost = _field(s, "cost") or {}
        env = key_envs.get(provider)
        ready = spec_readiness(f"{provider}/{_field(s, 'id')}")
        rows.append(
            {
                "model": f"{provider}/{_field(s, 'id')}",
                "provider": provider,
                "name": _field(s, "name") or _field(s, "id"),
                "api": _field(s, "api"),
                "context_window": _field(s, "context_window"),
                "max_tokens": _field(s, "max_tokens"),
                "reasoning": bool(_field(s, "reasoning")),
                "input": ",".join(_field(s, "input") or ()),
                "cost_input": _field(cost, "input") if cost else None,
                "cost_output": _field(cost, "output") if cost else None,
                **_key_columns(provider, env, sources[provider]),
                "ready": ready.ok,
                "missing": ready.message or None,
            }
        )
    frame = pd.DataFrame(rows).astype(_MODELS_DTYPES)
    frame.attrs["source"] = source
    return frame


# -- settings -------------------------------------------------------------------------------------


def _settings_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "pairs",
        nargs="*",
        metavar="key=value",
        help="reserveTokens=N (0 or more, below the window), keepRecentTokens=N, enabled=true|false",
    )


def _settings(m: PiMagics, a: argparse.Namespace) -> SettingsReport:
    s = m._ensure_session("%pi settings")
    comp: dict[str, int | bool] = {}  # Pi's compaction settings by name (_COMPACTION_KEYS)
    for pair in a.pairs:
        if "=" not in pair:
            raise UsageError(f"%pi settings: expected key=value, got {pair!r} — e.g. reserveTokens=2000")
        key, value = pair.split("=", 1)
        if key not in _COMPACTION_KEYS:
            raise UsageError(f"%pi settings: unknown key {key!r} — use {', '.join(_COMPACTION_KEYS)}")
        if key == "enabled":
            if value.lower() not in _TRUE + _FALSE:
                raise UsageError(f"%pi settings: enabled must be true or false, got {value!r}")
            comp[key] = value.lower() in _TRUE
            continue
        try:
            number = _whole(value)
        except argparse.ArgumentTypeError:
            raise UsageError(
                f"%pi settings: {key} must be a whole number of tokens, got {value!r} — e.g. {key}=2000"
            ) from None
        if number < 0:
            raise UsageError(f"%pi settings: {key} must be 0 or more, got {number}")
        comp[key] = number
    if "reserveTokens" in comp:
        _check_room(
            s.model.context_window,
            comp["reserveTokens"],
            "%pi settings",
            "e.g. reserveTokens={reserve} keepRecentTokens={keep}, or a bigger window (%pi model --context-window N)",
        )
    if comp:
        s.settings.apply_overrides({"compaction": comp})
    c = s.settings.get_compaction_settings()
    return {
        "compaction": {
            "enabled": c.enabled,
            "reserveTokens": c.reserve_tokens,
            "keepRecentTokens": c.keep_recent_tokens,
        },
        "contextWindow": s.model.context_window,
        "threshold": s.model.context_window - c.reserve_tokens,
    }


# -- tree, budget, context ------------------------------------------------------------------------


def _navigate_callback(m: PiMagics) -> Callable[..., Any]:
    def navigate(target_id: str, summarize: bool = False, custom_instructions: str | None = None) -> Any:
        s = m._ensure_session()
        return m.loop.run(
            s.navigate_tree(target_id, summarize=summarize, custom_instructions=custom_instructions or None)
        )

    return navigate


def _tree(m: PiMagics, a: argparse.Namespace) -> Any:
    from pi_nb.notebook.widgets import session_tree

    s = m._ensure_session("%pi tree")
    return session_tree(s.session_manager, on_navigate=_navigate_callback(m))


def budget_input(m: PiMagics) -> Any:
    """The current session as a :class:`~pi_nb.notebook.budget.BudgetInput` (what the next request
    holds), through the kernel's one incremental :class:`~pi_nb.budget.BudgetTracker`."""
    from pi_nb.budget import BudgetTracker

    s = m._ensure_session()
    c = s.settings.get_compaction_settings()
    if m._budget_tracker is None:
        m._budget_tracker = BudgetTracker()
    return m._budget_tracker.session_input(
        s.session_manager,
        model_context_window=s.model.context_window,
        reserve_tokens=c.reserve_tokens,
        keep_recent_tokens=c.keep_recent_tokens,
        compaction_enabled=c.enabled,
        system_prompt=s.system_prompt,
        system_prompt_parts=s.system_prompt_parts(),
        tools=[tool_schema(t) for t in s.agent.state.tools],
    )


def _budget(m: PiMagics, a: argparse.Namespace) -> Any:
    """The token budget of the next request; the view follows the session live (at most ~10 redraws a
    second, counting only new messages) until the session is replaced."""
    from pi_nb.notebook.widgets import BudgetView

    session = m._ensure_session("%pi budget")
    inp = m.budget_input()
    view = BudgetView(inp, tracker=m._budget_tracker)

    def follow(event: Mapping[str, object]) -> None:
        # any session event: only its type is read
        if event.get("type") in ("message_end", "compaction_end", "session_tree") and m.session is session:
            try:
                view.update(m.budget_input())
            except Exception:  # a view must never break a turn
                pass
        if event.get("type") == "agent_end" and hasattr(view, "flush"):
            view.flush()

    session.subscribe(follow)
    return view


def _context(m: PiMagics, a: argparse.Namespace) -> Any:
    from pi_nb.notebook.context_view import ContextView

    s = m._ensure_session("%pi context")
    return ContextView.from_session(s, run=m.loop.run)


# -- compact, navigate, label, entries ------------------------------------------------------------


def _compact_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("instructions", nargs="*", metavar="INSTRUCTIONS", help="what the summary should focus on")


def _compact(m: PiMagics, a: argparse.Namespace) -> Any:
    s = m._ensure_session("%pi compact")
    instructions = " ".join(a.instructions) or None
    outcome = m.loop.run(s.compact(instructions), abort=s.abort)
    return outcome.result.to_dict() if outcome.result is not None else outcome.to_dict()


def _navigate_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="ID", help="an entry id or a label (Tab completes both)")
    p.add_argument("--summarize", action="store_true", help="summarise the branch you leave")
    p.add_argument("--instructions", metavar="TEXT", help="custom instructions for the summary")
    p.add_argument("--replace", action="store_true", help="the instructions replace the default prompt")
    p.add_argument("--label", metavar="L", help="label the summary entry")


def _navigate(m: PiMagics, a: argparse.Namespace) -> Any:
    s = m._ensure_session("%pi navigate")
    target = _resolve_entry(s, a.target, "%pi navigate")
    result = m.loop.run(
        s.navigate_tree(
            target,
            summarize=a.summarize,
            custom_instructions=a.instructions,
            replace_instructions=a.replace or None,
            label=a.label,
        ),
        abort=s.abort,
    )
    return result.to_dict()


def _label_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="ID", help="an entry id or its current label")
    p.add_argument("text", nargs="*", metavar="TEXT", help="the new label (none: clear it)")


def _label(m: PiMagics, a: argparse.Namespace) -> str:
    s = m._ensure_session("%pi label")
    target = _resolve_entry(s, a.target, "%pi label")
    text = " ".join(a.text) or None
    s.session_manager.append_label_change(target, text)
    return f"label of {target}: {text!r}"


def _entries(m: PiMagics, a: argparse.Namespace) -> Any:
    from pi_nb.notebook.frames import entries_df

    return entries_df(m._ensure_session("%pi entries").session_manager)


# -- trust ----------------------------------------------------------------------------------------

#: ``%pi trust``'s answers and the labels of Pi's trust options they choose
TRUST_ANSWERS: dict[str, str] = {
    "yes": "Trust",
    "parent": "Trust parent folder",
    "once": "Trust (this session only)",
    "no": "Do not trust",
    "once-no": "Do not trust (this session only)",
}


def _trust_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "answer",
        nargs="?",
        choices=("yes", "no", "parent", "once", "once-no"),
        metavar="yes|no|parent|once|once-no",
        help="answer the question (none: show it)",
    )


def _trust(m: PiMagics, a: argparse.Namespace) -> str:
    from pi_nb.resources.trust import ProjectTrustStore, TrustPrompt, answer_trust_prompt
    from pi_nb.session.paths import get_agent_dir

    cwd = m.session.cwd if m.session is not None else m._cwd()
    trusted_now = m._project_trusted(cwd)
    prompt = m._trust_prompt
    if a.answer is None:
        if prompt is None:
            return f"{cwd}: {'trusted' if trusted_now else 'not trusted'} (decided without asking)"
        options = "\n".join(f"  %pi trust {key:<8} {label}" for key, label in TRUST_ANSWERS.items())
        return f"{prompt.message}\n\nNot trusted until you answer:\n{options}"
    key = a.answer
    prompt = prompt or TrustPrompt.for_cwd(cwd)
    label = TRUST_ANSWERS[key]
    option = next(
        (o for o in prompt.options if o.label.startswith(label) and (key != "yes" or o.label == label)),
        None,
    )
    if option is None:
        raise UsageError(
            f"%pi trust {key}: that answer is not offered for {cwd} — %pi trust shows the answers"
        )
    trusted = answer_trust_prompt(prompt, option, ProjectTrustStore(get_agent_dir()))
    m._trust_override = trusted if key.startswith("once") else None
    m._trust_prompt = None
    if m.session is not None:
        m.session.settings.set_project_trusted(trusted)
        m.session.reload_resources()
    return f"{cwd}: {'trusted' if trusted else 'not trusted'}" + (
        " (this kernel only)" if key.startswith("once") else " (saved)"
    )


# -- turns, follow --------------------------------------------------------------------------------


def _turns_of(branch: Sequence[SessionEntry]) -> list[list[AgentMessage]]:
    """The branch's messages grouped into turns (a user message and what followed it)."""
    turns: list[list[AgentMessage]] = []
    for entry in branch:
        if not is_message_entry(entry):
            continue
        msg = entry["message"]
        if msg.get("role") == "user" or not turns:
            turns.append([])
        turns[-1].append(msg)
    return turns


def _turns_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "count", nargs="?", metavar="N|all", help="how many recorded turns (default: the last one)"
    )


def _turns(m: PiMagics, a: argparse.Namespace) -> None:
    s = m._ensure_session("%pi turns")
    turns = _turns_of(s.session_manager.get_branch())
    if a.count is None:
        turns = turns[-1:]
    elif a.count != "all":
        try:
            n = _positive(a.count)
        except argparse.ArgumentTypeError as error:
            raise UsageError(f"%pi turns: N {error} — e.g. %pi turns 3, or %pi turns all") from None
        turns = turns[-n:]
    for messages in turns:
        model = next((msg.get("model", "") for msg in messages if msg.get("role") == "assistant"), "")
        view = TurnView.from_messages(messages, model=str(model))
        display(view.bundle(), raw=True, metadata={"pi_nb": {"turns": True, "sessionId": s.session_id}})
    return None


def _follow_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", nargs="?", metavar="PATH", help="a session file another process appends to")
    p.add_argument(
        "--recent", nargs="?", const="", metavar="CWD", help="follow the most recent session of CWD"
    )
    p.add_argument("--stop", action="store_true", help="stop following")


def _follow(m: PiMagics, a: argparse.Namespace) -> Any:
    if a.stop:
        if a.path or a.recent is not None:
            raise UsageError("%pi follow --stop takes no PATH")
        if m._follower is None:
            raise UsageError("%pi follow --stop: nothing is being followed — %pi follow PATH starts")
        follower, path = m._follower, m._follow_path
        m._follower = m._follow_path = None
        follower.stop()
        return f"stopped following {path}"
    if a.recent is not None:
        path = _recent(m, a.recent, "%pi follow")
    elif a.path:
        path = os.path.abspath(os.path.expanduser(a.path))
    else:
        raise UsageError("%pi follow: give a session file, --recent [CWD] or --stop")
    if os.path.isdir(path):
        raise UsageError(f"%pi follow: {path} is a folder, not a session file — give a .jsonl file")
    try:
        follow = importlib.import_module("pi_nb.notebook.following").follow
    except ImportError:
        raise UsageError("%pi follow: this install has no pi_nb.notebook.following — update pi_nb") from None
    follower = follow(path)
    if m._follower is not None:  # one followed file at a time: the previous one stops
        try:
            m._follower.stop()
        except Exception:
            pass
    m._follower, m._follow_path = follower, path
    return follower


# -- login, logout ---------------------------------------------------------------------------------


def _login_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("provider", metavar="PROVIDER", help="github-copilot, openai-codex, anthropic, xai, ...")
    p.add_argument(
        "--method", choices=("browser", "device_code"), help="the sign-in flow, where the provider has two"
    )
    p.add_argument("--enterprise", metavar="DOMAIN", help="GitHub Enterprise's domain (github-copilot)")
    p.add_argument("--wait", action="store_true", help="block the cell until the sign-in ends")


def _login(m: PiMagics, a: argparse.Namespace) -> None:
    """Sign in as Pi's ``/login`` does; the credential is saved to the agent dir's ``auth.json``."""
    from pi_nb.notebook.login import login_command

    words = [a.provider]
    if a.method:
        words += ["--method", a.method]
    if a.enterprise:
        words += ["--enterprise", a.enterprise]
    if a.wait:
        words.append("--wait")
    try:
        login_command(shlex.join(words))  # shows its own live view in the cell
    except ValueError as error:
        raise UsageError(f"%pi login: {error}") from None


def _logout_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("provider", metavar="PROVIDER")


def _logout(m: PiMagics, a: argparse.Namespace) -> str:
    from pi_nb.notebook.login import logout_command

    try:
        return logout_command(shlex.join([a.provider]))
    except ValueError as error:
        raise UsageError(f"%pi logout: {error}") from None


# -- status, session, help ------------------------------------------------------------------------


def _status(m: PiMagics, a: argparse.Namespace) -> str:
    s = m._ensure_session("%pi status")
    usage = s.get_context_usage()
    return (
        f"session {s.session_id} · {s.session_file or 'in memory'}\n"
        f"model {s.model.provider}/{s.model.id} · window {s.model.context_window:,} · thinking {s.thinking_level}\n"
        f"entries {len(s.session_manager.get_entries())} · leaf {s.session_manager.get_leaf_id()} · "
        f"context ~{usage['tokens']:,} tokens ({usage['percent'] or 0:.1f}% of window; threshold {usage['threshold']:,})\n"
        f"tools {', '.join(s.get_active_tool_names()) or '(none)'}"
    )


def _session(m: PiMagics, a: argparse.Namespace) -> Any:
    """The :class:`~pi_nb.agent.AgentSession` behind the magics (for the Python API)."""
    return m._ensure_session("%pi session")


def _help_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "command",
        nargs="?",
        metavar="COMMAND",
        choices=[c.name for c in COMMANDS],
        help="one command in full (none: every command, one line each)",
    )


def _help(m: PiMagics, a: argparse.Namespace) -> None:
    print(HELP if a.command is None else _BY_NAME[a.command].parser().format_help())


# -- the table ------------------------------------------------------------------------------------

COMMANDS: tuple[Command, ...] = (
    Command(
        "new",
        "[--in-memory] [--cwd DIR]",
        "start a new session (a file in Pi's layout under $PI_CODING_AGENT_DIR, or in memory)",
        _new_args,
        _new,
    ),
    Command(
        "open",
        "PATH | --recent [CWD]",
        "open a session file, pi_nb's or Pi's own (or the most recent one of a cwd)",
        _open_args,
        _open,
    ),
    Command("list", "[CWD]", "the sessions of a working directory, as a frame", _list_args, _list),
    Command(
        "model",
        "[SPEC] [--context-window N] [--max-tokens N]",
        "show or switch the model (its SDK and key are checked); shrink the window to watch compaction",
        _model_args,
        _model,
    ),
    Command(
        "models",
        "[PROVIDER|TEXT]",
        "the models pi_nb knows, as a frame, with whether each provider's key is set (never its value)",
        _models_args,
        _models,
    ),
    Command(
        "settings",
        "[key=value ...]",
        "show or set the compaction settings: reserveTokens, keepRecentTokens, enabled",
        _settings_args,
        _settings,
    ),
    Command(
        "tree", "", "the session tree (a widget: select an entry, navigate, summarise)", _no_arguments, _tree
    ),
    Command(
        "budget",
        "",
        "the token budget of the next request, by category, against the threshold",
        _no_arguments,
        _budget,
    ),
    Command(
        "context",
        "",
        "the exact request the next call would send, with token counts (nothing is sent)",
        _no_arguments,
        _context,
    ),
    Command("compact", "[instructions]", "compact now (Pi's /compact)", _compact_args, _compact),
    Command(
        "navigate",
        "ID [--summarize] [--instructions TEXT] [--replace] [--label L]",
        "move in the tree (Pi's /tree), with or without a branch summary; ID may be a label",
        _navigate_args,
        _navigate,
    ),
    Command("label", "ID [TEXT]", "set or clear a label", _label_args, _label),
    Command("entries", "", "the session's entries as a pandas frame", _no_arguments, _entries),
    Command(
        "trust",
        "[yes|no|parent|once|once-no]",
        "show or answer the project-trust question",
        _trust_args,
        _trust,
    ),
    Command(
        "turns",
        "[N|all]",
        "show recorded turns again, without calling the model (default: the last one)",
        _turns_args,
        _turns,
    ),
    Command(
        "follow",
        "PATH | --recent [CWD] | --stop",
        "follow a session file another process appends to: the tree, the budget and a turn log, live",
        _follow_args,
        _follow,
    ),
    Command(
        "login",
        "PROVIDER [--method browser|device_code] [--enterprise DOMAIN] [--wait]",
        "sign in as Pi's /login does (OAuth; saved to auth.json, shared with Pi)",
        _login_args,
        _login,
    ),
    Command("logout", "PROVIDER", "remove a provider's credential from auth.json", _logout_args, _logout),
    Command("status", "", "where the session is", _no_arguments, _status),
    Command("session", "", "the AgentSession object itself (for the Python API)", _no_arguments, _session),
    Command(
        "help",
        "[COMMAND]",
        "this list (%pi? the whole reference, %pi help COMMAND or %pi COMMAND --help one command)",
        _help_args,
        _help,
    ),
)
_BY_NAME = {c.name: c for c in COMMANDS}
# "replay" names the what-if replay (pi_nb.replay: a recorded session under another policy); the
# command that shows recorded turns again is "turns"
_RENAMED = {"replay": "turns"}


# -- the help texts, from the table ---------------------------------------------------------------


def _help_text() -> str:
    lines = [f"{'%%pi ' + CELL.usage:<26}{CELL.meaning}"]
    lines += [f"  {opt:<24}{meaning}" for opt, meaning in _option_rows(CELL.parser())]
    lines.append("")
    for c in COMMANDS:
        usage = ("%pi " + c.name + " " + c.usage).rstrip()
        lines.append(f"{usage:<40}{c.meaning}" if len(usage) < 40 else f"{usage}\n{'':<40}{c.meaning}")
    return "\n".join(lines) + "\n"


#: What ``%pi help`` prints: every command and every ``%%pi`` option, one line each.
HELP = _help_text()


def _reference_text() -> str:
    parts = [
        "pi_nb's magics: %%pi runs a cell as one agent turn; %pi COMMAND works on the session.",
        "",
        HELP,
        "Each command in full (also: %pi COMMAND --help):",
        "",
        CELL.parser().format_help(),
    ]
    for c in COMMANDS:
        parts.append(c.parser().format_help())
    parts.append(
        "Configuration (%config PiMagics.NAME = value): model, context_window, max_tokens, reserve_tokens,\n"
        "keep_recent_tokens, in_memory, cwd, thinking_level, update_interval, raise_on_error.\n"
        "Tab completes commands, options, entry ids and labels, model specs and session paths."
    )
    return "\n".join(parts)


#: The whole reference, shown by ``%pi?`` and ``%%pi?``.
REFERENCE = _reference_text()


def help_markdown() -> str:
    """The README's magic table (``command | meaning``), row for row what ``%pi help`` prints."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    opts = ", ".join(f"`{o}`" for o, _ in _option_rows(CELL.parser()))
    rows = [
        "| command | meaning |",
        "|---|---|",
        f"| `%%pi {CELL.usage}` | {cell(CELL.meaning)}. Options: {cell(opts)} |",
    ]
    rows += [
        f"| `{cell(('%pi ' + c.name + ' ' + c.usage).rstrip())}` | {cell(c.meaning)} |" for c in COMMANDS
    ]
    rows += ["", "| `%%pi` option | meaning |", "|---|---|"]
    rows += [f"| `{cell(o)}` | {cell(m)} |" for o, m in _option_rows(CELL.parser())]
    return "\n".join(rows) + "\n"
