"""Sessions: Pi's JSONL v3 entry tree, its store, and its projection to the LLM context.

``types`` (entry shapes) and ``context`` (the pure context projection) come first; the store
(manager, JSONL I/O, migrations, paths) is re-exported below them.
"""

# ruff: noqa: I001  (the store's imports are grouped below the pure modules on purpose)
from __future__ import annotations

from pi_nb.session import context as _context
from pi_nb.session import types as _types
from pi_nb.session.context import *  # noqa: F403
from pi_nb.session.types import *  # noqa: F403

# the store (engineer S): ids, JSONL I/O, migrations, paths/listing, the SessionManager
from pi_nb.session import ids as _ids
from pi_nb.session import jsonl as _jsonl
from pi_nb.session import manager as _manager
from pi_nb.session import migrations as _migrations
from pi_nb.session import paths as _paths
from pi_nb.session.ids import *  # noqa: F403
from pi_nb.session.jsonl import *  # noqa: F403
from pi_nb.session.manager import *  # noqa: F403
from pi_nb.session.migrations import *  # noqa: F403
from pi_nb.session.paths import *  # noqa: F403

__all__ = sorted(
    [
        *_types.__all__,
        *_context.__all__,
        *_ids.__all__,
        *_jsonl.__all__,
        *_migrations.__all__,
        *_paths.__all__,
        *_manager.__all__,
    ]
)
