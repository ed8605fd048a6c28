"""Context policies as values, replayed over recorded sessions and priced as providers bill them.

:mod:`~pi_nb.what_if.policies.base` (the protocol), :mod:`~pi_nb.what_if.policies.pi` (Pi 0.85.0's rule, the
reference), :mod:`~pi_nb.what_if.policies.library` (other agents' policies), :mod:`~pi_nb.what_if.policies.replay`
(the requests a policy sends over a recording) and :mod:`~pi_nb.what_if.policies.cost` (what they cost).
"""

from pi_nb.what_if.policies.base import ContextPolicy, PolicyContext, Rewrite
from pi_nb.what_if.policies.cost import PolicyCost, RequestCost, calibrate_miss_rate, policy_cost
from pi_nb.what_if.policies.library import (
    ClaudeCodeAutoCompact,
    ClearToolUses,
    CodexTruncation,
    InspectTrim,
    KeepAll,
    ObservationMasking,
    TrimLastTokens,
    TrimLastTurns,
)
from pi_nb.what_if.policies.pi import PiPolicy
from pi_nb.what_if.policies.replay import RECORDED, PolicyEvent, PolicyReplay, PolicyRequest, replay_policy
from pi_nb.what_if.policies.sweep import expand_policies, sweep_policies

__all__ = [
    "RECORDED",
    "ClaudeCodeAutoCompact",
    "ClearToolUses",
    "CodexTruncation",
    "ContextPolicy",
    "InspectTrim",
    "KeepAll",
    "ObservationMasking",
    "PiPolicy",
    "PolicyContext",
    "PolicyCost",
    "PolicyEvent",
    "PolicyReplay",
    "PolicyRequest",
    "RequestCost",
    "Rewrite",
    "TrimLastTokens",
    "TrimLastTurns",
    "calibrate_miss_rate",
    "expand_policies",
    "policy_cost",
    "replay_policy",
    "sweep_policies",
]
