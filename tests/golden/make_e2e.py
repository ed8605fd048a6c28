"""End-to-end golden files: pi_nb's AgentSession on the offline model against the real Pi 0.85.0.

Run by hand when the scenarios change (needs ../shared/pi-oracle installed):

    .venv/bin/python tests/golden/make_e2e.py

What it records (the tests in tests/test_e2e_offline.py replay it without Node):

* ``tests/golden/e2e_tools.json``: Pi's real ``read`` and ``bash`` tools (oracle fn ``tool``) on the
  project that :func:`build_project` writes: ``read big.txt`` (3,001 lines after the final newline,
  cut at 2,000 lines), ``read wide.txt`` (cut at 50 KB) and ``bash seq 5000`` (tail of 2,000 lines,
  full output in ``$TMPDIR/pi-bash-<16 hex>.log``). Masked: the project dir -> ``<CWD>``, the
  temp dir -> ``<TMP>``, the random log name -> ``pi-bash-<HEX>.log``; the full-output file's size
  and sha256 are recorded.
* ``tests/fixtures/e2e/tools_session.jsonl``: the session file pi_nb wrote for
  :data:`TOOL_PROMPTS` (committed as written, absolute temp paths included), and in
  ``tests/golden/e2e_session.json`` what the real Pi sees when it opens that file
  (``SessionManager.inspect`` with the tree, ``SessionManager.buildSessionContext`` at the leaf).
* ``tests/fixtures/e2e/compaction_<name>.jsonl``: the session files of the four compaction
  scenarios (:data:`SCENARIOS`, an 8,000-token window: one per checkpoint of spec §7.8 plus the
  issue's prompt overflowing), and in ``tests/golden/e2e_compaction.json`` Pi's view of each:
  ``inspect``, the context at the leaf and at every compaction entry (plus ``convertToLlm`` of it:
  what the next request starts with), the branch up to each compaction's parent and Pi's
  ``prepareCompaction`` of that branch (where Pi would cut, ``tokensBefore``), and Pi's
  ``prepareCompaction`` at each checkpoint that crossed the threshold without compacting.

The generator also checks, while it records, that pi_nb's tool results equal Pi's and that the
next model request after each compaction starts with Pi's converted context; it exits non-zero
otherwise (a broken pi_nb must not produce new golden files silently).

This module is imported by the tests for :func:`build_project`, the scenarios and the recording
model; the oracle is imported only by :func:`main`.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pi_nb.agent import AgentSession  # noqa: E402
from pi_nb.providers import OfflineModel  # noqa: E402
from pi_nb.providers.base import AssistantMessageEvent, Context, StreamOptions  # noqa: E402
from pi_nb.resources.settings import SettingsManager  # noqa: E402
from pi_nb.session import SessionManager  # noqa: E402

GOLDEN = ROOT / "tests" / "golden"
FIXTURES = ROOT / "tests" / "fixtures" / "e2e"

TOOL_PROMPTS = ("read big.txt and run `seq 5000`", "read wide.txt")
"""The tool session: the issue's prompt (a 3,000-line file and ``seq 5000``), then a file that hits 50 KB."""

WINDOW = 8000
COMPACTION = {"reserveTokens": 2000, "keepRecentTokens": 2000}
"""Why not Pi's defaults: ``reserveTokens`` 16384 is larger than an 8,000-token window, so the
threshold ``contextWindow - reserveTokens`` would be negative and every checkpoint would compact
(and the summary requests, capped at ``0.8 * reserveTokens`` output tokens, could not fit either).
2,000 reserved leaves a 6,000-token threshold; keeping the last 2,000 estimated tokens keeps about
two exchanges after each cut."""

BIG_LINES = 3000
WIDE_LINES = 3000
NOTE_DAYS = 12
NOTE_LINES = 30

_LOG = re.compile(r"pi-bash-[0-9a-f]{16}\.log")


def big_line(i: int) -> str:
    return f"{i} ünïcødé ✓"


def wide_line(i: int) -> str:
    return f"{i:04d} | αβγ δέζ 😀 wide text with ünïcødé, line {i} of {WIDE_LINES}"


