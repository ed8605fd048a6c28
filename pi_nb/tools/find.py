"""The ``find`` tool: files by glob pattern (Pi's ``find.ts``), with fd or a Python walk.

Pi runs ``fd --glob --color=never --hidden [--no-require-git] --max-results L [--full-path] -- PATTERN
PATH``: hidden files are listed, ``.gitignore``/``.ignore``/``.fdignore`` rules are honoured (outside a
git repository too, hence ``--no-require-git``, which Pi leaves out inside one so nested
repositories stop parent rules), the pattern matches the *file name* unless it contains ``/``, in
which case it matches the absolute path and gets a ``**/`` prefix (``src/**/*.ts`` finds
``/abs/proj/src/a/b.ts``). Results are relative to the search directory, directories end in
``/``. Notices: ``{L} results limit reached. Use limit={2L} for more, or refine pattern`` when
``L`` results came back, then ``50.0KB limit reached``.

Backends: ``fd`` (or Debian's ``fdfind``) when one on ``PATH`` is new enough for
``--no-require-git`` (fd >= 8.7; Pi 0.85 downloads its own, pi_nb never downloads anything),
otherwise a Python walk that does what fd does: globset pattern semantics and fd's smart case
(a pattern without capitals matches case-insensitively), ignore files of the search directory, its
subdirectories and its parents (up to the repository root inside a git repository, plus
``.git/info/exclude``; the global git excludes file is not read), ``.git`` directories skipped, symlinks listed but not followed, results
sorted by path (fd sorts small result sets too). ``backend="python"`` or ``"fd"`` (or the
environment variable ``PI_NB_FIND_BACKEND``) forces one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Literal

import pathspec

from pi_nb._fs import MAX_RESOURCE_BYTES, read_regular
from pi_nb._js import js_number_to_string
from pi_nb.errors import ToolError
from pi_nb.tools._glob import GlobError, compile_glob
from pi_nb.tools.base import (
    AbortSignal,
    AgentTool,
    AgentToolResult,
    ToolContext,
    ToolUpdateCallback,
    listing_result,
)
from pi_nb.tools.paths import resolve_to_cwd
from pi_nb.truncation import DEFAULT_MAX_BYTES

__all__ = ["FindTool", "create_find_tool", "find_fd_binary", "relativize_find_result_path"]

FIND_DEFAULT_LIMIT = 1000
FIND_PROMPT_SNIPPET = "Find files by glob pattern (respects .gitignore)"
FIND_DESCRIPTION = (
    "Find files whose names match a glob pattern and return their paths relative to the search "
    "directory; .gitignore rules are honoured. At most "
    f"{FIND_DEFAULT_LIMIT} results or {DEFAULT_MAX_BYTES // 1024}KB of output are returned, "
    "whichever limit is reached first."
)
FIND_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "required": ["pattern"],
    "properties": {
        "pattern": {
            "type": "string",
            "description": "Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'",
        },
        "path": {"type": "string", "description": "Directory to search in (default: current directory)"},
        "limit": {"type": "number", "description": "Maximum number of results (default: 1000)"},
    },
}

FindBackend = Literal["auto", "fd", "python"]


def relativize_find_result_path(result_path: str, search_path: str) -> str:
    """Pi's ``relativizeFindResultPath``: relative to the search root, ``/`` kept at the end."""
    had_trailing = result_path.endswith("/")
    if result_path.startswith("/"):
        relative = os.path.relpath(result_path, search_path) if result_path.rstrip("/") != search_path else ""
    else:
        relative = result_path
    if relative == ".":
        relative = ""
    return relative + "/" if had_trailing and not relative.endswith("/") else relative


@lru_cache(maxsize=8)
def _fd_version_ok(binary: str) -> bool:
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    m = re.search(r"(\d+)\.(\d+)", out)
    return m is not None and (int(m.group(1)), int(m.group(2))) >= (8, 7)


def find_fd_binary() -> str | None:
    """An fd on ``PATH`` that understands ``--no-require-git`` (fd >= 8.7), or None."""
    for name in ("fd", "fdfind"):
        path = shutil.which(name)
        if path and _fd_version_ok(path):
            return path
    return None


