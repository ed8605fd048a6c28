"""Record Pi 0.85.0's ``loadProjectContextFiles(cwd, agentDir)`` on generated directory trees.

    .venv/bin/python tests/golden/make_context_files.py        # writes tests/golden/context_files.json

Each case is a *tree description* (so the test can rebuild the same tree without Node), the
``cwd`` / ``agentDir`` arguments and Pi's answer, one case per line. Paths under the scratch
directory are written as ``{ROOT}``. A tree entry is ``[kind, relpath, payload]``:

* ``"d"`` directory; ``"f"`` file with UTF-8 text (``{ROOT}`` is substituted, for ``gitdir:``
  lines); ``"b"`` file with base64 bytes; ``"l"`` symlink to ``payload`` (``{ROOT}`` substituted);
  ``"p"`` a FIFO.

``env`` (optional) is extra environment for the call (``HOME`` for ``~`` cases), also with
``{ROOT}``. Answers outside ``{ROOT}`` (a context file in ``/`` or ``/tmp`` on the recording
machine) would make the fixture machine-dependent, so the recorder refuses them.

The tree builder lives here and is imported by tests/test_context_files.py.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "context_files.json"
ROOT = "{ROOT}"

Tree = list[list[str]]


def sub_root(text: str, root: str) -> str:
    return text.replace(ROOT, root)


def build_tree(root: str, tree: Tree) -> None:
    """Create *tree* under *root* (an existing, empty directory)."""
    for entry in tree:
        kind, rel = entry[0], entry[1]
        payload = entry[2] if len(entry) > 2 else ""
        path = os.path.join(root, rel)
        parent = os.path.dirname(path)
        if kind != "d":
            os.makedirs(parent, exist_ok=True)
        if kind == "d":
            os.makedirs(path, exist_ok=True)
        elif kind == "f":
            with open(path, "wb") as f:
                f.write(sub_root(payload, root).encode("utf-8"))
        elif kind == "b":
            with open(path, "wb") as f:
                f.write(base64.b64decode(payload))
        elif kind == "l":
            os.symlink(sub_root(payload, root), path)
        elif kind == "p":
            os.mkfifo(path)
        else:  # pragma: no cover - a typo in a case
            raise ValueError(f"unknown tree entry kind {kind!r}")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


# ---------------------------------------------------------------------------------------------
# cases

CANDIDATES = ["AGENTS.override.md", "AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"]


def worktree_link(
    main: str, worktree: str, name: str, *, commondir: str = "../..", gitdir: str | None = None
) -> Tree:
    """Pi's test helper ``linkWorktree``: a ``.git/worktrees/<name>`` skeleton + a ``.git`` file."""
    git_dir = f"{main}/.git/worktrees/{name}"
    return [
        ["f", f"{main}/.git/HEAD", "ref: refs/heads/main\n"],
        ["f", f"{git_dir}/HEAD", "ref: refs/heads/feat\n"],
        ["f", f"{git_dir}/commondir", commondir],
        ["f", f"{worktree}/.git", f"gitdir: {gitdir if gitdir is not None else ROOT + '/' + git_dir}\n"],
    ]


