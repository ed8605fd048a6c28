"""pi_nb: the context engineering of the Pi coding agent (0.85.0), in Python and in Jupyter.

``import pi_nb`` loads the engine only: it never imports IPython, ipywidgets, pandas, matplotlib or
a provider SDK. The notebook toolkit is loaded by ``%load_ext pi_nb`` (or ``import pi_nb.notebook``).

Every mirrored Pi function is exported here under its snake_case name; ``__all__`` is sorted and
tested (tests/test_public_api.py): each module below lists its public names in its own ``__all__``
and this file re-exports them.
"""

# ruff: noqa: I001  (imports are grouped per module under the markers below, on purpose)
from __future__ import annotations

from pi_nb import errors
from pi_nb.errors import *  # noqa: F403

# --- truncation (pi_nb/truncation.py) ---
from pi_nb import truncation as _truncation
from pi_nb.truncation import *  # noqa: F403

# --- tokens (pi_nb/tokens.py) ---
from pi_nb import tokens as _tokens
from pi_nb.tokens import *  # noqa: F403

# --- messages (pi_nb/messages.py) ---
from pi_nb import messages as _messages
from pi_nb.messages import *  # noqa: F403

# --- session (pi_nb/session/) ---
from pi_nb import session as _session
from pi_nb.session import *  # noqa: F403

# --- resources (pi_nb/resources/) ---
from pi_nb import resources as _resources
from pi_nb.resources import *  # noqa: F403

# --- system prompt (pi_nb/system_prompt.py) ---
from pi_nb import system_prompt as _system_prompt
from pi_nb.system_prompt import *  # noqa: F403

# --- compaction (pi_nb/compaction/) ---
from pi_nb import compaction as _compaction
from pi_nb.compaction import *  # noqa: F403

# --- tools (pi_nb/tools/) ---
from pi_nb import tools as _tools
from pi_nb.tools import *  # noqa: F403

# --- providers / agent ---
from pi_nb import providers as _providers
from pi_nb.providers import *  # noqa: F403
from pi_nb import agent as _agent
from pi_nb.agent import *  # noqa: F403

# --- what-if replay (pi_nb/what_if.py) ---
from pi_nb import what_if as _what_if
from pi_nb.what_if import *  # noqa: F403

__version__ = "0.1.0"

__all__ = sorted(
    [
        *errors.__all__,
        *_truncation.__all__,
        *_tokens.__all__,
        *_messages.__all__,
        *_session.__all__,
        *_providers.__all__,
        *_agent.__all__,
        *_resources.__all__,
        *_system_prompt.__all__,
        *_compaction.__all__,
        *_tools.__all__,
        *_what_if.__all__,
    ]
)


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext pi_nb``: registers the ``%%pi`` / ``%pi`` magics (the notebook layer loads only now)."""
    from pi_nb.notebook.magics import load_ipython_extension as _load

    _load(ipython)
