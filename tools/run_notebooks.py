"""Execute the teaching notebooks top to bottom, each in a fresh kernel, and export them to HTML.

    python tools/run_notebooks.py                       # all of notebooks/NN_*.ipynb -> out/notebooks/
    python tools/run_notebooks.py notebooks/02_truncation.ipynb --out /tmp/nb
    python tools/run_notebooks.py --no-html --jobs 2
    python tools/run_notebooks.py notebooks/01_tour.ipynb --picture notebooks/images/widgets.png \
        --cells '%%pi,%pi tree,%pi budget'

For each notebook it writes ``<out>/<name>.ipynb`` (executed, with outputs) and ``<out>/<name>.html``
(a static page: no JavaScript, no CDN). The committed notebooks are never modified.

Why not plain ``jupyter nbconvert --execute --to html``? Three details:

* **The kernel is this interpreter.** The kernel runs ``sys.executable -m ipykernel_launcher``, so a
  ``python3`` kernelspec installed elsewhere (another Python, another virtual environment) cannot
  be picked up by accident.
* **Widgets are exported as their static views.** pi_nb's views put both a live widget and a
  static ``text/html`` picture into each output. nbconvert prefers the widget, which needs the
  widget manager from a CDN to draw anything; offline (CI, Binder builds, headless Chromium) it
  draws nothing. Here the widget part is dropped from outputs that carry ``text/html`` and the
  notebook's widget state is removed, so the page shows the static views.
* **Nothing lands in ~/.pi.** ``PI_CODING_AGENT_DIR`` points at a fresh temporary directory for
  every notebook (unless ``--agent-dir`` is given), and the kernel starts in the notebook's own
  directory, as Jupyter does.

Exit status 0 when every notebook ran, 1 otherwise (the failing cell and its error are printed).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
DEFAULT_OUT = ROOT / "out" / "notebooks"
MIME_WIDGET = "application/vnd.jupyter.widget-view+json"
STATIC_FALLBACKS = ("text/html", "image/png", "image/svg+xml", "text/plain")

# The static export is pi_nb's own (pi_nb.notebook.export): the same page a user gets.
from pi_nb.notebook.export import (  # noqa: E402,F401  (re-exported for the tests and scripts)
    STATIC_TEMPLATE,
    export_html,
    static_widget_outputs,
)


def default_notebooks() -> list[Path]:
    """The teaching notebooks, in order (``notebooks/NN_*.ipynb``)."""
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def _kernel_manager(scratch: str) -> Any:
    """A kernel manager whose kernel is ``sys.executable`` with ipykernel (see the module docstring).

    On POSIX the kernel talks over Unix sockets in ``scratch`` (private to this run) rather than
    unencrypted TCP on localhost."""
    from ipykernel.kernelspec import RESOURCES, get_kernel_dict
    from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
    from jupyter_client.manager import KernelManager

    class ThisInterpreter(KernelSpecManager):  # type: ignore[misc]
        def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
            return KernelSpec(resource_dir=RESOURCES, **get_kernel_dict())

    km = KernelManager(kernel_spec_manager=ThisInterpreter(), kernel_name="python3")
    if os.name == "posix":
        km.transport = "ipc"
        km.ip = os.path.join(scratch, "kernel")
    return km


def execute_notebook(
    path: str | os.PathLike[str],
    *,
    timeout: int = 300,
    agent_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Any:
    """Run one notebook top to bottom in a fresh kernel started in the notebook's directory.

    Returns the executed ``nbformat.NotebookNode`` (stream outputs coalesced); raises
    ``nbclient.exceptions.CellExecutionError`` when a cell fails. ``agent_dir`` (default: a new temporary directory, removed afterwards)
    becomes the kernel's ``PI_CODING_AGENT_DIR``; ``env`` adds variables.
    """
    import nbformat
    from nbclient import NotebookClient

    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    scratch = tempfile.mkdtemp(prefix="pi_nb-run-")
    agent = agent_dir or os.path.join(scratch, "agent")
    kernel_env = {**os.environ, **(env or {}), "PI_CODING_AGENT_DIR": agent}
    kernel_env.pop("JPY_PARENT_PID", None)
    client = NotebookClient(
        nb,
        km=_kernel_manager(scratch),
        timeout=timeout,
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
    )
    log_path = os.path.join(scratch, "kernel.log")
    try:
        # the kernel process's own stderr (startup and shutdown chatter) goes to a log that is shown
        # only when something fails; cell output travels over the kernel protocol as usual
        with open(log_path, "w", encoding="utf-8") as log:
            try:
                client.execute(env=kernel_env, stderr=log)
            except Exception as exc:
                log.flush()
                tail = Path(log_path).read_text(encoding="utf-8", errors="replace")[-3000:]
                if tail.strip():
                    exc.add_note("kernel log (tail):\n" + tail)
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return coalesce_streams(nb)


def coalesce_streams(nb: Any) -> Any:
    """Merge consecutive ``stream`` outputs of the same name (stdout, stderr) in place.

    The kernel flushes ``print`` output on a timer, so one line can arrive as two outputs
    depending on load; merged, the outputs no longer depend on timing."""
    for cell in nb.cells:
        merged: list[Any] = []
        for output in cell.get("outputs", []):
            prev = merged[-1] if merged else None
            if (
                prev is not None
                and output.get("output_type") == "stream"
                and prev.get("output_type") == "stream"
                and prev.get("name") == output.get("name")
            ):
                prev["text"] = prev.get("text", "") + output.get("text", "")
                continue
            merged.append(output)
        if "outputs" in cell:
            cell["outputs"] = merged
    return nb


# ---------------------------------------------------------------------------------------------
# headless Chromium: screenshots of an exported page (tests/test_screenshots.py, README picture)
# ---------------------------------------------------------------------------------------------

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    """The path of a Chromium/Chrome binary on ``PATH`` (Debian's ``chromium`` first), or ``None``."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium(browser: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium once with a throwaway profile."""
    with tempfile.TemporaryDirectory(prefix="pi_nb-chromium-") as profile:
        return subprocess.run(
            [
                browser,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--no-first-run",
                f"--user-data-dir={profile}",
                *args,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def screenshot(browser: str, page: Path, png: Path, *, width: int = 1280, height: int = 2400) -> Path:
    """Chromium's screenshot of ``page`` (a file) at ``width`` x ``height``, written to ``png``."""
    png.unlink(missing_ok=True)
    result = chromium(
        browser, f"--screenshot={png}", f"--window-size={width},{height}", page.resolve().as_uri()
    )
    if not png.exists():
        raise RuntimeError(f"chromium wrote no screenshot of {page}: {result.stderr[-2000:]}")
    return png


def dump_dom(browser: str, page: Path) -> str:
    """The DOM after Chromium loaded ``page`` (``--dump-dom``)."""
    result = chromium(browser, "--dump-dom", page.resolve().as_uri())
    if result.returncode != 0 or "<html" not in result.stdout:
        raise RuntimeError(f"chromium could not load {page}: {result.stderr[-2000:]}")
    return result.stdout


def only_cells(html: str, cell_ids: Iterable[str], *, inputs: bool = False) -> str:
    """The exported page with every cell hidden except ``cell_ids`` (their inputs hidden too,
    unless ``inputs``). Cells keep their place in the DOM; only the stylesheet changes."""
    rules = ["main > .jp-Cell{display:none!important}", "body{margin:0!important;padding:0!important}"]
    for cell_id in cell_ids:
        rules.append(f'main > .jp-Cell[id="cell-id={cell_id}"]{{display:block!important}}')
        if not inputs:
            rules.append(f'[id="cell-id={cell_id}"] .jp-Cell-inputWrapper{{display:none!important}}')
    if "</head>" not in html:
        raise ValueError("not an exported notebook page (no </head>)")
    return html.replace("</head>", "<style>" + "".join(rules) + "</style></head>", 1)


def crop_to_content(png: Path, margin: int = 12) -> None:
    """Cut the white space around what is drawn in ``png`` (needs Pillow, a matplotlib dependency)."""
    from PIL import Image, ImageChops

    image = Image.open(png).convert("RGB")
    box = ImageChops.difference(image, Image.new("RGB", image.size, (255, 255, 255))).getbbox()
    if box is None:
        raise RuntimeError(f"{png} is blank")
    left, top, right, bottom = box
    image.crop(
        (
            max(0, left - margin),
            max(0, top - margin),
            min(image.width, right + margin),
            min(image.height, bottom + margin),
        )
    ).save(png, optimize=True)


def select_cells(nb: Any, selectors: Iterable[str]) -> list[str]:
    """Cell ids from selectors: a cell id, or the start of a code cell's source (``%pi tree``)."""
    ids = []
    for selector in selectors:
        by_id = [c.id for c in nb.cells if c.get("id") == selector]
        by_source = [c.id for c in nb.cells if c.cell_type == "code" and c.source.startswith(selector)]
        found = by_id or by_source
        if len(found) != 1:
            raise ValueError(f"{selector!r} matches {len(found)} cells; give a cell id")
        ids.append(found[0])
    return ids


def picture(
    nb: Any, cell_ids: Iterable[str], png: Path, *, width: int = 1100, title: str | None = None
) -> Path:
    """A PNG of some cells' outputs of an executed notebook, as headless Chromium draws the static
    export (the README's picture of the widgets is made this way)."""
    browser = find_chromium()
    if browser is None:
        raise RuntimeError("headless Chromium is not installed (Debian: apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="pi_nb-picture-") as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(only_cells(export_html(nb, title=title), cell_ids), encoding="utf-8")
        png.parent.mkdir(parents=True, exist_ok=True)
        screenshot(browser, page, png, width=width, height=4000)
    crop_to_content(png)
    return png


@dataclass
class Outcome:
    name: str
    seconds: float
    error: str | None = None


def run_one(path: str, out: str, html: bool, timeout: int, agent_dir: str | None) -> Outcome:
    """Execute one notebook and write its executed copy (and HTML) under ``out``."""
    import nbformat

    src = Path(path)
    start = time.monotonic()
    try:
        nb = execute_notebook(src, timeout=timeout, agent_dir=agent_dir)
    except Exception as exc:  # CellExecutionError carries the cell and the traceback text
        return Outcome(src.stem, time.monotonic() - start, f"{type(exc).__name__}: {exc}")
    seconds = time.monotonic() - start
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target / src.name)
    if html:
        (target / f"{src.stem}.html").write_text(export_html(nb, title=src.stem), encoding="utf-8")
    return Outcome(src.stem, seconds)


def run_all(
    notebooks: Iterable[Path],
    out: Path,
    *,
    html: bool = True,
    timeout: int = 300,
    jobs: int = 1,
    agent_dir: str | None = None,
) -> list[Outcome]:
    paths = [str(p) for p in notebooks]
    if jobs <= 1:
        outcomes = []
        for p in paths:
            outcome = run_one(p, str(out), html, timeout, agent_dir)
            _report(outcome)
            outcomes.append(outcome)
        return outcomes
    # spawn, not fork: the caller may hold threads (a test runner, a live kernel client), and a
    # forked copy of those can deadlock
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(run_one, p, str(out), html, timeout, agent_dir) for p in paths]
        outcomes = [f.result() for f in futures]
    for outcome in outcomes:
        _report(outcome)
    return outcomes


def _report(outcome: Outcome) -> None:
    status = "ok" if outcome.error is None else "FAILED"
    print(f"{outcome.name:<24} {outcome.seconds:6.1f} s  {status}", flush=True)
    if outcome.error:
        print(outcome.error, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: notebooks/NN_*.ipynb")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"default: {DEFAULT_OUT.relative_to(ROOT)}"
    )
    parser.add_argument("--no-html", action="store_true", help="do not export HTML")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
    parser.add_argument("--jobs", type=int, default=1, help="notebooks run in parallel (default 1)")
    parser.add_argument(
        "--agent-dir", default=None, help="PI_CODING_AGENT_DIR for the kernels (default: a temp dir each)"
    )
    parser.add_argument(
        "--picture",
        type=Path,
        default=None,
        help="with one notebook: a PNG of the outputs of the cells given by --cells (headless Chromium)",
    )
    parser.add_argument(
        "--cells", default="", help="for --picture: cell ids or starts of cell sources, comma-separated"
    )
    args = parser.parse_args(argv)
    if args.picture is not None:
        if len(args.notebooks) != 1 or not args.cells:
            parser.error("--picture needs exactly one notebook and --cells")
        nb = execute_notebook(args.notebooks[0], timeout=args.timeout, agent_dir=args.agent_dir)
        picture(nb, select_cells(nb, [c.strip() for c in args.cells.split(",") if c.strip()]), args.picture)
        print(f"wrote {args.picture}")
        return 0
    notebooks = args.notebooks or default_notebooks()
    if not notebooks:
        print("no notebooks found", file=sys.stderr)
        return 1
    start = time.monotonic()
    outcomes = run_all(
        notebooks,
        args.out,
        html=not args.no_html,
        timeout=args.timeout,
        jobs=args.jobs,
        agent_dir=args.agent_dir,
    )
    failed = [o.name for o in outcomes if o.error]
    total = time.monotonic() - start
    print(
        f"{len(outcomes) - len(failed)}/{len(outcomes)} notebooks ran in {total:.1f} s; output in {args.out}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
