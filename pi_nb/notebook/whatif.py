"""Deprecated name of :mod:`pi_nb.notebook.what_if` (the frames and plots of what-if replays).

The module was renamed so the engine's :mod:`pi_nb.what_if` and its notebook views share one name;
this alias keeps old imports working for one release, with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings

from pi_nb.notebook.what_if import *  # noqa: F403
from pi_nb.notebook.what_if import __all__ as __all__

warnings.warn(
    "pi_nb.notebook.whatif is now pi_nb.notebook.what_if (the old name goes in pi_nb 0.3)",
    DeprecationWarning,
    stacklevel=2,
)