def build_project(root: Path) -> None:
    """The temporary project: ``big.txt`` (3,000 short lines: the 2,000-line limit comes first),
    ``wide.txt`` (3,000 long lines with emoji: the 50 KB limit comes first) and small notes."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "big.txt").write_text("".join(big_line(i) + "\n" for i in range(1, BIG_LINES + 1)), "utf-8")
    (root / "wide.txt").write_text("".join(wide_line(i) + "\n" for i in range(1, WIDE_LINES + 1)), "utf-8")
    notes = root / "notes"
    notes.mkdir(exist_ok=True)
    for day in range(1, NOTE_DAYS + 1):
        (notes / f"day{day}.txt").write_text(
            "".join(
                f"day {day} note {i}: measured {day * i} units; status ok\n" for i in range(1, NOTE_LINES + 1)
            ),
            "utf-8",
        )


def mask(value: Any, dirs: dict[str, str]) -> Any:
    """Replace temp dirs by placeholders (longest first) and the random bash log name."""
    if isinstance(value, str):
        for path, placeholder in sorted(dirs.items(), key=lambda kv: -len(kv[0])):
            value = value.replace(path, placeholder)
        return _LOG.sub("pi-bash-<HEX>.log", value)
    if isinstance(value, list):
        return [mask(v, dirs) for v in value]
    if isinstance(value, dict):
        return {k: mask(v, dirs) for k, v in value.items()}
    return value


def file_digest(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


# --------------------------------------------------------------------------------------------
# running pi_nb


class RecordingOfflineModel(OfflineModel):
    """The offline model, keeping every request it is sent (the ``Context`` as a dict and the
    output cap), in order: summary requests included."""

    def __init__(self, requests: list[dict[str, Any]] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.requests: list[dict[str, Any]] = requests if requests is not None else []

    async def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        self.requests.append(
            {
                "context": copy.deepcopy(context.to_dict()),
                "maxTokens": options.max_tokens if options else None,
                "contextWindow": self.context_window,
            }
        )
        async for event in super().stream(context, options):
            yield event


_SKIPPED_EVENTS = {"message_update", "tool_execution_update"}


@dataclass
class Conversation:
    """One AgentSession run through a scenario, with everything the tests look at."""

    session: AgentSession
    requests: list[dict[str, Any]]
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def session_manager(self) -> SessionManager:
        return self.session.session_manager

    def prompt(self, text: str) -> None:
        # a marker for the pre-prompt checkpoint, with the window the session uses for it
        self.events.append(
            {
                "type": "_prompt",
                "text": text,
                "window": self.session.model.context_window,
                "_leaf": self.session_manager.get_leaf_id(),
                "_requests": len(self.requests),
            }
        )
        asyncio.run(self.session.prompt(text))

    def set_window(self, window: int) -> None:
        """Switch to another offline model (same provider/id, so "same model" for overflow checks)."""
        self.session.set_model(RecordingOfflineModel(self.requests, context_window=window))


def start_conversation(
    project: Path, session_dir: Path, *, window: int = 128_000, compaction: dict[str, Any] | None = None
) -> Conversation:
    """A persisted AgentSession in ``project`` on the recording offline model.

    The agent dir comes from ``PI_CODING_AGENT_DIR`` (the caller sets it to a temp dir)."""
    requests: list[dict[str, Any]] = []
    model = RecordingOfflineModel(requests, context_window=window)
    sm = SessionManager.create(str(project), str(session_dir))
    settings = SettingsManager.in_memory({"compaction": compaction} if compaction else {})
    session = AgentSession(sm, model, settings=settings)
    conv = Conversation(session, requests)

    def listen(event: dict[str, Any]) -> None:
        # with the leaf and the number of model requests at that moment (a message_end is seen
        # before the session appends its entry)
        if event["type"] not in _SKIPPED_EVENTS:
            conv.events.append({**event, "_leaf": sm.get_leaf_id(), "_requests": len(requests)})

    session.subscribe(listen)
    return conv


def note_prompt(day: int) -> str:
    return f"read notes/day{day}.txt and run `grep -c ok notes/day{day}.txt`"


def chat_prompt(k: int) -> str:
    """A prompt with no action in it (the offline model answers without tools)."""
    sentence = f"Fact number {k} is that the meeting about topic {k} moved to room {100 + k} on a rainy day. "
    return f"Please keep this in mind. {sentence * 16}".strip()


def _last_total(conv: Conversation) -> int:
    last = next(m for m in reversed(conv.session.messages) if m.get("role") == "assistant")
    return int(last["usage"]["totalTokens"])


def scenario_between_turns(conv: Conversation) -> None:
    """Prompts that read a note and run a command: the context crosses the threshold after a
    tool batch, so Pi's checkpoint 3 (between turns, ``prepareNextTurn``) compacts; twice."""
    for day in range(1, NOTE_DAYS + 1):
        conv.prompt(note_prompt(day))


