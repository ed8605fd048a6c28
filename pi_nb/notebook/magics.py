"""``%%pi`` and ``%pi``: agent turns in cells, and the session at your fingertips.

``%load_ext pi_nb`` registers :class:`PiMagics`. Every magic is one call of the Python API:

* ``%%pi [options]`` — the cell body is the prompt; :meth:`AgentSession.prompt` runs on a worker
  thread with its own event loop while this cell renders its events (throttled to ~10 updates a
  second, always into the cell that started the turn). A kernel interrupt aborts the run through
  the session's abort signal and waits for it to wind down, so the session file stays valid. The
  cell returns a :class:`~pi_nb.notebook.turn.TurnResult` (``Out[n]``) and stores the session id,
  entry ids, model and usage in the output's metadata.
* ``%pi <command>`` — ``new``, ``open``, ``list``, ``model``, ``settings``, ``tree``, ``budget``,
  ``context``, ``compact``, ``navigate``, ``label``, ``entries``, ``trust``, ``replay``, ``status``,
  ``help``. ``%pi help`` (or ``%pi?``) explains each.

Configuration through traitlets: ``%config PiMagics.model = "openai/gpt-4o"``,
``PiMagics.context_window``, ``PiMagics.reserve_tokens``, ``PiMagics.keep_recent_tokens``,
``PiMagics.in_memory``, ``PiMagics.cwd``, ``PiMagics.thinking_level``.

By default the session is a file in Pi's layout (``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``,
``sessions/--<cwd>--/...``), so it can be reopened, analysed, or resumed in Pi itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import queue
import shlex
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, ClassVar

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import HTML, display
from traitlets import Bool, Int, Unicode

from pi_nb.notebook.turn import TurnResult, TurnView

__all__ = ["PiMagics", "PiText", "current_session", "load_ipython_extension"]

HELP = """\
%%pi [options]            run the cell as a prompt (one agent turn, streamed into the cell)
  --model SPEC              offline (default) | provider/model-id, e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5
  --session PATH            use (open) this session file
  --thinking LEVEL          off | minimal | low | medium | high
  --context-window N        override the model's context window (makes compaction visible)
  --reserve N / --keep-recent N   compaction settings for this session
  --no-tools                send no tools          --tools a,b,c   choose the active tools
  --cells N                 include the previous N cells (source and output) as context
  --vars a,b                include these variables' values as context
  --interpolate             expand {name} in the prompt from the notebook's variables
  --no-render               do not stream the turn into the cell (the result is still returned)

