"""JavaScript's ``undefined``, where Pi tells an omitted value apart from ``null``.

A few Pi functions behave differently when an argument is left out (``undefined``) and when it is
``null``. pi_nb keeps that difference explicit with one sentinel instead of overloading ``None``:

* :data:`UNDEFINED` means "not given" (the key is left out of the JSON Pi writes);
* ``None`` means ``null`` (the key is written, with ``null``).

For example, ``SessionManager.append_label_change(target_id)`` clears a label (Pi's
``appendLabelChange(id, undefined)``), while an entry field read as :data:`UNDEFINED` was absent from
the file. Test for it with ``value is UNDEFINED``; it is falsy and its ``repr`` is ``UNDEFINED``.
"""

from __future__ import annotations

from pi_nb._js import UNDEFINED, Undefined

__all__ = ["UNDEFINED", "Undefined"]
