"""Tab completion for ``%pi`` and ``%%pi``: commands and options (from the command table), entry
ids and labels of the current session, model specs, session files and folders."""

from __future__ import annotations

import glob
import os
import shlex
from typing import Any

from pi_nb.notebook.magics.cell import CELL
from pi_nb.notebook.magics.checks import _field, _known_providers, _model_specs
from pi_nb.notebook.magics.commands import _BY_NAME, _COMPACTION_KEYS, COMMANDS
from pi_nb.notebook.magics.parsing import THINKING_LEVELS, _option_rows


def _register_completer(shell: Any) -> None:
    if getattr(shell, "_pi_nb_completer", False):
        return
    shell.set_hook("complete_command", _complete, str_key="%pi")
    shell.set_hook("complete_command", _complete, str_key="%%pi")
    shell._pi_nb_completer = True


def _complete(shell: Any, event: Any) -> list[str]:
    """IPython's ``complete_command`` hook for ``%pi`` and ``%%pi`` (see :func:`completions`)."""
    magics = shell.magics_manager.registry.get("PiMagics") if shell is not None else None
    try:
        return completions(str(getattr(event, "text_until_cursor", event.line)), magics)
    except Exception:  # completion must never raise into the front end
        return []


def completions(text_until_cursor: str, magics: Any = None) -> list[str]:
    """What Tab offers after ``text_until_cursor`` (a ``%pi`` or ``%%pi`` line up to the cursor)."""
    line = text_until_cursor.lstrip()
    if "\n" in line:  # the first line of a %%pi cell
        line = line.split("\n", 1)[0]
    words = line.split()
    if not words:
        return []
    if line.endswith((" ", "\t")):
        words.append("")
    head, args = words[0], words[1:]
    if not args:
        return []
    current, prev = args[-1], (args[-2] if len(args) >= 2 else None)
    if head == "%%pi":
        return _complete_cell(prev, current, magics)
    if len(args) == 1:
        return [c.name for c in COMMANDS]
    command = args[0]
    spec = _BY_NAME.get(command)
    if spec is None:
        return []
    if prev in ("--model",) or (command == "model" and len(args) == 2 and not current.startswith("-")):
        return _model_completions()
    if prev in ("--cwd", "--recent") or (
        command == "list" and len(args) == 2 and not current.startswith("-")
    ):
        return _path_completions(current, dirs_only=True)
    if current.startswith("-"):
        return [o for o, _ in ((r.split()[0], m) for r, m in _option_rows(spec.parser()))]
    if command in ("navigate", "label") and len(args) == 2:
        return _entry_completions(magics)
    if command in ("open", "follow") and len(args) == 2:
        return _path_completions(current) + _session_completions(magics, current)
    if command == "trust" and len(args) == 2:
        return ["yes", "no", "parent", "once", "once-no"]
    if command == "settings":
        return [f"{k}=" for k in _COMPACTION_KEYS]
    if command == "models" and len(args) == 2:
        return _known_providers()
    return []


def _complete_cell(prev: str | None, current: str, magics: Any) -> list[str]:
    if prev == "--model":
        return _model_completions()
    if prev == "--session":
        return _path_completions(current) + _session_completions(magics, current)
    if prev == "--thinking":
        return list(THINKING_LEVELS)
    if prev == "--tools" and magics is not None and magics.session is not None:
        return [",".join(magics.session.get_active_tool_names())]
    return [r.split()[0] for r, _ in _option_rows(CELL.parser())]


def _model_completions() -> list[str]:
    specs, _ = _model_specs()
    return ["offline", *sorted({f"{_field(s, 'provider')}/{_field(s, 'id')}" for s in specs})]


def _entry_completions(magics: Any) -> list[str]:
    if magics is None or magics.session is None:
        return []
    sm = magics.session.session_manager
    ids: list[str] = []
    labels: list[str] = []
    for entry in reversed(sm.get_entries()):  # the newest first
        entry_id = entry.get("id")
        if not entry_id or entry.get("type") == "label":
            continue
        ids.append(str(entry_id))
        label = sm.get_label(entry_id)
        if label:
            labels.append(shlex.quote(label))
    return labels + ids


def _path_completions(current: str, *, dirs_only: bool = False) -> list[str]:
    expanded = os.path.expanduser(current) if current else ""
    folder, stem = os.path.split(expanded)
    out = []
    for name in sorted(os.listdir(folder or ".")) if os.path.isdir(folder or ".") else []:
        if not name.startswith(stem) or (name.startswith(".") and not stem.startswith(".")):
            continue
        full = os.path.join(folder, name)
        shown = os.path.join(os.path.split(current)[0], name) if current else name
        if os.path.isdir(full):
            out.append(shown + "/")
        elif not dirs_only and name.endswith(".jsonl"):
            out.append(shown)
    return out


def _session_completions(magics: Any, current: str) -> list[str]:
    """Session files of the kernel's working directory (Pi's layout), newest first."""
    from pi_nb.session.paths import default_session_dir_path

    try:
        cwd = magics._cwd() if magics is not None else os.getcwd()
        folder = default_session_dir_path(cwd)
    except Exception:
        return []
    files = sorted(glob.glob(os.path.join(glob.escape(folder), "*.jsonl")), reverse=True)
    return [f for f in files if f.startswith(os.path.expanduser(current))] if current else files
