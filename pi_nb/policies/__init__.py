"""Context policies as values (:mod:`pi_nb.what_if.policies`), under their short name.

The policies live beside the what-if replay they run on (they share its walk of a recording);
``from pi_nb.policies import PiPolicy, ObservationMasking, policy_cost`` is the usual import.
"""

from pi_nb.what_if.policies import *  # noqa: F403
from pi_nb.what_if.policies import __all__ as __all__
