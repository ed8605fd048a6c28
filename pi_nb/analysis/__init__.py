"""Analysis of sessions, in plain Python: the engine behind the notebook's frames and reports.

Modelled on Inspect AI's ``inspect_ai.analysis`` split:

* :mod:`~pi_nb.analysis.columns` — every frame's columns declared as data (name, dtype, how the
  value is read);
* :mod:`~pi_nb.analysis.extract` — the row contexts of each frame kind, from a session's
  entries and messages;
* :mod:`~pi_nb.analysis.rows` — the rows of a session source, each file read once for every kind;
* :mod:`~pi_nb.analysis.truncation` — truncation reports (what was cut where, per tool result);
* :mod:`~pi_nb.analysis.corpus` — the session files of a corpus and their rows, in chunks.

Nothing here imports pandas, IPython or ipywidgets: :mod:`pi_nb.notebook.frames` turns rows and
column declarations into DataFrames.
"""

from __future__ import annotations
