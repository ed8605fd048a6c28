"""Pi's config values (``apiKey`` and ``headers`` in ``models.json``, ``key`` in ``auth.json``):
``!command`` runs the command and takes its trimmed output; otherwise ``$VAR`` / ``${VAR}`` are
interpolated from the environment (``$$`` and ``$!`` escape). Shared by the providers'
``models.json`` and the auth storage, which sit in different packages.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping

__all__ = ["config_value_env_names", "resolve_config_value"]


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _template(config: str) -> list[tuple[str, str]]:
    """Pi's ``parseConfigValueTemplate``: ``[("literal", text) | ("env", NAME)]``."""
    parts: list[tuple[str, str]] = []

    def literal(text: str) -> None:
        if not text:
            return
        if parts and parts[-1][0] == "literal":
            parts[-1] = ("literal", parts[-1][1] + text)
        else:
            parts.append(("literal", text))

    i = 0
    while i < len(config):
        dollar = config.find("$", i)
        if dollar < 0:
            literal(config[i:])
            break
        literal(config[i:dollar])
        nxt = config[dollar + 1 : dollar + 2]
        if nxt in ("$", "!"):
            literal(nxt)
            i = dollar + 2
            continue
        if nxt == "{":
            end = config.find("}", dollar + 2)
            if end < 0:
                literal("$")
                i = dollar + 1
                continue
            name = config[dollar + 2 : end]
            if _ENV_NAME.fullmatch(name):
                parts.append(("env", name))
            else:
                literal(config[dollar : end + 1])
            i = end + 1
            continue
        match = _ENV_NAME.match(config, dollar + 1)
        if match:
            parts.append(("env", match.group(0)))
            i = match.end()
            continue
        literal("$")
        i = dollar + 1
    return parts


def config_value_env_names(config: str) -> list[str]:
    """The environment variables a config value reads (none for a ``!command``)."""
    if config.startswith("!"):
        return []
    names: list[str] = []
    for kind, value in _template(config):
        if kind == "env" and value not in names:
            names.append(value)
    return names


def _run_command(command: str) -> str | None:
    try:
        done = subprocess.run(
            command,
            shell=True,
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.strip() or None


def resolve_config_value(config: str, env: Mapping[str, str] | None = None) -> str | None:
    """Pi's ``resolveConfigValueUncached``: ``!cmd`` -> the command's trimmed output; otherwise
    ``$VAR``/``${VAR}`` interpolated from ``env`` or the environment (an unset or empty one makes the
    whole value ``None``)."""
    if config.startswith("!"):
        return _run_command(config[1:])
    out = ""
    for kind, value in _template(config):
        if kind == "literal":
            out += value
            continue
        got = (env or {}).get(value) or os.environ.get(value) or None
        if got is None:
            return None
        out += got
    return out
