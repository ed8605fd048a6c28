"""Many policies, many settings, many sessions: one table row each (:func:`sweep_policies`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pi_nb.errors import ReplayError
from pi_nb.what_if.policies.base import ContextPolicy, forget_estimates
from pi_nb.what_if.policies.cost import CacheModel, policy_cost
from pi_nb.what_if.policies.replay import replay_policy

if TYPE_CHECKING:
    from pi_nb.providers.catalog import ModelCost, ModelSpec
    from pi_nb.what_if import SessionInput

__all__ = ["expand_policies", "sweep_policies"]


def expand_policies(
    policies: Sequence[ContextPolicy | str], params: Mapping[str, Sequence[Mapping[str, Any]]] | None = None
) -> list[ContextPolicy | str]:
    """Each policy, and for a policy named in ``params`` one copy per settings mapping
    (``dataclasses.replace(policy, **settings)``) instead of the policy itself."""
    out: list[ContextPolicy | str] = []
    for policy in policies:
        name = policy if isinstance(policy, str) else policy.name
        grid = (params or {}).get(name)
        if not grid or isinstance(policy, str):
            out.append(policy)
            continue
        if not dataclasses.is_dataclass(policy):
            raise ReplayError(f"params for {name!r}: the policy is not a dataclass")
        for settings in grid:
            out.append(dataclasses.replace(policy, **settings))
    return out


def sweep_policies(
    sessions: Iterable[SessionInput],
    policies: Sequence[ContextPolicy | str],
    *,
    context_window: Sequence[int] | int,
    params: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    cost: bool = True,
    cache: CacheModel = "auto",
    prices: ModelSpec | ModelCost | None = None,
) -> list[dict[str, Any]]:
    """Replay every session under every policy (and window): one row per (session, window,
    policy) with :meth:`PolicyReplay.outcome` and, with ``cost``, :meth:`PolicyCost.row`."""
    windows = [context_window] if isinstance(context_window, int) else list(context_window)
    expanded = expand_policies(policies, params)
    if not expanded or not windows:
        raise ReplayError("the sweep grid is empty")
    rows: list[dict[str, Any]] = []
    from pi_nb.what_if import _load

    for session in sessions:
        path, session_id, session_file, _header = _load(session, None)
        for window in windows:
            for policy in expanded:
                result = replay_policy(
                    path, policy, context_window=window, loaded=(path, session_id, session_file)
                )
                row: dict[str, Any] = {"context_window": window, "session_file": result.session_file}
                row.update(result.outcome())
                if cost:
                    priced = policy_cost(result, cache=cache, prices=prices).row()
                    row.update({k: v for k, v in priced.items() if k not in row})
                rows.append(row)
        forget_estimates()  # one session's messages at a time stay in memory
    return rows
