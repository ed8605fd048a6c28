"""``%%pi``: the cell body as a prompt, one agent turn streamed into the cell.

The options are declared beside the handler (:data:`CELL`). Everything is checked before anything
changes, so a refused option leaves the session as it was; the turn then runs on the agent's loop
thread while this cell renders its events.
"""

from __future__ import annotations

import argparse
import os
import queue
import time
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.display import display

from pi_nb.errors import PiNbError
from pi_nb.notebook.magics.checks import _FIX_CELL, _check_room
from pi_nb.notebook.magics.parsing import THINKING_LEVELS, Command, _count, _describe, _one_line, _positive
from pi_nb.notebook.magics.runner import _wind_down
from pi_nb.notebook.turn import TurnFailedError, TurnResult, TurnView
from pi_nb.redaction import redact, redact_cut, redact_url

if TYPE_CHECKING:
    from pi_nb.notebook._events import ViewEvent
    from pi_nb.notebook.magics import PiMagics


def _cell_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        metavar="SPEC",
        help="offline (default) | provider/model-id, e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5",
    )
    p.add_argument("--session", metavar="PATH", help="use (open) this session file")
    p.add_argument("--thinking", metavar="LEVEL", choices=THINKING_LEVELS, help=" | ".join(THINKING_LEVELS))
    p.add_argument(
        "--context-window",
        metavar="N",
        type=_positive,
        help="override the model's context window (makes compaction visible)",
    )
    p.add_argument("--reserve", metavar="N", type=_count, help="compaction.reserveTokens for this session")
    p.add_argument(
        "--keep-recent", metavar="N", type=_count, help="compaction.keepRecentTokens for this session"
    )
    p.add_argument("--no-tools", action="store_true", help="send no tools")
    p.add_argument("--tools", metavar="a,b,c", help="choose the active tools")
    p.add_argument(
        "--cells",
        metavar="N",
        type=_count,
        default=0,
        help="include the previous N cells (source and output) as context",
    )
    p.add_argument("--vars", metavar="a,b", help="include these variables' values as context")
    p.add_argument(
        "--interpolate", action="store_true", help="expand {name} in the prompt from the notebook's variables"
    )
    p.add_argument(
        "--no-render",
        action="store_true",
        help="do not stream the turn into the cell (the result is still returned)",
    )
    p.add_argument(
        "--no-raise",
        action="store_true",
        help="a turn that ends in an error does not fail the cell (status 'error', the cell goes on)",
    )


def _cell(m: PiMagics, args: argparse.Namespace) -> TurnResult:
    """One turn: ``args`` are the parsed options and ``args.body`` the cell's text."""
    prompt = str(args.body).strip("\n")
    if not prompt.strip():
        raise UsageError("%%pi needs a prompt in the cell body")
    if args.interpolate:
        prompt = _interpolate(m, prompt)
    context_block, notes = _notebook_context(m, args.cells, args.vars)
    if context_block:
        prompt = context_block + "\n\n" + prompt
    # everything is checked before anything changes: a refused option leaves the session as it was
    model = None
    if args.model:
        model = m._make_model(args.model, args.context_window, where="%%pi --model")
    if args.session:
        m._new_session(path=os.path.abspath(os.path.expanduser(args.session)), where="%%pi --session")
    session = m._ensure_session("%%pi")
    if model is None and args.context_window is not None:
        model = session.model.with_overrides(context_window=args.context_window)
    comp_now = session.settings.get_compaction_settings()
    reserve = args.reserve if args.reserve is not None else comp_now.reserve_tokens
    window = model.context_window if model is not None else session.model.context_window
    if model is not None or args.reserve is not None:
        _check_room(window, reserve, "%%pi", _FIX_CELL)
    tools: list[str] | None = None
    if args.no_tools:
        tools = []
    elif args.tools:
        tools = [t.strip() for t in args.tools.split(",") if t.strip()]
        registry = getattr(session, "_tool_registry", None)
        unknown = [t for t in tools if registry is not None and t not in registry]
        if unknown:
            raise UsageError(
                f"%%pi --tools: unknown tool(s) {', '.join(unknown)} — "
                f"choose from {', '.join(sorted(registry or ()))}"
            )
    if model is not None:
        session.set_model(model)
    if args.thinking:
        session.set_thinking_level(args.thinking)
    if args.reserve is not None or args.keep_recent is not None:
        comp: dict[str, int] = {}  # Pi's compaction settings (camelCase), the numeric ones
        if args.reserve is not None:
            comp["reserveTokens"] = args.reserve
        if args.keep_recent is not None:
            comp["keepRecentTokens"] = args.keep_recent
        session.settings.apply_overrides({"compaction": comp})
    if tools is not None:
        session.set_active_tools(tools)
    raise_on_error = m.raise_on_error and not args.no_raise
    return _run_turn(
        m, session, prompt, notes=notes, render=not args.no_render, raise_on_error=raise_on_error
    )


CELL = Command(
    "%%pi",
    "[options]",
    "run the cell as a prompt (one agent turn, streamed into the cell)",
    _cell_args,
    _cell,
)


class _Namespace(dict[str, Any]):  # the user's namespace for --interpolate: any Python values
    def __missing__(self, key: str) -> Any:
        raise KeyError(f"no variable named {key!r} for {{{key}}}")


