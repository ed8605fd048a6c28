"""The teaching notebooks (issue 8) and the notebook that uses every magic (issue 7).

* The committed ``.ipynb`` files are exactly what ``notebooks/src/build.py`` makes of their
  sources, with clean outputs (nothing stale can be committed).
* Every notebook runs top to bottom in a fresh kernel (nbclient, the offline model, no network,
  ``PI_CODING_AGENT_DIR`` in a temp dir) and shows what its prose promises; the static HTML export
  has the widgets' static views and fetches nothing.
* ``99_every_magic`` uses every ``%pi`` command and ``%%pi`` option that ``%pi help`` lists, and
  the three widgets render as live widgets in the kernel.
* The real-Pi sample sessions (``notebooks/data/real-pi``) and Pi's fixture session render in every
  view, frame and plot.
* With ``PI_NB_BINDER_TEST=1``: a fresh virtual environment built from ``binder/`` alone runs
  every notebook (slow; CI sets the variable).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SRC = NOTEBOOKS / "src"
DATA = NOTEBOOKS / "data" / "real-pi"
PI_FIXTURE = ROOT / "tests" / "fixtures" / "pi_session.jsonl"
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(SRC))

import build  # noqa: E402
import run_notebooks  # noqa: E402

ALL = run_notebooks.default_notebooks()
MIME_WIDGET = "application/vnd.jupyter.widget-view+json"

nbclient = pytest.importorskip("nbclient")


def need_nbconvert() -> None:
    """The HTML export needs nbconvert: skip without it, except in CI (it must be installed there)."""
    try:
        import nbconvert  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("nbconvert is not installed; CI must have it (the [test] extra)")
        pytest.skip("nbconvert is not installed")


def _outputs_text(cell: Any) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
            continue
        for mime in ("text/plain", "text/html"):
            value = out.get("data", {}).get(mime)
            if value:
                parts.append(value if isinstance(value, str) else "".join(value))
        if "image/png" in out.get("data", {}):
            parts.append("[a PNG image]")
    return "\n".join(parts)


def _all_text(nb: Any) -> str:
    return "\n".join(_outputs_text(c) for c in nb.cells if c.cell_type == "code")


# ---------------------------------------------------------------------------------------------
# committed notebooks
# ---------------------------------------------------------------------------------------------


def test_the_six_lessons_and_the_reference_notebook_exist() -> None:
    names = [p.stem for p in ALL]
    lessons = ["01_tour", "02_truncation", "03_request", "04_compaction", "05_branches", "06_analysis"]
    assert set(lessons) | {"99_every_magic"} <= set(names)
    assert names == sorted(names) and names[-1] == "99_every_magic", "the reference notebook comes last"
    assert [p.stem for p in build.sources()] == names, "every notebook has a source in notebooks/src"


@pytest.mark.parametrize("src", build.sources(), ids=lambda p: p.stem)
def test_committed_notebook_is_its_source_built_with_clean_outputs(src: Path) -> None:
    target = NOTEBOOKS / f"{src.stem}.ipynb"
    assert target.read_text(encoding="utf-8") == build.notebook_json(src), (
        f"{target.name} is out of date: run python notebooks/src/build.py"
    )
    nb = json.loads(target.read_text(encoding="utf-8"))
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


def test_build_parses_percent_format() -> None:
    cells = build.parse_cells(
        "ignored\n# %% [markdown]\n# # Title\n#\n# text\n\n# %%\nx = 1\n\n\n# %%\n%pi tree\n"
    )
    assert cells == [("markdown", "# Title\n\ntext"), ("code", "x = 1"), ("code", "%pi tree")]
    with pytest.raises(ValueError, match="markdown line"):
        build.parse_cells("# %% [markdown]\nnot a comment\n")


def test_build_check_mode_reports_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "01_x.py").write_text("# %%\nprint(1)\n", encoding="utf-8")
    monkeypatch.setattr(build, "SRC", tmp_path / "src")
    monkeypatch.setattr(build, "NOTEBOOKS", tmp_path)
    assert build.main(["--check"]) == 1
    assert build.main([]) == 0
    assert build.main(["--check"]) == 0
    assert json.loads((tmp_path / "01_x.ipynb").read_text())["cells"][0]["source"] == ["print(1)"]


# ---------------------------------------------------------------------------------------------
# the every-magic notebook covers %pi help
# ---------------------------------------------------------------------------------------------


def test_every_magic_notebook_uses_every_command_and_option() -> None:
    from pi_nb.notebook.magics import HELP

    source = (SRC / "99_every_magic.py").read_text(encoding="utf-8")
    commands = sorted(set(re.findall(r"^%pi (\w[\w-]*)", HELP, re.M)))
    assert len(commands) >= 16, commands
    for command in commands:
        assert re.search(rf"%pi {command}\b", source), f"%pi {command} is not used in 99_every_magic"
    cell_section = HELP.split("\n\n")[0]
    options = sorted(set(re.findall(r"(--[a-z][a-z-]*)", cell_section)))
    cell_lines = " ".join(re.findall(r"^%%pi(.*)$", source, re.M)) + " " + source
    for option in options:
        assert option in cell_lines, f"%%pi {option} is not used in 99_every_magic"
    for option in (
        "--in-memory",
        "--cwd",
        "--recent",
        "--summarize",
        "--instructions",
        "--replace",
        "--label",
    ):
        assert option in source
    for widget in ("session_tree(", "token_budget(", "tool_result_truncation(", "truncation_view("):
        assert widget in source


# ---------------------------------------------------------------------------------------------
# execution (each notebook in a fresh kernel)
# ---------------------------------------------------------------------------------------------

EXPECTED: dict[str, list[str]] = {
    "01_tour": [
        "[Showing lines 3001-5000 of 5000. Full output:",
        "Session tree",
        "Token budget",
        "threshold",
        "thinking_level_change",
    ],
    "02_truncation": [
        "[Showing lines 1-952 of 3001 (50.0KB limit). Use offset=953 to continue.]",
        "[Showing lines 1-2000 of 5001. Use offset=2001 to continue.]",
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' dashes.txt | head -c 51200]",
        "[Showing last 50.0KB of line 1 (line is 58.6KB). Full output:",
        "2 continuation byte(s) skipped",
        "3 continuation byte(s) skipped",
        "100 matches limit reached. Use limit=200 for more, or refine pattern. 50.0KB limit reached. "
        "Some lines truncated to 500 chars. Use read tool to see full lines",
        "True 'xxxxxxxxx... [truncated]'",
        "[a PNG image]",
    ],
    "03_request": [
        "agent/AGENTS.md",
        "repo/service/AGENTS.override.md",
        "Trust project folder?",
        "not trusted (saved)",
        "trusted (saved)",
        "'skills': ['changelog']",
        "'skills': ['release', 'changelog']",
        "Project append: mention the ticket number in every answer.",
        '<skill name="release"',
        "<available_skills>",
        "Current working directory:",
    ],
    "04_compaction": [
        "threshold · compacted",
        "split turn:       True",
        "turn prefix",
        "## Goal",
        "**Turn Context (split turn):**",
        "+++ second summary",
        "[a PNG image]",
    ],
    "05_branches": [
        "common ancestor:",
        "(= first_answer)",
        "'type': 'branch_summary'",
        "The user explored a different conversation branch before returning here.",
        "The following is a summary of a branch that this conversation came back from:",
        "'editorText': 'run `wc -l server.log`'",
        "label of",
    ],
    "06_analysis": [
        "real Pi · compaction",
        "real Pi · branches",
        "pi_nb · long",
        "pi-nb-offline",
        "[a PNG image]",
        "Session tree",
        "Truncation boundary",
    ],
    "99_every_magic": [
        "new session",
        "Trust project folder?",
        "trusted (this kernel only)",
        "opened ",
        "(in memory)",
        "Session tree",
        "Token budget",
        "Truncation boundary",
        "request for pi_nb/offline",
    ],
    "09_other_agents": [
        "'claude-code'",
        "'codex'",
        "rows where the parts add up",
        "ccviewer_fe5e1c67_first37.jsonl: 12 responses",
        "compaction(s)",
        "observation_masking",
        "Session tree:",
        "Token budget",
    ],
}


# The notebooks this file executes (another notebook is executed by the tests of its module, e.g.
# 07_what_if by tests/test_whatif.py, so that none runs twice).
MINE = [p for p in ALL if p.stem in EXPECTED]


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each of ``MINE`` executed once, in a fresh kernel (two at a time), by name.

    A notebook that failed maps to its error text."""
    import nbformat

    out = tmp_path_factory.mktemp("executed")
    outcomes = run_notebooks.run_all(MINE, out, html=False, jobs=min(2, os.cpu_count() or 1))
    return {
        o.name: o.error if o.error else nbformat.read(out / f"{o.name}.ipynb", as_version=4) for o in outcomes
    }