def scenario_after_run(conv: Conversation) -> None:
    """Prompts without tools: only checkpoint 1 (after the run, on the assistant's usage) can fire."""
    for k in range(1, 19):
        conv.prompt(chat_prompt(k))


def scenario_pre_prompt(conv: Conversation) -> None:
    """A 128k model until the last usage is past 6,000 tokens, then an 8,000-token model: Pi's
    checkpoint 2 (before the next prompt) compacts before the prompt is sent."""
    k = 0
    while not conv.session.messages or _last_total(conv) <= WINDOW - COMPACTION["reserveTokens"]:
        k += 1
        conv.prompt(chat_prompt(k))
        if k > 60:
            raise RuntimeError("the conversation never reached the threshold")
    conv.set_window(WINDOW)
    conv.prompt(chat_prompt(k + 1))
    conv.prompt(chat_prompt(k + 2))


def scenario_overflow(conv: Conversation) -> None:
    """The issue's prompt on the 8,000-token window: ``big.txt`` (about 7,000 estimated tokens once
    cut to 2,000 lines) cannot fit. Between turns Pi's threshold is crossed but there is nothing to
    cut (the only recent entry is the huge tool result, which is no cut point), so the request goes
    out, overflows (``prompt is too long``), and Pi compacts and retries once (``willRetry``)."""
    for day in range(1, 4):
        conv.prompt(note_prompt(day))
    conv.prompt(TOOL_PROMPTS[0])
    conv.prompt(note_prompt(4))


SCENARIOS: dict[str, tuple[int, Callable[[Conversation], None], set[tuple[str, str]]]] = {
    "between_turns": (WINDOW, scenario_between_turns, {("between_turns", "threshold")}),
    "after_run": (WINDOW, scenario_after_run, {("after_run", "threshold")}),
    "pre_prompt": (128_000, scenario_pre_prompt, {("pre_prompt", "threshold")}),
    "overflow": (WINDOW, scenario_overflow, {("after_run", "overflow")}),
}
"""name -> (starting context window, driver, the (checkpoint, reason) pairs its compactions have)."""


def run_scenario(name: str, project: Path, session_dir: Path) -> Conversation:
    window, driver, _ = SCENARIOS[name]
    conv = start_conversation(project, session_dir, window=window, compaction=COMPACTION)
    driver(conv)
    return conv


def run_tool_session(project: Path, session_dir: Path) -> Conversation:
    conv = start_conversation(project, session_dir)
    for text in TOOL_PROMPTS:
        conv.prompt(text)
    return conv


def tool_results(conv: Conversation) -> list[dict[str, Any]]:
    return [
        e["message"]
        for e in conv.session_manager.get_entries()
        if e["type"] == "message" and e["message"]["role"] == "toolResult"
    ]


# --------------------------------------------------------------------------------------------
# Pi's checkpoint rules (spec §7.8), re-decided from a conversation's events