def _inside_git_repo(search_path: str) -> str | None:
    """The nearest directory at or above ``search_path`` holding a ``.git`` entry."""
    current = search_path
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


# --- the Python walk ------------------------------------------------------------------------------


def _read_spec(path: str) -> pathspec.GitIgnoreSpec | None:
    try:
        # an ignore file the walk meets may be a FIFO or a link to /dev/zero: refused, bounded
        lines = read_regular(path, MAX_RESOURCE_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a malformed pattern: fd reports a partial error and keeps the rest
        return None


class _Ignores:
    """Ignore files per directory, checked deepest first; inside a directory ``.fdignore`` beats
    ``.ignore`` beats ``.gitignore`` (the ``ignore`` crate's precedence)."""

    def __init__(self, search_path: str, git_root: str | None) -> None:
        self.git_root = git_root
        self.cache: dict[str, list[pathspec.GitIgnoreSpec]] = {}
        self.extra: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        if git_root is not None:
            spec = _read_spec(os.path.join(git_root, ".git", "info", "exclude"))
            if spec is not None:
                self.extra.append((git_root, spec))

    def specs(self, directory: str) -> list[pathspec.GitIgnoreSpec]:
        found = self.cache.get(directory)
        if found is None:
            found = []
            names = [".fdignore", ".ignore"]
            if (
                self.git_root is None
                or directory == self.git_root
                or directory.startswith(self.git_root + "/")
            ):
                names.append(".gitignore")
            for name in names:
                spec = _read_spec(os.path.join(directory, name))
                if spec is not None:
                    found.append(spec)
            self.cache[directory] = found
        return found

    def ignored(self, path: str, is_dir: bool) -> bool:
        directory = os.path.dirname(path)
        while True:
            for spec in self.specs(directory):
                rel = os.path.relpath(path, directory) + ("/" if is_dir else "")
                result = spec.check_file(rel).include
                if result is not None:
                    return result
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        for base, spec in self.extra:
            if path.startswith(base + "/"):
                result = spec.check_file(os.path.relpath(path, base) + ("/" if is_dir else "")).include
                if result is not None:
                    return result
        return False


def _walk(root: str, ignores: _Ignores) -> Iterator[tuple[str, bool]]:
    """Entries below ``root`` (not itself), depth first in name order; ignored directories pruned."""
    try:
        with os.scandir(root) as it:
            entries = sorted(it, key=lambda e: e.name.encode("utf-8", "surrogateescape"))
    except OSError:
        return
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir and entry.name == ".git":
            continue  # fd >= 9 hides .git directories even with --hidden
        if ignores.ignored(entry.path, is_dir):
            continue
        yield entry.path, is_dir
        if is_dir:
            yield from _walk(entry.path, ignores)


def _python_find(pattern: str, search_path: str, limit: int | None, signal: AbortSignal | None) -> list[str]:
    if not os.path.isdir(search_path):
        raise ToolError(f"[fd error]: Search path '{search_path}' is not a directory.")
    effective = pattern
    full_path = "/" in pattern
    if full_path and not pattern.startswith("/") and not pattern.startswith("**/") and pattern != "**":
        effective = f"**/{pattern}"
    try:
        regex = compile_glob(
            effective, literal_separator=full_path, case_insensitive=not any(c.isupper() for c in effective)
        )
    except GlobError as exc:
        raise ToolError(f"[fd error]: {exc}") from None
    ignores = _Ignores(search_path, _inside_git_repo(search_path))
    results: list[str] = []
    for path, is_dir in _walk(search_path, ignores):
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        subject = path if full_path else os.path.basename(path)
        if regex.match(subject):
            results.append(path + "/" if is_dir else path)
            if limit is not None and len(results) >= limit:
                break
    results.sort(key=lambda p: [part.encode("utf-8", "surrogateescape") for part in p.rstrip("/").split("/")])
    return results


def _parse_limit(limit: float) -> int | None:
    """fd's ``--max-results`` parsing (a usize; 0 means no limit)."""
    text = js_number_to_string(limit)
    if not re.fullmatch(r"\+?\d+", text):
        raise ToolError(
            f"error: invalid value '{text}' for '--max-results <count>': invalid digit found in string\n\n"
            "For more information, try '--help'."
        )
    value = int(text)
    return value if value > 0 else None


# --- the tool ---------------------------------------------------------------------------------------


class FindTool(AgentTool):
    """Pi's ``find`` tool (see the module docstring for the backends)."""

    def __init__(self, cwd: str, *, backend: FindBackend = "auto", fd_path: str | None = None) -> None:
        super().__init__(
            name="find",
            label="find",
            description=FIND_DESCRIPTION,
            parameters=FIND_PARAMETERS,
            prompt_snippet=FIND_PROMPT_SNIPPET,
            prompt_guidelines=None,
            cwd=cwd,
        )
        self.backend: FindBackend = backend
        self.fd_path = fd_path

    def _resolve_backend(self) -> tuple[Literal["fd", "python"], str | None]:
        choice = self.backend
        if choice == "auto":
            env = os.environ.get("PI_NB_FIND_BACKEND", "").strip().lower()
            if env in ("fd", "python"):
                choice = env  # type: ignore[assignment]
        if choice == "python":
            return "python", None
        fd = self.fd_path or find_fd_binary()
        if fd is None:
            if choice == "fd":
                raise ToolError("fd is not available and could not be downloaded")
            return "python", None
        return "fd", fd

    async def execute(
        self,
        tool_call_id: str,
        params: dict[str, Any],
        signal: AbortSignal | None = None,
        on_update: ToolUpdateCallback | None = None,
        ctx: ToolContext | None = None,
    ) -> AgentToolResult:
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        pattern: str = params["pattern"]
        search_path = resolve_to_cwd(params.get("path") or ".", self.effective_cwd(ctx))
        limit = params.get("limit")
        effective_limit: float = FIND_DEFAULT_LIMIT if limit is None else limit
        backend, fd = self._resolve_backend()
        if backend == "fd":
            assert fd is not None
            lines = await self._run_fd(fd, pattern, search_path, effective_limit, signal)
        else:
            max_results = _parse_limit(effective_limit)
            lines = await asyncio.to_thread(_python_find, pattern, search_path, max_results, signal)
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        if not "\n".join(lines):
            return AgentToolResult(
                content=[{"type": "text", "text": "No files found matching pattern"}], details=None
            )

        relativized = []
        for raw in lines:
            line = raw.removesuffix("\r").strip()
            if line:
                relativized.append(relativize_find_result_path(line, search_path))
        limit_notice = None
        if len(relativized) >= effective_limit:
            limit_notice = (
                f"{js_number_to_string(effective_limit)} results limit reached. "
                f"Use limit={js_number_to_string(effective_limit * 2)} for more, or refine pattern",
                "resultLimitReached",
                effective_limit,
            )
        return listing_result(relativized, limit=limit_notice)

    async def _run_fd(
        self, fd: str, pattern: str, search_path: str, limit: float, signal: AbortSignal | None
    ) -> list[str]:
        args = ["--glob", "--color=never", "--hidden"]
        if _inside_git_repo(search_path) is None:
            args.append("--no-require-git")
        args += ["--max-results", js_number_to_string(limit)]
        effective = pattern
        if "/" in pattern:
            args.append("--full-path")
            if not pattern.startswith("/") and not pattern.startswith("**/") and pattern != "**":
                effective = f"**/{pattern}"
        args += ["--", effective, search_path]
        try:
            proc = await asyncio.create_subprocess_exec(
                fd, *args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as exc:
            raise ToolError(f"Failed to run fd: {exc.strerror or exc}") from None
        remove = signal.add_listener(lambda: _kill(proc)) if signal is not None else None
        try:
            stdout, stderr = await proc.communicate()
        finally:
            if remove is not None:
                remove()
        if signal is not None and signal.aborted:
            raise ToolError("Operation aborted")
        text = stdout.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        output = "\n".join(lines)
        if proc.returncode != 0 and not output:
            message = (
                stderr.decode("utf-8", errors="replace").strip() or f"fd exited with code {proc.returncode}"
            )
            raise ToolError(message)
        return lines


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def create_find_tool(cwd: str, *, backend: FindBackend = "auto", fd_path: str | None = None) -> FindTool:
    """Pi's ``createFindTool(cwd)``; ``backend`` picks fd or the Python walk (default: fd if usable)."""
    return FindTool(cwd, backend=backend, fd_path=fd_path)
