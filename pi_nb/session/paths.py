"""Where Pi keeps sessions, and how to list them (``config.ts``, ``utils/paths.ts``, the listing
half of ``session-manager.ts``).

Layout (Pi 0.85)::

    $PI_CODING_AGENT_DIR  or  ~/.pi/agent
    └── sessions/
        └── --home-u-proj--/                       the cwd, "/" "\\" ":" -> "-", wrapped in "--"
            └── 2026-12-02T08-24-02-711Z_01a235da-8397-74d4-b1a1-e85dd7873948.jsonl

A custom session directory (``--session-dir``, ``$PI_CODING_AGENT_SESSION_DIR`` or the
``sessionDir`` setting) is flat: listing and "continue the most recent" then keep only the files
whose header ``cwd`` is the wanted directory.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict, cast

from pi_nb._fs import lines_upto
from pi_nb._js import js_number_to_string
from pi_nb.config import (
    ENV_AGENT_DIR,
    ENV_SESSION_DIR,
    get_agent_dir,
    get_sessions_dir,
    normalize_path,
    resolve_path,
)
from pi_nb.errors import SessionFileTypeError
from pi_nb.messages import AssistantMessage, UserMessage, js_date_ms
from pi_nb.session.jsonl import (
    _decode_line,
    _js_blank,
    _json_parse,
    open_session_for_read,
    read_session_header_quiet,
    warn_skipped,
)
from pi_nb.session.types import SessionHeader, SessionMessageEntry

# ENV_AGENT_DIR, ENV_SESSION_DIR, get_agent_dir, get_sessions_dir, normalize_path and resolve_path
# are defined in pi_nb.config (Pi's config.ts) and re-exported here.
__all__ = [
    "ENV_AGENT_DIR",
    "ENV_SESSION_DIR",
    "SessionInfo",
    "SessionInfoDict",
    "find_most_recent_session",
    "get_agent_dir",
    "get_default_session_dir",
    "get_sessions_dir",
    "list_all_sessions",
    "list_sessions",
    "resolve_session_dir",
    "session_file_name",
    "session_files_under",
]


def default_session_dir_path(cwd: str, agent_dir: str | None = None) -> str:
    """The default session directory of ``cwd`` under the agent dir (not created, unlike
    :func:`get_default_session_dir`)."""
    resolved_cwd = resolve_path(cwd)
    resolved_agent_dir = resolve_path(agent_dir if agent_dir is not None else get_agent_dir())
    safe = re.sub(r"[/\\:]", "-", re.sub(r"^[/\\]", "", resolved_cwd))
    return os.path.join(resolved_agent_dir, "sessions", f"--{safe}--")


#: The old private name, still imported by :mod:`pi_nb.notebook.magics` (finished after merge).
_default_session_dir_path = default_session_dir_path


def get_default_session_dir(cwd: str, agent_dir: str | None = None) -> str:
    """The session directory of ``cwd`` under the agent dir, created if missing.

    ``/home/u/proj`` -> ``{agent dir}/sessions/--home-u-proj--``.
    """
    directory = default_session_dir_path(cwd, agent_dir)
    os.makedirs(directory, exist_ok=True)
    return directory


def resolve_session_dir(
    session_dir: str | None = None, settings_session_dir: str | None = None
) -> str | None:
    """The session directory Pi's CLI would use: an explicit one, else
    ``$PI_CODING_AGENT_SESSION_DIR``, else the ``sessionDir`` setting; ``None`` means the default
    per-cwd directory."""
    if session_dir:
        return normalize_path(session_dir)
    env = os.environ.get(ENV_SESSION_DIR)
    if env:
        return normalize_path(env)
    return settings_session_dir or None


def session_file_name(timestamp: str, session_id: str) -> str:
    """``{ISO timestamp with ':' and '.' -> '-'}_{session id}.jsonl``."""
    return f"{re.sub(r'[:.]', '-', timestamp)}_{session_id}.jsonl"


# ---------------------------------------------------------------------------------------------
# listing


def _ms_to_datetime(ms: float) -> datetime | None:
    if ms != ms or abs(ms) > 8.64e15:  # NaN: an Invalid Date
        return None
    return datetime.fromtimestamp(ms / 1000, UTC)


class SessionInfoDict(TypedDict):
    """:meth:`SessionInfo.to_dict`: Pi's ``SessionInfo`` JSON ``{path, id, cwd, name?,
    parentSessionPath?, created, modified, messageCount, firstMessage, allMessagesText}`` (dates as
    ISO strings; ``null`` for an Invalid Date)."""

    path: str
    id: str
    cwd: str
    name: NotRequired[str]
    parentSessionPath: NotRequired[str]
    created: str | None
    modified: str | None
    messageCount: int
    firstMessage: str
    allMessagesText: str


@dataclass(frozen=True)
class SessionInfo:
    """One session file as the session picker sees it (Pi's ``SessionInfo``)."""

    path: str
    id: str
    cwd: str
    """The header's cwd; ``""`` for old sessions without one."""
    name: str | None
    """The latest ``session_info`` name (an empty name clears it)."""
    parent_session_path: str | None
    created: datetime | None
    """The header timestamp (``None`` where JavaScript would hold an Invalid Date)."""
    modified: datetime
    """The last user/assistant message time, else the header time, else the file's mtime."""
    message_count: int
    first_message: str
    all_messages_text: str

    def to_dict(self) -> SessionInfoDict:
        """Pi's JSON shape (dates as ISO strings, as ``JSON.stringify`` prints a Date)."""
        # built key by key in Pi's order (the optional keys sit between required ones)
        out: dict[str, object] = {"path": self.path, "id": self.id, "cwd": self.cwd}
        if self.name is not None:
            out["name"] = self.name
        if self.parent_session_path is not None:
            out["parentSessionPath"] = self.parent_session_path
        out["created"] = _iso(self.created)
        out["modified"] = _iso(self.modified)
        out["messageCount"] = self.message_count
        out["firstMessage"] = self.first_message
        out["allMessagesText"] = self.all_messages_text
        return cast(SessionInfoDict, out)  # every key of SessionInfoDict, set just above


def _iso(dt: datetime | None) -> str | None:
    if dt is None:
        return None
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def _js_join_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number_to_string(value)
    if isinstance(value, list):
        return ",".join(_js_join_text(v) for v in value)
    return "[object Object]"


def _extract_text_content(message: UserMessage | AssistantMessage) -> str:
    """The text blocks of a message read from a file: its ``content`` is checked here (Pi throws
    on a content that is not a string or an array)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TypeError("content is not a string or an array")  # Pi: content.filter is not a function
    texts = []
    for block in content:
        if block is None:
            raise TypeError("content block is null")
        if isinstance(block, dict) and block.get("type") == "text":
            texts.append(_js_join_text(block.get("text")))
    return " ".join(texts)


def _activity_time(entry: SessionMessageEntry) -> float | None:
    """A ``message`` entry's activity time; its message object is checked here (as Pi does)."""
    message: object = entry.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("role"), str) or "content" not in message:
        return None
    if message["role"] not in ("user", "assistant"):
        return None
    ts = message.get("timestamp")
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return float(ts)
    t = js_date_ms(entry.get("timestamp"))
    return None if t != t else t