def iso_ms(iso: str) -> int:
    """``new Date(iso).getTime()`` for the ISO timestamps session entries carry (exact, no float)."""
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def _last_assistant(state: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((m for m in reversed(state) if m.get("role") == "assistant"), None)


def check_compaction_rule(
    msg: dict[str, Any], latest: dict[str, Any] | None, window: int, attempted: bool
) -> str | None:
    """Pi's ``_checkCompaction(msg)`` for the responses these scenarios produce: the reason it
    compacts with (``"threshold"`` / ``"overflow"``) or None. Same provider/model throughout."""
    from pi_nb import calculate_context_tokens, is_context_overflow

    if latest is not None and msg["timestamp"] <= iso_ms(latest["timestamp"]):
        return None  # older than the latest compaction: stale usage
    if msg["stopReason"] == "error":
        assert is_context_overflow(msg, window), msg.get("errorMessage")
        return None if attempted else "overflow"  # compact and retry once
    assert msg["stopReason"] in ("stop", "toolUse")  # no length stop in these scenarios
    assert not is_context_overflow(msg, window)
    tokens = calculate_context_tokens(msg["usage"])
    assert tokens > 0
    return "threshold" if tokens > window - COMPACTION["reserveTokens"] else None


def walk_checkpoints(conv: Conversation) -> list[dict[str, Any]]:
    """Every checkpoint the conversation passed, re-decided with Pi's rules from the recorded
    events, paired with what happened (``compaction_start`` right after it, and its reason).

    ``expected`` is the reason Pi compacts with there (or None). A threshold compaction that is
    expected but did not happen is only right when ``prepareCompaction`` has nothing to cut
    (Pi then skips silently); the caller checks that with ``leaf``."""
    from pi_nb import build_session_context, estimate_context_tokens

    entries = conv.session_manager.get_entries()
    compactions = iter([e for e in entries if e["type"] == "compaction"])
    events = conv.events
    state: list[dict[str, Any]] = []
    latest: dict[str, Any] | None = None
    window = 0
    attempted = False  # Pi's _overflowRecoveryAttempted
    out: list[dict[str, Any]] = []

    def after(i: int, skip: tuple[str, ...] = ()) -> dict[str, Any] | None:
        return next((ev for ev in events[i + 1 :] if ev["type"] not in skip), None)

    for i, ev in enumerate(events):
        kind = ev["type"]
        decided: tuple[str, str | None] | None = None
        if kind == "_prompt":
            window = ev["window"]
            last = _last_assistant(state)
            if last is not None:
                decided = ("pre_prompt", check_compaction_rule(last, latest, window, attempted))
        elif kind == "message_end":
            msg = ev["message"]
            state.append(msg)
            if msg["role"] == "user" or (
                msg["role"] == "assistant" and msg["stopReason"] not in ("error", "length")
            ):
                attempted = False
        elif kind == "turn_end":
            nxt = after(i, ("compaction_start", "compaction_end", "turn_notice"))
            if nxt is not None and nxt["type"] == "turn_start":  # the run goes on: prepareNextTurn
                tokens = estimate_context_tokens(state).tokens
                over = window > 0 and tokens > window - COMPACTION["reserveTokens"]
                decided = ("between_turns", "threshold" if over else None)
        elif kind == "agent_end":
            last = _last_assistant(state)
            assert last is not None
            decided = ("after_run", check_compaction_rule(last, latest, window, attempted))
        elif kind == "compaction_end":
            assert ev["result"] is not None and not ev["aborted"]
            latest = next(compactions)
            state = list(build_session_context(entries, latest["id"]).messages)
            if ev["willRetry"] and state and state[-1].get("stopReason") in ("error", "length"):
                state = state[:-1]  # the failed response stays in the file, not in the retry
        if decided is not None:
            nxt = after(i)
            fired = nxt is not None and nxt["type"] == "compaction_start"
            if decided[1] == "overflow":
                attempted = True
            end = next((e for e in events[i + 1 :] if e["type"] == "compaction_end"), None) if fired else None
            out.append(
                {
                    "checkpoint": decided[0],
                    "expected": decided[1],
                    "fired": nxt["reason"] if fired and nxt is not None else None,
                    "willRetry": end["willRetry"] if end else None,
                    "leaf": ev["_leaf"],
                    "requests": ev["_requests"],  # model requests sent before the checkpoint
                    "requestsAfter": end["_requests"] if end else None,  # ... and once it compacted
                }
            )
    assert next(compactions, None) is None  # every compaction entry was announced by an event
    return out


# --------------------------------------------------------------------------------------------
# recording


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")


def _check(ok: bool, what: str, problems: list[str]) -> None:
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        problems.append(what)


def main() -> int:
    sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))
    from oracle_client import Oracle

    from pi_nb._js import js_stringify
    from pi_nb.messages import convert_to_llm

    problems: list[str] = []
    base = Path(tempfile.mkdtemp(prefix="pi-nb-e2e-")).resolve()
    try:
        project = base / "project"
        build_project(project)
        pi_tmp = base / "tmp-pi"
        nb_tmp = base / "tmp-nb"
        pi_tmp.mkdir()
        nb_tmp.mkdir()
        os.environ["PI_CODING_AGENT_DIR"] = str(base / "agent")
        tempfile.tempdir = str(nb_tmp)  # where pi_nb's bash tool puts its full-output file
        dirs_pi = {str(project): "<CWD>", str(pi_tmp): "<TMP>"}
        dirs_nb = {str(project): "<CWD>", str(nb_tmp): "<TMP>"}
        FIXTURES.mkdir(parents=True, exist_ok=True)

        with Oracle() as o:
            # 1. Pi's tools on the project
            calls = [
                ("read big.txt", "read", {"path": "big.txt"}),
                ("bash seq 5000", "bash", {"command": "seq 5000"}),
                ("read wide.txt", "read", {"path": "wide.txt"}),
            ]
            cases = []
            for name, tool, params in calls:
                env = {"TMPDIR": str(pi_tmp)}
                args = {"name": tool, "cwd": str(project), "params": params}
                response = o.request("tool", args, env=env)
                case: dict[str, Any] = {
                    "name": name,
                    "fn": "tool",
                    "args": mask(args, dirs_pi),
                    "env": mask(env, dirs_pi),
                    "response": mask(response, dirs_pi),
                }
                if tool == "bash":
                    logs = sorted(pi_tmp.glob("pi-bash-*.log"))
                    _check(len(logs) == 1, "Pi wrote one bash full-output file", problems)
                    case["fullOutput"] = file_digest(logs[0])
                cases.append(case)
            _write_json(GOLDEN / "e2e_tools.json", {"source": "Pi 0.85.0 via pi-oracle", "cases": cases})

            # 2. pi_nb's session with the same prompts; the real Pi opens its file
            conv = run_tool_session(project, base / "sessions-tools")
            mine = [
                mask({"isError": m["isError"], "content": m["content"], "details": m.get("details")}, dirs_nb)
                for m in tool_results(conv)
            ]
            want = [c["response"]["result"] for c in cases]
            _check(mine == want, "pi_nb's tool results equal Pi's (masked)", problems)
            session_file = Path(conv.session_manager.get_session_file() or "")
            fixture = FIXTURES / "tools_session.jsonl"
            shutil.copyfile(session_file, fixture)
            inspect = o.request("SessionManager.inspect", {"path": str(fixture), "includeTree": True})
            context = o.request("SessionManager.buildSessionContext", {"path": str(fixture)})
            _check(inspect["ok"] and context["ok"], "Pi opened the tool session", problems)
            _write_json(
                GOLDEN / "e2e_session.json",
                {
                    "source": "Pi 0.85.0 via pi-oracle",
                    "sessionFile": "tests/fixtures/e2e/tools_session.jsonl",
                    "prompts": list(TOOL_PROMPTS),
                    "inspect": {"args": {"path": "<FIXTURE>", "includeTree": True}, "response": inspect},
                    "context": {"args": {"path": "<FIXTURE>"}, "response": context},
                },
            )

            # 3. compaction scenarios on an 8,000-token window
            records = []
            for name in SCENARIOS:
                conv = run_scenario(name, project, base / f"sessions-{name}")
                fixture = FIXTURES / f"compaction_{name}.jsonl"
                shutil.copyfile(conv.session_manager.get_session_file() or "", fixture)
                entries = conv.session_manager.get_entries()
                compactions = [e for e in entries if e["type"] == "compaction"]
                _check(bool(compactions), f"{name}: compacted ({len(compactions)}x)", problems)
                record: dict[str, Any] = {
                    "name": name,
                    "sessionFile": f"tests/fixtures/e2e/compaction_{name}.jsonl",
                    "settings": COMPACTION,
                    "inspect": o.request(
                        "SessionManager.inspect", {"path": str(fixture), "includeTree": True}
                    ),
                    "context": o.request("SessionManager.buildSessionContext", {"path": str(fixture)}),
                    "compactions": [],
                }
                for entry in compactions:
                    at = o.request(
                        "SessionManager.buildSessionContext", {"path": str(fixture), "leafId": entry["id"]}
                    )
                    llm = o.request("convertToLlm", {"messages": at["result"]["messages"]})
                    branch = o.request(
                        "SessionManager.inspect", {"path": str(fixture), "fromId": entry["parentId"]}
                    )["result"]["branch"]
                    prep = o.request(
                        "prepareCompaction", {"entries": branch, "settings": {"enabled": True, **COMPACTION}}
                    )
                    record["compactions"].append(
                        {
                            "id": entry["id"],
                            "parentId": entry["parentId"],
                            "contextAt": at,
                            "convertToLlm": llm,
                            "branchBefore": branch,
                            "prepareCompaction": prep,
                        }
                    )
                    _check(
                        prep["ok"]
                        and prep["result"]["firstKeptEntryId"] == entry["firstKeptEntryId"]
                        and prep["result"]["tokensBefore"] == entry["tokensBefore"],
                        f"{name}: Pi cuts at {entry['firstKeptEntryId']} with tokensBefore {entry['tokensBefore']}",
                        problems,
                    )
                    # the first agent request after this compaction starts with Pi's converted context
                    index = [e["id"] for e in entries].index(entry["id"])
                    later_users = [
                        e
                        for e in entries[index + 1 :]
                        if e["type"] == "message" and e["message"]["role"] == "user"
                    ]
                    prefix = llm["result"]
                    if prefix and prefix[-1].get("stopReason") in ("error", "length"):
                        prefix = prefix[:-1]  # an overflow retry leaves the failed response out
                    firsts = [
                        r["context"]["messages"]
                        for r in conv.requests
                        if js_stringify(r["context"]["messages"][: len(prefix)]) == js_stringify(prefix)
                    ]
                    _check(
                        bool(firsts),
                        f"{name}: a request after {entry['id']} starts with Pi's context "
                        f"({len(later_users)} later prompts)",
                        problems,
                    )
                    mine_llm = json.loads(
                        js_stringify(convert_to_llm(_context_at(conv.session_manager, entry["id"])))
                    )
                    _check(mine_llm == llm["result"], f"{name}: pi_nb converts the context like Pi", problems)
                skipped = []
                for cp in walk_checkpoints(conv):
                    if cp["expected"] and not cp["fired"]:
                        branch = o.request(
                            "SessionManager.inspect", {"path": str(fixture), "fromId": cp["leaf"]}
                        )["result"]["branch"]
                        prep = o.request(
                            "prepareCompaction",
                            {"entries": branch, "settings": {"enabled": True, **COMPACTION}},
                        )
                        _check(
                            prep["ok"] and prep["result"] is None,
                            f"{name}: Pi has nothing to cut at the skipped {cp['checkpoint']} checkpoint",
                            problems,
                        )
                        skipped.append(
                            {"checkpoint": cp["checkpoint"], "leaf": cp["leaf"], "prepareCompaction": prep}
                        )
                record["skippedCheckpoints"] = skipped
                records.append(record)
            _write_json(
                GOLDEN / "e2e_compaction.json",
                {"source": "Pi 0.85.0 via pi-oracle", "window": WINDOW, "scenarios": records},
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


def _context_at(sm: SessionManager, leaf_id: str) -> list[Any]:
    from pi_nb.session.context import build_session_context

    return list(build_session_context(sm.get_entries(), leaf_id).messages)


if __name__ == "__main__":
    raise SystemExit(main())
