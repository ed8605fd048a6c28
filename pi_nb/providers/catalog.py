"""Every model Pi 0.85.0 knows: pi-ai's model catalog, shipped with pi_nb, and what a turn costs.

The catalog is pi-ai 0.85.0's own data (1,336 models from 39 providers), written into
``pi_nb/_data/models.json`` by ``tools/make_model_catalog.py`` and read here without Node. Each
model is a :class:`ModelSpec`: its provider, id, display name, the API it speaks, base URL,
context window, output limit, reasoning flag, input kinds and prices (US dollars per million
tokens, with price tiers above an input size for some models).

* :func:`list_models` / :func:`find_model` / :func:`list_providers` look models up;
  :func:`context_window_for` is the one number budgets and views need.
* :func:`calculate_cost` is pi-ai's ``calculateCost``: the tier whose ``inputTokensAbove`` is the
  highest one below the request's input (input + cache reads + cache writes) replaces the base
  prices, and cache writes with a 1-hour lifetime (Anthropic's ``cacheWrite1h``) cost twice the
  input price. :func:`apply_cost` writes it into a usage dict, as pi-ai's providers do.
* :func:`session_cost` and :func:`usage_cost_breakdown` add up what a session cost, the way Pi's
  ``getSessionStats`` and ``/usage`` do.
"""

from __future__ import annotations

import copy
import difflib
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any, NotRequired, TypedDict, cast

from pi_nb._catalog_data import bundled_catalog
from pi_nb._wire import wire_dict
from pi_nb.errors import InvalidMessageError, ProviderError
from pi_nb.messages import Usage, UsageCost
from pi_nb.session.types import SessionEntry

__all__ = [
    "KNOWN_MODELS",
    "CatalogInfo",
    "CostTier",
    "CostTierDict",
    "ModelCost",
    "ModelCostDict",
    "ModelDict",
    "ModelSpec",
    "UnknownModelError",
    "UsageCostRow",
    "apply_cost",
    "calculate_cost",
    "catalog_info",
    "context_window_for",
    "find_model",
    "list_models",
    "list_providers",
    "provider_api_key_env",
    "session_context_window",
    "session_cost",
    "usage_cost_breakdown",
]


class UnknownModelError(ProviderError, ValueError):
    """A model or provider the catalog does not know (the message names close matches)."""


# --------------------------------------------------------------------------------------------
# pi-ai's JSON shapes of a model (``models.json`` and the ``to_dict()`` results)


class CostTierDict(TypedDict):
    """One price tier of ``Model.cost.tiers``: ``{inputTokensAbove, input, output, cacheRead, cacheWrite}``."""

    inputTokensAbove: int
    input: float
    output: float
    cacheRead: float
    cacheWrite: float


class ModelCostDict(TypedDict):
    """pi-ai's ``Model.cost`` (US dollars per million tokens): ``{input, output, cacheRead,
    cacheWrite, tiers?}``."""

    input: float
    output: float
    cacheRead: float
    cacheWrite: float
    tiers: NotRequired[list[CostTierDict]]


class ModelDict(TypedDict):
    """pi-ai's ``Model`` as JSON (one model of the shipped catalog): ``{id, name, api, provider,
    baseUrl, reasoning, input, cost, contextWindow, maxTokens, headers?, compat?, thinkingLevelMap?}``.
    """

    id: str
    name: str
    api: str
    provider: str
    baseUrl: str
    reasoning: bool
    input: list[str]
    cost: ModelCostDict
    contextWindow: int
    maxTokens: int
    headers: NotRequired[dict[str, str]]
    # per-API switches (supportsDeveloperRole, thinkingFormat, maxTokensField, ... dozens, each
    # API its own): open JSON, read by key where pi_nb uses one
    compat: NotRequired[dict[str, Any]]
    # thinking level -> the provider's effort name, or None where the level is not offered
    thinkingLevelMap: NotRequired[dict[str, str | None]]


class CatalogInfo(TypedDict):
    """:func:`catalog_info`: ``{source, generatedAt, modelCount, providerCount}``."""

    source: str
    generatedAt: str
    modelCount: int
    providerCount: int


class UsageCostRow(TypedDict):
    """One row of :func:`usage_cost_breakdown`: ``{key, cost, tokens}``."""

    key: str
    cost: float
    tokens: int


