"""``GoogleVertexModel``: Gemini models on Google Cloud's Vertex AI (``google-vertex``), as pi-ai
0.85.0 runs them.

The stream, body, usage and errors are those of :mod:`pi_nb.providers.google_generative_ai`
(pi-ai's two Google providers share them), with Vertex's differences:

- Credentials, as pi-ai finds them: a Vertex API key (``$GOOGLE_CLOUD_API_KEY``; a ``<...>``
  placeholder or ``gcp-vertex-credentials`` is no key) goes as ``x-goog-api-key`` to
  ``https://aiplatform.googleapis.com/v1/publishers/google/models/{id}:streamGenerateContent``.
  Without one, application-default credentials (``$GOOGLE_APPLICATION_CREDENTIALS``, else
  gcloud's ``application_default_credentials.json``) give a bearer token for the project
  (``$GOOGLE_CLOUD_PROJECT`` or ``$GCLOUD_PROJECT``) and location (``$GOOGLE_CLOUD_LOCATION``):
  ``https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google/models/{id}:streamGenerateContent``
  (``global`` is ``aiplatform.googleapis.com``, ``us``/``eu`` their ``rep`` hosts). A missing
  project or location fails with pi-ai's texts.
- A base URL without ``{location}`` (a models.json proxy) replaces the host and is used as a
  collection (no project path; ``v1`` added unless the URL names a version).
- Thinking: Gemma 4 has no level mapping and Gemini 2.5 Flash-Lite no budget row here (pi-ai's
  Vertex module has neither).
- The body follows the SDK's Vertex converters (function declarations as ``description, name,
  parameters, parametersJsonSchema``; calls and images as pi-ai builds them).

A gcloud login (``authorized_user``) is exchanged for a token here, as google-auth-library does
(same form, same token URL); other credentials go through ``google-auth``
(``pip install 'pi_nb[google-vertex]'``). Either way the HTTP requests use this model's httpx
client, a token is fetched per turn (pi-ai builds a new client per turn) and never stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import re
from collections.abc import Mapping
from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit

from pi_nb._js import js_homedir
from pi_nb.providers._pi_ai_util import get_provider_env_value
from pi_nb.providers.google_generative_ai import GoogleGenerativeAIModel, _GoogleCounter
from pi_nb.providers.google_shared import GoogleStreamError
from pi_nb.providers.simple_options import pi_user_agent

__all__ = ["GoogleVertexModel"]

_API_VERSION = "v1"
_CREDENTIALS_MARKER = "gcp-vertex-credentials"
_PLACEHOLDER = re.compile(r"^<[^>]+>$")
_VERSION_PART = re.compile(r"^v\d+(?:beta\d*)?$")
_VERSION_IN_TEXT = re.compile(r"(?:^|/)v\d+(?:beta\d*)?(?:/|$)")
_SCOPE = "https://www.googleapis.com/auth/cloud-platform"
_MULTI_REGIONAL = frozenset({"us", "eu"})
_TOKEN_URL = "https://oauth2.googleapis.com/token"
_NO_CREDENTIALS = (
    "Could not load the default credentials. Browse to "
    "https://cloud.google.com/docs/authentication/getting-started for more information."
)


def _custom_base_url(base_url: str) -> str | None:
    trimmed = base_url.strip()
    if not trimmed or "{location}" in trimmed:
        return None
    return trimmed


def _includes_api_version(base_url: str) -> bool:
    parts = urlsplit(base_url)
    if parts.scheme and parts.netloc:
        return any(_VERSION_PART.match(p) for p in parts.path.split("/"))
    return bool(_VERSION_IN_TEXT.search(base_url))


def _join(base: str, version: str, *rest: str) -> str:
    base = base[:-1] if base.endswith("/") else base
    elements = [base]
    if version:
        elements.append(version)
    elements.extend(rest)
    return "/".join(elements)


class GoogleVertexModel(GoogleGenerativeAIModel):
    """A Gemini model on Vertex AI, the way pi-ai's ``google-vertex`` runs it."""

    api = "google-vertex"
    default_provider = "google-vertex"
    default_api_key_env = "GOOGLE_CLOUD_API_KEY"
    #: imported only by a turn on application-default credentials other than a gcloud login
    #: (service accounts, external accounts, the metadata server)
    sdk_module: ClassVar[str | None] = "google.auth"
    extra: ClassVar[str] = "google-vertex"
    _stream_name: ClassVar[str] = "Google Vertex"
    _gemma_levels: ClassVar[bool] = False
    _flash_lite_budgets: ClassVar[bool] = False
    _vertex: ClassVar[bool] = True
    tool_call_counter: ClassVar[_GoogleCounter] = _GoogleCounter()

    def __init__(self, id: str, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", "https://{location}-aiplatform.googleapis.com")
        super().__init__(id, **kwargs)

    def _api_key(self, options: Mapping[str, Any]) -> str | None:
        key = options.get("apiKey")
        key = key.strip() if isinstance(key, str) else None
        if not key or key == _CREDENTIALS_MARKER or _PLACEHOLDER.match(key):
            return None
        return key

    async def _url_and_auth(
        self, model: Mapping[str, Any], api_key: str | None, options: Mapping[str, Any], signal: Any = None
    ) -> tuple[str, dict[str, str]]:
        path = f"publishers/google/models/{model.get('id')}:streamGenerateContent?alt=sse"
        custom = _custom_base_url(str(model.get("baseUrl") or ""))
        version = "" if custom and _includes_api_version(custom) else _API_VERSION
        # without a base URL of its own, @google/genai takes $GOOGLE_VERTEX_BASE_URL for the host
        # (with the API version, and the project path for credentials)
        env_base = None if custom else (os.environ.get("GOOGLE_VERTEX_BASE_URL") or None)
        if api_key:
            host = custom or env_base or "https://aiplatform.googleapis.com/"
            return _join(host, version, path), {"x-goog-api-key": api_key}
        project = (
            options.get("project")
            or get_provider_env_value("GOOGLE_CLOUD_PROJECT")
            or get_provider_env_value("GCLOUD_PROJECT")
        )
        if not project:
            raise GoogleStreamError(
                "Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT or pass project in options."
            )
        location = options.get("location") or get_provider_env_value("GOOGLE_CLOUD_LOCATION")
        if not location:
            raise GoogleStreamError(
                "Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION or pass location in options."
            )
        if custom:
            url = _join(custom, version, path)
        elif env_base:
            url = _join(env_base, version, f"projects/{project}/locations/{location}", path)
        else:
            if location == "global":
                host = "https://aiplatform.googleapis.com/"
            elif location in _MULTI_REGIONAL:
                host = f"https://aiplatform.{location}.rep.googleapis.com/"
            else:
                host = f"https://{location}-aiplatform.googleapis.com/"
            url = _join(host, version, f"projects/{project}/locations/{location}", path)
        if signal is not None and signal.aborted:  # pi-ai fetches the token with the request
            raise GoogleStreamError("Request aborted")
        return url, await self._adc_headers()

    async def _adc_headers(self) -> dict[str, str]:
        """The bearer token (and quota project) of the application-default credentials: the file
        of ``$GOOGLE_APPLICATION_CREDENTIALS``, else gcloud's ``application_default_credentials.json``
        (pi-ai's ``keyFilename``, then google-auth-library's search). A gcloud user login
        (``authorized_user``) is exchanged here as google-auth-library exchanges it; any other kind
        (service account, external account, the metadata server) through ``google-auth``."""
        path = get_provider_env_value("GOOGLE_APPLICATION_CREDENTIALS") or os.path.join(
            js_homedir(), ".config", "gcloud", "application_default_credentials.json"
        )
        info: Any = None
        explicit = get_provider_env_value("GOOGLE_APPLICATION_CREDENTIALS")
        if explicit and not os.path.exists(explicit):  # Node's readFile error, as pi-ai shows it
            raise GoogleStreamError(f"ENOENT: no such file or directory, open '{explicit}'")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                info = json.load(f)
        if isinstance(info, dict) and info.get("type") == "authorized_user":
            return await self._refresh_authorized_user(info)
        try:
            import google.auth
        except ModuleNotFoundError as error:  # pragma: no cover - the extra installs it
            raise GoogleStreamError(
                "google-vertex without an API key needs application-default credentials through "
                "google-auth: pip install 'pi_nb[google-vertex]'"
            ) from error
        from google.auth.exceptions import DefaultCredentialsError

        try:
            credentials, _ = await asyncio.to_thread(google.auth.default, scopes=[_SCOPE])
        except DefaultCredentialsError as error:  # google-auth-library's text, as pi-ai shows it
            raise GoogleStreamError(_NO_CREDENTIALS) from error
        loop = asyncio.get_running_loop()
        adapter = _HttpxAuthRequest(self, loop)
        await asyncio.to_thread(credentials.refresh, adapter)
        headers: dict[str, str] = {}
        credentials.apply(headers)  # type: ignore[no-untyped-call]
        return {k.lower(): v for k, v in headers.items()}

    async def _refresh_authorized_user(self, info: Mapping[str, Any]) -> dict[str, str]:
        """google-auth-library's ``UserRefreshClient``: the refresh token for an access token (the
        form fields in its order), sent with the quota project when the login names one."""
        import httpx

        form = urlencode(
            {
                "refresh_token": info.get("refresh_token"),
                "client_id": info.get("client_id"),
                "client_secret": info.get("client_secret"),
                "grant_type": "refresh_token",
            }
        )
        headers = {
            "content-type": "application/x-www-form-urlencoded;charset=UTF-8",
            "user-agent": pi_user_agent(),
            "x-goog-api-client": f"gl-python/{platform.python_version()}",
        }
        shared = self.http_client()
        client = shared if shared is not None else httpx.AsyncClient(timeout=self.timeout)
        try:
            response = await client.post(_TOKEN_URL, content=form.encode("utf-8"), headers=headers)
        finally:
            if shared is None:
                await client.aclose()
        data: Any = None
        with contextlib.suppress(ValueError):
            data = response.json()
        if response.status_code != 200 or not isinstance(data, dict) or not data.get("access_token"):
            # google-auth-library's error: the OAuth error code (invalid_grant...), else the body
            error = data.get("error") if isinstance(data, dict) else None
            if isinstance(error, dict):
                error = error.get("message")
            raise GoogleStreamError(str(error) if error else response.text)
        out = {"authorization": f"Bearer {data['access_token']}"}
        if info.get("quota_project_id"):
            out["x-goog-user-project"] = str(info["quota_project_id"])
        return out


class _AuthResponse:
    """google-auth's transport ``Response``: status, headers, data."""

    def __init__(self, status: int, headers: Mapping[str, str], data: bytes) -> None:
        self.status = status
        self.headers = dict(headers)
        self.data = data


class _HttpxAuthRequest:
    """google-auth's transport ``Request`` over the model's httpx client (run from a worker
    thread; each request is sent on the turn's event loop)."""

    def __init__(self, model: GoogleVertexModel, loop: asyncio.AbstractEventLoop) -> None:
        self.model = model
        self.loop = loop

    def __call__(
        self,
        url: str,
        method: str = "GET",
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = None,
        **_kwargs: Any,
    ) -> _AuthResponse:
        async def send() -> _AuthResponse:
            import httpx

            shared = self.model.http_client()
            client = (
                shared if shared is not None else httpx.AsyncClient(timeout=timeout or self.model.timeout)
            )
            try:
                response = await client.request(method, url, content=body, headers=dict(headers or {}))
                return _AuthResponse(response.status_code, response.headers, response.content)
            finally:
                if shared is None:
                    await client.aclose()

        future = asyncio.run_coroutine_threadsafe(send(), self.loop)
        return future.result()
