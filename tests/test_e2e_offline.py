"""End to end on the offline model, in a temporary project, with no network (issue 6).

* Tools: ``read big.txt and run `seq 5000``` (then ``read wide.txt``) through
  :class:`~pi_nb.agent.AgentSession` and :class:`~pi_nb.providers.OfflineModel` gives tool
  results equal to what the real Pi 0.85.0's tools return on the same files
  (``tests/golden/e2e_tools.json``; the random ``pi-bash-<hex>.log`` name and the temp dirs masked);
  the full-output file holds all 5,000 lines.
* Session file: the file pi_nb wrote (``tests/fixtures/e2e/tools_session.jsonl``) opens in the real
  Pi with the same entries, tree and context (``tests/golden/e2e_session.json``); a fresh run
  writes a file of the same structure.
* Compaction on an 8,000-token window (``reserveTokens`` 2000, ``keepRecentTokens`` 2000: see
  ``make_e2e.COMPACTION`` for why not Pi's defaults), three long conversations, one per
  checkpoint of spec §7.8 (between turns, after a run, before a prompt): every checkpoint the run
  passed is re-decided from Pi's rules and must agree with what happened; ``firstKeptEntryId`` is a
  real entry on the path; ``tokensBefore`` is the estimate of the context before; the next request
  starts with the summary; the summary has Pi's template headings. The committed session files of
  those runs are checked against Pi's ``prepareCompaction`` and ``buildSessionContext``
  (``tests/golden/e2e_compaction.json``).

Regenerate the golden files with ``.venv/bin/python tests/golden/make_e2e.py`` (needs the oracle).
"""

from __future__ import annotations

import itertools
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pi_nb import (
    CompactionSettings,
    SessionManager,
    build_session_context,
    convert_to_llm,
    estimate_context_tokens,
    prepare_compaction,
)
from pi_nb._js import js_stringify

GOLDEN = Path(__file__).parent / "golden"
FIXTURES = Path(__file__).parent / "fixtures" / "e2e"
sys.path.insert(0, str(GOLDEN))
import make_e2e as e2e  # noqa: E402

TOOLS = json.loads((GOLDEN / "e2e_tools.json").read_text(encoding="utf-8"))
SESSION = json.loads((GOLDEN / "e2e_session.json").read_text(encoding="utf-8"))
COMPACTION = json.loads((GOLDEN / "e2e_compaction.json").read_text(encoding="utf-8"))
RECORDS = {r["name"]: r for r in COMPACTION["scenarios"]}

# Pi 0.85.0 core/messages.ts (what a compaction summary turns into for the model)
PI_COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
PI_COMPACTION_SUFFIX = "\n</summary>"
# Pi 0.85.0 core/compaction/compaction.ts: the headings of its summary prompts
PI_HISTORY_HEADINGS = [
    "## Goal",
    "## Constraints & Preferences",
    "## Progress",
    "### Done",
    "### In Progress",
    "### Blocked",
    "## Key Decisions",
    "## Next Steps",
    "## Critical Context",
]
PI_TURN_PREFIX_HEADINGS = ["## Original Request", "## Early Progress", "## Context for Suffix"]
PI_SPLIT_TURN_SEPARATOR = "\n\n---\n\n**Turn Context (split turn):**\n\n"

THRESHOLD = e2e.WINDOW - e2e.COMPACTION["reserveTokens"]
SETTINGS = CompactionSettings.from_dict({"enabled": True, **e2e.COMPACTION})