@pytest.mark.parametrize("name", [p.stem for p in MINE])
def test_notebook_runs_top_to_bottom_and_shows_what_it_promises(executed: dict[str, Any], name: str) -> None:
    nb = executed[name]
    assert not isinstance(nb, str), nb
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code_cells), "every code cell ran"
    errors = [o for c in code_cells for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    stderr = [
        o.text for c in code_cells for o in c.outputs if o.output_type == "stream" and o.name == "stderr"
    ]
    assert not [s for s in stderr if "Traceback" in s or "Error" in s], stderr
    text = _all_text(nb)
    for expected in EXPECTED[name]:
        assert expected in text, f"{name}: {expected!r} not in the outputs:\n{text[:6000]}"


def test_turns_record_metadata_and_views_carry_live_widgets(executed: dict[str, Any]) -> None:
    nb = executed["99_every_magic"]
    by_source = {c.source: c for c in nb.cells if c.cell_type == "code"}
    for source in ("%pi tree", "%pi budget"):
        (out,) = [o for o in by_source[source].outputs if o.output_type == "execute_result"]
        assert MIME_WIDGET in out.data and "text/html" in out.data and "text/plain" in out.data
    trunc = next(c for s, c in by_source.items() if "tool_result_truncation(bash_results[0])" in s)
    assert MIME_WIDGET in trunc.outputs[0].data
    assert "application/vnd.jupyter.widget-state+json" in nb.metadata.get("widgets", {})
    turn_cell = next(c for s, c in by_source.items() if s.startswith("%%pi --thinking low"))
    meta = [o.metadata.get("pi_nb") for o in turn_cell.outputs if o.output_type == "display_data"]
    assert meta and meta[-1]["model"] == "pi_nb/offline" and meta[-1]["entryIds"]


@pytest.mark.parametrize("name", [p.stem for p in MINE])
def test_html_export_is_static_and_shows_the_views(executed: dict[str, Any], name: str) -> None:
    need_nbconvert()
    if isinstance(executed[name], str):
        pytest.fail(f"{name} did not run: {executed[name][:2000]}")
    html = run_notebooks.export_html(executed[name], title=name)
    assert "<title>" + name + "</title>" in html
    assert MIME_WIDGET not in html, "widget views must be exported as their static HTML"
    assert "widget-state+json" not in html
    assert not re.search(r"<script[^>]+src=\"https?:", html), "the page must not fetch scripts"
    assert "Traceback" not in html
    if name in ("01_tour", "05_branches", "99_every_magic"):
        assert "Session tree" in html
    if name in ("01_tour", "04_compaction", "99_every_magic"):
        assert "Token budget" in html and "compact above" in html
    if name in ("02_truncation", "99_every_magic"):
        assert "Truncation boundary" in html and "the model saw" in html


def test_static_widget_outputs_keeps_outputs_without_a_fallback() -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data", data={MIME_WIDGET: {"model_id": "a"}, "text/html": "<b>v</b>"}
        ),
        nbformat.v4.new_output("display_data", data={MIME_WIDGET: {"model_id": "b"}}),
    ]
    nb.cells.append(cell)
    static = run_notebooks.static_widget_outputs(nb)
    assert "widgets" not in static.metadata and "widgets" in nb.metadata  # a copy
    assert list(static.cells[0].outputs[0].data) == ["text/html"]
    assert list(static.cells[0].outputs[1].data) == [MIME_WIDGET]


