"""Compaction and branch summaries (Pi 0.85.0 ``core/compaction/`` and the AgentSession flows).

* thresholds and settings: :mod:`~pi_nb.compaction.settings` (``should_compact``...);
* where to cut: :mod:`~pi_nb.compaction.cut_points`; what to summarise:
  :mod:`~pi_nb.compaction.preparation` (``prepare_compaction``);
* the summary request: :mod:`~pi_nb.compaction.serialization` (``serialize_conversation``, file
  lists), :mod:`~pi_nb.compaction.prompts`, :mod:`~pi_nb.compaction.summaries` (``compact``),
  :mod:`~pi_nb.compaction.retry`;
* overflow detection: :mod:`~pi_nb.compaction.overflow`;
* branch summaries: :mod:`~pi_nb.compaction.branch_summary`;
* hooks and the session-level flows: :mod:`~pi_nb.compaction.hooks`,
  :mod:`~pi_nb.compaction.orchestration` (``run_compaction``, ``navigate_tree``);
* the JSON shapes (``to_dict()`` results, events, hook results) as TypedDicts:
  :mod:`~pi_nb.compaction._types`, re-exported here.

The token helpers Pi exports from its compaction module (``estimate_tokens``,
``calculate_context_tokens``, ``estimate_context_tokens``, ``get_last_assistant_usage``) live in
:mod:`pi_nb.tokens` and are re-exported here.
"""

from __future__ import annotations

from pi_nb.compaction import _types
from pi_nb.compaction import branch_summary as _branch_summary
from pi_nb.compaction import cut_points as _cut_points
from pi_nb.compaction import hooks as _hooks
from pi_nb.compaction import orchestration as _orchestration
from pi_nb.compaction import overflow as _overflow
from pi_nb.compaction import preparation as _preparation
from pi_nb.compaction import prompts as _prompts
from pi_nb.compaction import retry as _retry
from pi_nb.compaction import serialization as _serialization
from pi_nb.compaction import settings as _settings
from pi_nb.compaction import summaries as _summaries
from pi_nb.compaction._types import *  # noqa: F403
from pi_nb.compaction.branch_summary import *  # noqa: F403
from pi_nb.compaction.cut_points import *  # noqa: F403
from pi_nb.compaction.hooks import *  # noqa: F403
from pi_nb.compaction.orchestration import *  # noqa: F403
from pi_nb.compaction.overflow import *  # noqa: F403
from pi_nb.compaction.preparation import *  # noqa: F403
from pi_nb.compaction.prompts import *  # noqa: F403
from pi_nb.compaction.retry import *  # noqa: F403
from pi_nb.compaction.serialization import *  # noqa: F403
from pi_nb.compaction.settings import *  # noqa: F403
from pi_nb.compaction.summaries import *  # noqa: F403

# Pi exports its token helpers from the compaction module; pi_nb keeps them in pi_nb.tokens and
# makes them reachable here too (not in __all__: the top-level package exports them once).
from pi_nb.tokens import (  # noqa: F401
    calculate_context_tokens,
    estimate_context_tokens,
    estimate_tokens,
    get_last_assistant_usage,
)

__all__ = sorted(
    [
        *_types.__all__,
        *_branch_summary.__all__,
        *_cut_points.__all__,
        *_hooks.__all__,
        *_orchestration.__all__,
        *_overflow.__all__,
        *_preparation.__all__,
        *_prompts.__all__,
        *_retry.__all__,
        *_serialization.__all__,
        *_settings.__all__,
        *_summaries.__all__,
    ]
)