@dataclass(frozen=True)
class CostTier:
    """Prices that replace the base ones once a request's input exceeds ``input_tokens_above``."""

    input_tokens_above: int
    input: float
    output: float
    cache_read: float
    cache_write: float

    def to_dict(self) -> CostTierDict:
        """Pi's shape: ``{inputTokensAbove, input, output, cacheRead, cacheWrite}``."""
        return cast(CostTierDict, wire_dict(self))  # keys: the fields, camelCase (pi_nb._wire)


_COST_KEYS = {"input": "input", "output": "output", "cacheRead": "cache_read", "cacheWrite": "cache_write"}


@dataclass(frozen=True)
class ModelCost:
    """A model's prices in US dollars per million tokens (pi-ai's ``Model.cost``).

    ``cost["cacheRead"]`` reads a price under Pi's key as well as ``cost.cache_read``;
    ``cost["tiers"]`` is the tiers in Pi's shape.
    """

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    tiers: tuple[CostTier, ...] = ()

    def __getitem__(self, key: str) -> Any:  # a price (float), or the tiers for "tiers"
        if key == "tiers":
            return [t.to_dict() for t in self.tiers]
        if key in _COST_KEYS:
            return getattr(self, _COST_KEYS[key])
        raise KeyError(key)

    def to_dict(self) -> ModelCostDict:
        """Pi's shape: ``{input, output, cacheRead, cacheWrite[, tiers]}``."""
        out: ModelCostDict = {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
        }
        if self.tiers:
            out["tiers"] = [t.to_dict() for t in self.tiers]
        return out

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ModelCost:
        """From pi-ai's ``Model.cost`` (a :class:`ModelCostDict`, read as given)."""
        return cls(
            input=raw["input"],
            output=raw["output"],
            cache_read=raw["cacheRead"],
            cache_write=raw["cacheWrite"],
            tiers=tuple(
                CostTier(t["inputTokensAbove"], t["input"], t["output"], t["cacheRead"], t["cacheWrite"])
                for t in raw.get("tiers") or ()
            ),
        )


