"""Sessions: Pi's JSONL v3 entry tree, its store, and its projection to the LLM context.

``types`` (entry shapes) and ``context`` (the pure context projection) come first; the store
(manager, JSONL I/O, migrations, paths) is re-exported below them.
"""

from __future__ import annotations

from pi_nb.session import context as _context
from pi_nb.session import types as _types
from pi_nb.session.context import *  # noqa: F403
from pi_nb.session.types import *  # noqa: F403

__all__ = sorted(
    [
        *_types.__all__,
        *_context.__all__,
    ]
)