def _split_lines(raw: bytes) -> list[bytes]:
    # Node's readline splits on \n, \r\n and a lone \r
    body = raw[:-1] if raw.endswith(b"\n") else raw
    if b"\r" not in body:
        return [body]
    return re.split(rb"\r\n|\r", body)


def build_session_info(path: str) -> SessionInfo | None:
    """Read one session file for listing; ``None`` when it is not a session (or unreadable).

    A ``*.jsonl`` path that is not a regular file (a FIFO, a directory, a device, or a symlink to
    one) is never opened for reading: ```None`` with a :class:`~pi_nb.session.jsonl.SessionFileWarning`."""
    try:
        f = open_session_for_read(path)
    except SessionFileTypeError as exc:
        warn_skipped(str(exc))
        return None
    except OSError:
        return None
    with f:
        return _session_info(path, f)


def _session_info(path: str, f: Any) -> SessionInfo | None:
    try:
        st = os.fstat(f.fileno())
        header: SessionHeader | None = None
        message_count = 0
        first_message = ""
        all_messages: list[str] = []
        name: str | None = None
        last_activity: float | None = None
        # up to the size at the open: a file still being written is listed as it was
        for raw in lines_upto(f, st.st_size):
            for line_bytes in _split_lines(raw):
                line = _decode_line(line_bytes)
                if _js_blank(line):
                    continue
                try:
                    entry = _json_parse(line)
                except (ValueError, RecursionError):
                    continue
                if entry is None or entry is False or entry == 0 or entry == "":
                    continue
                if header is None:
                    if not isinstance(entry, dict) or entry.get("type") != "session":
                        return None
                    header = cast(SessionHeader, entry)  # validated: an object of type "session"
                    continue
                if not isinstance(entry, dict):
                    continue
                if entry.get("type") == "session_info":
                    raw_name = entry.get("name")
                    if raw_name is not None and not isinstance(raw_name, str):
                        raise TypeError("session name is not a string")
                    name = raw_name.strip() if raw_name else None
                    name = name or None
                if entry.get("type") != "message":
                    continue
                message_count += 1
                # a JSON object of type "message": its message object is checked where it is read
                activity = _activity_time(cast(SessionMessageEntry, entry))
                if activity is not None:
                    last_activity = max(last_activity or 0.0, activity)
                message = entry.get("message")
                if not isinstance(message, dict) or not isinstance(message.get("role"), str):
                    continue
                if "content" not in message or message["role"] not in ("user", "assistant"):
                    continue
                # validated: a user or assistant message that has a content (checked in the call)
                text = _extract_text_content(cast(UserMessage | AssistantMessage, message))
                if not text:
                    continue
                all_messages.append(text)
                if not first_message and message["role"] == "user":
                    first_message = text
        if header is None:
            return None
        cwd = header.get("cwd")
        header_ts = header.get("timestamp")
        header_time = js_date_ms(header_ts) if isinstance(header_ts, str) else float("nan")
        modified: datetime | None = None
        if last_activity is not None and last_activity > 0:
            modified = _ms_to_datetime(last_activity)
        elif header_time == header_time:
            modified = _ms_to_datetime(header_time)
        if modified is None:
            modified = datetime.fromtimestamp(st.st_mtime, UTC)
        parent = header.get("parentSession")
        session_id = header.get("id")
        return SessionInfo(
            path=path,
            id=session_id if isinstance(session_id, str) else str(session_id),
            cwd=cwd if isinstance(cwd, str) else "",
            name=name,
            parent_session_path=parent if isinstance(parent, str) else None,
            created=_ms_to_datetime(js_date_ms(header_ts)),
            modified=modified,
            message_count=message_count,
            first_message=first_message or "(no messages)",
            all_messages_text=" ".join(all_messages),
        )
    except (OSError, TypeError, ValueError, OverflowError):
        return None