def cases() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(
        name: str, tree: Tree, cwd: str, agent_dir: str = f"{ROOT}/agent", env: dict[str, str] | None = None
    ):
        case: dict[str, Any] = {"name": name, "tree": tree, "cwd": cwd, "agentDir": agent_dir}
        if env:
            case["env"] = env
        out.append(case)

    P = f"{ROOT}/proj"
    # --- every candidate alone, in cwd and in the agent dir
    for c in CANDIDATES:
        add(f"cwd-only-{c}", [["f", f"proj/{c}", f"from {c}\n"]], P)
        add(f"global-only-{c}", [["d", "proj"], ["f", f"agent/{c}", f"global {c}\n"]], P)
    # --- priority inside one directory: every pair (first in candidate order wins)
    for i, a in enumerate(CANDIDATES):
        for b in CANDIDATES[i + 1 :]:
            add(f"pair-{a}-{b}", [["f", f"proj/{a}", f"A {a}"], ["f", f"proj/{b}", f"B {b}"]], P)
    add("all-five", [["f", f"proj/{c}", c] for c in CANDIDATES], P)
    add("all-five-global", [["d", "proj"]] + [["f", f"agent/{c}", "g " + c] for c in CANDIDATES], P)
    # --- names that are not candidates
    add(
        "not-candidates",
        [
            ["f", "proj/agents.md", "lower"],
            ["f", "proj/Agents.md", "title"],
            ["f", "proj/claude.md", "lower claude"],
            ["f", "proj/AGENTS.override.MD", "upper ext"],
            ["f", "proj/AGENTS.md.bak", "bak"],
        ],
        P,
    )
    # --- directories named like candidates are skipped silently
    add(
        "dir-candidates-then-claude",
        [
            ["d", "proj/AGENTS.override.md"],
            ["d", "proj/AGENTS.md"],
            ["f", "proj/CLAUDE.md", "Fallback instructions"],
        ],
        P,
    )
    add("all-candidates-dirs", [["d", f"proj/{c}"] for c in CANDIDATES], P)
    add("global-dir-candidate", [["d", "proj"], ["d", "agent/AGENTS.md"], ["f", "agent/CLAUDE.MD", "g"]], P)
    # --- symlinks and special files
    add(
        "symlink-to-file",
        [
            ["f", "elsewhere/rules.txt", "linked rules"],
            ["l", "proj/AGENTS.md", f"{ROOT}/elsewhere/rules.txt"],
        ],
        P,
    )
    add(
        "broken-symlink-falls-through",
        [["l", "proj/AGENTS.md", f"{ROOT}/nowhere.md"], ["f", "proj/CLAUDE.md", "claude after broken link"]],
        P,
    )
    add(
        "symlink-to-dir-skipped",
        [["d", "somedir"], ["l", "proj/AGENTS.md", f"{ROOT}/somedir"], ["f", "proj/AGENTS.MD", "upper"]],
        P,
    )
    add("fifo-skipped", [["p", "proj/AGENTS.override.md"], ["f", "proj/AGENTS.md", "after fifo"]], P)
    # --- encodings
    add("bom", [["b", "proj/AGENTS.md", b64(b"\xef\xbb\xbfwith bom\n")]], P)
    add("double-bom", [["b", "proj/AGENTS.md", b64(b"\xef\xbb\xbf\xef\xbb\xbftwo boms")]], P)
    add("bom-only", [["b", "proj/AGENTS.md", b64(b"\xef\xbb\xbf")]], P)
    add(
        "bom-global-and-cwd",
        [["b", "agent/AGENTS.md", b64(b"\xef\xbb\xbfg")], ["b", "proj/CLAUDE.md", b64(b"\xef\xbb\xbfc")]],
        P,
    )
    add("empty-file", [["f", "proj/AGENTS.md", ""], ["f", "proj/CLAUDE.md", "not reached"]], P)
    add("crlf", [["f", "proj/AGENTS.md", "line one\r\nline two\r\n"]], P)
    add("utf16-bom-not-stripped", [["b", "proj/AGENTS.md", b64(b"\xff\xfeh\x00i\x00")]], P)
    add("mid-bom-kept", [["b", "proj/AGENTS.md", b64(b"a\xef\xbb\xbfb")]], P)
    add("astral-and-combining", [["f", "proj/AGENTS.md", "emoji 😀 e\u0301 漢字 \u2028 end"]], P)
    add(
        "invalid-utf8",
        [
            [
                "b",
                "proj/AGENTS.md",
                b64(
                    b"ok \xff \xc0\xaf \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 \x80\x80 \xf0\x9f\x98 end \xe2"
                ),
            ]
        ],
        P,
    )
    # --- hierarchy: root first, cwd last, one per directory, global first
    add(
        "override-layering",
        [
            ["f", "agent/AGENTS.md", "global instructions"],
            ["f", "agent/AGENTS.override.md", "global override"],
            ["f", "project/AGENTS.md", "project instructions"],
            ["f", "project/service/AGENTS.md", "service instructions"],
            ["f", "project/service/AGENTS.override.md", "service override"],
        ],
        f"{ROOT}/project/service",
    )
    add(
        "deep-chain-with-gaps",
        [
            ["f", "AGENTS.md", "root of scratch"],
            ["f", "a/CLAUDE.md", "a"],
            ["d", "a/b"],
            ["f", "a/b/c/AGENTS.MD", "c"],
            ["d", "a/b/c/d"],
            ["f", "a/b/c/d/e/AGENTS.override.md", "e"],
            ["f", "agent/CLAUDE.MD", "global"],
        ],
        f"{ROOT}/a/b/c/d/e",
    )
    add("no-files-anywhere", [["d", "proj/sub"], ["d", "agent"]], f"{P}/sub")
    add("agent-dir-missing", [["f", "proj/AGENTS.md", "p"]], P, f"{ROOT}/no-such-agent")
    add("cwd-missing-dir", [["f", "proj/AGENTS.md", "parent of missing"]], f"{P}/not/created")
    add(
        "global-dir-inside-cwd",
        [["f", "proj/.pi/agent/AGENTS.md", "global inside cwd"], ["f", "proj/AGENTS.md", "project"]],
        P,
        f"{P}/.pi/agent",
    )
    add(
        "cwd-inside-agent-dir",
        [["f", "agent/AGENTS.md", "global"], ["f", "agent/work/AGENTS.md", "work"]],
        f"{ROOT}/agent/work",
    )
    add("cwd-equals-agent-dir", [["f", "agent/AGENTS.md", "same dir"]], f"{ROOT}/agent", f"{ROOT}/agent")
    add(
        "agent-dir-is-ancestor",
        [["f", "AGENTS.md", "scratch root"], ["f", "proj/AGENTS.md", "proj"]],
        P,
        ROOT,
    )
    add(
        "agent-dir-via-symlink-not-deduped",
        [
            ["f", "real-agent/AGENTS.md", "global"],
            ["l", "proj/agent-link", f"{ROOT}/real-agent"],
            ["d", "proj/x"],
        ],
        f"{ROOT}/real-agent",
        f"{P}/agent-link",
    )
    # --- path spellings
    add("cwd-trailing-slash", [["f", "proj/AGENTS.md", "p"], ["f", "proj/sub/AGENTS.md", "s"]], f"{P}/sub/")
    add(
        "cwd-dotdot",
        [["f", "proj/AGENTS.md", "p"], ["f", "proj/sub/AGENTS.md", "s"], ["d", "proj/other"]],
        f"{P}/other/../sub",
    )
    add("cwd-double-slash", [["f", "proj/AGENTS.md", "p"], ["f", "proj/sub/AGENTS.md", "s"]], f"{P}//sub")
    add("cwd-dot-segments", [["f", "proj/AGENTS.md", "p"]], f"{P}/./././")
    add("agent-dir-trailing-slash", [["f", "agent/AGENTS.md", "g"], ["d", "proj"]], P, f"{ROOT}/agent/")
    add(
        "cwd-through-symlink",
        [["f", "real/AGENTS.md", "real"], ["f", "real/sub/CLAUDE.md", "sub"], ["l", "link", f"{ROOT}/real"]],
        f"{ROOT}/link/sub",
    )
    add(
        "tilde-agent-dir",
        [["f", "home/.pi/agent/AGENTS.md", "home global"], ["f", "proj/AGENTS.md", "p"]],
        P,
        "~/.pi/agent",
        env={"HOME": f"{ROOT}/home"},
    )
    add(
        "tilde-cwd",
        [["f", "home/AGENTS.md", "home file"], ["f", "home/code/AGENTS.md", "code"]],
        "~/code",
        env={"HOME": f"{ROOT}/home"},
    )
    add("file-url-cwd", [["f", "proj/AGENTS.md", "url"]], f"file://{P}")

    # --- linked worktrees (Pi's tests, then variations)
    O = "outer"
    M = f"{O}/main"
    W = f"{M}/worktrees/feat"
    nested = worktree_link(M, W, "feat") + [["d", f"{W}/src"]]
    add(
        "wt-main-and-worktree-same-name",
        nested
        + [
            ["f", f"{M}/AGENTS.md", "main repo instructions"],
            ["f", f"{W}/AGENTS.md", "worktree instructions"],
        ],
        f"{ROOT}/{W}/src",
    )
    add("wt-only-main", nested + [["f", f"{M}/AGENTS.md", "main repo instructions"]], f"{ROOT}/{W}/src")
    add(
        "wt-different-names",
        nested
        + [
            ["f", f"{M}/CLAUDE.md", "main repo instructions"],
            ["f", f"{W}/AGENTS.md", "worktree instructions"],
        ],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-ancestor-above-main",
        nested
        + [
            ["f", f"{O}/AGENTS.md", "outer instructions"],
            ["f", f"{M}/AGENTS.md", "main repo instructions"],
            ["f", f"{W}/AGENTS.md", "worktree instructions"],
        ],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-bare-layout",
        [
            ["f", "proj/.bare/HEAD", "ref: refs/heads/main\n"],
            ["f", "proj/.bare/worktrees/main/HEAD", "ref: refs/heads/main\n"],
            ["f", "proj/.bare/worktrees/main/commondir", "../.."],
            ["f", "proj/main/.git", f"gitdir: {ROOT}/proj/.bare/worktrees/main\n"],
            ["f", "proj/AGENTS.md", "container instructions"],
            ["f", "proj/main/AGENTS.md", "worktree instructions"],
        ],
        f"{ROOT}/proj/main",
    )
    add(
        "wt-sibling",
        worktree_link(M, f"{O}/sib-feat", "sib")
        + [
            ["d", f"{O}/sib-feat/src"],
            ["f", f"{O}/AGENTS.md", "outer instructions"],
            ["f", f"{O}/sib-feat/AGENTS.md", "sibling worktree instructions"],
        ],
        f"{ROOT}/{O}/sib-feat/src",
    )
    add(
        "wt-submodule",
        [
            ["f", "super/AGENTS.md", "superproject instructions"],
            ["f", "super/vendor/lib/AGENTS.md", "submodule instructions"],
            ["d", "super/vendor/lib/src"],
            ["f", "super/.git/modules/vendor/lib/HEAD", "ref: refs/heads/main\n"],
            ["f", "super/vendor/lib/.git", f"gitdir: {ROOT}/super/.git/modules/vendor/lib\n"],
        ],
        f"{ROOT}/super/vendor/lib/src",
    )
    add(
        "wt-ordinary-repo",
        [
            ["f", "outer/repo/.git/HEAD", "ref: refs/heads/main\n"],
            ["f", "outer/AGENTS.md", "outer instructions"],
            ["f", "outer/repo/AGENTS.md", "repo instructions"],
            ["f", "outer/repo/src/AGENTS.md", "leaf instructions"],
        ],
        f"{ROOT}/outer/repo/src",
    )
    add(
        "wt-dangling-gitdir",
        [
            ["f", "corrupt/.git", f"gitdir: {ROOT}/corrupt/.git-missing/worktrees/x\n"],
            ["f", "corrupt/AGENTS.md", "repo instructions"],
            ["f", "corrupt/src/AGENTS.md", "src instructions"],
        ],
        f"{ROOT}/corrupt/src",
    )
    # variations
    add(
        "wt-cwd-is-worktree-root",
        nested + [["f", f"{M}/AGENTS.md", "main"], ["f", f"{W}/AGENTS.md", "worktree"]],
        f"{ROOT}/{W}",
    )
    add(
        "wt-relative-gitdir",
        worktree_link(M, W, "feat", gitdir="../../.git/worktrees/feat")
        + [["d", f"{W}/src"], ["f", f"{M}/AGENTS.md", "main"], ["f", f"{W}/AGENTS.md", "worktree"]],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-gitdir-crlf-and-spaces",
        [
            ["f", f"{M}/.git/HEAD", "ref: refs/heads/main\n"],
            ["f", f"{M}/.git/worktrees/feat/HEAD", "x"],
            ["f", f"{M}/.git/worktrees/feat/commondir", "  ../..\r\n"],
            ["f", f"{W}/.git", f"  gitdir:   {ROOT}/{M}/.git/worktrees/feat  \r\n\r\n"],
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
        ],
        f"{ROOT}/{W}",
    )
    add(
        "wt-gitfile-with-bom",
        [
            ["f", f"{M}/.git/HEAD", "ref: refs/heads/main\n"],
            ["f", f"{M}/.git/worktrees/feat/HEAD", "x"],
            ["f", f"{M}/.git/worktrees/feat/commondir", "../.."],
            ["f", f"{W}/.git", f"\ufeffgitdir: {ROOT}/{M}/.git/worktrees/feat\n"],
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
        ],
        f"{ROOT}/{W}",
    )
    add(
        "wt-gitfile-without-prefix-climbs",
        [
            ["f", f"{M}/.git/HEAD", "ref: refs/heads/main\n"],
            ["f", f"{W}/.git", "not a gitdir line\n"],
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
        ],
        f"{ROOT}/{W}",
    )
    add(
        "wt-absolute-commondir",
        worktree_link(M, W, "feat", commondir=f"{ROOT}/{M}/.git")
        + [["f", f"{M}/AGENTS.md", "main"], ["f", f"{W}/AGENTS.md", "worktree"]],
        f"{ROOT}/{W}",
    )
    add(
        "wt-missing-commondir",
        [
            ["f", f"{M}/.git/HEAD", "ref: refs/heads/main\n"],
            ["f", f"{M}/.git/worktrees/feat/HEAD", "x"],
            ["f", f"{W}/.git", f"gitdir: {ROOT}/{M}/.git/worktrees/feat\n"],
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
        ],
        f"{ROOT}/{W}",
    )
    add(
        "wt-commondir-is-directory",
        [
            ["f", f"{M}/.git/HEAD", "ref: refs/heads/main\n"],
            ["f", f"{M}/.git/worktrees/feat/HEAD", "x"],
            ["d", f"{M}/.git/worktrees/feat/commondir"],
            ["f", f"{W}/.git", f"gitdir: {ROOT}/{M}/.git/worktrees/feat\n"],
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
        ],
        f"{ROOT}/{W}",
    )
    add(
        "wt-git-dir-without-head",
        [["d", "repo/.git"], ["f", "repo/AGENTS.md", "repo"], ["f", "repo/src/AGENTS.md", "src"]],
        f"{ROOT}/repo/src",
    )
    add(
        "wt-both-claude",
        nested + [["f", f"{M}/CLAUDE.md", "main claude"], ["f", f"{W}/CLAUDE.md", "worktree claude"]],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-both-override",
        nested
        + [
            ["f", f"{M}/AGENTS.override.md", "main override"],
            ["f", f"{W}/AGENTS.override.md", "worktree override"],
            ["f", f"{W}/src/AGENTS.md", "src"],
        ],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-main-override-vs-worktree-agents",
        nested
        + [
            ["f", f"{M}/AGENTS.override.md", "main override"],
            ["f", f"{M}/AGENTS.md", "main agents"],
            ["f", f"{W}/AGENTS.md", "worktree agents"],
        ],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-worktree-override-vs-main-agents",
        nested
        + [["f", f"{M}/AGENTS.md", "main agents"], ["f", f"{W}/AGENTS.override.md", "worktree override"]],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-intermediate-dir-between-main-and-worktree",
        nested
        + [
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{M}/worktrees/AGENTS.md", "between"],
            ["f", f"{W}/AGENTS.md", "worktree"],
        ],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-cwd-via-symlink",
        nested
        + [
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
            ["l", "shortcut", f"{ROOT}/{W}"],
        ],
        f"{ROOT}/shortcut/src",
    )
    add(
        "wt-main-root-symlinked-gitdir",
        [
            ["f", "gitstore/HEAD", "ref: refs/heads/main\n"],
            ["f", "gitstore/worktrees/feat/HEAD", "x"],
            ["f", "gitstore/worktrees/feat/commondir", "../.."],
            ["l", f"{M}/.git", f"{ROOT}/gitstore"],
            ["f", f"{W}/.git", f"gitdir: {ROOT}/{M}/.git/worktrees/feat\n"],
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
        ],
        f"{ROOT}/{W}",
    )
    add(
        "wt-main-git-is-gitfile",
        [
            ["f", "store/HEAD", "x"],
            ["f", "store/worktrees/feat/HEAD", "x"],
            ["f", "store/worktrees/feat/commondir", "../.."],
            ["f", f"{M}/.git", f"gitdir: {ROOT}/store\n"],
            ["f", f"{W}/.git", f"gitdir: {ROOT}/store/worktrees/feat\n"],
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
        ],
        f"{ROOT}/{W}",
    )
    add(
        "wt-nested-repo-inside-worktree",
        nested
        + [
            ["f", f"{W}/src/inner/.git/HEAD", "x"],
            ["f", f"{M}/AGENTS.md", "main"],
            ["f", f"{W}/AGENTS.md", "worktree"],
            ["f", f"{W}/src/inner/AGENTS.md", "inner"],
        ],
        f"{ROOT}/{W}/src/inner",
    )
    add(
        "wt-agent-dir-is-main-root",
        nested + [["f", f"{M}/AGENTS.md", "main"], ["f", f"{W}/AGENTS.md", "worktree"]],
        f"{ROOT}/{W}/src",
        f"{ROOT}/{M}",
    )
    add(
        "wt-worktree-root-candidate-is-dir",
        nested
        + [
            ["f", f"{M}/AGENTS.md", "main"],
            ["d", f"{W}/AGENTS.md"],
            ["f", f"{W}/CLAUDE.md", "worktree claude"],
        ],
        f"{ROOT}/{W}/src",
    )
    add(
        "wt-bare-nested-deeper",
        [
            ["f", "proj/.bare/HEAD", "x"],
            ["f", "proj/.bare/worktrees/feat/HEAD", "x"],
            ["f", "proj/.bare/worktrees/feat/commondir", "../.."],
            ["f", "proj/trees/feat/.git", f"gitdir: {ROOT}/proj/.bare/worktrees/feat\n"],
            ["f", "proj/AGENTS.md", "container"],
            ["f", "proj/trees/feat/AGENTS.md", "feat"],
        ],
        f"{ROOT}/proj/trees/feat",
    )
    add(
        "wt-submodule-with-commondir",
        [
            ["f", "super/.git/HEAD", "x"],
            ["f", "super/.git/modules/lib/HEAD", "x"],
            ["f", "super/.git/modules/lib/commondir", "../.."],
            ["f", "super/lib/.git", f"gitdir: {ROOT}/super/.git/modules/lib\n"],
            ["f", "super/AGENTS.md", "super"],
            ["f", "super/lib/AGENTS.md", "lib"],
        ],
        f"{ROOT}/super/lib",
    )
    add(
        "wt-worktree-inside-main-git-dir-name",
        worktree_link(M, f"{M}/.wt/feat", "feat")
        + [["f", f"{M}/CLAUDE.MD", "main upper"], ["f", f"{M}/.wt/feat/CLAUDE.MD", "wt upper"]],
        f"{ROOT}/{M}/.wt/feat",
    )
    return out


