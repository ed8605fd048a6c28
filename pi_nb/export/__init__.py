"""Sessions written out in other tools' formats.

* :mod:`pi_nb.export.inspect` — a session (or several) as an Inspect AI eval log, for Inspect
  View and ``inspect_ai.analysis`` (``pip install 'pi_nb[inspect]'``).

Importing this package imports no exporter's library: each is imported when it is called.
"""

from __future__ import annotations

from pi_nb.export.inspect import to_eval_log, write_inspect_log

__all__ = ["to_eval_log", "write_inspect_log"]