def jsonish(value: Any) -> Any:
    """What JSON.stringify then JSON.parse makes of a pi_nb value (dataclasses via ``to_dict``)."""

    def convert(v: Any) -> Any:
        if hasattr(v, "to_dict"):
            return convert(v.to_dict())
        if isinstance(v, dict):
            return {k: convert(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [convert(x) for x in v]
        return v

    return json.loads(js_stringify(convert(value)))


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def is_summary_request(request: dict[str, Any]) -> bool:
    messages = request["context"]["messages"]
    return bool(messages) and text_of(messages[0]).startswith("<conversation>\n")


def message_entries(sm: SessionManager, role: str | None = None) -> list[dict[str, Any]]:
    return [
        e
        for e in sm.get_entries()
        if e["type"] == "message" and (role is None or e["message"]["role"] == role)
    ]


def open_copy(relative: str, tmp_path: Path) -> SessionManager:
    """``SessionManager.open`` of a copy of a committed file (opening may rewrite a file)."""
    src = Path(__file__).parents[1] / relative
    dst = tmp_path / src.name
    shutil.copyfile(src, dst)
    return SessionManager.open(str(dst))


def snapshot(sm: SessionManager) -> dict[str, Any]:
    """The fields of the oracle's ``SessionManager.inspect`` answer, from pi_nb."""
    out = {
        "header": sm.get_header(),
        "sessionId": sm.get_session_id(),
        "cwd": sm.get_cwd(),
        "sessionName": sm.get_session_name(),
        "leafId": sm.get_leaf_id(),
        "entries": sm.get_entries(),
        "branch": sm.get_branch(),
        "contextEntries": sm.build_context_entries(),
        "tree": sm.get_tree(),
        "fileChanged": False,
    }
    return jsonish(out)


def expected_inspect(response: dict[str, Any]) -> dict[str, Any]:
    assert response["ok"], response
    want = dict(response["result"])
    want.setdefault("sessionName", None)  # undefined in Pi, left out of its JSON
    return want


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The generator's project in ``tmp_path``; nothing touches ~/.pi or the real temp dir."""
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))  # where bash keeps its full output
    root = tmp_path / "project"
    e2e.build_project(root)
    yield root


# --------------------------------------------------------------------------------------------
# tools: the same texts as Pi's tools


def test_golden_files_cover_the_issue() -> None:
    names = [c["name"] for c in TOOLS["cases"]]
    assert names == ["read big.txt", "bash seq 5000", "read wide.txt"]
    texts = [c["response"]["result"]["content"][0]["text"] for c in TOOLS["cases"]]
    assert texts[0].endswith("\n\n[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]")
    assert texts[1].endswith("\n\n[Showing lines 3001-5000 of 5000. Full output: <TMP>/pi-bash-<HEX>.log]")
    assert "(50.0KB limit)" in texts[2]
    assert {r["name"] for r in COMPACTION["scenarios"]} == set(e2e.SCENARIOS)
    assert all(r["compactions"] for r in COMPACTION["scenarios"])
    assert RECORDS["overflow"]["skippedCheckpoints"]


def test_tool_results_equal_pis_tools(project: Path, tmp_path: Path) -> None:
    conv = e2e.run_tool_session(project, tmp_path / "sessions")
    results = e2e.tool_results(conv)
    dirs = {str(project): "<CWD>", str(tmp_path / "tmp"): "<TMP>"}
    calls = [
        b
        for m in conv.session.messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "toolCall"
    ]
    assert [(c["name"], c["arguments"]) for c in calls] == [
        (case["args"]["name"], case["args"]["params"]) for case in TOOLS["cases"]
    ]
    assert len(results) == len(TOOLS["cases"])
    for case, result in zip(TOOLS["cases"], results, strict=True):
        assert case["response"]["ok"]
        mine = e2e.mask(
            {"isError": result["isError"], "content": result["content"], "details": result["details"]}, dirs
        )
        assert mine == case["response"]["result"], case["name"]
        assert result["toolName"] == case["args"]["name"]

    # bash kept its full output in the temp dir: all 5000 lines, the same bytes Pi wrote
    bash = results[1]
    full = Path(bash["details"]["fullOutputPath"])
    assert full.parent == tmp_path / "tmp" and full.name.startswith("pi-bash-")
    assert full.read_text() == "".join(f"{i}\n" for i in range(1, 5001))
    assert e2e.file_digest(full) == TOOLS["cases"][1]["fullOutput"]

    # the offline model answered from the results, notices included
    answer = text_of(conv.session.messages[-1])
    assert "[Showing lines 1-722 of 3001 (50.0KB limit). Use offset=723 to continue.]" in answer
    first_answer = [m for m in conv.session.messages if m["role"] == "assistant"][2]
    assert "[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]" in text_of(first_answer)


