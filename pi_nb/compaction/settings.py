"""Compaction, branch-summary and retry settings, and the threshold test ``should_compact``.

Pi keeps these in settings.json under ``compaction`` (``{enabled?, reserveTokens?,
keepRecentTokens?}``), ``branchSummary`` (``{reserveTokens?, skipPrompt?}``) and ``retry``
(``{enabled?, maxRetries?, baseDelayMs?}``); missing keys take the defaults below. The value objects
here are frozen dataclasses with snake_case fields; ``to_dict()`` gives Pi's camelCase shape and
``from_dict()`` reads one (partial dicts merge over the defaults, as Pi's settings manager does).

The input side stays an open mapping on purpose: settings come from the user's settings.json
or a dict typed in a notebook, so every key is read with a check (:func:`_int_field`,
:func:`_bool_field`) rather than trusted to have a shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from pi_nb._wire import wire_dict
from pi_nb.compaction._types import BranchSummarySettingsDict, CompactionSettingsDict, RetrySettingsDict
from pi_nb.errors import CompactionError, InvalidValueError

__all__ = [
    "DEFAULT_BRANCH_SUMMARY_SETTINGS",
    "DEFAULT_COMPACTION_SETTINGS",
    "DEFAULT_KEEP_RECENT_TOKENS",
    "DEFAULT_MAX_AUTO_COMPACTIONS_PER_PROMPT",
    "DEFAULT_RESERVE_TOKENS",
    "DEFAULT_RETRY_SETTINGS",
    "BranchSummarySettings",
    "CompactionSettings",
    "RetrySettings",
    "should_compact",
    "validate_reserve_for_window",
]

#: Pi's ``DEFAULT_COMPACTION_SETTINGS.reserveTokens`` (also ``branchSummary.reserveTokens``): the
#: head-room kept free below the context window, and what sizes the summary requests.
DEFAULT_RESERVE_TOKENS = 16384
#: Pi's ``DEFAULT_COMPACTION_SETTINGS.keepRecentTokens``: recent conversation kept verbatim.
DEFAULT_KEEP_RECENT_TOKENS = 20000

#: How many automatic compactions one prompt may run (pi_nb's own setting; Pi has no limit).
DEFAULT_MAX_AUTO_COMPACTIONS_PER_PROMPT = 3


def _non_negative(value: int, key: str, owner: str) -> None:
    if value < 0:
        raise InvalidValueError(f"{owner}.{key} must be 0 or more; got {value}")


def _int_field(data: Mapping[str, Any], key: str, default: int, owner: str) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CompactionError(f"{owner}.{key} must be a number, got {value!r}")
    if isinstance(value, float):
        if not value.is_integer():
            raise CompactionError(f"{owner}.{key} must be a whole number, got {value!r}")
        value = int(value)
    return value


def _bool_field(data: Mapping[str, Any], key: str, default: bool, owner: str) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise CompactionError(f"{owner}.{key} must be true or false, got {value!r}")
    return value


@dataclass(frozen=True)
class CompactionSettings:
    """Pi's ``CompactionSettings {enabled, reserveTokens, keepRecentTokens}``.

    ``reserve_tokens`` is the head-room kept free below the context window (the threshold is
    ``context_window - reserve_tokens``) and also sizes the summary requests (0.8x for the history
    summary, 0.5x for a split turn's prefix). ``keep_recent_tokens`` is how much recent
    conversation (estimated tokens) survives a compaction verbatim.
    """

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    max_auto_compactions_per_prompt: int = DEFAULT_MAX_AUTO_COMPACTIONS_PER_PROMPT
    """pi_nb only (``compaction.maxAutoCompactionsPerPrompt``): automatic compactions one prompt may
    run before the turn ends with an error. Pi has no bound; its overflow-retry flag is reset by
    every successful response, so a tool result too big for the window can compact forever."""

    def __post_init__(self) -> None:
        # the range checks: 0 is a value like any other (no "if value:" tests)
        for key, value in (
            ("reserveTokens", self.reserve_tokens),
            ("keepRecentTokens", self.keep_recent_tokens),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidValueError(f"compaction.{key} must be a whole number; got {value!r}")
            _non_negative(value, key, "compaction")
        limit = self.max_auto_compactions_per_prompt
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidValueError(
                f"compaction.maxAutoCompactionsPerPrompt must be a whole number of at least 1; got {limit!r}"
            )

    def to_dict(self) -> CompactionSettingsDict:
        """Pi's shape; ``maxAutoCompactionsPerPrompt`` is added only when it is not the default."""
        out: CompactionSettingsDict = {
            "enabled": self.enabled,
            "reserveTokens": self.reserve_tokens,
            "keepRecentTokens": self.keep_recent_tokens,
        }
        if self.max_auto_compactions_per_prompt != DEFAULT_MAX_AUTO_COMPACTIONS_PER_PROMPT:
            out["maxAutoCompactionsPerPrompt"] = self.max_auto_compactions_per_prompt
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> CompactionSettings:
        """Pi's camelCase dict, partial or complete, merged over the defaults."""
        data = data or {}
        return cls(
            enabled=_bool_field(data, "enabled", True, "compaction"),
            reserve_tokens=_int_field(data, "reserveTokens", DEFAULT_RESERVE_TOKENS, "compaction"),
            keep_recent_tokens=_int_field(data, "keepRecentTokens", DEFAULT_KEEP_RECENT_TOKENS, "compaction"),
            max_auto_compactions_per_prompt=_int_field(
                data, "maxAutoCompactionsPerPrompt", DEFAULT_MAX_AUTO_COMPACTIONS_PER_PROMPT, "compaction"
            ),
        )

    @classmethod
    def coerce(cls, value: CompactionSettings | Mapping[str, Any] | None) -> CompactionSettings:
        """Accept a settings object, Pi's camelCase dict, or ``None`` (the defaults)."""
        if isinstance(value, CompactionSettings):
            return value
        return cls.from_dict(value)


DEFAULT_COMPACTION_SETTINGS = CompactionSettings()


@dataclass(frozen=True)
class BranchSummarySettings:
    """Pi's ``branchSummary`` settings: the reserve below the window, and whether /tree asks."""

    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    skip_prompt: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.reserve_tokens, bool) or not isinstance(self.reserve_tokens, int):
            raise InvalidValueError(
                f"branchSummary.reserveTokens must be a whole number; got {self.reserve_tokens!r}"
            )
        _non_negative(self.reserve_tokens, "reserveTokens", "branchSummary")

    def to_dict(self) -> BranchSummarySettingsDict:
        return cast(BranchSummarySettingsDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> BranchSummarySettings:
        data = data or {}
        return cls(
            reserve_tokens=_int_field(data, "reserveTokens", DEFAULT_RESERVE_TOKENS, "branchSummary"),
            skip_prompt=_bool_field(data, "skipPrompt", False, "branchSummary"),
        )

    @classmethod
    def coerce(cls, value: BranchSummarySettings | Mapping[str, Any] | None) -> BranchSummarySettings:
        if isinstance(value, BranchSummarySettings):
            return value
        return cls.from_dict(value)


DEFAULT_BRANCH_SUMMARY_SETTINGS = BranchSummarySettings()


@dataclass(frozen=True)
class RetrySettings:
    """Pi's ``retry`` settings, shared by agent turns and summary calls.

    A transient error is retried up to ``max_retries`` times, waiting ``base_delay_ms * 2**(n-1)``
    before retry ``n`` (2 s, 4 s, 8 s by default).
    """

    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000

    def __post_init__(self) -> None:
        for key, value in (("maxRetries", self.max_retries), ("baseDelayMs", self.base_delay_ms)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidValueError(f"retry.{key} must be a whole number; got {value!r}")
            _non_negative(value, key, "retry")

    def to_dict(self) -> RetrySettingsDict:
        return cast(RetrySettingsDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RetrySettings:
        data = data or {}
        return cls(
            enabled=_bool_field(data, "enabled", True, "retry"),
            max_retries=_int_field(data, "maxRetries", 3, "retry"),
            base_delay_ms=_int_field(data, "baseDelayMs", 2000, "retry"),
        )

    @classmethod
    def coerce(cls, value: RetrySettings | Mapping[str, Any] | None) -> RetrySettings:
        if isinstance(value, RetrySettings):
            return value
        return cls.from_dict(value)


DEFAULT_RETRY_SETTINGS = RetrySettings()


def should_compact(
    context_tokens: int | float,
    context_window: int | float,
    settings: CompactionSettings | Mapping[str, Any] = DEFAULT_COMPACTION_SETTINGS,
) -> bool:
    """Pi's ``shouldCompact``: enabled and ``context_tokens > context_window - reserve_tokens``.

    Strictly greater: a context exactly at the threshold does not compact.
    """
    s = CompactionSettings.coerce(settings)
    if not s.enabled:
        return False
    return context_tokens > context_window - s.reserve_tokens


def validate_reserve_for_window(
    settings: CompactionSettings | Mapping[str, Any], context_window: int, model: str = "the model"
) -> CompactionSettings:
    """The settings, if ``reserveTokens`` leaves room in ``context_window``; else InvalidValueError.

    With ``reserveTokens >= context_window`` the threshold ``context_window - reserveTokens`` is 0
    or less: every response would trigger a compaction (and Pi's summary request, sized from the
    reserve, would ask for more output than the window holds).
    """
    s = CompactionSettings.coerce(settings)
    if s.reserve_tokens >= context_window:
        raise InvalidValueError(
            f"compaction.reserveTokens ({s.reserve_tokens}) must be less than the context window of "
            f"{model} ({context_window}); lower reserveTokens or use a model with a bigger window"
        )
    return s
