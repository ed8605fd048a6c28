"""The OAuth sign-in flows of pi-ai 0.85.0, one module per provider (``login``, ``refresh``,
``to_auth``), and what they share (:mod:`pi_nb.auth.oauth.common`)."""
