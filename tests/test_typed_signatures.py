"""The engine's signatures name the shapes they handle (issue 17, "typed data").

Where a parameter or a return value is a session entry, a message, a content block, a usage record
or an agent event, its annotation is the TypedDict from :mod:`pi_nb.session.types` /
:mod:`pi_nb.messages` / :mod:`pi_nb.agent.events`, not ``dict[str, Any]`` or ``Mapping[str, Any]``.
This test walks every public function and method of the package and fails on a known-shape name
annotated with an open mapping, so that a new signature cannot slip back to ``dict[str, Any]``.
Open JSON (tool arguments, ``details``, provider wire payloads, user settings input) keeps
``dict[str, Any]``: those parameter names are not in the list below.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pi_nb

#: parameter names whose shape is known (an entry, a message, a block, a usage, an event)
KNOWN_SHAPE_PARAMS = {
    "entry",
    "entries",
    "path_entries",
    "branch_entries",
    "header",
    "message",
    "messages",
    "assistant",
    "assistant_message",
    "tool_call",
    "tool_calls",
    "tool_result",
    "usage",
    "event",
    "block",
    "blocks",
}

#: words in a function's name that say it returns entries or messages
KNOWN_SHAPE_RETURNS = ("entry", "entries", "message", "branch", "header", "usage", "tool_call")

#: open on purpose, each for a reason: the provider converters return the APIs' own wire messages
#: (OpenAI / Anthropic JSON, not pi messages); the catalog's cost readers take usages and entries
#: from any source (other tools' files included) and check every count themselves.
OPEN_ON_PURPOSE = {
    "pi_nb.providers.anthropic_provider.to_anthropic_messages",
    "pi_nb.providers.openai_compat.to_openai_messages",
    # the Responses and Mistral wire converters: their output is the provider's wire JSON, and Mistral's
    # reads messages that transform_messages already rewrote (read as JSON, like the two above)
    "pi_nb.providers.openai_responses.convert_responses_messages",
    "pi_nb.providers.mistral_conversations.to_mistral_messages",
    "pi_nb.providers.catalog.session_context_window",
    "pi_nb.providers.catalog.calculate_cost",
    "pi_nb.providers.catalog.session_cost",
    "pi_nb.providers.catalog.usage_cost_breakdown",
    # Gemini's wire converter (its output is Gemini's JSON contents)
    "pi_nb.providers.google_shared.convert_messages",
    # the frames' row extractors read the messages and usages of any file (other tools' included)
    # as JSON and check every field themselves, like the catalog's cost readers
    "pi_nb.analysis.extract.usage_context_tokens",
    "pi_nb.analysis.extract.assistant_message",
    # the replay's version rules read the header of a file from any Pi version (only its timestamp)
    "pi_nb.what_if.pi_rules",
    # the retention and drift readers take messages of any file as JSON, as the frames' extractors
    "pi_nb.analysis.drift.message_parts",
    "pi_nb.analysis.retention.message_artifacts",
    "pi_nb.analysis.retention.message_search_text",
    # a sign-in's progress event (a link, a code), not an agent event
    "pi_nb.auth.oauth.common.Interaction.notify",
    # wire converters and header rules that read messages after transform_messages rewrote them
    # (as JSON, like the converters above); Bedrock's returns the Converse API's own messages
    "pi_nb.providers.anthropic_provider.request_headers",
    "pi_nb.providers.openai_compat.request_headers",
    "pi_nb.providers.bedrock_converse_stream.convert_messages",
    "pi_nb.providers.github_copilot_headers.infer_copilot_initiator",
    "pi_nb.providers.github_copilot_headers.has_copilot_vision_input",
    "pi_nb.providers.github_copilot_headers.copilot_dynamic_headers",
}


def _modules() -> Iterator[Any]:
    for info in pkgutil.walk_packages(pi_nb.__path__, "pi_nb."):
        if info.name.startswith("pi_nb.notebook") or "._" in info.name.replace("pi_nb._", "pi_nb.x"):
            continue
        yield importlib.import_module(info.name)


def _callables(module: Any) -> Iterator[tuple[str, Callable[..., Any]]]:
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield f"{module.__name__}.{name}", obj
        elif inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr != "__init__":
                    continue
                func = member.fget if isinstance(member, property) else member
                func = getattr(func, "__func__", func)
                if inspect.isfunction(func):
                    yield f"{module.__name__}.{name}.{attr}", func


def _is_open_mapping(tp: Any) -> bool:
    """``dict[str, Any]`` / ``Mapping[str, Any]``, alone, optional, or as the items of a sequence."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (dict, Mapping) or origin is typing.get_origin(Mapping[str, Any]):
        return args == (str, Any)
    if args:
        return any(_is_open_mapping(arg) for arg in args if arg is not type(None))
    return False


def test_known_shapes_are_typed() -> None:
    found = []
    for module in _modules():
        for qualname, func in _callables(module):
            if qualname in OPEN_ON_PURPOSE:
                continue
            try:
                hints = typing.get_type_hints(func)
            except Exception:  # a hint that cannot be resolved at run time (TYPE_CHECKING imports)
                continue
            for param, tp in hints.items():
                if param == "return":
                    leaf = qualname.rsplit(".", 1)[-1]
                    if any(word in leaf for word in KNOWN_SHAPE_RETURNS) and _is_open_mapping(tp):
                        found.append(f"{qualname}() -> {tp}")
                elif param in KNOWN_SHAPE_PARAMS and _is_open_mapping(tp):
                    found.append(f"{qualname}({param}: {tp})")
    assert not found, "known shapes annotated as open mappings:\n" + "\n".join(found)


def test_the_check_sees_an_open_mapping() -> None:
    """The detector itself: an entry typed ``Mapping[str, Any]`` is caught, a TypedDict is not."""
    from pi_nb.session.types import SessionEntry

    assert _is_open_mapping(Mapping[str, Any])
    assert _is_open_mapping(list[dict[str, Any]] | None)
    assert not _is_open_mapping(SessionEntry)
    assert not _is_open_mapping(list[SessionEntry])
