"""Credentials that are not a key: AWS's for Bedrock and Google's application-default credentials for
Vertex, found where pi-ai's ``getEnvApiKey`` looks for them (its ``"<authenticated>"`` answers).

pi-ai counts Amazon Bedrock as configured when any of ``AWS_PROFILE``, ``AWS_ACCESS_KEY_ID`` with
``AWS_SECRET_ACCESS_KEY``, ``AWS_BEARER_TOKEN_BEDROCK``, the container-credential URIs or
``AWS_WEB_IDENTITY_TOKEN_FILE`` is set, and Vertex AI when an application-default credentials file
exists (``$GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's
``~/.config/gcloud/application_default_credentials.json``) and both a project
(``GOOGLE_CLOUD_PROJECT`` / ``GCLOUD_PROJECT``) and ``GOOGLE_CLOUD_LOCATION`` are set. Only names
and paths are returned, never a value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["AMBIENT_PROVIDERS", "ambient_credential", "ambient_credential_hint"]

#: the providers whose credential may be ambient (not a key variable), and what sets it
AMBIENT_PROVIDERS: dict[str, str] = {
    "amazon-bedrock": "AWS credentials: $AWS_PROFILE, $AWS_ACCESS_KEY_ID with $AWS_SECRET_ACCESS_KEY, "
    "$AWS_BEARER_TOKEN_BEDROCK, or a container / web-identity role",
    "google-vertex": "$GOOGLE_CLOUD_API_KEY, or application-default credentials (gcloud auth "
    "application-default login, or $GOOGLE_APPLICATION_CREDENTIALS) with $GOOGLE_CLOUD_PROJECT and "
    "$GOOGLE_CLOUD_LOCATION",
}

_AWS_SINGLE = (
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


def _get(env: Mapping[str, str], name: str) -> str | None:
    value = env.get(name)
    return value or None  # pi-ai's getProviderEnvValue: any non-empty value counts


def _adc_path(env: Mapping[str, str]) -> str:
    explicit = _get(env, "GOOGLE_APPLICATION_CREDENTIALS")
    if explicit:
        return explicit
    return os.path.join(os.path.expanduser("~"), ".config", "gcloud", "application_default_credentials.json")


def ambient_credential(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """Where ``provider``'s ambient credential comes from (``"environment: AWS_PROFILE"``,
    ``"application-default credentials: PATH"``), or ``None`` when pi-ai would find none."""
    env = os.environ if env is None else env
    if provider == "amazon-bedrock":
        if _get(env, "AWS_PROFILE"):
            return "environment: AWS_PROFILE"
        if _get(env, "AWS_ACCESS_KEY_ID") and _get(env, "AWS_SECRET_ACCESS_KEY"):
            return "environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY"
        for name in _AWS_SINGLE[1:]:
            if _get(env, name):
                return f"environment: {name}"
        return None
    if provider == "google-vertex":
        path = _adc_path(env)
        project = _get(env, "GOOGLE_CLOUD_PROJECT") or _get(env, "GCLOUD_PROJECT")
        if os.path.exists(path) and project and _get(env, "GOOGLE_CLOUD_LOCATION"):
            return f"application-default credentials: {path}"
        return None
    return None


def ambient_credential_hint(provider: str) -> str | None:
    """What sets ``provider``'s ambient credential (for a refusal message), or ``None``."""
    return AMBIENT_PROVIDERS.get(provider)