def _interpolate(m: PiMagics, text: str) -> str:
    import string

    ns = m.shell.user_ns if m.shell is not None else {}
    try:
        return string.Formatter().vformat(text, (), _Namespace(ns))
    except (KeyError, IndexError, ValueError) as error:
        raise UsageError(
            f"%%pi --interpolate: {_describe(error)} — define it, or write {{{{ and }}}} for braces"
        ) from error


def _notebook_context(m: PiMagics, cells: int, names: str | None) -> tuple[str, list[str]]:
    from pi_nb.tokens import count_tokens
    from pi_nb.truncation import truncate_head

    if not cells and not names:
        return "", []
    ns = m.shell.user_ns if m.shell is not None else {}
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
            raise UsageError(f"%%pi --vars: no variable named {name!r} — define it first, or fix the name")
        value = truncate_head(repr(ns[name]), max_lines=200, max_bytes=8000).content
        var_parts.append(f'<variable name="{name}">\n{value}\n</variable>')
    if var_parts:
        text = "\n".join(var_parts)
        notes.append(f"included {len(var_parts)} variable(s): {count_tokens(text):,} tokens")
        parts.extend(var_parts)
    block = "<notebook_context>\n" + "\n".join(parts) + "\n</notebook_context>"
    return block, notes


def _run_turn(
    m: PiMagics,
    session: Any,
    prompt: str,
    *,
    notes: list[str] | None = None,
    render: bool = True,
    raise_on_error: bool = True,
) -> TurnResult:
    # the view shows (and the .ipynb and the export keep) the prompt as the session stores it:
    # redacted, --vars / --interpolate values included; the session is sent the prompt as written
    view = TurnView(
        prompt=redact(prompt), model=session.model.id, context_window=session.model.context_window
    )
    view.notes.extend(notes or [])
    events: queue.Queue[ViewEvent] = queue.Queue()
    unsubscribe = session.subscribe(events.put)
    handle = display(view.bundle(), raw=True, display_id=True) if render else None
    future = m.loop.submit(session.prompt(prompt))
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
            if handle is not None and view.dirty and now - last >= m.update_interval / 1000:
                handle.update(view.bundle(), raw=True)
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
    result = future.result() if (not interrupted and error is None) else None
    failure = _turn_failure(result) if result is not None else None
    if interrupted:
        view.status = "interrupted"
    elif error is not None or failure is not None:
        view.status = "error"
    else:
        view.status = "done"
    if error is not None:
        view.notes.append(f"{type(error).__name__}: {_describe(error)}")
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
        error=failure if failure is not None else (_describe(error) if error is not None else None),
    )
    if failure is not None:
        view.notes.append(
            "the turn ended with an error"
            + ("; the cell fails (%%pi --no-raise keeps going)" if raise_on_error else "")
        )
    if handle is not None:
        handle.update(view.bundle(), raw=True, metadata=turn.metadata())
    if error is not None:
        if isinstance(error, (PiNbError, ValueError, OSError)):
            raise TurnFailedError(_one_line("%%pi", error), turn=turn) from error
        raise error
    if failure is not None and raise_on_error:
        raise TurnFailedError(_failure_line(failure, session), turn=turn)
    return turn


def _turn_failure(result: Any) -> str | None:
    """Why a finished prompt failed, or ``None``: the result's own ``error`` where it has one, else
    the last assistant message stopping with ``stopReason == "error"``."""
    err = getattr(result, "error", None)
    if err:
        if isinstance(err, dict):
            return str(err.get("errorMessage") or err.get("message") or err)
        return _describe(err) if isinstance(err, BaseException) else " ".join(str(err).split())
    last = getattr(result, "last_assistant", None)
    if isinstance(last, dict) and last.get("stopReason") == "error":
        return " ".join(str(last.get("errorMessage") or "the model stopped with an error").split())
    return None


def _failure_line(message: str, session: Any) -> str:
    """One line for a failed turn: what the provider or the agent said, and what to do."""
    low = message.lower()
    model = session.model
    if any(k in low for k in ("too long", "context length", "context window", "overflow", "maximum context")):
        hint = (
            "make room: a bigger window (%pi model --context-window N), a lower keepRecentTokens "
            "(%pi settings keepRecentTokens=N), or a narrower read"
        )
    elif any(
        k in low for k in ("401", "403", "api key", "api_key", "authentication", "unauthorized", "permission")
    ):
        env = getattr(model, "api_key_env", "") or "the provider's key variable"
        hint = f"check the key in ${env} (or choose another model with %pi model)"
    elif any(
        k in low for k in ("connect", "unreachable", "timed out", "timeout", "name or service", "refused")
    ):
        base_url = getattr(model, "base_url", None)
        where = redact_url(base_url) if isinstance(base_url, str) and base_url else f"{model.provider}'s API"
        hint = f"check that {where} is reachable, then run the cell again"
    else:
        hint = "the session keeps the turn: fix the cause and run the cell again"
    if len(message) > 400:
        message = redact_cut(message, 400) + "…"
    else:
        message = redact(message)
    return f"the turn ended with an error: {message} — {hint} (%%pi --no-raise keeps going)"
