"""JavaScript's ``undefined``, where Pi tells an omitted value apart from ``null``.

A few Pi functions behave differently when an argument is left out (``undefined``) and when it is
``null``. pi_nb keeps that difference explicit with one sentinel instead of overloading ``None``:

* :data:`UNDEFINED` means "not given" (the key is left out of the JSON Pi writes);
* ``None`` means ``null`` (the key is written, with ``null``).

For example, ``SessionManager.append_label_change(target_id)`` clears a label (Pi's
``appendLabelChange(id, undefined)``), while an entry field read as :data:`UNDEFINED` was absent from
the file. Test for it with ``value is UNDEFINED``; it is falsy and its ``repr`` is ``UNDEFINED``.

One place would be a trap with ``None``: Pi's ``buildSessionContext(entries, null)`` gives an empty
context (the leaf "before the first entry"), while leaving the leaf out gives the context of the last
entry. In Python, ``None`` means "not given", so :func:`pi_nb.build_session_context` and
:func:`pi_nb.build_context_entries` treat ``leaf_id=None`` like a leaf left out, and Pi's ``null``
leaf is spelled :data:`NO_LEAF`.
"""

from __future__ import annotations

from typing import Final

from pi_nb._js import UNDEFINED, Undefined

__all__ = ["NO_LEAF", "UNDEFINED", "NoLeaf", "Undefined"]


class NoLeaf:
    """The type of :data:`NO_LEAF`: Pi's ``null`` leaf ("before the first entry", an empty context)."""

    _instance: NoLeaf | None = None

    def __new__(cls) -> NoLeaf:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_LEAF"

    def __bool__(self) -> bool:
        return False


NO_LEAF: Final = NoLeaf()
"""``build_session_context(entries, NO_LEAF)`` is Pi's ``buildSessionContext(entries, null)``."""
