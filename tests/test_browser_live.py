"""The widgets in a live browser: JupyterLab 4 and Notebook 7, driven by Playwright.

Exported HTML cannot show stale widgets, errors in callbacks or runaway outputs; a live front end
can. Each test starts a real Jupyter server on a free loopback port (its own root folder, token and
``$PI_CODING_AGENT_DIR``), opens a small notebook in Debian's Chromium through Playwright's Python
package (``executable_path``: Playwright cannot download browsers here), runs every cell from the
menu, then checks what a user sees:

* the live widgets are drawn (no "Error displaying widget", no Python traceback in an output);
* an entry can be selected in the session tree, and navigating there *with a summary* works;
* the token budget of the next request changes after the navigation;
* the page's console shows no errors.

Without Chromium or Playwright the tests skip, except where ``CI`` is set: there they fail, because
``.ci/run`` installs both.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TOKEN = "pi-nb-live-test"


def _need(what: str) -> None:
    message = f"{what} is not installed"
    if os.environ.get("CI"):
        pytest.fail(message + "; CI must have it (.ci/run installs it)")
    pytest.skip(message)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    _need("Debian's chromium")
    raise AssertionError  # unreachable


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


NOTEBOOK_CELLS = [
    "%load_ext pi_nb",
    "%pi new --cwd .",
    "%%pi\nrun `echo first`",
    "%%pi\nrun `echo second`",
    "%pi tree",
    "%pi budget",
]


def _write_notebook(path: Path) -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "source": src, "outputs": [], "execution_count": None}
        for src in NOTEBOOK_CELLS
    ]
    nb = {
        "cells": cells,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb), encoding="utf-8")


@contextlib.contextmanager
def jupyter_server(app: str, root: Path) -> Iterator[str]:
    """A Jupyter server (``lab`` or ``notebook``) on a free loopback port; yields its base URL."""
    port = _free_port()
    env = dict(os.environ)
    env["PI_CODING_AGENT_DIR"] = str(root / ".pi-agent")
    env["JUPYTER_CONFIG_DIR"] = str(root / ".jupyter-config")
    env["JUPYTER_RUNTIME_DIR"] = str(root / ".jupyter-runtime")
    env["HOME"] = str(root / "home")
    (root / "home").mkdir(exist_ok=True)
    # No "would you like news?" toast over JupyterLab's widgets (Notebook 7 has no such toast, and
    # its front end fails on a disabled announcements plugin).
    labconfig = root / ".jupyter-config" / "labconfig"
    if app == "lab":
        labconfig.mkdir(parents=True, exist_ok=True)
        (labconfig / "page_config.json").write_text(
            json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}})
        )
    cmd = [
        sys.executable,
        "-m",
        "jupyter",
        app,
        "--no-browser",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={TOKEN}",
        "--ServerApp.disable_check_xsrf=True",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(root / f"{app}-server.log", "w")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise AssertionError(
                    f"jupyter {app} did not start:\n" + (root / f"{app}-server.log").read_text()[-3000:]
                )
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _need("Playwright's Python package")
    path = _chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


def _accept_dialogs(page: Any) -> None:
    """Accept a dialog the front end raised (JupyterLab asks for a kernel when it has none yet)."""
    dialog = page.locator(".jp-Dialog")
    if dialog.count():
        text = dialog.first.inner_text()
        if "Kernel" not in text and "kernel" not in text:
            raise AssertionError(f"unexpected dialog: {text}")
        page.locator(".jp-Dialog .jp-mod-accept").first.click()
        page.wait_for_timeout(1000)


def _run_all(page: Any) -> None:
    """Run every cell from the Run menu (the same menu in JupyterLab 4 and Notebook 7)."""
    _accept_dialogs(page)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def _wait_idle(page: Any, timeout_s: float = 120) -> None:
    """Until every code cell has an execution count (``[n]:``), the kernel is done."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
        counts = [p.strip() for p in prompts]
        if len(counts) == len(NOTEBOOK_CELLS) and all(c[1:-2].strip().isdigit() for c in counts if c):
            if all(c and c != "[*]:" for c in counts):
                return
        page.wait_for_timeout(500)
    raise AssertionError(f"cells did not finish: {page.locator('.jp-InputPrompt').all_inner_texts()}")