def record() -> None:
    sys.path.insert(0, str(HERE.parents[2] / "shared" / "pi-oracle"))
    from oracle_client import Oracle  # type: ignore[import-not-found]

    lines: list[str] = []
    with Oracle() as o:
        for case in cases():
            scratch = os.path.realpath(tempfile.mkdtemp(prefix="pi-ctx-"))
            try:
                build_tree(scratch, case["tree"])
                env = {k: sub_root(v, scratch) for k, v in case.get("env", {}).items()}
                args = {
                    "cwd": sub_root(case["cwd"], scratch),
                    "agentDir": sub_root(case["agentDir"], scratch),
                }
                resp = o.request("loadProjectContextFiles", args, env=env or None)
                if resp.get("ok"):
                    result = resp["result"]
                    for item in result:
                        if not item["path"].startswith(scratch + "/"):
                            raise SystemExit(
                                f"{case['name']}: answer outside the scratch dir: {item['path']}"
                            )
                        item["path"] = ROOT + item["path"][len(scratch) :]
                    answer: dict[str, Any] = {"ok": True, "result": result}
                else:
                    answer = {"ok": False, "error": resp.get("error", "").replace(scratch, ROOT)}
                lines.append(
                    json.dumps({**case, "response": answer}, ensure_ascii=True, separators=(",", ":"))
                )
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} cases to {OUT}")


if __name__ == "__main__":
    record()
