"""pi_nb and the real Pi 0.85.0 CLI on one session file, turn by turn.

``tests/golden/make_cli_partner.py`` recorded scenarios where ``pi -p`` and pi_nb take turns on
one session file against a scripted OpenAI-compatible server (tool calls; Pi killed by SIGTERM /
SIGKILL during ``sleep 20``; a pi_nb turn aborted during a tool; auto-compaction on either side;
a branch summary; an HTTP 400 error turn; an empty tool result). This test replays pi_nb's side
with no Node and no network: the same scripted answers from a loopback server
(``tests/cli_partner_script.py``), on the recorded session file states, in a working directory
with the same files. It requires:

* ``requests``: for every step, pi_nb's requests equal the ones Pi sent doing that step from
  the same file (for a pi_nb step: Pi's run on a copy of the file);
* ``entries``: the entries pi_nb appends have the shape Pi's have (types, fields, values, parent
  links by position; ids and timestamps aside). A Pi step killed mid-tool wrote fewer entries:
  Pi's must be a prefix of pi_nb's;
* ``pi_reads_pi_nb``: after a pi_nb step, Pi continuing pi_nb's file sent the same requests and
  appended the same entries as Pi continuing its own file;
* ``recording_current``: pi_nb today does what the recorded pi_nb did (else re-record).

What is normalised: :data:`cli_partner_script.NORMALISED` (headers of SDK telemetry and
transport, the kernel release in the user agent, the port, the cwd / agent dir paths, the date
line of the system prompt), and in session files ids and timestamps (:func:`file_shapes`).
"""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cli_partner_script as cps
import pytest

GOLDEN = Path(__file__).parent / "golden" / "cli_partner"
_SERVER: list[cps.Server] = []


def _server() -> cps.Server:
    """One loopback scripted server for the module (pi_nb's providers reach it over HTTP)."""
    if not _SERVER:
        _SERVER.append(cps.Server())
    return _SERVER[0]


