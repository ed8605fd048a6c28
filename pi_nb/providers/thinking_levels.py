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

__all__ = [
    "DEFAULT_THINKING_LEVEL",
    "EXTENDED_THINKING_LEVELS",
    "clamp_thinking_level",
    "model_dict",
    "supported_thinking_levels",
]

#: Pi's ``DEFAULT_THINKING_LEVEL``: what a new session gets when nothing chooses a level.
DEFAULT_THINKING_LEVEL = "medium"
EXTENDED_THINKING_LEVELS: tuple[str, ...] = ("off", "minimal", "low", "medium", "high", "xhigh", "max")


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
    raw = model_dict(model)
    if not raw.get("reasoning"):
        return ["off"]
    level_map = raw.get("thinkingLevelMap")
    level_map = level_map if isinstance(level_map, Mapping) else {}
    out = []
    for level in EXTENDED_THINKING_LEVELS:
        if level in level_map and level_map[level] is None:
            continue
        if level in ("xhigh", "max") and level not in level_map:
            continue
        out.append(level)
    return out


def clamp_thinking_level(model: Any, level: str) -> str:
    """pi-ai's ``clampThinkingLevel``: ``level`` if the model supports it, else the nearest
    supported level above, else below."""
    available = supported_thinking_levels(model)
    if level in available:
        return level
    if level not in EXTENDED_THINKING_LEVELS:
        return available[0] if available else "off"
    index = EXTENDED_THINKING_LEVELS.index(level)
    for candidate in EXTENDED_THINKING_LEVELS[index:]:
        if candidate in available:
            return candidate
    for candidate in reversed(EXTENDED_THINKING_LEVELS[:index]):
        if candidate in available:
            return candidate
    return available[0] if available else "off"