def test_coalesce_streams_merges_split_prints() -> None:
    import nbformat

    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="threshold · "),
        nbformat.v4.new_output("stream", name="stdout", text="compacted\n"),
        nbformat.v4.new_output("stream", name="stderr", text="warn\n"),
        nbformat.v4.new_output("execute_result", data={"text/plain": "1"}, execution_count=1),
        nbformat.v4.new_output("stream", name="stdout", text="after\n"),
    ]
    nb = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_markdown_cell("m")])
    run_notebooks.coalesce_streams(nb)
    assert [(o.output_type, o.get("text")) for o in nb.cells[0].outputs] == [
        ("stream", "threshold · compacted\n"),
        ("stream", "warn\n"),
        ("execute_result", None),
        ("stream", "after\n"),
    ]


def test_cells_are_selected_by_id_or_source_and_isolated_by_a_stylesheet() -> None:
    import nbformat

    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# t", id="a-00"),
            nbformat.v4.new_code_cell("%pi tree", id="a-01"),
            nbformat.v4.new_code_cell("%pi budget", id="a-02"),
            nbformat.v4.new_code_cell("%pi budget --x", id="a-03"),
        ]
    )
    assert run_notebooks.select_cells(nb, ["a-00", "%pi tree"]) == ["a-00", "a-01"]
    with pytest.raises(ValueError, match="matches 2 cells"):
        run_notebooks.select_cells(nb, ["%pi budget"])
    page = run_notebooks.only_cells("<html><head></head><body><main></main></body></html>", ["a-01"])
    assert 'main > .jp-Cell[id="cell-id=a-01"]{display:block!important}' in page
    assert "main > .jp-Cell{display:none!important}" in page and ".jp-Cell-inputWrapper" in page
    with pytest.raises(ValueError):
        run_notebooks.only_cells("<p>no head</p>", ["a-01"])