%pi new [--in-memory] [--cwd DIR]       start a new session
%pi open PATH | --recent [CWD]          open a session file (or the most recent one of a cwd)
%pi list [CWD]                          sessions of a cwd (Pi's layout)
%pi model SPEC [--context-window N] [--max-tokens N]
%pi settings [key=value ...]            show or set (reserveTokens, keepRecentTokens, enabled)
%pi tree                                the session tree (navigate from the widget)
%pi budget                              the token budget of the next request
%pi context                             the exact request that would be sent, with token counts
%pi compact [instructions]              compact now
%pi navigate ID [--summarize] [--instructions TEXT] [--replace] [--label L]
%pi label ID [TEXT]                     set (or clear) a label
%pi entries                             the session's entries as a pandas frame
%pi trust [yes|no|parent|once|once-no]  show or answer the project-trust question
%pi replay [N|all]                      re-render the last N recorded turns (no model call)
%pi status                              where the session is
%pi session                             the AgentSession object itself (for the Python API)
%pi help                                this text
"""


class _LoopThread:
    """One event loop on a daemon thread: where every agent turn of this kernel runs."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="pi_nb-agent", daemon=True)
        self.thread.start()

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(
        self,
        coro: Coroutine[Any, Any, Any],
        timeout: float | None = None,
        abort: Callable[[], None] | None = None,
    ) -> Any:
        """Run ``coro`` on the loop and wait for it. On a kernel interrupt the work is stopped too
        (``abort()``, else the task is cancelled) and given a moment to wind down before the
        ``KeyboardInterrupt`` goes on: otherwise it would finish behind the user's back (a
        compaction appending its entry seconds after the cell was interrupted)."""
        future = self.submit(coro)
        try:
            return future.result(timeout)
        except KeyboardInterrupt:
            _wind_down(future, abort)
            raise


def _wind_down(future: Future[Any], abort: Callable[[], None] | None, timeout: float = 30.0) -> None:
    """After a kernel interrupt: stop the work running on the loop and wait (bounded) until it has.

    ``abort()`` is repeated until the work ends, because a run passes through phases that each
    start with a fresh abort signal (a compaction before the turn ends by being aborted, then the
    turn itself would start); without ``abort`` the task is cancelled. Its own outcome (aborted,
    cancelled) is not reported: the interrupt is.
    """
    deadline = time.monotonic() + timeout
    while not future.done() and time.monotonic() < deadline:
        if abort is None:
            future.cancel()
        else:
            abort()
        try:
            future.result(0.05)
        except Exception:
            pass
    if not future.done():
        future.cancel()


@magics_class
class PiMagics(Magics):  # type: ignore[misc]
    """The ``%%pi`` / ``%pi`` magics (see the module docstring)."""

    model = Unicode("offline", help="Model spec: 'offline' or 'provider/model-id'.").tag(config=True)
    context_window = Int(None, allow_none=True, help="Override the model's context window.").tag(config=True)
    max_tokens = Int(None, allow_none=True, help="Override the model's max output tokens.").tag(config=True)
    reserve_tokens = Int(None, allow_none=True, help="compaction.reserveTokens for new sessions.").tag(
        config=True
    )
    keep_recent_tokens = Int(None, allow_none=True, help="compaction.keepRecentTokens for new sessions.").tag(
        config=True
    )
    in_memory = Bool(False, help="Keep sessions in memory instead of Pi's session files.").tag(config=True)
    cwd = Unicode("", help="Working directory of the agent (default: the kernel's cwd).").tag(config=True)
    thinking_level = Unicode("off", help="Thinking level for new sessions.").tag(config=True)
    update_interval = Int(100, help="Minimum milliseconds between live updates of a turn.").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.session: Any = None
        self._loop: _LoopThread | None = None
        self._trust_override: bool | None = None
        self._trust_prompt: Any = None
        self._budget_tracker: Any = None

    # -- plumbing ------------------------------------------------------------------------------
    @property
    def loop(self) -> _LoopThread:
        if self._loop is None:
            self._loop = _LoopThread()
        return self._loop

    def _cwd(self) -> str:
        if self.cwd:
            return os.path.abspath(self.cwd)
        try:
            return os.getcwd()
        except FileNotFoundError:  # the kernel's directory was deleted: say so, not "[Errno 2]"
            raise UsageError(
                "The kernel's working directory no longer exists: %cd to one that does, "
                "or set %config PiMagics.cwd = '/path/to/project'"
            ) from None

    def _make_model(
        self, spec: str | None = None, context_window: int | None = None, max_tokens: int | None = None
    ) -> Any:
        from pi_nb.providers import get_model

        overrides: dict[str, Any] = {}
        if (context_window or self.context_window) is not None:
            overrides["context_window"] = context_window or self.context_window
        if (max_tokens or self.max_tokens) is not None:
            overrides["max_tokens"] = max_tokens or self.max_tokens
        try:
            return get_model(spec or self.model, **overrides)
        except (ValueError, TypeError) as error:
            raise UsageError(str(error)) from error

    def _settings(self, cwd: str, trusted: bool) -> Any:
        from pi_nb.resources.settings import SettingsManager

        settings = SettingsManager.create(cwd, project_trusted=trusted)
        overrides: dict[str, Any] = {}
        if self.reserve_tokens is not None:
            overrides["reserveTokens"] = self.reserve_tokens
        if self.keep_recent_tokens is not None:
            overrides["keepRecentTokens"] = self.keep_recent_tokens
        if overrides:
            settings.apply_overrides({"compaction": overrides})
        return settings

    def _project_trusted(self, cwd: str) -> bool:
        """Pi's resolution (spec §3) without blocking: an "ask" becomes a pending question that
        ``%pi trust`` shows and answers; until then the project is untrusted."""
        from pi_nb.resources.settings import SettingsManager
        from pi_nb.resources.trust import ProjectTrustStore, TrustPrompt, decide_project_trust
        from pi_nb.session.paths import get_agent_dir

        agent_dir = get_agent_dir()
        decision = decide_project_trust(
            cwd,
            ProjectTrustStore(agent_dir),
            trust_override=self._trust_override,
            default_project_trust=SettingsManager.create(
                cwd, agent_dir, project_trusted=False
            ).get_default_project_trust(),
        )
        if isinstance(decision, TrustPrompt):
            self._trust_prompt = decision
            return False
        self._trust_prompt = None
        return decision

    def _new_session(
        self,
        *,
        path: str | None = None,
        in_memory: bool | None = None,
        cwd: str | None = None,
        model: Any = None,
    ) -> Any:
        from pi_nb.agent import AgentSession
        from pi_nb.session import SessionManager

        cwd = os.path.abspath(cwd) if cwd else self._cwd()
        if path is not None:
            if not os.path.exists(path):
                raise UsageError(f"No such session file: {path}")
            manager = SessionManager.open(path)
            cwd = manager.get_cwd()
        elif in_memory if in_memory is not None else self.in_memory:
            manager = SessionManager.in_memory(cwd)
        else:
            manager = SessionManager.create(cwd)
        trusted = self._project_trusted(cwd)
        self.session = AgentSession(
            manager,
            model or self._make_model(),
            settings=self._settings(cwd, trusted),
            thinking_level=self.thinking_level if path is None else None,
            project_trusted=trusted,
        )
        return self.session

    def _ensure_session(self) -> Any:
        return self.session if self.session is not None else self._new_session()

    # -- %%pi ------------------------------------------------------------------------------------
    @magic_arguments()
    @argument("--model", default=None)
    @argument("--session", default=None)
    @argument("--thinking", default=None)
    @argument("--context-window", type=int, default=None)
    @argument("--reserve", type=int, default=None)
    @argument("--keep-recent", type=int, default=None)
    @argument("--no-tools", action="store_true")
    @argument("--tools", default=None)
    @argument("--cells", type=int, default=0)
    @argument("--vars", default=None)
    @argument("--interpolate", action="store_true")
    @argument("--no-render", action="store_true")
    @cell_magic
    def pi(self, line: str, cell: str) -> TurnResult | None:
        """Run the cell as one agent turn (see ``%pi help``)."""
        try:
            args = parse_argstring(self.pi, line)
        except Exception as error:  # argparse errors -> a clean UsageError
            raise UsageError(str(error)) from error
        if args.session:
            self._new_session(path=args.session)
        session = self._ensure_session()
        if args.model:
            session.set_model(self._make_model(args.model, args.context_window))
        elif args.context_window:
            session.set_model(session.model.with_overrides(context_window=args.context_window))
        if args.thinking:
            session.set_thinking_level(args.thinking)
        if args.reserve is not None or args.keep_recent is not None:
            comp: dict[str, Any] = {}
            if args.reserve is not None:
                comp["reserveTokens"] = args.reserve
            if args.keep_recent is not None:
                comp["keepRecentTokens"] = args.keep_recent
            session.settings.apply_overrides({"compaction": comp})
        if args.no_tools:
            session.set_active_tools([])
        elif args.tools:
            try:
                session.set_active_tools([t.strip() for t in args.tools.split(",") if t.strip()])
            except Exception as error:
                raise UsageError(str(error)) from error
        prompt = cell.strip("\n")
        if not prompt.strip():
            raise UsageError("%%pi needs a prompt in the cell body")
        if args.interpolate:
            prompt = self._interpolate(prompt)
        context_block, notes = self._notebook_context(args.cells, args.vars)
        if context_block:
            prompt = context_block + "\n\n" + prompt
        return self._run_turn(session, prompt, notes=notes, render=not args.no_render)

    def _interpolate(self, text: str) -> str:
        import string

        ns = self.shell.user_ns if self.shell is not None else {}
        try:
            return string.Formatter().vformat(text, (), _Namespace(ns))
        except (KeyError, IndexError, ValueError) as error:
            raise UsageError(f"--interpolate: {error}") from error

    def _notebook_context(self, cells: int, names: str | None) -> tuple[str, list[str]]:
        from pi_nb.tokens import count_tokens
        from pi_nb.truncation import truncate_head

        if not cells and not names:
            return "", []
        ns = self.shell.user_ns if self.shell is not None else {}
        parts: list[str] = []
        notes: list[str] = []
        if cells:
            inputs = list(ns.get("In", []))
            outputs = ns.get("Out", {})
            current = len(inputs) - 1
            chosen = list(range(max(1, current - cells), current))
            for n in chosen:
                src = inputs[n]
                block = f'<cell n="{n}">\n{src}\n'
                if n in outputs:
                    out = truncate_head(repr(outputs[n]), max_lines=200, max_bytes=8000).content
                    block += f"<output>\n{out}\n</output>\n"
                parts.append(block + "</cell>")
            text = "\n".join(parts)
            notes.append(f"included {len(chosen)} previous cell(s): {count_tokens(text):,} tokens")
        var_parts = []
        for name in [n.strip() for n in (names or "").split(",") if n.strip()]:
            if name not in ns:
                raise UsageError(f"--vars: no variable named {name!r}")
            value = truncate_head(repr(ns[name]), max_lines=200, max_bytes=8000).content
            var_parts.append(f'<variable name="{name}">\n{value}\n</variable>')
        if var_parts:
            text = "\n".join(var_parts)
            notes.append(f"included {len(var_parts)} variable(s): {count_tokens(text):,} tokens")
            parts.extend(var_parts)
        block = "<notebook_context>\n" + "\n".join(parts) + "\n</notebook_context>"
        return block, notes

    def _run_turn(
        self, session: Any, prompt: str, *, notes: list[str] | None = None, render: bool = True
    ) -> TurnResult:
        view = TurnView(prompt=prompt, model=session.model.id, context_window=session.model.context_window)
        view.notes.extend(notes or [])
        events: queue.Queue[dict[str, Any]] = queue.Queue()
        unsubscribe = session.subscribe(events.put)
        handle = display(HTML(view.to_html()), display_id=True) if render else None
        future = self.loop.submit(session.prompt(prompt))
        # wake the wait below as soon as the run ends (else each cell idles up to one poll interval)
        future.add_done_callback(lambda _: events.put({"type": "pi_nb_run_done"}))
        interrupted = False
        last = 0.0
        try:
            while True:
                try:
                    view.feed(events.get(timeout=0.05))
                    while True:
                        view.feed(events.get_nowait())
                except queue.Empty:
                    pass
                now = time.monotonic()
                if handle is not None and view.dirty and now - last >= self.update_interval / 1000:
                    handle.update(HTML(view.to_html()))
                    last = now
                if future.done() and events.empty():
                    break
        except KeyboardInterrupt:
            interrupted = True
            _wind_down(future, session.abort)
            view.notes.append("interrupted: the run was aborted; the session file is intact")
        finally:
            unsubscribe()
            while not events.empty():
                view.feed(events.get_nowait())
        error = None if interrupted else future.exception()
        view.status = "interrupted" if interrupted else ("error" if error else "done")
        if error is not None:
            view.notes.append(f"{type(error).__name__}: {error}")
        result = future.result() if (not interrupted and error is None) else None
        turn = TurnResult(
            session_id=session.session_id,
            session_file=session.session_file,
            model=f"{session.model.provider}/{session.model.id}",
            messages=list(result.messages) if result else [],
            entry_ids=list(result.entry_ids) if result else [],
            usage=dict(result.usage)
            if result
            else {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
            compactions=list(result.compactions) if result else [],
            interrupted=interrupted,
        )
        if handle is not None:
            handle.update(HTML(view.to_html()), metadata=turn.metadata())
        if error is not None:
            raise error
        return turn

    # -- %pi ---------------------------------------------------------------------------------------
    @line_magic("pi")
    def pi_line(self, line: str) -> Any:
        """Session commands: ``%pi help`` lists them."""
        try:
            words = shlex.split(line)
        except ValueError as error:
            raise UsageError(f"%pi: {error}") from error
        if not words or words[0] in ("help", "-h", "--help"):
            print(HELP)
            return None
        command, rest = words[0], words[1:]
        handler: Callable[[list[str]], Any] | None = getattr(self, f"_cmd_{command.replace('-', '_')}", None)
        if handler is None:
            raise UsageError(f"%pi: unknown command {command!r}. Try %pi help")
        result = handler(rest)
        return PiText(result) if isinstance(result, str) else result

    @staticmethod
    def _parser(name: str) -> argparse.ArgumentParser:
        class _Parser(argparse.ArgumentParser):
            def error(self, message: str) -> Any:  # type: ignore[override]
                raise UsageError(f"%pi {name}: {message}")

        return _Parser(prog=f"%pi {name}", add_help=False)

    def _cmd_new(self, rest: list[str]) -> str:
        p = self._parser("new")
        p.add_argument("--in-memory", action="store_true")
        p.add_argument("--cwd", default=None)
        a = p.parse_args(rest)
        s = self._new_session(in_memory=a.in_memory or None, cwd=a.cwd)
        return f"new session {s.session_id} ({'in memory' if not s.session_file else s.session_file})"

    def _cmd_open(self, rest: list[str]) -> str:
        from pi_nb.session.paths import find_most_recent_session, get_default_session_dir

        p = self._parser("open")
        p.add_argument("path", nargs="?")
        p.add_argument("--recent", nargs="?", const="", default=None)
        a = p.parse_args(rest)
        if a.recent is not None:
            cwd = os.path.abspath(a.recent or self._cwd())
            path = find_most_recent_session(get_default_session_dir(cwd), cwd)
            if path is None:
                raise UsageError(f"%pi open --recent: no session for {cwd}")
        elif a.path:
            path = os.path.abspath(os.path.expanduser(a.path))
        else:
            raise UsageError("%pi open: give a session file or --recent [CWD]")
        s = self._new_session(path=path)
        return f"opened {path} ({len(s.session_manager.get_entries())} entries, leaf {s.session_manager.get_leaf_id()})"

    def _cmd_list(self, rest: list[str]) -> Any:
        from pi_nb.session.paths import list_sessions

        cwd = os.path.abspath(rest[0]) if rest else self._cwd()
        infos = list_sessions(cwd)
        try:
            import pandas as pd

            return pd.DataFrame([i.to_dict() if hasattr(i, "to_dict") else vars(i) for i in infos])
        except ImportError:  # pragma: no cover
            return infos

    def _cmd_model(self, rest: list[str]) -> str:
        p = self._parser("model")
        p.add_argument("spec", nargs="?")
        p.add_argument("--context-window", type=int, default=None)
        p.add_argument("--max-tokens", type=int, default=None)
        a = p.parse_args(rest)
        s = self._ensure_session()
        if a.spec is None and a.context_window is None and a.max_tokens is None:
            return repr(s.model)
        if a.spec:
            model = self._make_model(a.spec, a.context_window, a.max_tokens)
        else:
            changes = {
                k: v
                for k, v in (("context_window", a.context_window), ("max_tokens", a.max_tokens))
                if v is not None
            }
            model = s.model.with_overrides(**changes)
        s.set_model(model)
        return f"model: {model!r}"

    def _cmd_settings(self, rest: list[str]) -> dict[str, Any]:
        s = self._ensure_session()
        comp: dict[str, Any] = {}
        for pair in rest:
            if "=" not in pair:
                raise UsageError(f"%pi settings: expected key=value, got {pair!r}")
            key, value = pair.split("=", 1)
            if key not in ("reserveTokens", "keepRecentTokens", "enabled"):
                raise UsageError(
                    f"%pi settings: unknown key {key!r} (reserveTokens, keepRecentTokens, enabled)"
                )
            comp[key] = value.lower() in ("1", "true", "yes", "on") if key == "enabled" else int(value)
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

    def _cmd_session(self, rest: list[str]) -> Any:
        """The :class:`~pi_nb.agent.AgentSession` behind the magics (for the Python API)."""
        return self._ensure_session()

    def _cmd_status(self, rest: list[str]) -> str:
        s = self._ensure_session()
        usage = s.get_context_usage()
        return (
            f"session {s.session_id} · {s.session_file or 'in memory'}\n"
            f"model {s.model.provider}/{s.model.id} · window {s.model.context_window:,} · thinking {s.thinking_level}\n"
            f"entries {len(s.session_manager.get_entries())} · leaf {s.session_manager.get_leaf_id()} · "
            f"context ~{usage['tokens']:,} tokens ({usage['percent'] or 0:.1f}% of window; threshold {usage['threshold']:,})\n"
            f"tools {', '.join(s.get_active_tool_names()) or '(none)'}"
        )

    def _navigate_callback(self) -> Callable[..., Any]:
        def navigate(target_id: str, summarize: bool = False, custom_instructions: str | None = None) -> Any:
            s = self._ensure_session()
            return self.loop.run(
                s.navigate_tree(
                    target_id, summarize=summarize, custom_instructions=custom_instructions or None
                )
            )

        return navigate

    def _cmd_tree(self, rest: list[str]) -> Any:
        from pi_nb.notebook.widgets import session_tree

        s = self._ensure_session()
        return session_tree(s.session_manager, on_navigate=self._navigate_callback())

    def budget_input(self) -> Any:
        """The current session as a :class:`~pi_nb.notebook.budget.BudgetInput` (what the next request
        holds). Incremental: one :class:`~pi_nb.notebook.budget.BudgetTracker` per kernel extends the
        previous path when the leaf only moved forward, so a refresh costs the new entries only."""
        from pi_nb.notebook.budget import BudgetTracker

        s = self._ensure_session()
        c = s.settings.get_compaction_settings()
        if self._budget_tracker is None:
            self._budget_tracker = BudgetTracker()
        return self._budget_tracker.session_input(
            s.session_manager,
            model_context_window=s.model.context_window,
            reserve_tokens=c.reserve_tokens,
            keep_recent_tokens=c.keep_recent_tokens,
            compaction_enabled=c.enabled,
            system_prompt=s.system_prompt,
            system_prompt_parts=s.system_prompt_parts(),
            tools=[
                {"name": t.name, "description": t.description, "parameters": t.parameters}
                for t in s.agent.state.tools
            ],
        )

    def _cmd_budget(self, rest: list[str]) -> Any:
        """The token budget of the next request; the view follows the session live (at most ~10 redraws a
        second, counting only new messages) until the session is replaced."""
        from pi_nb.notebook.widgets import BudgetView

        session = self._ensure_session()
        inp = self.budget_input()
        view = BudgetView(inp, tracker=self._budget_tracker)

        def follow(event: dict[str, Any]) -> None:
            if (
                event.get("type") in ("message_end", "compaction_end", "session_tree")
                and self.session is session
            ):
                try:
                    view.update(self.budget_input())
                except Exception:  # a view must never break a turn
                    pass
            if event.get("type") == "agent_end" and hasattr(view, "flush"):
                view.flush()

        session.subscribe(follow)
        return view

    def _cmd_context(self, rest: list[str]) -> Any:
        from pi_nb.notebook.context_view import ContextView

        s = self._ensure_session()
        return ContextView.from_session(s, run=self.loop.run)

    def _cmd_compact(self, rest: list[str]) -> Any:
        s = self._ensure_session()
        instructions = " ".join(rest) or None
        outcome = self.loop.run(s.compact(instructions), abort=s.abort)
        return outcome.result.to_dict() if outcome.result is not None else outcome.to_dict()

    def _cmd_navigate(self, rest: list[str]) -> Any:
        p = self._parser("navigate")
        p.add_argument("target")
        p.add_argument("--summarize", action="store_true")
        p.add_argument("--instructions", default=None)
        p.add_argument("--replace", action="store_true")
        p.add_argument("--label", default=None)
        a = p.parse_args(rest)
        s = self._ensure_session()
        result = self.loop.run(
            s.navigate_tree(
                a.target,
                summarize=a.summarize,
                custom_instructions=a.instructions,
                replace_instructions=a.replace or None,
                label=a.label,
            )
        )
        return result.to_dict()

    def _cmd_label(self, rest: list[str]) -> str:
        if not rest:
            raise UsageError("%pi label ID [TEXT]")
        s = self._ensure_session()
        text = " ".join(rest[1:]) or None
        s.session_manager.append_label_change(rest[0], text)
        return f"label of {rest[0]}: {text!r}"

    def _cmd_entries(self, rest: list[str]) -> Any:
        from pi_nb.notebook.frames import entries_df

        return entries_df(self._ensure_session().session_manager)

    _TRUST_ANSWERS: ClassVar[dict[str, str]] = {
        "yes": "Trust",
        "parent": "Trust parent folder",
        "once": "Trust (this session only)",
        "no": "Do not trust",
        "once-no": "Do not trust (this session only)",
    }

    def _cmd_trust(self, rest: list[str]) -> str:
        from pi_nb.resources.trust import ProjectTrustStore, TrustPrompt, answer_trust_prompt
        from pi_nb.session.paths import get_agent_dir

        cwd = self.session.cwd if self.session is not None else self._cwd()
        trusted_now = self._project_trusted(cwd)
        prompt = self._trust_prompt
        if not rest:
            if prompt is None:
                return f"{cwd}: {'trusted' if trusted_now else 'not trusted'} (decided without asking)"
            options = "\n".join(f"  %pi trust {key:<8} {label}" for key, label in self._TRUST_ANSWERS.items())
            return f"{prompt.message}\n\nNot trusted until you answer:\n{options}"
        key = rest[0]
        if key not in self._TRUST_ANSWERS:
            raise UsageError("%pi trust yes | parent | once | no | once-no")
        prompt = prompt or TrustPrompt.for_cwd(cwd)
        label = self._TRUST_ANSWERS[key]
        option = next(
            (o for o in prompt.options if o.label.startswith(label) and (key != "yes" or o.label == label)),
            None,
        )
        if option is None:
            raise UsageError(f"%pi trust {key}: that answer is not offered for {cwd}")
        trusted = answer_trust_prompt(prompt, option, ProjectTrustStore(get_agent_dir()))
        self._trust_override = trusted if key.startswith("once") else None
        self._trust_prompt = None
        if self.session is not None:
            self.session.settings.set_project_trusted(trusted)
            self.session.reload_resources()
        return f"{cwd}: {'trusted' if trusted else 'not trusted'}" + (
            " (this kernel only)" if key.startswith("once") else " (saved)"
        )

    def _cmd_replay(self, rest: list[str]) -> None:
        s = self._ensure_session()
        turns = _turns(s.session_manager.get_branch())
        if rest and rest[0] != "all":
            try:
                n = int(rest[0])
            except ValueError as error:
                raise UsageError("%pi replay [N|all]") from error
            turns = turns[-n:]
        elif not rest:
            turns = turns[-1:]
        for messages in turns:
            model = next((m.get("model", "") for m in messages if m.get("role") == "assistant"), "")
            view = TurnView.from_messages(messages, model=str(model))
            display(HTML(view.to_html()), metadata={"pi_nb": {"replay": True, "sessionId": s.session_id}})
        return None


class PiText(str):
    """A command's answer: shows as plain text (not a quoted string) in a cell's output."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        return f'<pre style="white-space:pre-wrap;margin:0">{html.escape(str(self))}</pre>'


class _Namespace(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        raise KeyError(f"no variable named {key!r} for {{{key}}}")


def _turns(branch: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The branch's messages grouped into turns (a user message and what followed it)."""
    turns: list[list[dict[str, Any]]] = []
    for entry in branch:
        if entry.get("type") != "message":
            continue
        msg = entry["message"]
        if msg.get("role") == "user" or not turns:
            turns.append([])
        turns[-1].append(msg)
    return turns


def current_session() -> Any:
    """The :class:`~pi_nb.agent.AgentSession` the ``%%pi`` magics of this kernel use (created on first use)."""
    from IPython import get_ipython

    shell = get_ipython()
    magics = shell.magics_manager.registry.get("PiMagics") if shell is not None else None
    if magics is None:
        raise UsageError("pi_nb's magics are not loaded: run %load_ext pi_nb first")
    return magics._ensure_session()


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext pi_nb``."""
    ipython.register_magics(PiMagics)
