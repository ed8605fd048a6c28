"""Pi's ``models.json``: moved to :mod:`pi_nb.providers.models_json` (it builds the providers'
models; living with them keeps ``resources`` from importing ``providers``). This name stays: it is
the same module object, so patching either name patches both."""

import sys

from pi_nb.providers import models_json as _models_json

sys.modules[__name__] = _models_json
