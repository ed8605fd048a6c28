"""The thinking levels a model supports and the level a request gets (pi-ai's
``getSupportedThinkingLevels`` / ``clampThinkingLevel``), and the level a new session starts at
(pi-coding-agent's ``core/sdk.ts``).

* A model without ``reasoning`` supports only ``"off"``.
* A reasoning model supports ``off``, ``minimal``, ``low``, ``medium``, ``high``, minus every level
  its ``thinkingLevelMap`` maps to ``null``, plus ``xhigh`` / ``max`` only when the map names them.
* Clamping keeps a supported level; otherwise it takes the nearest supported level above it,
  else the nearest below (so ``off`` on a model that cannot turn thinking off becomes ``minimal``,
  or the next level up that it has).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pi_nb.providers.simple_options import EXTENDED_THINKING_LEVELS, get_supported_thinking_levels
from pi_nb.providers.simple_options import clamp_thinking_level as _clamp

__all__ = [
    "DEFAULT_THINKING_LEVEL",
    "EXTENDED_THINKING_LEVELS",
    "clamp_thinking_level",
    "model_dict",
    "supported_thinking_levels",
]

#: Pi's ``DEFAULT_THINKING_LEVEL``: what a new session gets when nothing chooses a level.
DEFAULT_THINKING_LEVEL = "medium"


def model_dict(model: Any) -> Mapping[str, Any]:
    """The pi-ai model dict of a pi_nb model (``pi_ai_model()`` when it has one), or a mapping
    given as is; a model without one is read as ``{reasoning}``."""
    if isinstance(model, Mapping):
        return model
    make = getattr(model, "pi_ai_model", None)
    if callable(make):
        got = make()
        if isinstance(got, Mapping):
            return got
    return {"reasoning": bool(getattr(model, "reasoning", False))}


def supported_thinking_levels(model: Any) -> list[str]:
    """pi-ai's ``getSupportedThinkingLevels`` for a model (a pi_nb model or a pi-ai model dict)."""
    return get_supported_thinking_levels(model_dict(model))


def clamp_thinking_level(model: Any, level: str) -> str:
    """pi-ai's ``clampThinkingLevel``: ``level`` if the model supports it, else the nearest
    supported level above, else below (a pi_nb model or a pi-ai model dict)."""
    return _clamp(model_dict(model), level)