# --------------------------------------------------------------------------------------------
# the session file in the real Pi


def test_committed_session_file_opens_in_pi_with_the_same_context(tmp_path: Path) -> None:
    sm = open_copy(SESSION["sessionFile"], tmp_path)
    assert snapshot(sm) == expected_inspect(SESSION["inspect"]["response"])
    context = SESSION["context"]["response"]
    assert context["ok"]
    want = {k: v for k, v in context["result"].items() if k not in ("leafId", "fileChanged")}
    assert jsonish(sm.build_session_context()) == want
    assert context["result"]["leafId"] == sm.get_leaf_id()
    # what the file holds: Pi's context is the whole conversation of both prompts
    roles = [m["role"] for m in want["messages"]]
    one_tool_turn = ["user", "assistant", "toolResult", "assistant"]
    assert roles == [
        "user",
        "assistant",
        "toolResult",
        "assistant",
        "toolResult",
        "assistant",
        *one_tool_turn,
    ]
    assert want["model"] == {"provider": "pi_nb", "modelId": "offline"}


def _structure(path: Path) -> dict[str, Any]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    header, entries = lines[0], lines[1:]
    shape = []
    for e in entries:
        item: dict[str, Any] = {"type": e["type"]}
        if e["type"] == "message":
            m = e["message"]
            item["role"] = m["role"]
            if m["role"] == "assistant":
                item["stopReason"] = m["stopReason"]
                item["calls"] = [(b["name"], b["arguments"]) for b in m["content"] if b["type"] == "toolCall"]
                item["model"] = (m["api"], m["provider"], m["model"])
            if m["role"] == "toolResult":
                item["toolName"] = m["toolName"]
                item["isError"] = m["isError"]
            if m["role"] == "user":
                item["text"] = text_of(m)
        shape.append(item)
    ids = [e["id"] for e in entries]
    return {
        "header": {k: header[k] for k in ("type", "version")},
        "headerKeys": sorted(header),
        "entries": shape,
        "linear": [e["parentId"] for e in entries] == [None, *ids[:-1]],
        "uniqueIds": len(set(ids)) == len(ids),
        "callIdsMatch": all(
            e["message"]["toolCallId"] == prev["message"]["content"][-1]["id"]
            for prev, e in itertools.pairwise(entries)
            if e["type"] == "message" and e["message"]["role"] == "toolResult"
        ),
    }


def test_fresh_session_file_has_the_committed_structure(project: Path, tmp_path: Path) -> None:
    conv = e2e.run_tool_session(project, tmp_path / "sessions")
    fresh = Path(conv.session_manager.get_session_file() or "")
    committed = Path(__file__).parents[1] / SESSION["sessionFile"]
    mine, theirs = _structure(fresh), _structure(committed)
    assert mine == theirs
    assert mine["linear"] and mine["uniqueIds"] and mine["callIdsMatch"]
    assert mine["header"] == {"type": "session", "version": 3}
    # and the same tool-result texts as the committed file (each masked with its own dirs)
    old = SessionManager.open(str(committed))
    old_cwd = old.get_cwd()
    old_dirs = {old_cwd: "<CWD>", str(Path(old_cwd).parent / "tmp-nb"): "<TMP>"}
    new_dirs = {str(project): "<CWD>", str(tmp_path / "tmp"): "<TMP>"}
    assert [e2e.mask(m["content"], new_dirs) for m in e2e.tool_results(conv)] == [
        e2e.mask(e["message"]["content"], old_dirs) for e in message_entries(old, "toolResult")
    ]


# --------------------------------------------------------------------------------------------
# compaction on an 8,000-token window