def _budget_text(page: Any) -> str:
    return str(page.locator(".jp-OutputArea-output", has_text="Token budget").last.inner_text())


def _drive(browser: Any, base: str, url_path: str, shots: Path, name: str) -> None:
    context = browser.new_context(viewport={"width": 1400, "height": 1800})
    page = context.new_page()
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console_errors.append(f"pageerror: {e}"))
    page.goto(f"{base}{url_path}?token={TOKEN}")
    page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=60_000)
    # Notebook 7.6 raises one TypeError of its own while loading ("reading 'schema'"), with an empty
    # notebook and no pi_nb at all; what the front end says before the first cell runs is its own.
    page.wait_for_timeout(3000)
    at_load = list(console_errors)
    # Run All before the kernel is connected does nothing: run again until the first cell starts.
    deadline = time.monotonic() + 90
    while True:
        _run_all(page)
        page.wait_for_timeout(3000)
        first = page.locator(".jp-CodeCell .jp-InputPrompt").first.inner_text().strip()
        if first not in ("[ ]:", ""):
            break
        if time.monotonic() > deadline:
            raise AssertionError("Run All Cells never started the kernel")
    _wait_idle(page)
    page.wait_for_selector(".widget-select select", timeout=60_000)
    page.screenshot(path=str(shots / f"{name}-1-ran.png"), full_page=True)

    text = page.locator(".jp-Notebook").inner_text()
    assert "Error displaying widget" not in text
    assert "Traceback" not in text, text[-3000:]

    budget_before = _budget_text(page)
    select = page.locator(".widget-select select").first
    options = [o.replace("\xa0", " ") for o in select.locator("option").all_inner_texts()]
    assert len(options) >= 4, options
    # The first user message: navigating there leaves the second turn behind.
    target = next((i for i, o in enumerate(options) if "echo first" in o), None)
    assert target is not None, options
    select.select_option(index=target)
    page.wait_for_timeout(500)
    detail = page.locator(".jp-OutputArea-output", has_text="navigate here").last
    leave_with = detail.locator(".widget-dropdown select").last
    choices = [o.replace("\xa0", " ") for o in leave_with.locator("option").all_inner_texts()]
    summary_index = next(
        (i for i, o in enumerate(choices) if "summar" in o.lower() and not o.lower().startswith("no ")), None
    )
    assert summary_index is not None, choices
    leave_with.select_option(index=summary_index)
    page.wait_for_timeout(500)
    page.get_by_role("button", name="navigate here").last.click()

    deadline = time.monotonic() + 60
    while _budget_text(page) == budget_before:
        if time.monotonic() > deadline:
            raise AssertionError("the budget did not change after navigating:\n" + budget_before)
        page.wait_for_timeout(300)
    page.screenshot(path=str(shots / f"{name}-2-navigated.png"), full_page=True)
    status = page.locator(".jp-OutputArea-output", has_text="navigated to").last.inner_text()
    assert "summary" in status, status
    text = page.locator(".jp-Notebook").inner_text()
    assert "Error displaying widget" not in text
    assert "Traceback" not in text, text[-3000:]
    relevant = [e for e in console_errors[len(at_load) :] if "favicon" not in e]
    assert not relevant, relevant
    context.close()


@pytest.mark.parametrize(("app", "url_path"), [("lab", "/lab/tree/live.ipynb"), ("notebook", "/notebooks/live.ipynb")])
def test_live_widgets(browser: Any, tmp_path: Path, app: str, url_path: str) -> None:
    pytest.importorskip("jupyterlab") if app == "lab" else pytest.importorskip("notebook")
    _write_notebook(tmp_path / "live.ipynb")
    shots = Path(os.environ.get("PI_NB_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    with jupyter_server(app, tmp_path) as base:
        _drive(browser, base, url_path, shots, app)