@dataclass(frozen=True)
class ModelSpec:
    """What the catalog knows of one model (pi-ai's ``Model``, typed).

    ``api`` is the wire protocol pi-ai uses for it (``anthropic-messages``, ``openai-completions``,
    ``openai-responses``, ``google-generative-ai``, ``bedrock-converse-stream``, ...). ``raw`` is the
    model exactly as pi-ai has it (``compat``, ``headers``, ``thinkingLevelMap`` included);
    :meth:`to_dict` returns a copy of it.
    """

    provider: str
    id: str
    context_window: int
    max_tokens: int
    reasoning: bool
    input: tuple[str, ...] = ("text", "image")
    name: str = ""
    api: str = "openai-completions"
    base_url: str = ""
    cost: ModelCost = field(default_factory=ModelCost)
    # a read-only view of the model's ModelDict (a MappingProxyType, so not typed as the TypedDict)
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        from pi_nb.providers.base import validate_model_limits

        validate_model_limits(self.context_window, self.max_tokens, f"{self.provider}/{self.id}")

    @property
    def key(self) -> str:
        """``"provider/id"``, the spec :func:`pi_nb.get_model` takes."""
        return f"{self.provider}/{self.id}"

    @property
    def headers(self) -> dict[str, str]:
        """Extra HTTP headers pi-ai sends for this model (``{}`` for most)."""
        return dict(self.raw.get("headers") or {})

    def to_dict(self) -> ModelDict:
        """The model in pi-ai's JSON shape (a deep copy)."""
        if self.raw:
            # raw is the model's JSON as from_dict was given it (the catalog's own: a ModelDict)
            return cast(ModelDict, copy.deepcopy(dict(self.raw)))
        return {
            "id": self.id,
            "name": self.name or self.id,
            "api": self.api,
            "provider": self.provider,
            "baseUrl": self.base_url,
            "reasoning": self.reasoning,
            "input": list(self.input),
            "cost": self.cost.to_dict(),
            "contextWindow": self.context_window,
            "maxTokens": self.max_tokens,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ModelSpec:
        """A spec from pi-ai's JSON shape of a model (a :class:`ModelDict`; read as given, the
        numbers converted with ``int()``/``bool()``)."""
        return cls(
            provider=raw["provider"],
            id=raw["id"],
            context_window=int(raw["contextWindow"]),
            max_tokens=int(raw["maxTokens"]),
            reasoning=bool(raw["reasoning"]),
            input=tuple(raw["input"]),
            name=raw.get("name") or raw["id"],
            api=raw["api"],
            base_url=raw.get("baseUrl") or "",
            cost=ModelCost.from_dict(raw["cost"]),
            raw=MappingProxyType(copy.deepcopy(dict(raw))),
        )


# --------------------------------------------------------------------------------------------
# the shipped data


@dataclass(frozen=True)
class _Catalog:
    info: Mapping[str, Any]  # a read-only view of the CatalogInfo
    providers: Mapping[str, tuple[ModelSpec, ...]]
    by_key: Mapping[tuple[str, str], ModelSpec]
    api_key_env: Mapping[str, tuple[str, ...]]


@cache
def _catalog() -> _Catalog:
    data = bundled_catalog()
    providers = {p: tuple(ModelSpec.from_dict(m) for m in models) for p, models in data["providers"].items()}
    by_key = {(s.provider, s.id): s for specs in providers.values() for s in specs}
    info = {k: data[k] for k in ("source", "generatedAt", "modelCount", "providerCount")}
    return _Catalog(
        info=MappingProxyType(info),
        providers=MappingProxyType(providers),
        by_key=MappingProxyType(by_key),
        api_key_env=MappingProxyType({p: tuple(v) for p, v in data["apiKeyEnv"].items()}),
    )


def builtin_models(provider: str) -> tuple[ModelSpec, ...]:
    """The bundled catalog's own models of ``provider`` (``()`` for a provider it does not know),
    before the agent dir's ``models.json`` adds or changes any."""
    return _catalog().providers.get(provider, ())


def catalog_info() -> CatalogInfo:
    """Where the shipped catalog comes from: ``source`` (``@earendil-works/pi-ai@0.85.0``),
    ``generatedAt`` (pi-ai's own date for its data), ``modelCount``, ``providerCount``."""
    info = _catalog().info
    return {
        "source": info["source"],
        "generatedAt": info["generatedAt"],
        "modelCount": info["modelCount"],
        "providerCount": info["providerCount"],
    }


def _agent_models() -> Mapping[str, tuple[ModelSpec, ...]]:
    """The providers the agent dir's ``models.json`` adds or changes, with their models."""
    from pi_nb.providers.models_json import agent_models

    return agent_models()[1]


def list_providers() -> list[str]:
    """The catalog's providers, sorted (``amazon-bedrock`` ... ``zai-coding-cn``), then the ones
    the agent dir's ``models.json`` adds (in its order)."""
    catalog = _catalog().providers
    return sorted(catalog) + [p for p in _agent_models() if p not in catalog]


def close_providers(provider: str, n: int = 5) -> list[str]:
    """Catalog providers that look like ``provider`` (for "did you mean" messages)."""
    names = list_providers()
    close = difflib.get_close_matches(provider.lower(), names, n=n, cutoff=0.6)
    # a model family named instead of its provider: gemini -> google, claude -> anthropic, ...
    families = {
        "gemini": "google",
        "claude": "anthropic",
        "gpt": "openai",
        "grok": "xai",
        "kimi": "moonshotai",
    }
    for family, name in families.items():
        if family in provider.lower() and name not in close:
            close.insert(0, name)
    close += [p for p in names if provider and provider.lower() in p and p not in close]
    return close[:n]


def unknown_provider_text(provider: str) -> str:
    close = close_providers(provider)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    return (
        f"Unknown provider {provider!r}.{hint} The catalog (pi-ai 0.85.0) has {', '.join(list_providers())}"
    )


def _unknown_provider(provider: str) -> UnknownModelError:
    return UnknownModelError(unknown_provider_text(provider))


def list_models(provider: str | None = None) -> list[ModelSpec]:
    """Every catalog model (in pi-ai's order), or one provider's; an unknown provider is an error.

    The agent dir's ``models.json`` is applied as Pi applies it: its custom providers' models are
    listed after the catalog's, and a built-in provider it changes lists its changed models."""
    catalog = _catalog()
    custom = _agent_models()
    if provider is None:
        out = [spec for name, specs in catalog.providers.items() for spec in custom.get(name, specs)]
        return out + [
            spec for name, specs in custom.items() if name not in catalog.providers for spec in specs
        ]
    if provider in custom:
        return list(custom[provider])
    if provider not in catalog.providers:
        raise _unknown_provider(provider)
    return list(catalog.providers[provider])


def find_model(provider: str, model_id: str) -> ModelSpec | None:
    """The model ``provider``/``model_id`` (the catalog's, as the agent dir's ``models.json``
    leaves or changes it, or one models.json adds), or ``None`` when there is no such model."""
    custom = _agent_models().get(provider)
    if custom is not None:
        return next((spec for spec in custom if spec.id == model_id), None)
    return _catalog().by_key.get((provider, model_id))


def close_model_ids(provider: str, model_id: str, n: int = 5) -> list[str]:
    """Ids of ``provider`` that look like ``model_id`` (for "did you mean" messages)."""
    ids = [s.id for s in _agent_models().get(provider) or _catalog().providers.get(provider, ())]
    close = difflib.get_close_matches(model_id, ids, n=n, cutoff=0.5)
    prefix = [i for i in ids if i.startswith(model_id) and i not in close]
    return (close + prefix)[:n]


def context_window_for(provider: str | None, model_id: str | None) -> int | None:
    """The context window of a catalog model, ``None`` when the catalog does not know it.

    This is what a view over a real Pi session file needs: the assistant messages name their
    ``provider`` and ``model``.
    """
    if not provider or not model_id:
        return None
    spec = find_model(provider, model_id)
    return spec.context_window if spec else None


def session_context_window(entries: Sequence[Mapping[str, Any]], leaf_id: str | None = None) -> int | None:
    """The catalog's context window for the model a session is on, ``None`` if unknown.

    The model is Pi's for the leaf (the last entry, or ``leaf_id``): the latest ``model_change`` or
    assistant message on its path (``build_session_context(...).model``), so a view over a real Pi
    session file needs no window passed in.
    """
    from pi_nb.session.context import build_session_context

    # entries read tolerantly from a file: build_session_context checks each one itself
    model = build_session_context(cast("Sequence[SessionEntry]", entries), leaf_id)
    if not model.model:
        return None
    return context_window_for(model.model.get("provider"), model.model.get("modelId"))


def provider_api_key_env(provider: str) -> tuple[str, ...]:
    """The environment variables pi-ai reads a provider's API key from (``GROQ_API_KEY``...),
    in pi-ai's order; ``()`` for a provider that signs in otherwise (Bedrock, Vertex credentials)."""
    return _catalog().api_key_env.get(provider, ())


class _KnownModels(Mapping[str, ModelSpec]):
    """``"provider/id"`` -> :class:`ModelSpec` over the whole catalog (read-only)."""

    def __getitem__(self, key: str) -> ModelSpec:
        provider, _, model_id = key.partition("/")
        spec = find_model(provider, model_id)
        if spec is None:
            raise KeyError(key)
        return spec

    def __iter__(self) -> Iterator[str]:
        return (spec.key for spec in list_models())

    def __len__(self) -> int:
        return len(_catalog().by_key)

    def __repr__(self) -> str:
        return f"<KNOWN_MODELS: {len(self)} models of pi-ai 0.85.0's catalog>"


KNOWN_MODELS: Mapping[str, ModelSpec] = _KnownModels()


# --------------------------------------------------------------------------------------------
# costs


def _count(usage: Mapping[str, Any], key: str, required: bool = True) -> float:
    value = usage.get(key)
    if value is None and not required:
        return 0
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
    ):
        raise InvalidMessageError(f"usage.{key} must be a finite number >= 0, got {value!r}")
    return value