def _scenarios() -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(GOLDEN.glob("*.json.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
        out[doc["scenario"]] = doc
    return out


SCENARIOS = _scenarios()
STEPS = [(name, i) for name, doc in SCENARIOS.items() for i in range(len(doc["steps"]))]
_REPLAYS: dict[tuple[str, int], dict[str, Any]] = {}


def differences(got: Any, want: Any, path: str = "", limit: int = 12) -> list[str]:
    """Where two JSON values differ, as ``path: got ... want ...`` lines (at most ``limit``)."""
    out: list[str] = []

    def short(v: Any) -> str:
        s = json.dumps(v, ensure_ascii=False)
        return s if len(s) <= 300 else s[:300] + f"... ({len(s)} chars)"

    def walk(g: Any, w: Any, p: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(g, dict) and isinstance(w, dict):
            for k in sorted(set(g) | set(w), key=str):
                if k not in g:
                    out.append(f"{p}.{k}: missing, want {short(w[k])}")
                elif k not in w:
                    out.append(f"{p}.{k}: extra {short(g[k])}")
                else:
                    walk(g[k], w[k], f"{p}.{k}")
        elif isinstance(g, list) and isinstance(w, list):
            for i in range(min(len(g), len(w))):
                walk(g[i], w[i], f"{p}[{i}]")
            if len(g) != len(w):
                out.append(
                    f"{p}: {len(g)} items, want {len(w)} (extra/missing: {short(g[len(w) :] or w[len(g) :])})"
                )
        elif isinstance(g, str) and isinstance(w, str) and g != w and max(len(g), len(w)) > 300:
            at = next((i for i, (a, b) in enumerate(zip(g, w, strict=False)) if a != b), min(len(g), len(w)))
            lo = max(0, at - 60)
            out.append(
                f"{p}: strings differ at char {at} (of {len(g)} / {len(w)}): got ...{g[lo : at + 200]!r} "
                f"want ...{w[lo : at + 200]!r}"
            )
        elif g != w:
            out.append(f"{p}: got {short(g)} want {short(w)}")

    walk(got, want, path)
    return out


CWD_LENGTHS = {doc.get("cwd_length") for doc in SCENARIOS.values()}


@pytest.fixture
def partner_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    """A working dir whose path is as long as the recording's (the system prompt names the cwd, so
    its length moves the context estimate behind a window-clamped max_completion_tokens)."""
    (want,) = CWD_LENGTHS
    base = Path(tempfile.mkdtemp(prefix="pi-partner-"))
    room = int(want) - len(str(base)) - 1 if want else 4
    cwd = base / ("w" * room) if room >= 1 else tmp_path / "work"
    agent = tmp_path / "agent"
    cwd.mkdir()
    agent.mkdir()
    (agent / "models.json").write_text(json.dumps(cps.models_json(_server().base_url)))
    (agent / "settings.json").write_text(json.dumps(cps.SETTINGS))
    (agent / "SYSTEM.md").write_text(cps.SYSTEM_MD)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv(cps.API_KEY_ENV, cps.API_KEY)
    monkeypatch.chdir(cwd)
    yield {"cwd": cwd, "agent": agent, "root": tmp_path}
    shutil.rmtree(base, ignore_errors=True)


def _replay(name: str, index: int, dirs: dict[str, Path]) -> dict[str, Any]:
    """pi_nb doing step ``index`` of scenario ``name`` from its recorded file (memoised)."""
    if (name, index) in _REPLAYS:
        return _REPLAYS[(name, index)]
    doc = SCENARIOS[name]
    st = doc["steps"][index]
    for fname, content in doc["cwd_files"].items():
        (dirs["cwd"] / fname).write_text(content)
    paths = {str(dirs["cwd"]): "$CWD", str(dirs["agent"]): "$AGENT"}
    back = {v: k for k, v in paths.items()}
    session_dir = dirs["root"] / f"{name}-{index}"
    session_dir.mkdir()
    session_file = session_dir / "session.jsonl"
    if st["file_before"] is not None:
        session_file.write_text(cps.replace_strings(st["file_before"], back))
    step = {**st}
    if st["agent"] == "pi" and st.get("interrupt"):
        step["interrupt"] = "abort"  # pi_nb cannot be killed in-process: it aborts at the same point
    server = _server()
    server.begin(st.get("answers", []))
    model = cps.pi_nb_model(server.base_url)
    outcome = asyncio.run(cps.run_pi_nb_step(str(session_file), str(dirs["agent"]), step, model))
    after = Path(outcome.get("file") or session_file).read_text()
    ids = {cps.session_id_of(after): "<session-id>"}
    replay = {
        "outcome": outcome,
        "requests": [cps.comparable(r, {**paths, **ids}) for r in server.log],
        "raw_requests": list(server.log),
        "file_after": cps.replace_strings(after, paths),
    }
    _REPLAYS[(name, index)] = replay
    return replay


def _recorded_requests(run: dict[str, Any]) -> list[dict[str, Any]]:
    ids = {cps.session_id_of(run["file_after"]): "<session-id>"}
    return [cps.comparable(r, ids) for r in run["requests"]]


def _appended(before: str | None, after: str) -> list[Any]:
    n = len((before or "").splitlines())
    return cps.file_shapes(after)[n:] if before else cps.file_shapes(after)


def _report(title: str, diffs: list[str]) -> str:
    return title + "\n  " + "\n  ".join(diffs)


def _ids(steps: list[tuple[str, int]]) -> list[str]:
    return [f"{n}-{i}-{SCENARIOS[n]['steps'][i]['agent']}" for n, i in steps]


STEPS_WITH_PI = [(n, i) for n, i in STEPS if SCENARIOS[n]["steps"][i].get("pi")]


def test_recordings_exist() -> None:
    assert {
        "tools",
        "kill_sigterm",
        "kill_sigkill",
        "abort_pi_nb",
        "compaction",
        "branch",
        "error",
        "empty_result",
    } <= set(SCENARIOS)
    for doc in SCENARIOS.values():
        agents = {s["agent"] for s in doc["steps"]}
        assert agents == {"pi", "pi_nb"}, doc["scenario"]


def _tools_estimate(body: Any) -> int:
    """pi-ai's estimate of a request's tools: ceil(chars / 4) of ``JSON.stringify`` of the tools as
    Pi's agent holds them, ``{name, label, description, parameters}`` (what its max-token clamp
    counts; the built-in tools' label is their name)."""
    import math

    tools = [
        {
            "name": t["function"]["name"],
            "label": t["function"]["name"],
            "description": t["function"].get("description"),
            "parameters": t["function"]["parameters"],
        }
        for t in (body.get("tools") or [])
    ]
    if not tools:
        return 0
    text = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
    return math.ceil(len(text.encode("utf-16-le")) / 2 / 4)


def _clamp_from_prose(
    got: list[dict[str, Any]], got_raw: list[Any], want_raw: list[Any]
) -> list[dict[str, Any]]:
    """Where Pi clamped ``max_completion_tokens`` to the room left in the window (pi-ai's
    ``window - estimate - 4096``), pi_nb's estimate is larger or smaller by exactly the estimate of
    its tool descriptions (its own prose): such a value counts as Pi's. Any other value is kept."""
    out = []
    for i, request in enumerate(got):
        if i < len(want_raw) and i < len(got_raw):
            w, g = want_raw[i]["body"], got_raw[i]["body"]
            pi_value, nb_value = w.get("max_completion_tokens"), g.get("max_completion_tokens")
            if isinstance(pi_value, int) and isinstance(nb_value, int) and pi_value < cps.MAX_TOKENS:
                shift = _tools_estimate(g) - _tools_estimate(w)
                if shift and nb_value == pi_value - shift:
                    request = {**request, "body": {**request["body"], "max_completion_tokens": pi_value}}
        out.append(request)
    return out


@pytest.mark.parametrize(("name", "index"), STEPS_WITH_PI, ids=_ids(STEPS_WITH_PI))
def test_requests(name: str, index: int, partner_dirs: dict[str, Path]) -> None:
    """pi_nb's requests for a step equal Pi's for the same step from the same file."""
    st = SCENARIOS[name]["steps"][index]
    replay = _replay(name, index, partner_dirs)
    want = _recorded_requests(st["pi"])
    got = _clamp_from_prose(replay["requests"], replay["raw_requests"], st["pi"]["requests"])
    diffs = differences(got, want, "requests")
    assert not diffs, _report(
        f"{name} step {index} ({st['agent']}: {st.get('prompt')!r}): pi_nb's requests differ from Pi's", diffs
    )


def key_order(value: Any, path: str = "") -> list[str]:
    """Every object's key order in a JSON value, as ``path: k1,k2,...`` lines."""
    out: list[str] = []
    if isinstance(value, dict):
        out.append(f"{path}: {','.join(value)}")
        for k, v in value.items():
            out.extend(key_order(v, f"{path}.{k}"))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(key_order(v, f"{path}[{i}]"))
    return out


@pytest.mark.parametrize(("name", "index"), STEPS_WITH_PI, ids=_ids(STEPS_WITH_PI))
def test_request_key_order(name: str, index: int, partner_dirs: dict[str, Path]) -> None:
    """pi_nb's request bodies put their keys in Pi's order (the JSON text, not just its values)."""
    st = SCENARIOS[name]["steps"][index]
    got = [key_order(r["body"]) for r in _replay(name, index, partner_dirs)["requests"]]
    want = [key_order(r["body"]) for r in _recorded_requests(st["pi"])]
    diffs = [
        f"requests[{i}] {g} want {w}"
        for i, (gs, ws) in enumerate(zip(got, want, strict=False))
        for g, w in zip(gs, ws, strict=False)
        if g != w
    ][:12]
    assert not diffs, _report(f"{name} step {index} ({st['agent']}): key order differs from Pi's", diffs)


@pytest.mark.parametrize(("name", "index"), STEPS_WITH_PI, ids=_ids(STEPS_WITH_PI))
def test_entries(name: str, index: int, partner_dirs: dict[str, Path]) -> None:
    """The entries pi_nb appends have Pi's shape (a killed Pi's entries are a prefix of pi_nb's)."""
    st = SCENARIOS[name]["steps"][index]
    got = _appended(st["file_before"], _replay(name, index, partner_dirs)["file_after"])
    want = _appended(st["file_before"], st["pi"]["file_after"])
    if st.get("interrupt") in ("sigterm", "sigkill"):
        got = got[: len(want)]
    diffs = differences(got, want, "appended")
    assert not diffs, _report(
        f"{name} step {index} ({st['agent']}): pi_nb's appended entries differ from Pi's", diffs
    )


@pytest.mark.parametrize(("name", "index"), STEPS_WITH_PI, ids=_ids(STEPS_WITH_PI))
def test_entry_bytes(name: str, index: int, partner_dirs: dict[str, Path]) -> None:
    """The lines pi_nb appends are Pi's bytes (key order, spacing, escaping), ids and timestamps aside."""
    st = SCENARIOS[name]["steps"][index]
    n = len((st["file_before"] or "").splitlines())
    got = [cps.line_bytes(x) for x in _replay(name, index, partner_dirs)["file_after"].splitlines()[n:]]
    want = [cps.line_bytes(x) for x in st["pi"]["file_after"].splitlines()[n:]]
    if st.get("interrupt") in ("sigterm", "sigkill"):
        got = got[: len(want)]
    diffs = differences(got, want, "lines")
    assert not diffs, _report(
        f"{name} step {index} ({st['agent']}): pi_nb's appended lines differ from Pi's bytes", diffs
    )


@pytest.mark.parametrize("name", ["retry"])
def test_agent_retry_with_provider_retries_off(name: str, partner_dirs: dict[str, Path]) -> None:
    """The session's auto-retry on its own: with the SDK's retries off (Pi's
    ``retry.provider.maxRetries`` is 0), pi_nb's retry step appends what Pi's does and sends the
    same number of requests."""
    import cli_partner_script

    doc = SCENARIOS[name]
    index = next(i for i, s in enumerate(doc["steps"]) if s["agent"] == "pi_nb")
    st = doc["steps"][index]
    original = cli_partner_script.pi_nb_model

    def no_sdk_retries(base_url: str, transport: Any = None) -> Any:
        model = original(base_url, transport)
        model.max_retries = 0
        return model

    cli_partner_script.pi_nb_model = no_sdk_retries
    try:
        _REPLAYS.pop((name, index), None)
        replay = _replay(name, index, partner_dirs)
    finally:
        cli_partner_script.pi_nb_model = original
        _REPLAYS.pop((name, index), None)
    got = _appended(st["file_before"], replay["file_after"])
    want = _appended(st["file_before"], st["pi"]["file_after"])
    got_types = [(e.get("message") or {}).get("stopReason") for e in got]
    want_types = [(e.get("message") or {}).get("stopReason") for e in want]
    assert got_types == want_types == [None, "error", "stop"]
    assert [e["parentId"] for e in got] == [e["parentId"] for e in want]
    assert len(replay["requests"]) == len(st["pi"]["requests"]) == 2


PI_AFTER_PI_NB = [(n, i) for n, i in STEPS if SCENARIOS[n]["steps"][i].get("pi_on_pi_file")]


@pytest.mark.parametrize(("name", "index"), PI_AFTER_PI_NB, ids=_ids(PI_AFTER_PI_NB))
def test_pi_reads_pi_nb(name: str, index: int) -> None:
    """Pi continuing pi_nb's file sends and appends what it does continuing its own file."""
    st = SCENARIOS[name]["steps"][index]
    prev = SCENARIOS[name]["steps"][index - 1]
    own = st["pi_on_pi_file"]
    diffs = differences(_recorded_requests(st["pi"]), _recorded_requests(own), "requests")
    diffs += differences(
        _appended(st["file_before"], st["pi"]["file_after"]),
        _appended(prev["pi"]["file_after"] if prev.get("pi") else None, own["file_after"]),
        "appended",
    )
    assert not diffs, _report(f"{name} step {index}: Pi on pi_nb's file vs Pi on its own file", diffs)


PI_NB_STEPS = [(n, i) for n, i in STEPS if SCENARIOS[n]["steps"][i]["agent"] == "pi_nb"]


@pytest.mark.parametrize(("name", "index"), PI_NB_STEPS, ids=_ids(PI_NB_STEPS))
def test_recording_current(name: str, index: int, partner_dirs: dict[str, Path]) -> None:
    """pi_nb today does what the recorded pi_nb did (else: re-run make_cli_partner.py)."""
    st = SCENARIOS[name]["steps"][index]
    replay = _replay(name, index, partner_dirs)
    diffs = differences(replay["requests"], _recorded_requests(st["pi_nb"]), "requests")
    diffs += differences(
        _appended(st["file_before"], replay["file_after"]),
        _appended(st["file_before"], st["pi_nb"]["file_after"]),
        "appended",
    )
    assert not diffs, _report(f"{name} step {index}: pi_nb changed since the recording", diffs)


def test_differences_names_each_path() -> None:
    assert differences({"a": [1, 2], "b": 1}, {"a": [1, 3], "c": 1}) == [
        ".a[1]: got 2 want 3",
        ".b: extra 1",
        ".c: missing, want 1",
    ]
    assert differences([1], [1, 2]) == [": 1 items, want 2 (extra/missing: [2])"]
    assert differences({"x": 1}, {"x": 1}) == []
