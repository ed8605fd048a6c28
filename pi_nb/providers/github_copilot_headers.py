"""The per-request headers pi-ai 0.85.0 adds for GitHub Copilot (``api/github-copilot-headers.ts``),
on every API Copilot serves (Chat Completions, Responses, Anthropic Messages):

* ``X-Initiator``: ``agent`` when the last message is not the user's (a follow-up after an answer
  or a tool result), else ``user``;
* ``Openai-Intent: conversation-edits``;
* ``Copilot-Vision-Request: true`` when a user message or a tool result holds an image.

The editor headers (``User-Agent: GitHubCopilotChat/...``, ``Editor-Version``,
``Editor-Plugin-Version``, ``Copilot-Integration-Id``) are the catalog models' own headers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["copilot_dynamic_headers", "has_copilot_vision_input", "infer_copilot_initiator"]


def infer_copilot_initiator(messages: Sequence[Mapping[str, Any]]) -> str:
    """``"agent"`` when the last message is not a user message, else ``"user"``."""
    return "agent" if messages and messages[-1].get("role") != "user" else "user"


def has_copilot_vision_input(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a user message or a tool result carries an image."""
    for msg in messages:
        content = msg.get("content")
        if msg.get("role") in ("user", "toolResult") and isinstance(content, list):
            if any(isinstance(c, Mapping) and c.get("type") == "image" for c in content):
                return True
    return False


def copilot_dynamic_headers(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``buildCopilotDynamicHeaders`` for these messages."""
    headers = {"X-Initiator": infer_copilot_initiator(messages), "Openai-Intent": "conversation-edits"}
    if has_copilot_vision_input(messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers
