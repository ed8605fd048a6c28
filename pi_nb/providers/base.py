"""The model abstraction: a :class:`Model` streams one assistant message for a :class:`Context`.

This mirrors pi-ai's ``stream(model, context, options)``: the stream yields Pi's event shapes
(``start``, ``text_start``/``text_delta``/``text_end``, ``thinking_*``, ``toolcall_*``, then ``done``
or ``error``) and **never raises for provider failures**: an HTTP error, an overflow or an abort is
an ``error`` event whose message has ``stopReason`` ``"error"``/``"aborted"`` and an
``errorMessage`` (so overflow detection can read the provider's text). Raising is reserved for
programming errors.

A model object carries its description (``provider``, ``id``, ``context_window``, ``max_tokens``,
``reasoning``, ``input`` kinds) and knows how to call its backend; :meth:`Model.with_overrides`
returns a copy with, e.g., a smaller context window (how notebooks make compaction visible).
"""

from __future__ import annotations

import copy
import os
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, Protocol, TypedDict

from pi_nb.errors import InvalidValueError
from pi_nb.messages import (
    THINKING_LEVELS,
    AssistantContent,
    AssistantMessage,
    AssistantMessageEvent,
    Message,
    StopReason,
    Usage,
    validate_thinking_level,
)

__all__ = [
    "THINKING_LEVELS",
    "AssistantMessageEvent",
    "Context",
    "ContextDict",
    "Model",
    "ModelDescription",
    "StreamOptions",
    "SupportsAbort",
    "ToolSchema",
    "empty_usage",
    "make_assistant_message",
    "make_usage",
    "now_ms",
    "provider_error_text",
    "snapshot_message",
    "validate_model_limits",
    "validate_thinking_level",
]

ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh", "max"]


def _positive_int(value: object, what: str) -> int:
    # 0 is a value to refuse, never "not given": no truthiness tests here
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer() and value > 0:
            return int(value)
        raise InvalidValueError(f"{what} must be a whole number of tokens greater than 0; got {value!r}")
    if value <= 0:
        raise InvalidValueError(f"{what} must be greater than 0; got {value}")
    return value


def validate_model_limits(
    context_window: object, max_tokens: object, model: str = "model"
) -> tuple[int, int]:
    """Check a model's ``context_window`` and ``max_tokens`` (both whole numbers > 0).

    Every place that describes a model calls this (the :class:`Model` constructor and attribute
    setters, a model catalog entry): a window of 0 would make every request "overflow" and a
    ``max_tokens`` of 0 would make every answer stop at ``length``.
    """
    return (
        _positive_int(context_window, f"{model}: context_window"),
        _positive_int(max_tokens, f"{model}: max_tokens"),
    )


class SupportsAbort(Protocol):
    """What a model needs of an abort signal (``pi_nb.tools.base.AbortSignal`` satisfies it)."""

    @property
    def aborted(self) -> bool: ...


class ToolSchema(TypedDict):
    """A tool as the model sees it: pi-ai's ``Tool {name, description, parameters}``."""

    name: str
    label: NotRequired[str]  # Pi's AgentTool label: not sent, but counted by pi-ai's context estimate
    description: str
    parameters: dict[str, Any]  # a JSON Schema: open JSON


class ContextDict(TypedDict):
    """:meth:`Context.to_dict`: pi-ai's ``Context`` JSON ``{systemPrompt?, messages, tools?}``."""

    systemPrompt: NotRequired[str]
    messages: list[Message]
    tools: NotRequired[list[ToolSchema]]


@dataclass(frozen=True)
class Context:
    """pi-ai's ``Context {systemPrompt?, messages, tools?}`` (messages already ``convert_to_llm``-ed).

    The messages are typed as Pi's LLM messages; they come from session files without validation
    (``convert_to_llm`` passes user, assistant and tool-result messages on as they are), so the
    providers still read them defensively.
    """

    system_prompt: str | None
    messages: Sequence[Message]
    tools: Sequence[ToolSchema] | None = None

    def to_dict(self) -> ContextDict:
        out: ContextDict
        if self.system_prompt is not None:
            out = {"systemPrompt": self.system_prompt, "messages": list(self.messages)}
        else:
            out = {"messages": list(self.messages)}
        if self.tools is not None:
            out["tools"] = list(self.tools)
        return out


@dataclass(frozen=True)
class StreamOptions:
    """Per-request options (pi-ai ``SimpleStreamOptions`` subset that pi_nb uses)."""

    max_tokens: int | None = None
    reasoning: str | None = None
    signal: SupportsAbort | None = None
    session_id: str | None = None
    cache_retention: Literal["none", "short", "long"] | None = None
    temperature: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # provider-specific options: open

    def __post_init__(self) -> None:
        # max_tokens 0 keeps Pi's meaning here (``options.maxTokens || model.maxTokens``: a summary
        # sized from reserveTokens 0 asks for the model's own limit); a negative one is refused
        if self.max_tokens is not None and (isinstance(self.max_tokens, bool) or self.max_tokens < 0):
            raise InvalidValueError(f"StreamOptions.max_tokens must be 0 or more; got {self.max_tokens!r}")
        if self.reasoning is not None and (self.reasoning == "off" or self.reasoning not in THINKING_LEVELS):
            raise InvalidValueError(
                f"StreamOptions.reasoning must be one of {', '.join(THINKING_LEVELS[1:])} (or None for off); "
                f"got {self.reasoning!r}"
            )


class ModelDescription(TypedDict):
    """:meth:`Model.describe`: ``{provider, id, name, api, contextWindow, maxTokens, reasoning, input}``."""

    provider: str
    id: str
    name: str
    api: str
    contextWindow: int
    maxTokens: int
    reasoning: bool
    input: list[str]


def now_ms() -> int:
    """``Date.now()``."""
    return int(time.time() * 1000)