@pytest.mark.parametrize("name", list(e2e.SCENARIOS))
def test_compacts_at_the_checkpoint_pi_would_use(name: str, project: Path, tmp_path: Path) -> None:
    conv = e2e.run_scenario(name, project, tmp_path / "sessions")
    sm = conv.session_manager
    entries = sm.get_entries()
    by_id = {e["id"]: e for e in entries}
    compactions = [e for e in entries if e["type"] == "compaction"]
    checkpoints = e2e.walk_checkpoints(conv)

    # every checkpoint agrees with Pi's rules; an expected threshold compaction only stays away
    # when prepareCompaction has nothing to cut (Pi then skips without an event)
    skipped = 0
    for cp in checkpoints:
        if cp["expected"] == "threshold" and cp["fired"] is None:
            assert prepare_compaction(sm.get_branch(cp["leaf"]), SETTINGS) is None, cp
            skipped += 1
        else:
            assert cp["fired"] == cp["expected"], cp
    fired = [cp for cp in checkpoints if cp["fired"]]
    assert len(fired) == len(compactions) >= 1
    assert {(cp["checkpoint"], cp["fired"]) for cp in fired} == e2e.SCENARIOS[name][2]
    assert all(cp["willRetry"] == (cp["fired"] == "overflow") for cp in fired)
    if name in ("between_turns", "after_run"):
        assert len(compactions) >= 2  # a long conversation: the second one updates a previous summary
    if name == "overflow":
        assert skipped >= 1  # between turns after reading big.txt: over the threshold, nothing to cut
        errors = [
            e["message"] for e in message_entries(sm, "assistant") if e["message"]["stopReason"] == "error"
        ]
        # the retried request is made again from the summary's "Original Request"; with this window
        # it overflows once more, and Pi's one-retry rule stops there
        assert 1 <= len(errors) <= 2
        assert all(e["errorMessage"].startswith("prompt is too long: ") for e in errors)

    for n, (comp, cp) in enumerate(zip(compactions, fired, strict=True)):
        # the entry: on the path, a real message entry where Pi may cut, and the estimate before it
        path_ids = [e["id"] for e in sm.get_branch(comp["id"])]
        assert comp["firstKeptEntryId"] in path_ids[: path_ids.index(comp["id"])]
        kept = by_id[comp["firstKeptEntryId"]]
        assert kept["type"] == "message" and kept["message"]["role"] in ("user", "assistant")
        before = build_session_context(entries, comp["parentId"]).messages
        assert comp["tokensBefore"] == estimate_context_tokens(before).tokens
        assert comp["tokensBefore"] > THRESHOLD  # the estimate Pi compacted on crossed the threshold
        assert comp["parentId"] == cp["leaf"]

        # where it sits in the file tells the checkpoint too
        on_path = [by_id[i] for i in path_ids[: path_ids.index(comp["id"])]]
        last = [e for e in on_path if e["type"] == "message"][-1]["message"]
        after = entries[entries.index(comp) + 1] if comp is not entries[-1] else None
        if name == "between_turns":
            assert last["role"] == "toolResult" and by_id[comp["parentId"]]["message"] is last
            assert after is not None and after["message"]["role"] == "assistant"  # the run went on
        elif name == "overflow":
            assert last["role"] == "assistant" and last["stopReason"] == "error"
            assert after is not None and after["message"]["role"] == "assistant"  # the retry
        else:
            assert last["role"] == "assistant" and last["stopReason"] == "stop"
            assert after is None or after["message"]["role"] == "user"
        if name == "pre_prompt":
            # the switch to the 8,000-token model came between the last answer and the compaction
            assert by_id[comp["parentId"]]["type"] == "model_change"
            assert [e["type"] for e in on_path].count("model_change") == 2

        # the summary requests: Pi's prompt structure, no tools, Pi's output caps
        summary_requests = conv.requests[cp["requests"] : cp["requestsAfter"]]
        assert len(summary_requests) == (2 if PI_SPLIT_TURN_SEPARATOR in comp["summary"] else 1)
        assert all(is_summary_request(r) and not r["context"].get("tools") for r in summary_requests)
        history = summary_requests[0]
        assert history["maxTokens"] == int(0.8 * e2e.COMPACTION["reserveTokens"])
        if n > 0 and comp["summary"].split(PI_SPLIT_TURN_SEPARATOR)[0] != "No prior history.":
            assert "\n</conversation>\n\n<previous-summary>\n" in text_of(history["context"]["messages"][0])

        # the summary follows Pi's template headings
        summary = comp["summary"]
        history_part, _, prefix_part = summary.partition(PI_SPLIT_TURN_SEPARATOR)
        if history_part != "No prior history.":
            assert [ln for ln in history_part.split("\n") if ln.startswith("#")] == PI_HISTORY_HEADINGS
        if prefix_part:
            assert summary_requests[-1]["maxTokens"] == int(0.5 * e2e.COMPACTION["reserveTokens"])
            headings = [ln for ln in prefix_part.split("\n") if ln.startswith("#")]
            assert headings == PI_TURN_PREFIX_HEADINGS
        if name == "between_turns":
            assert "\n\n<read-files>\nnotes/day1.txt\n" in summary

        # the NEXT model request starts with the summary, then the kept messages
        assert len(conv.requests) > cp["requestsAfter"], "no request after the compaction"
        request = conv.requests[cp["requestsAfter"]]["context"]["messages"]
        assert request[0]["role"] == "user"
        assert request[0]["content"] == [
            {"type": "text", "text": PI_COMPACTION_PREFIX + summary + PI_COMPACTION_SUFFIX}
        ]
        assert request[0]["timestamp"] == e2e.iso_ms(comp["timestamp"])
        context = jsonish(convert_to_llm(build_session_context(entries, comp["id"]).messages))
        if cp["willRetry"]:
            assert context[-1]["stopReason"] == "error"
            context = context[:-1]  # the failed response stays in the file, not in the retry
        assert jsonish(request[: len(context)]) == context
        rest = request[len(context) :]
        if name in ("between_turns", "overflow"):
            assert rest == []  # the same run continues (retries) from the rebuilt context
        else:
            assert [m["role"] for m in rest] == ["user"]  # the new prompt follows the context