def test_readme_picture_is_a_real_screenshot_of_the_widgets() -> None:
    from PIL import Image

    png = NOTEBOOKS / "images" / "widgets.png"
    assert "notebooks/images/widgets.png" in (ROOT / "README.md").read_text(encoding="utf-8")
    image = Image.open(png)
    assert image.format == "PNG" and image.width > 800 and image.height > 500
    assert png.stat().st_size < 400_000
    colors = {c for _, c in image.convert("RGB").getcolors(maxcolors=1 << 20) or []}
    from pi_nb.notebook.views import COLORS

    rgb = tuple(int(COLORS["tool results"][i : i + 2], 16) for i in (1, 3, 5))
    assert rgb in colors, "the budget bar's tool-results segment is in the picture"


def test_runner_cli_writes_outputs_and_reports_failures(tmp_path: Path) -> None:
    import nbformat

    need_nbconvert()

    good = tmp_path / "01_good.ipynb"
    bad = tmp_path / "02_bad.ipynb"
    nbformat.write(
        nbformat.v4.new_notebook(
            cells=[
                nbformat.v4.new_code_cell(
                    "import os, sys\nprint(os.environ['PI_CODING_AGENT_DIR'], sys.executable, os.getcwd())"
                )
            ]
        ),
        good,
    )
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1/0")]), bad)
    out = tmp_path / "out"
    assert run_notebooks.main([str(good), "--out", str(out)]) == 0
    executed = nbformat.read(out / "01_good.ipynb", as_version=4)
    agent, python, cwd = executed.cells[0].outputs[0].text.split()
    assert python == sys.executable, "the kernel runs in the interpreter that runs the tool"
    assert cwd == str(tmp_path), "the kernel starts in the notebook's folder"
    assert not os.path.exists(agent) and not agent.startswith(str(Path.home() / ".pi"))
    assert (out / "01_good.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert run_notebooks.main([str(bad), "--out", str(out), "--no-html"]) == 1
    assert not (out / "02_bad.html").exists()


# ---------------------------------------------------------------------------------------------
# Pi's own session files in every view and frame
# ---------------------------------------------------------------------------------------------

PI_FILES = [*sorted(DATA.glob("*.jsonl")), PI_FIXTURE]


def test_real_pi_samples_are_what_the_readme_says() -> None:
    from pi_nb import read_session_file

    assert sorted(p.name for p in DATA.glob("*.jsonl")) == [
        "branches.jsonl",
        "compaction.jsonl",
        "tools.jsonl",
    ]
    kinds: dict[str, dict[str, int]] = {}
    for path in DATA.glob("*.jsonl"):
        assert path.stat().st_size < 200_000, "keep the samples small"
        contents = read_session_file(str(path))
        assert contents.valid and not contents.problems
        header, *entries = contents.entries
        assert header["version"] == 3 and header["cwd"] == f"/tmp/pi-nb-demo/{path.stem}"
        counts: dict[str, int] = {}
        for e in entries:
            counts[e["type"]] = counts.get(e["type"], 0) + 1
            if e["type"] == "message" and e["message"]["role"] == "assistant":
                assert e["message"]["provider"] == "pi-nb-offline" and e["message"]["model"] == "offline"
                assert e["message"]["api"] == "openai-completions"
        kinds[path.stem] = counts
    assert kinds["compaction"].get("compaction") == 2
    assert kinds["branches"].get("branch_summary") == 1 and kinds["branches"].get("label") == 2
    tools_text = (DATA / "tools.jsonl").read_text(encoding="utf-8")
    for notice in (
        "[Showing lines 1-952 of 3001 (50.0KB limit). Use offset=953 to continue.]",
        "[Line 1 is 99.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' wide.txt | head -c 51200]",
        "100 matches limit reached. Use limit=200 for more, or refine pattern",
        '"role":"bashExecution"',
    ):
        assert notice in tools_text


@pytest.mark.parametrize("path", PI_FILES, ids=lambda p: p.name)
def test_pi_session_renders_in_every_view_frame_and_plot(path: Path) -> None:
    from pi_nb import load_entries_from_file
    from pi_nb.notebook import (
        compactions_df,
        entries_df,
        messages_df,
        plot_context_tokens,
        plot_token_composition,
        plot_truncation,
        session_tree,
        token_budget,
        tool_result_truncation,
        tool_results_df,
        usage_df,
    )

    entries = [e for e in load_entries_from_file(str(path)) if e.get("type") != "session"]
    ids = {e["id"] for e in entries}

    tree = session_tree(path)
    html, text = tree.to_html(), tree.to_text()
    assert "Session tree" in html and f"{len(entries)} entries" in text
    for entry_id in ids:
        assert entry_id in html or "[+" in text  # every entry drawn, or folded into a counted run

    budget = token_budget(path, model_context_window=6000, reserve_tokens=1500)
    assert "Token budget" in budget.to_html() and "threshold 4,500" in budget.to_html()

    results = [e for e in entries if e["type"] == "message" and e["message"].get("role") == "toolResult"]
    for entry in results:
        view = tool_result_truncation(entry)
        assert "Truncation boundary" in view.to_html() and view.to_text()

    frames = {
        "entries": entries_df(path),
        "messages": messages_df(path),
        "tool_results": tool_results_df(path),
        "usage": usage_df(path),
        "compactions": compactions_df(path),
    }
    assert set(frames["entries"]["entry_id"]) == ids
    assert len(frames["tool_results"]) == len(results)
    assert len(frames["compactions"]) == sum(1 for e in entries if e["type"] == "compaction")
    assert len(frames["usage"]) == sum(
        1 for e in entries if e["type"] == "message" and e["message"].get("role") == "assistant"
    )
    assert len(frames["messages"]) >= len(results)
    for fig in (
        plot_context_tokens(path, context_window=6000, reserve_tokens=1500),
        plot_token_composition(path),
        plot_truncation(path),
    ):
        assert fig.axes


def test_pi_session_frames_over_a_directory_and_a_list() -> None:
    from pi_nb.notebook import entries_df

    both = entries_df([DATA, PI_FIXTURE])
    assert both["session_file"].nunique() == 4
    assert (both.groupby("session_file").size() > 10).all()


# ---------------------------------------------------------------------------------------------
# Binder: a fresh environment from binder/ alone runs every notebook
# ---------------------------------------------------------------------------------------------


def test_binder_files_pin_everything_and_install_pi_nb_from_the_repository() -> None:
    reqs = [
        line.split("#")[0].strip()
        for line in (ROOT / "binder" / "requirements.txt").read_text(encoding="utf-8").splitlines()
    ]
    reqs = [r for r in reqs if r]
    assert reqs and all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.+!-]+", r) for r in reqs), reqs
    names = {re.split(r"[=\[]", r)[0].lower().replace("_", "-") for r in reqs}
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    deps = re.findall(
        r'^\s+"([A-Za-z0-9_.\-]+)', pyproject.split("dependencies = [", 1)[1].split("]", 1)[0], re.M
    )
    for dep in deps:
        assert dep.lower().replace("_", "-") in names, f"binder/requirements.txt does not pin {dep}"
    for tool in ("nbclient", "nbconvert", "ipykernel", "jupyterlab", "hatchling", "dask", "distributed"):
        assert tool in names
    post = (ROOT / "binder" / "postBuild").read_text(encoding="utf-8")
    assert post.startswith("#!") and "--no-deps" in post and "pip install" in post
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)
    assert (ROOT / "binder" / "runtime.txt").read_text(encoding="utf-8").strip() == "python-3.11"


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("PI_NB_BINDER_TEST") != "1", reason="builds a virtual environment; set PI_NB_BINDER_TEST=1"
)
@pytest.mark.timeout(1200)
def test_binder_environment_runs_every_notebook(tmp_path: Path) -> None:
    env_dir = tmp_path / "binder-env"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    env = {
        **os.environ,
        "PATH": f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "VIRTUAL_ENV": str(env_dir),
    }
    env.pop("PYTHONPATH", None)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "install", "-q", "-r", str(ROOT / "binder" / "requirements.txt")],
        env=env,
        cwd=ROOT,
        check=True,
    )
    # repo2docker runs postBuild from the repository root with the environment's tools on PATH
    subprocess.run(["bash", str(ROOT / "binder" / "postBuild")], env=env, cwd=ROOT, check=True)
    check = subprocess.run(
        [str(python), "-c", "import pi_nb, sys; print(pi_nb.__file__)"],
        env=env,
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    assert check.stdout.startswith(str(env_dir)), (
        "pi_nb is installed into the environment, not run from the checkout"
    )
    out = tmp_path / "out"
    run = subprocess.run(
        [str(python), str(ROOT / "tools" / "run_notebooks.py"), "--out", str(out)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(list(out.glob("*.html"))) == len(ALL)
    shutil.rmtree(env_dir, ignore_errors=True)