def make_usage(
    input: int = 0,
    output: int = 0,
    cache_read: int = 0,
    cache_write: int = 0,
    total_tokens: int | None = None,
) -> Usage:
    """A pi-ai ``Usage`` dict (costs zero; ``totalTokens`` defaults to the sum, as providers report it)."""
    total = input + output + cache_read + cache_write if total_tokens is None else total_tokens
    return {
        "input": input,
        "output": output,
        "cacheRead": cache_read,
        "cacheWrite": cache_write,
        "totalTokens": total,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def empty_usage() -> Usage:
    return make_usage()


def make_assistant_message(
    content: list[AssistantContent],
    *,
    api: str,
    provider: str,
    model: str,
    usage: Usage | None = None,
    stop_reason: StopReason = "stop",
    error_message: str | None = None,
    timestamp: int | None = None,
) -> AssistantMessage:
    """An ``AssistantMessage`` dict with Pi's key order (``errorMessage``, when given, before ``timestamp``)."""
    usage = usage if usage is not None else empty_usage()
    stamp = now_ms() if timestamp is None else timestamp
    if error_message is None:
        return {
            "role": "assistant",
            "content": content,
            "api": api,
            "provider": provider,
            "model": model,
            "usage": usage,
            "stopReason": stop_reason,
            "timestamp": stamp,
        }
    return {
        "role": "assistant",
        "content": content,
        "api": api,
        "provider": provider,
        "model": model,
        "usage": usage,
        "stopReason": stop_reason,
        "errorMessage": error_message,
        "timestamp": stamp,
    }


class Model(ABC):
    """A model description plus the means to call it.

    Subclasses implement :meth:`stream`. ``complete`` drains the stream and returns the final
    assistant message (for ``error``/``aborted`` too: check ``stopReason``).
    """

    api: str = "unknown"

    def __init__(
        self,
        *,
        id: str,
        provider: str,
        context_window: int,
        max_tokens: int,
        reasoning: bool = False,
        input: Sequence[str] = ("text",),
        name: str | None = None,
    ) -> None:
        self.id = id
        self.provider = provider
        self.context_window, self.max_tokens = validate_model_limits(
            context_window, max_tokens, f"{provider}/{id}"
        )
        self.reasoning = reasoning
        self.input: tuple[str, ...] = tuple(input)
        self.name = name or id

    @property
    def context_window(self) -> int:
        """The model's context window in tokens (always > 0; setting 0 or less is refused)."""
        return self._context_window

    @context_window.setter
    def context_window(self, value: int) -> None:
        self._context_window = _positive_int(value, f"{self._label()}: context_window")

    @property
    def max_tokens(self) -> int:
        """The model's output limit in tokens (always > 0; setting 0 or less is refused)."""
        return self._max_tokens

    @max_tokens.setter
    def max_tokens(self, value: int) -> None:
        self._max_tokens = _positive_int(value, f"{self._label()}: max_tokens")

    def _label(self) -> str:
        return f"{getattr(self, 'provider', '?')}/{getattr(self, 'id', '?')}"

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(provider={self.provider!r}, id={self.id!r}, "
            f"context_window={self.context_window}, max_tokens={self.max_tokens})"
        )

    def describe(self) -> ModelDescription:
        """Pi's model fields as a dict (what a UI or a frame shows)."""
        return {
            "provider": self.provider,
            "id": self.id,
            "name": self.name,
            "api": self.api,
            "contextWindow": self.context_window,
            "maxTokens": self.max_tokens,
            "reasoning": self.reasoning,
            "input": list(self.input),
        }

    def with_overrides(self, **changes: Any) -> Model:
        """A shallow copy with some attributes changed (``context_window=8000``...)."""
        clone = copy.copy(self)
        for key, value in changes.items():
            if not hasattr(clone, key):
                raise AttributeError(f"{type(self).__name__} has no attribute {key!r}")
            setattr(clone, key, value)
        return clone

    @abstractmethod
    def stream(
        self, context: Context, options: StreamOptions | None = None
    ) -> AsyncIterator[AssistantMessageEvent]:
        """Yield Pi's streaming events for one assistant response."""

    async def complete(self, context: Context, options: StreamOptions | None = None) -> AssistantMessage:
        """Run :meth:`stream` to the end and return the final assistant message."""
        final: AssistantMessage | None = None
        async for event in self.stream(context, options):
            if event["type"] == "done":
                final = event["message"]
            elif event["type"] == "error":
                final = event["error"]
        if final is None:
            raise RuntimeError(f"{self!r} ended its stream without a done or error event")
        return final


REDACTED_KEY = "[redacted API key]"


def provider_error_text(error: BaseException, secret: str | None = None) -> str:
    """A provider exception as the error text of an ``error`` message: ``{status} {message}``.

    The provider's own words are kept (``prompt is too long: ...``, ``maximum context length is
    ... tokens``): overflow detection reads them. SDK errors carry ``status_code`` and a JSON
    ``body``; anything else falls back to ``str(error)``. ``secret`` (the API key the request was
    made with) is replaced by ``[redacted API key]`` wherever the text repeats it (a proxy's 401
    that echoes the key): this text is stored in the session and shown in the notebook.
    """
    status = getattr(error, "status_code", None)
    body = getattr(error, "body", None)
    message = None
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
    text = message or str(error) or type(error).__name__
    if secret:
        text = text.replace(secret, REDACTED_KEY)
    return f"{status} {text}" if status else text


def snapshot_message(message: AssistantMessage) -> AssistantMessage:
    """A copy of a streaming message for an event's ``partial`` (its content list is copied too)."""
    return {**message, "content": [b.copy() for b in message["content"]]}


CostFunction = Callable[[Usage], Mapping[str, float]]
"""Given a finished usage dict, return its cost dict ``{input, output, cacheRead, cacheWrite, total}``."""


class RemoteModel(Model):
    """A model behind an HTTP API: base URL, the environment variable holding its key, timeouts.

    The key is resolved when a request is made (:meth:`resolve_auth`: an explicit key, the agent
    dir's ``auth.json``, the environment) and never stored on the object,
    in a message or in a session. Subclasses set the class defaults below and implement ``stream``.
    ``max_retries`` is pi-ai's provider retry of a failed request (Pi's ``retry.provider.maxRetries``,
    :mod:`pi_nb.providers.provider_retry`): 0 unless given, since Pi leaves that setting unset.
    ``cost_function`` (optional) turns a finished usage into its cost (``usage["cost"]``; the
    registry sets the catalog's prices); without it costs stay zero.
    """

    default_provider = "unknown"
    default_context_window = 128_000
    default_max_tokens = 16_384
    default_reasoning = False
    base_url_env = ""
    default_api_key_env = ""
    cost_function: CostFunction | None = None
    auth_base_url: str | None = None

    def __init__(
        self,
        id: str,
        *,
        provider: str | None = None,
        base_url: str | None = None,
        api_key_env: str | None = None,
        context_window: int | None = None,
        max_tokens: int | None = None,
        reasoning: bool | None = None,
        input: Sequence[str] = ("text", "image"),
        name: str | None = None,
        timeout: float = 600.0,
        max_retries: int = 0,
        cost_function: CostFunction | None = None,
        pi_model: Mapping[str, Any] | None = None,
        transport: Any = None,
    ) -> None:
        super().__init__(
            id=id,
            provider=provider or self.default_provider,
            context_window=context_window if context_window is not None else self.default_context_window,
            max_tokens=max_tokens if max_tokens is not None else self.default_max_tokens,
            reasoning=reasoning if reasoning is not None else self.default_reasoning,
            input=input,
            name=name,
        )
        self.base_url = base_url or (os.environ.get(self.base_url_env) if self.base_url_env else None)
        self.api_key_env = api_key_env or self.default_api_key_env
        if self.api_key_env:
            # the key is read from this variable, whatever its name: its value is a secret
            from pi_nb.redaction import register_secret_env

            register_secret_env(self.api_key_env)
        self.timeout = timeout
        self.max_retries = max_retries
        self.cost_function = cost_function
        # the catalog entry as pi-ai has it (compat, headers, thinkingLevelMap, cost...): open JSON
        self.pi_model_raw: dict[str, Any] = dict(pi_model or {})
        # an httpx.AsyncBaseTransport for every request of this model (tests capture the wire
        # with one; None is the real network)
        self.transport = transport
        # the base URL the last resolved credential brought (resolve_auth), else None
        self.auth_base_url: str | None = None

    def pi_ai_model(self) -> dict[str, Any]:
        """This model as a pi-ai ``Model`` object (what pi-ai's request builders read): the catalog
        entry with this object's current id, provider, API, base URL, limits, reasoning and input."""
        out: dict[str, Any] = dict(self.pi_model_raw)
        out.update(
            id=self.id,
            name=self.name,
            api=self.pi_model_raw.get("api", self.api),
            provider=self.provider,
            baseUrl=self.auth_base_url or self.base_url or self.pi_model_raw.get("baseUrl") or "",
            reasoning=self.reasoning,
            input=list(self.input),
            contextWindow=self.context_window,
            maxTokens=self.max_tokens,
        )
        out.setdefault("cost", {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})
        return out

    def resolve_auth(self, api_key: str | None = None, *, ambient: bool = True) -> Any:
        """This model's auth for one request (a :class:`pi_nb.auth.ResolvedAuth`, or ``None``: not
        configured), resolved now as pi-ai resolves it: ``api_key`` if given, else the agent dir's
        ``auth.json`` entry of the provider (an OAuth token refreshed when it expires within five
        minutes, and written back), else :attr:`api_key_env` (skipped when ``ambient`` is false).
        A credential with its own base URL (GitHub Copilot's token names its API host) sets
        :attr:`auth_base_url`, which :meth:`pi_ai_model` then uses, as pi-ai's request model does.
        Raises :class:`pi_nb.auth.AuthError` when ``auth.json`` is unreadable or a refresh fails."""
        from pi_nb.auth import resolve_provider_auth

        auth = resolve_provider_auth(
            self.provider,
            api_key=api_key,
            env_vars=(self.api_key_env,) if self.api_key_env else (),
            ambient=ambient,
        )
        self.auth_base_url = auth.base_url if auth is not None else None
        return auth

    def resolve_api_key(self, api_key: str | None = None) -> str | None:
        """This model's key, read now (never stored): ``api_key`` if given, else the provider's
        ``auth.json`` credential (an OAuth access token, refreshed when due), else the value of
        :attr:`api_key_env`; ``None`` when none is set. The one place a provider asks for its key
        (:meth:`resolve_auth`)."""
        auth = self.resolve_auth(api_key)
        return auth.api_key if auth is not None else None

    def credential_headers(self) -> dict[str, str | None]:
        """The headers this model's credential adds to every request, as Pi's model runtime merges
        them under the request options: models.json's provider, model and override headers (and
        ``Authorization`` for an ``authHeader`` provider), resolved now; ``{}`` for catalog models."""
        resolve = getattr(self, "request_headers", None)
        return dict(resolve()) if callable(resolve) else {}

    def http_client(self) -> Any:
        """An ``httpx.AsyncClient`` over :attr:`transport` for an SDK's ``http_client=``, or ``None``
        (the SDK's own client) when no transport is set."""
        if self.transport is None:
            return None
        import httpx

        return httpx.AsyncClient(transport=self.transport, timeout=self.timeout)
