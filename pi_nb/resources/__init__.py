"""Resources: context files, project trust, settings, skills, prompt templates, the resource loader.

Each submodule lists its public names in its own ``__all__``; this package re-exports them.
"""

from __future__ import annotations

from pi_nb.resources import context_files as _context_files
from pi_nb.resources import frontmatter as _frontmatter
from pi_nb.resources import loader as _loader
from pi_nb.resources import paths as _paths
from pi_nb.resources import prompt_templates as _prompt_templates
from pi_nb.resources import settings as _settings
from pi_nb.resources import skills as _skills
from pi_nb.resources import trust as _trust
from pi_nb.resources.context_files import *  # noqa: F403
from pi_nb.resources.frontmatter import *  # noqa: F403
from pi_nb.resources.loader import *  # noqa: F403
from pi_nb.resources.paths import *  # noqa: F403
from pi_nb.resources.prompt_templates import *  # noqa: F403
from pi_nb.resources.settings import *  # noqa: F403
from pi_nb.resources.skills import *  # noqa: F403
from pi_nb.resources.trust import *  # noqa: F403

__all__ = sorted(
    [
        *_context_files.__all__,
        *_frontmatter.__all__,
        *_loader.__all__,
        *_paths.__all__,
        *_prompt_templates.__all__,
        *_settings.__all__,
        *_skills.__all__,
        *_trust.__all__,
    ]
)
