"""PLACEHOLDER: the reader of this harness is being written (replace this module whole)."""

from __future__ import annotations

from typing import Any

from pi_nb.harness.types import ForeignSession

__all__ = ["HARNESS", "looks_like", "read"]

HARNESS = "claude-code"


def looks_like(records: list[Any]) -> bool:
    """True when the first records of a JSONL file are this harness's."""
    return False


def read(data: bytes, path: str | None = None) -> ForeignSession:
    """The file's bytes mapped to Pi entries."""
    raise NotImplementedError
