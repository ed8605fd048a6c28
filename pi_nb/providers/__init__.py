"""Model providers: the :class:`Model` protocol, the offline default, the scripted test seam,
pi-ai 0.85.0's model catalog with costs, and (optional extras) the wire APIs pi-ai speaks for the
runnable catalog: Chat Completions, Responses, Anthropic Messages, Mistral's chat API, Gemini's API
and Vertex AI."""

from __future__ import annotations

from pi_nb.providers.base import *  # noqa: F403
from pi_nb.providers.base import __all__ as _base_all
from pi_nb.providers.catalog import *  # noqa: F403
from pi_nb.providers.catalog import __all__ as _catalog_all
from pi_nb.providers.offline import *  # noqa: F403
from pi_nb.providers.offline import __all__ as _offline_all
from pi_nb.providers.registry import *  # noqa: F403
from pi_nb.providers.registry import __all__ as _registry_all
from pi_nb.providers.scripted import *  # noqa: F403
from pi_nb.providers.scripted import __all__ as _scripted_all

__all__ = sorted([*_base_all, *_catalog_all, *_offline_all, *_registry_all, *_scripted_all])