def _cost_of(spec: ModelSpec | ModelCost) -> ModelCost:
    if isinstance(spec, ModelSpec):
        return spec.cost
    if isinstance(spec, ModelCost):
        return spec
    raise TypeError(f"calculate_cost needs a ModelSpec or a ModelCost, got {type(spec).__name__}")


def calculate_cost(spec: ModelSpec | ModelCost, usage: Mapping[str, Any]) -> UsageCost:
    """What ``usage`` cost with ``spec``'s prices: ``{input, output, cacheRead, cacheWrite, total}``.

    pi-ai's ``calculateCost``, operation for operation (so the floats are the same): the input
    size is ``input + cacheRead + cacheWrite``; among the tiers whose ``inputTokensAbove`` it
    exceeds, the highest one's prices apply; ``cacheWrite1h`` (the part of ``cacheWrite`` written
    with a 1-hour lifetime) costs twice the input price. ``usage`` is not changed (see
    :func:`apply_cost`); a count that is missing, negative or not a number is an
    :class:`~pi_nb.errors.InvalidMessageError`. (``usage`` is a :class:`~pi_nb.messages.Usage`,
    typed ``Mapping`` because usages read from session files are checked here, count by count.)
    """
    cost = _cost_of(spec)
    n_input = _count(usage, "input")
    n_output = _count(usage, "output")
    n_read = _count(usage, "cacheRead")
    n_write = _count(usage, "cacheWrite")
    n_long = _count(usage, "cacheWrite1h", required=False)
    input_tokens = n_input + n_read + n_write
    rates: ModelCost | CostTier = cost
    matched = -1
    for tier in cost.tiers:
        if input_tokens > tier.input_tokens_above and tier.input_tokens_above > matched:
            rates = tier
            matched = tier.input_tokens_above
    short_write = n_write - n_long
    c_input = (rates.input / 1000000) * n_input
    c_output = (rates.output / 1000000) * n_output
    c_read = (rates.cache_read / 1000000) * n_read
    c_write = (rates.cache_write * short_write + rates.input * 2 * n_long) / 1000000
    return {
        "input": c_input,
        "output": c_output,
        "cacheRead": c_read,
        "cacheWrite": c_write,
        "total": c_input + c_output + c_read + c_write,
    }


