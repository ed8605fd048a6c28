"""Execute the teaching notebooks top to bottom, each in a fresh kernel, and export them to HTML.

    python tools/run_notebooks.py                       # all of notebooks/NN_*.ipynb -> out/notebooks/
    python tools/run_notebooks.py notebooks/02_truncation.ipynb --out /tmp/nb
    python tools/run_notebooks.py --no-html --jobs 2

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
import copy
import os
import shutil
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

# Static export: the lab template without require.js, MathJax, Mermaid or the widget manager
# (all fetched from CDNs), so the page renders the same with no network.
STATIC_TEMPLATE = """\
{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


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

    Returns the executed ``nbformat.NotebookNode``; raises ``nbclient.exceptions.CellExecutionError``
    when a cell fails. ``agent_dir`` (default: a new temporary directory, removed afterwards)
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
    try:
        client.execute(env=kernel_env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return nb


def static_widget_outputs(nb: Any) -> Any:
    """A copy of ``nb`` whose outputs show static views instead of live widgets.

    An output that carries a widget view *and* a static representation keeps only the static
    one; the notebook-level widget state goes. Outputs that are nothing but a widget are kept
    (they have no static picture to show).
    """
    nb = copy.deepcopy(nb)
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if data and MIME_WIDGET in data and any(m in data for m in STATIC_FALLBACKS):
                del data[MIME_WIDGET]
    return nb


def export_html(nb: Any, *, title: str | None = None) -> str:
    """The static HTML page of an executed notebook (see the module docstring)."""
    from jinja2 import DictLoader
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="lab",
        extra_loaders=[DictLoader({"pi_nb_static.html.j2": STATIC_TEMPLATE})],
        template_file="pi_nb_static.html.j2",
    )
    nb = static_widget_outputs(nb)
    if title:
        nb.metadata["title"] = title
    body, _ = exporter.from_notebook_node(nb)
    return str(body)


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
    with ProcessPoolExecutor(max_workers=jobs) as pool:
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
    args = parser.parse_args(argv)
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
