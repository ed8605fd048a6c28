"""Record Pi 0.85.0's ``buildSystemPrompt`` into tests/golden/system_prompt.json.

Run by hand when cases change (needs ../shared/pi-oracle installed):

    .venv/bin/python tests/golden/make_system_prompt.py

Every case is one generated option set sent to the oracle with ``PI_PACKAGE_DIR=/opt/pi`` (fixed
doc paths). The custom-prompt path must be byte-equal in pi_nb; on the default path the test swaps
Pi's intro sentence and documentation block (recorded once in ``piProse``) for pi_nb's and then
requires byte equality. ``toolDefaults`` cases let Pi fill snippets/guidelines from its real tool
definitions (what the session does); ``toolInfo`` pins the built-in snippet/guideline texts.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1].parent / "shared" / "pi-oracle"))

from oracle_client import Oracle  # noqa: E402

OUT = HERE / "system_prompt.json"
ENV = {"PI_PACKAGE_DIR": "/opt/pi"}
N_CUSTOM = 320
N_DEFAULT = 320

TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls", "powershell", "dynamic_tool", "my-tool"]
SNIPPETS = {
    "read": "Read file contents",
    "bash": "Execute bash commands (ls, grep, find, etc.)",
    "edit": "Make precise file edits with exact text replacement, including multiple disjoint edits in one call",
    "write": "Create or overwrite files",
    "grep": "Search file contents for patterns (respects .gitignore)",
    "find": "Find files by glob pattern (respects .gitignore)",
    "ls": "List directory contents",
    "powershell": "Run PowerShell commands",
    "dynamic_tool": "Run dynamic test behavior",
    "my-tool": "A snippet\nwith a line break",
}
GUIDELINES = [
    "Use dynamic_tool for project summaries.",
    "  Use dynamic_tool for project summaries.  ",
    "Use dynamic_tool for project summaries.\n",
    "",
    "   ",
    "Be concise in your responses",
    "Use bash for file operations like ls, rg, find",
    "Show file paths clearly when working with files",
    "Use read to examine files instead of cat or sed.",
    "\ufeffBOM-wrapped guideline\ufeff",
    "\x1cnot JS whitespace\x1c",
    "\u00a0nbsp-wrapped\u00a0",
    "multi\nline guideline",
    'é😀 unicode <tag> & "quotes"',
]
CWDS = ["/home/u/proj", "C:\\x\\y", "/tmp/with space/é", "relative/dir", "\\\\server\\share\\p", "/", ""]
CUSTOM_PROMPTS = [
    "CUSTOM",
    "You are a helpful assistant.\n",
    "Line one\n\nLine two\n\n",
    "  leading and trailing spaces  ",
    "é😀 <xml> & stuff",
    "# SYSTEM.md\n\nFollow the rules.",
]
APPENDS = [None, "", "APPENDED", "Appended\nacross lines\n", "A\n\nB"]


def rand_context_files(rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.35:
        return []
    return [
        {
            "path": rng.choice(
                ["/p/AGENTS.md", "/home/u/.pi/agent/AGENTS.md", "C:\\p\\CLAUDE.md", '/q/"quoted"/AGENTS.md']
            ),
            "content": rng.choice(["Rule 1", "", "Multi\nline\n", "<xml> & stuff", "trailing newline\n\n"]),
        }
        for _ in range(rng.randint(1, 3))
    ]


def rand_skills(rng: random.Random) -> Any:
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.35:
        return []
    return [
        {
            "name": rng.choice(["pdf", "data-viz", "a&b", "<x>"]),
            "description": rng.choice(
                ["Process PDFs.", "Uses <tags> & \"quotes\" 'here'", "multi\nline", ""]
            ),
            "filePath": rng.choice(["/s/pdf/SKILL.md", "/s/x.md", "C:\\s\\SKILL.md"]),
            "baseDir": "/s/pdf",
            "disableModelInvocation": rng.random() < 0.25,
        }
        for _ in range(rng.randint(1, 3))
    ]


def rand_options(rng: random.Random, custom: bool) -> dict[str, Any]:
    opts: dict[str, Any] = {"cwd": rng.choice(CWDS)}
    if custom:
        opts["customPrompt"] = rng.choice(CUSTOM_PROMPTS)
    elif rng.random() < 0.2:
        opts["customPrompt"] = ""
    r = rng.random()
    if r < 0.15:
        pass  # undefined: Pi's default tools
    elif r < 0.25:
        opts["selectedTools"] = []
    else:
        opts["selectedTools"] = rng.sample(TOOLS, k=rng.randint(1, 6))
    r = rng.random()
    if r < 0.2:
        pass
    elif r < 0.3:
        opts["toolSnippets"] = {}
    else:
        names = rng.sample(TOOLS, k=rng.randint(1, len(TOOLS)))
        opts["toolSnippets"] = {n: (SNIPPETS[n] if rng.random() < 0.9 else "") for n in names}
    r = rng.random()
    if r < 0.25:
        pass
    elif r < 0.35:
        opts["promptGuidelines"] = []
    else:
        opts["promptGuidelines"] = [rng.choice(GUIDELINES) for _ in range(rng.randint(1, 6))]
    append = rng.choice(APPENDS)
    if append is not None:
        opts["appendSystemPrompt"] = append
    files = rand_context_files(rng)
    if files is not None:
        opts["contextFiles"] = files
    skills = rand_skills(rng)
    if skills is not None:
        opts["skills"] = skills
    return opts


def main() -> None:
    rng = random.Random(20260906)
    cases: list[dict[str, Any]] = []
    with Oracle() as o:
        intro_probe = o.call("buildSystemPrompt", options={"cwd": "/x", "selectedTools": []}, env=ENV)
        intro = intro_probe.split("\n\n", 1)[0]
        docs = intro_probe.split("Show file paths clearly when working with files\n\n", 1)[1].split(
            "\nCurrent working directory: /x", 1
        )[0]
        tool_info = o.call(
            "toolInfo",
            names=["read", "bash", "edit", "write", "grep", "find", "ls", "powershell"],
            cwd="/tmp",
        )
        tool_info = {
            name: {"promptSnippet": t.get("promptSnippet"), "promptGuidelines": t.get("promptGuidelines")}
            for name, t in tool_info.items()
        }

        def record(name: str, path: str, args: dict[str, Any]) -> None:
            cases.append(
                {
                    "name": name,
                    "path": path,
                    "args": args,
                    "response": o.request("buildSystemPrompt", args, env=ENV),
                }
            )

        # the §11.4 / §12 vectors first
        record("spec: selectedTools []", "default", {"options": {"cwd": "/home/u/proj", "selectedTools": []}})
        record(
            "spec: full default",
            "default",
            {
                "options": {
                    "cwd": "/home/u/proj",
                    "selectedTools": ["read", "bash", "edit", "write"],
                    "toolSnippets": {k: SNIPPETS[k] for k in ("read", "bash", "edit", "write")},
                    "promptGuidelines": ["Use read to examine files instead of cat or sed."],
                    "appendSystemPrompt": "APPENDED",
                    "contextFiles": [{"path": "/p/AGENTS.md", "content": "Rule 1"}],
                    "skills": [
                        {
                            "name": "s",
                            "description": "d",
                            "filePath": "/s/SKILL.md",
                            "baseDir": "/s",
                            "disableModelInvocation": False,
                        }
                    ],
                }
            },
        )
        record(
            "spec: custom C:",
            "custom",
            {"options": {"cwd": "C:\\x\\y", "customPrompt": "CUSTOM", "selectedTools": []}},
        )
        record(
            "spec: bash-only skills",
            "custom",
            {
                "options": {
                    "cwd": "/w",
                    "customPrompt": "C",
                    "selectedTools": ["bash"],
                    "skills": [
                        {
                            "name": "s",
                            "description": "d",
                            "filePath": "/s/SKILL.md",
                            "baseDir": "/s",
                            "disableModelInvocation": False,
                        }
                    ],
                }
            },
        )
        record(
            "spec: no reader, no skills",
            "custom",
            {
                "options": {
                    "cwd": "/w",
                    "customPrompt": "C",
                    "selectedTools": ["edit"],
                    "skills": [
                        {
                            "name": "s",
                            "description": "d",
                            "filePath": "/s/SKILL.md",
                            "baseDir": "/s",
                            "disableModelInvocation": False,
                        }
                    ],
                }
            },
        )
        for tools in (
            ["read", "dynamic_tool"],
            ["bash", "powershell"],
            ["powershell"],
            ["bash", "grep"],
            ["powershell", "ls"],
        ):
            record(
                f"spec: tools {tools}",
                "default",
                {
                    "options": {
                        "cwd": "/w",
                        "selectedTools": tools,
                        "toolSnippets": {"dynamic_tool": "Run dynamic test behavior"},
                    }
                },
            )
        for i in range(N_CUSTOM):
            record(
                f"custom-{i}",
                "custom",
                {
                    "options": rand_options(rng, custom=True),
                    **({"toolDefaults": True} if rng.random() < 0.15 else {}),
                },
            )
        for i in range(N_DEFAULT):
            record(
                f"default-{i}",
                "default",
                {
                    "options": rand_options(rng, custom=False),
                    **({"toolDefaults": True} if rng.random() < 0.3 else {}),
                },
            )

    header = {
        "source": "Pi 0.85.0 via pi-oracle (buildSystemPrompt, env PI_PACKAGE_DIR=/opt/pi)",
        "generator": "tests/golden/make_system_prompt.py",
        "piProse": {"intro": intro, "docs": docs},
        "toolInfo": tool_info,
    }
    lines = ",\n".join(json.dumps(c, ensure_ascii=False, separators=(",", ":")) for c in cases)
    body = json.dumps(header, ensure_ascii=False, separators=(",", ":"))[:-1]
    OUT.write_text(f'{body},"cases":[\n{lines}\n]}}\n', encoding="utf-8")
    print(f"wrote {OUT} ({len(cases)} cases, {OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