# --------------------------------------------------------------------------------------------
# the committed compaction sessions against the real Pi


@pytest.mark.parametrize("name", list(e2e.SCENARIOS))
def test_committed_compaction_sessions_match_pi(name: str, tmp_path: Path) -> None:
    record = RECORDS[name]
    sm = open_copy(record["sessionFile"], tmp_path)
    assert snapshot(sm) == expected_inspect(record["inspect"])
    ctx = record["context"]
    assert ctx["ok"]
    assert jsonish(sm.build_session_context()) == {
        k: v for k, v in ctx["result"].items() if k not in ("leafId", "fileChanged")
    }
    entries = sm.get_entries()
    by_id = {e["id"]: e for e in entries}
    compactions = [e for e in entries if e["type"] == "compaction"]
    assert [c["id"] for c in record["compactions"]] == [c["id"] for c in compactions]
    for rec, comp in zip(record["compactions"], compactions, strict=True):
        # Pi, given the branch before the compaction, cuts where pi_nb cut
        branch = sm.get_branch(comp["parentId"])
        assert jsonish(branch) == rec["branchBefore"]
        assert rec["prepareCompaction"]["ok"]
        want = rec["prepareCompaction"]["result"]
        prep = prepare_compaction(branch, CompactionSettings.from_dict(want["settings"]))
        assert prep is not None and jsonish(prep) == want
        assert (comp["firstKeptEntryId"], comp["tokensBefore"]) == (
            want["firstKeptEntryId"],
            want["tokensBefore"],
        )
        assert by_id[comp["firstKeptEntryId"]]["type"] == "message"
        # Pi's context at the compaction, and what the next request starts with
        at = rec["contextAt"]
        assert at["ok"]
        mine = build_session_context(entries, comp["id"])
        assert jsonish(mine) == {k: v for k, v in at["result"].items() if k not in ("leafId", "fileChanged")}
        llm = rec["convertToLlm"]
        assert llm["ok"] and jsonish(convert_to_llm(mine.messages)) == llm["result"]
        first = llm["result"][0]
        assert first["role"] == "user" and first["content"][0]["text"] == (
            PI_COMPACTION_PREFIX + comp["summary"] + PI_COMPACTION_SUFFIX
        )
    # where the threshold was crossed but nothing could be cut, Pi's prepareCompaction agrees
    for skipped in record["skippedCheckpoints"]:
        answer = skipped["prepareCompaction"]
        assert answer["ok"] and answer["result"] is None
        assert prepare_compaction(sm.get_branch(skipped["leaf"]), SETTINGS) is None