def apply_cost(spec: ModelSpec | ModelCost | None, usage: Usage) -> Usage:
    """Write :func:`calculate_cost` into ``usage["cost"]`` (what pi-ai's providers do when a
    response's usage arrives) and return ``usage``. With ``spec=None`` (a model the catalog does not
    know) the usage is returned unchanged: its cost stays as it was (zero for a fresh usage)."""
    if spec is not None:
        usage["cost"] = calculate_cost(spec, usage)
    return usage


def _entry_usages(entries: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(key, usage)`` for every billed usage, with Pi's ``/usage`` keys.

    ``entries`` are session entries or bare messages as read from a session file: typed ``Mapping``
    (not ``SessionEntry | AgentMessage``) because each is checked here and odd ones are skipped or
    refused, as Pi does; the usages are checked by :func:`_count` / :func:`_usage_total`.
    """
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise InvalidMessageError(
                f"expected a session entry or a message (a dict), got {type(entry).__name__}"
            )
        kind = entry.get("type")
        if kind is None and "role" in entry:  # a bare message
            message: Any = entry
        elif kind == "message":
            message = entry.get("message")
        elif kind in ("branch_summary", "compaction"):
            if isinstance(entry.get("usage"), Mapping):
                yield "Tools/summaries", entry["usage"]
            continue
        else:
            continue
        if not isinstance(message, Mapping) or not isinstance(message.get("usage"), Mapping):
            continue
        role = message.get("role")
        if role == "assistant":
            model = message.get("responseModel") or message.get("model")
            yield f"{message.get('provider')}/{model}", message["usage"]
        elif role == "toolResult":
            yield "Tools/summaries", message["usage"]


def _usage_total(usage: Mapping[str, Any]) -> float:
    cost = usage.get("cost")
    total = cost.get("total") if isinstance(cost, Mapping) else None
    if isinstance(total, bool) or not isinstance(total, (int, float)):
        raise InvalidMessageError(f"usage.cost.total must be a number, got {total!r}")
    return total


def session_cost(entries: Iterable[Mapping[str, Any]]) -> float:
    """What a session cost in US dollars: Pi's ``getSessionStats().cost``.

    ``entries`` are session entries (``SessionManager.get_entries()``, a Pi session file's lines)
    or bare messages. Like Pi it adds ``usage.cost.total`` of every assistant message, of tool
    results that carry a usage, and of compaction and branch-summary entries, over *all* entries
    (history compacted away was billed too). The costs are the recorded ones: a message written
    without a cost (an offline model) adds zero.
    """
    total = 0.0
    for _key, usage in _entry_usages(entries):
        total += _usage_total(usage)
    return total


def usage_cost_breakdown(entries: Iterable[Mapping[str, Any]]) -> list[UsageCostRow]:
    """Pi's ``getUsageCostBreakdown``: ``[{key, cost, tokens}]`` per ``provider/model`` (assistant
    messages) plus ``"Tools/summaries"``, without empty rows, the most expensive first."""
    totals: dict[str, list[float]] = {}
    for key, usage in _entry_usages(entries):
        row = totals.setdefault(key, [0.0, 0])
        row[0] += _usage_total(usage)
        row[1] += sum(_count(usage, k) for k in ("input", "output", "cacheRead", "cacheWrite"))
    ordered = sorted(totals.items(), key=lambda item: -item[1][0])  # stable, like Array.prototype.sort
    rows: list[UsageCostRow] = [
        {"key": k, "cost": c, "tokens": int(t)} for k, (c, t) in ordered if c > 0 or t > 0
    ]
    return rows