def _list_dir(directory: str, on_progress: Callable[[int, int], None] | None = None) -> list[SessionInfo]:
    if not os.path.exists(directory):
        return []
    try:
        files = [os.path.join(directory, f) for f in os.listdir(directory) if f.endswith(".jsonl")]
    except OSError:
        return []
    sessions = []
    for i, path in enumerate(files):
        info = build_session_info(path)
        if info is not None:
            sessions.append(info)
        if on_progress is not None:
            on_progress(i + 1, len(files))
    return sessions


def _cwd_matches(cwd: str | None, resolved_cwd: str) -> bool:
    return isinstance(cwd, str) and cwd != "" and resolve_path(cwd) == resolved_cwd


def list_sessions(
    cwd: str,
    session_dir: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[SessionInfo]:
    """Pi's ``SessionManager.list``: the sessions of ``cwd``, most recently active first.

    Without ``session_dir`` the default per-cwd directory is read (and created). A custom
    directory that is not that default is flat and shared, so only sessions whose header cwd
    resolves to ``cwd`` are kept.
    """
    directory = normalize_path(session_dir) if session_dir else get_default_session_dir(cwd)
    filter_cwd = session_dir is not None and directory != default_session_dir_path(cwd)
    resolved_cwd = resolve_path(cwd)
    sessions = [
        s for s in _list_dir(directory, on_progress) if not filter_cwd or _cwd_matches(s.cwd, resolved_cwd)
    ]
    sessions.sort(key=lambda s: -s.modified.timestamp())
    return sessions


def list_all_sessions(
    session_dir: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[SessionInfo]:
    """Pi's ``SessionManager.listAll``: every session, in a flat ``session_dir`` or in all the
    per-cwd directories under ``{agent dir}/sessions``, most recently active first."""
    if session_dir:
        sessions = _list_dir(normalize_path(session_dir), on_progress)
    else:
        root = get_sessions_dir()
        if not os.path.exists(root):
            return []
        files: list[str] = []
        try:
            for name in os.listdir(root):
                sub = os.path.join(root, name)
                if os.path.isdir(sub):
                    try:
                        files.extend(os.path.join(sub, f) for f in os.listdir(sub) if f.endswith(".jsonl"))
                    except OSError:
                        continue
        except OSError:
            return []
        sessions = []
        for i, path in enumerate(files):
            info = build_session_info(path)
            if info is not None:
                sessions.append(info)
            if on_progress is not None:
                on_progress(i + 1, len(files))
    sessions.sort(key=lambda s: -s.modified.timestamp())
    return sessions


def find_most_recent_session(session_dir: str, cwd: str | None = None) -> str | None:
    """Pi's ``findMostRecentSession``: the ``.jsonl`` file with the newest mtime whose header is
    valid (and, with ``cwd``, whose header cwd resolves to it); ``None`` if there is none."""
    directory = normalize_path(session_dir)
    resolved_cwd = resolve_path(cwd) if cwd else None
    try:
        candidates = []
        for f in os.listdir(directory):
            if not f.endswith(".jsonl"):
                continue
            path = os.path.join(directory, f)
            header = read_session_header_quiet(path)
            if header is None:
                continue
            if resolved_cwd is not None and not _cwd_matches(header.get("cwd"), resolved_cwd):
                continue
            candidates.append((path, os.stat(path).st_mtime_ns // 1_000_000))  # a JS Date: ms
    except OSError:
        return None
    candidates.sort(key=lambda pm: -pm[1])
    return candidates[0][0] if candidates else None


def session_files_under(path: str) -> list[str]:
    """The ``*.jsonl`` files under a directory (walked in sorted order, each folder's files sorted),
    or ``[path]`` for anything that is not a directory. The one walk every view, frame and replay
    over "a directory of session files" uses; whether each file is a session is the reader's call."""
    if not os.path.isdir(path):
        return [path]
    found: list[str] = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        found.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".jsonl"))
    return found
