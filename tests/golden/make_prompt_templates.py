"""Record Pi 0.85.0's prompt-template behaviour into tests/golden/prompt_templates.json.

pi-oracle does not expose prompt templates, so this calls the real functions of the oracle's
install directly (tests/golden/_pi_direct.mjs): ``parseCommandArgs``, ``substituteArgs``,
``expandPromptTemplate``, ``loadPromptTemplates`` (root exports of core/prompt-templates.js) and
the package manager's ``collectAutoPromptEntries``. Run by hand when cases change:

    .venv/bin/python tests/golden/make_prompt_templates.py

Absolute paths of the temporary trees are recorded as ``<ROOT>``.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1].parent / "shared" / "pi-oracle"))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _fs_tree import mask, materialize  # noqa: E402
from make_skills import pi_direct  # noqa: E402

sys.path.insert(0, str(HERE.parents[1]))
from pi_nb._js import js_stringify  # noqa: E402

OUT = HERE / "prompt_templates.json"

ARG_ATOMS = [
    "a",
    "bc",
    '"',
    "'",
    " ",
    "  ",
    "\t",
    "\n",
    "\u00a0",
    "\u3000",
    "\ufeff",
    "😀",
    "é",
    "\\",
    "$1",
    "x y",
    "-f",
    "--opt=1",
]
TEMPLATE_ATOMS = [
    "text ",
    "$1",
    "$2",
    "$3",
    "$0",
    "$10",
    "$@",
    "$ARGUMENTS",
    "${1:-one}",
    "${2:-}",
    "${3:-x y}",
    "${@:-none}",
    "${ARGUMENTS:-empty}",
    "${@:2}",
    "${@:0}",
    "${@:1:2}",
    "${@:3:0}",
    "${@:2:10}",
    "$",
    "${",
    "}",
    "$$1",
    "${x}",
    "$A",
    "$ARGS",
    "${1:-a}b}",
    "${1:-multi\nline}",
    "\n",
    "😀",
]

CURATED_ARGS = [
    "",
    "one two three",
    '"quoted arg" plain',
    "'single quoted' \"double\"",
    'a"b c"d',
    '"unclosed quote runs on',
    "''",
    '""',
    "  spaced   out  ",
    "tab\tsep\nnewline",
    "nbsp\u00a0sep",
    "don't",
    '"it\'s" \'say "hi"\'',
]

CURATED_TEMPLATES = [
    "Review $1 with focus on $2",
    "All: $@ | $ARGUMENTS",
    "Default: ${1:-none} and ${2:-fallback}",
    "Slice: ${@:2} / ${@:1:1} / ${@:0}",
    "No placeholders",
    "$1$1$1",
    "Literal $ sign and ${unknown}",
    "Args are not re-expanded: $1",
]


def random_prompt_file(rng: random.Random) -> str:
    fm = []
    r = rng.random()
    if r < 0.4:
        fm.append(
            "description: "
            + rng.choice(["Review code", "'quoted: desc'", "123", "''", "[a, b]", "false", "{}"])
        )
    if rng.random() < 0.3:
        fm.append("argument-hint: " + rng.choice(["<file> [focus]", "''", "0", "true", "[x]"]))
    if rng.random() < 0.08:
        fm.append("broken: [unclosed")
    body = rng.choice(
        [
            "Review $1 carefully.\n\nFocus: ${2:-everything}",
            "\n\n   \nFirst non-empty line after blanks\nsecond",
            "x" * 59,
            "y" * 60,
            "z" * 61,
            "😀" * 30 + "tail",
            "a" * 59 + "😀" + "rest",
            "",
            "   ",
            "All args: $@",
        ]
    )
    if fm or rng.random() < 0.5:
        text = "---\n" + "\n".join(fm) + "\n---\n" + body
    else:
        text = body
    if rng.random() < 0.1:
        text = "\ufeff" + text.replace("\n", "\r\n")
    return text


PROMPT_NAMES = [
    "review.md",
    "fix.md",
    "Explain.md",
    ".hidden.md",
    "notes.txt",
    "two words.md",
    "a.md.md",
    "review.MD",
]


def random_prompt_tree(rng: random.Random) -> list[list[Any]]:
    spec: list[list[Any]] = []
    used: set[str] = set()
    for _ in range(rng.randint(1, 6)):
        name = rng.choice(PROMPT_NAMES)
        if name in used:
            continue
        used.add(name)
        spec.append(["f", name, random_prompt_file(rng) if name.endswith((".md", ".MD")) else "text\n"])
    if rng.random() < 0.4:
        spec.append(["f", "nested/deep.md", random_prompt_file(rng)])
    if rng.random() < 0.3:
        spec.append(["d", "dir.md", None])
    if rng.random() < 0.3:
        spec.append(["f", "node_modules/x.md", "---\ndescription: dep\n---\nbody"])
    if rng.random() < 0.3:
        files = [e[1] for e in spec if e[0] == "f" and "/" not in e[1]]
        spec.append(["l", "link.md", rng.choice(files) if files and rng.random() < 0.7 else "missing.md"])
    if rng.random() < 0.35:
        pats = [
            rng.choice(
                [
                    "review.md",
                    "REVIEW.MD",
                    "*.txt",
                    "!fix.md",
                    "f*",
                    "/explain.md",
                    "# c",
                    "nested/",
                    "link.md",
                ]
            )
            for _ in range(rng.randint(1, 3))
        ]
        spec.append(["f", rng.choice([".gitignore", ".ignore", ".fdignore"]), "\n".join(pats) + "\n"])
    return spec


def main() -> None:
    rng = random.Random(20260905)
    requests: list[dict[str, Any]] = []
    for s in CURATED_ARGS:
        requests.append({"fn": "parseCommandArgs", "args": {"argsString": s}})
    for _ in range(250):
        s = "".join(rng.choice(ARG_ATOMS) for _ in range(rng.randint(0, 10)))
        requests.append({"fn": "parseCommandArgs", "args": {"argsString": s}})
    arg_lists = [[], ["a"], ["a", "b"], ["one", "", "three"], ["x y", "z"], ["😀", "é", "c", "d"]]
    for t in CURATED_TEMPLATES:
        for args in arg_lists:
            requests.append({"fn": "substituteArgs", "args": {"content": t, "args": args}})
    for _ in range(250):
        t = "".join(rng.choice(TEMPLATE_ATOMS) for _ in range(rng.randint(0, 8)))
        args = [rng.choice(["a", "", "b c", "$1", "${@}", "😀"]) for _ in range(rng.randint(0, 4))]
        requests.append({"fn": "substituteArgs", "args": {"content": t, "args": args}})
    templates = [
        {"name": "review", "description": "r", "content": "Review $1 (focus: ${2:-all}); args: $@"},
        {"name": "review", "description": "second", "content": "SHADOWED $@"},
        {"name": "fix", "description": "f", "content": "Fix: $ARGUMENTS"},
        {"name": "a.b", "description": "", "content": "dotted $1"},
        {"name": "skill:x", "description": "", "content": "not a skill $1"},
        {"name": "😀", "description": "", "content": "emoji ${@:2}"},
    ]
    texts = [
        "/review src/app.ts security",
        "/review",
        "/review   ",
        "/review\tfile",
        "/review\nnext line args",
        '/review "a b" c',
        "/fix",
        "/fix one two",
        "/unknown args",
        "review no slash",
        " /review leading space",
        "/",
        "/ review",
        "//review",
        "/a.b x",
        "/skill:x y",
        "/😀 a b c",
        "/review\u00a0nbsp",
        "/fix\u3000ideographic",
    ]
    for text in texts:
        requests.append({"fn": "expandPromptTemplate", "args": {"text": text, "templates": templates}})
    for _ in range(60):
        text = (
            "/"
            + rng.choice(["review", "fix", "a.b", "nope", "😀"])
            + "".join(rng.choice(ARG_ATOMS) for _ in range(rng.randint(0, 6)))
        )
        requests.append({"fn": "expandPromptTemplate", "args": {"text": text, "templates": templates}})

    cases: list[dict[str, Any]] = [
        {"section": "functions", "name": f"{r['fn']}-{i}", "fn": r["fn"], "args": r["args"], "response": resp}
        for i, (r, resp) in enumerate(zip(requests, pi_direct(requests), strict=True))
    ]

    for t in range(36):
        trng = random.Random(9000 + t)
        with tempfile.TemporaryDirectory(prefix="pinb-prompts-") as tmp:
            root = os.path.realpath(tmp)
            specs = {
                "agent/prompts": random_prompt_tree(trng),
                "proj/.pi/prompts": random_prompt_tree(trng),
                "extra": random_prompt_tree(trng),
            }
            specs = {rel: spec for rel, spec in specs.items() if trng.random() < 0.9}
            for rel, spec in specs.items():
                materialize(os.path.join(root, rel), spec)
            candidates = [
                os.path.join(root, "extra"),
                "../extra",
                "  ../extra  ",
                os.path.join(root, "extra", "review.md"),
                os.path.join(root, "extra", "notes.txt"),
                os.path.join(root, "missing"),
                os.path.join(root, "agent", "prompts"),
                os.path.join(root, "proj", ".pi", "prompts", "fix.md"),
            ]
            options = {
                "cwd": os.path.join(root, "proj"),
                "agentDir": os.path.join(root, "agent"),
                "promptPaths": trng.sample(candidates, k=trng.randint(0, 4)),
                "includeDefaults": trng.random() < 0.7,
            }
            reqs = [{"fn": "loadPromptTemplates", "args": {"options": options}}] + [
                {"fn": "collectAutoPromptEntries", "args": {"dir": os.path.join(root, rel)}}
                for rel in ("agent/prompts", "proj/.pi/prompts", "extra")
            ]
            calls = [{**r, "response": resp} for r, resp in zip(reqs, pi_direct(reqs), strict=True)]
            cases.append(
                {"section": "trees", "name": f"prompt-tree-{t}", "specs": specs, "calls": mask(calls, root)}
            )

    # js_stringify: compact, and escapes lone surrogates (a 60-unit cut can split an emoji)
    lines = ",\n".join(js_stringify(c) for c in cases)
    OUT.write_text(
        '{"source":"Pi 0.85.0 dist from the pi-oracle install via tests/golden/_pi_direct.mjs",'
        f'"generator":"tests/golden/make_prompt_templates.py","cases":[\n{lines}\n]}}\n',
        encoding="utf-8",
    )
    print(f"wrote {OUT} ({len(cases)} cases, {OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
