"""The token-budget model now lives in the engine, :mod:`pi_nb.budget`.

This module is that same module under its old name (``pi_nb.notebook.budget is pi_nb.budget``),
so existing imports and monkeypatches keep working.
"""

from __future__ import annotations

import sys

from pi_nb import budget as _budget

sys.modules[__name__] = _budget
