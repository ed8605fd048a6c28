"""The bundled model catalog (``pi_nb/_data/models.json``, generated from pi-ai's models), parsed
once and shared: :mod:`pi_nb.providers.catalog` builds its model specs from it, and
:mod:`pi_nb.redaction` reads the providers' key variables from it without importing the providers.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["bundled_catalog", "bundled_key_envs"]


@cache
def bundled_catalog() -> dict[str, Any]:
    """The parsed ``models.json``: ``{source, generatedAt, modelCount, providerCount, providers,
    apiKeyEnv}`` (one object per process; do not change it)."""
    text = resources.files("pi_nb").joinpath("_data", "models.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def bundled_key_envs() -> frozenset[str]:
    """The key variables of every provider of the bundled catalog (``apiKeyEnv``)."""
    data = bundled_catalog()
    key_envs = data["apiKeyEnv"]
    return frozenset(name for provider in data["providers"] for name in key_envs.get(provider, ()))
