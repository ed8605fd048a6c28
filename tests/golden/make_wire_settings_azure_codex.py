"""Golden file for the settings the ``azure-openai-responses`` and ``openai-codex-responses``
providers read: the request pi-ai 0.85.0 sends (and the message it records) under each variant of
Azure's ``AZURE_OPENAI_*`` variables and of the Codex sign-in token.

Run by hand when the variants change (needs ../shared/pi-oracle installed: Node and Pi 0.85.0
under ``~/.cache/pi-oracle``):

    PYTHONPATH=$PWD .venv/bin/python tests/golden/make_wire_settings_azure_codex.py

Each variant is one Node run of ``_pi_wire.mjs`` (the variables are the process's), with the
Codex token in the agent dir's ``auth.json`` as Pi stores a ChatGPT sign-in. The output,
``tests/golden/wire_settings_azure_codex.json``, maps each variant to ``{requests, message}``;
``tests/test_wire_settings_azure_codex.py`` runs pi_nb under the same variables.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
for p in (str(ROOT), str(TESTS), str(TESTS / "golden")):
    if p not in sys.path:
        sys.path.insert(0, p)

import wire_cases  # noqa: E402

GOLDEN = TESTS / "golden" / "wire_settings_azure_codex.json"


def _jwt(claims: Any, *, urlsafe: bool = False) -> str:
    import base64

    raw = json.dumps(claims, separators=(",", ":"), ensure_ascii=False).encode()
    enc = base64.urlsafe_b64encode(raw) if urlsafe else base64.b64encode(raw)
    return f"{wire_cases._b64({'alg': 'none'})}.{enc.decode().rstrip('=')}.c2ln"


_CLAIM = "https://api.openai.com/auth"

#: name -> (provider, model, level, environment changes (None: unset), Codex access token or None)
VARIANTS: dict[str, tuple[str, str, str, dict[str, str | None], str | None]] = {
    "azure_resource_name": ("azure-openai-responses", "gpt-4.1", "off", {}, None),
    "azure_base_url_bare_host": (
        "azure-openai-responses",
        "gpt-5.5",
        "medium",
        {"AZURE_OPENAI_BASE_URL": "https://my-res.openai.azure.com/", "AZURE_OPENAI_RESOURCE_NAME": None},
        None,
    ),
    "azure_base_url_openai_path": (
        "azure-openai-responses",
        "gpt-4.1",
        "off",
        {"AZURE_OPENAI_BASE_URL": "  https://my-res.cognitiveservices.azure.com/openai//  "},
        None,
    ),
    "azure_base_url_responses_path": (
        "azure-openai-responses",
        "gpt-4.1",
        "off",
        {
            "AZURE_OPENAI_BASE_URL": "https://Foundry-X.services.ai.azure.com/openai/v1/responses?api-version=old"
        },
        None,
    ),
    "azure_base_url_other_path_kept": (
        "azure-openai-responses",
        "gpt-4.1",
        "off",
        {"AZURE_OPENAI_BASE_URL": "https://my-res.openai.azure.com/custom/v2"},
        None,
    ),
    "azure_base_url_proxy": (
        "azure-openai-responses",
        "gpt-4.1",
        "off",
        {"AZURE_OPENAI_BASE_URL": "http://127.0.0.1:8080/azure/"},
        None,
    ),
    "azure_base_url_invalid": (
        "azure-openai-responses",
        "gpt-4.1",
        "off",
        {"AZURE_OPENAI_BASE_URL": "not a url"},
        None,
    ),
    "azure_no_endpoint": (
        "azure-openai-responses",
        "gpt-4.1",
        "off",
        {"AZURE_OPENAI_RESOURCE_NAME": None, "AZURE_OPENAI_BASE_URL": None},
        None,
    ),
    "azure_api_version": (
        "azure-openai-responses",
        "gpt-4.1",
        "off",
        {"AZURE_OPENAI_API_VERSION": "2025-04-01-preview"},
        None,
    ),
    "azure_deployment_map": (
        "azure-openai-responses",
        "gpt-5.5",
        "high",
        {"AZURE_OPENAI_DEPLOYMENT_NAME_MAP": " gpt-4.1=dep-41 , ,bad, gpt-5.5 = prod-gpt55=x ,=y"},
        None,
    ),
    "azure_deployment_map_other_model": (
        "azure-openai-responses",
        "gpt-4.1-mini",
        "off",
        {"AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "gpt-4.1=dep-41"},
        None,
    ),
    "codex_token_no_account": ("openai-codex", "gpt-5.5", "off", {}, _jwt({_CLAIM: {}})),
    "codex_token_not_jwt": ("openai-codex", "gpt-5.5", "off", {}, "sk-not-a-jwt"),
    "codex_token_payload_not_json": (
        "openai-codex",
        "gpt-5.5",
        "off",
        {},
        f"{wire_cases._b64({'alg': 'none'})}.bm90IGpzb24.c2ln",
    ),
    "codex_token_urlsafe_payload": (
        "openai-codex",
        "gpt-5.5",
        "off",
        {},
        _jwt({_CLAIM: {"chatgpt_account_id": "acct-??>>"}}, urlsafe=True),
    ),
    "codex_token_padded_payload": (
        "openai-codex",
        "gpt-5.5",
        "off",
        {},
        wire_cases.CODEX_JWT.split(".")[0] + "." + wire_cases.CODEX_JWT.split(".")[1] + "==.c2ln",
    ),
    "codex_token_numeric_account": (
        "openai-codex",
        "gpt-5.5",
        "off",
        {},
        _jwt({_CLAIM: {"chatgpt_account_id": 12345}}),
    ),
    "codex_token_unicode_claims": (
        "openai-codex",
        "gpt-5.4",
        "xhigh",
        {},
        _jwt({_CLAIM: {"chatgpt_account_id": "acct-1"}, "name": "Zoë"}),
    ),
}


#: name -> (provider, model, models.json of the agent dir, environment changes): the base URL a
#: models.json gives a built-in provider (Azure's last choice of endpoint; Codex's URL rules)
MODELS_JSON_VARIANTS: dict[str, tuple[str, str, dict[str, Any], dict[str, str | None]]] = {
    "models_json_azure_base_url": (
        "azure-openai-responses",
        "gpt-4.1",
        {"providers": {"azure-openai-responses": {"baseUrl": "https://from-models-json.openai.azure.com"}}},
        {"AZURE_OPENAI_RESOURCE_NAME": None},
    ),
    "models_json_azure_env_wins": (
        "azure-openai-responses",
        "gpt-4.1",
        {"providers": {"azure-openai-responses": {"baseUrl": "https://from-models-json.openai.azure.com"}}},
        {},
    ),
    "models_json_codex_codex_suffix": (
        "openai-codex",
        "gpt-5.5",
        {"providers": {"openai-codex": {"baseUrl": "http://127.0.0.1:9/backend-api/codex/"}}},
        {},
    ),
    "models_json_codex_full_path": (
        "openai-codex",
        "gpt-5.5",
        {"providers": {"openai-codex": {"baseUrl": "http://127.0.0.1:9/proxy/codex/responses"}}},
        {},
    ),
    "models_json_codex_headers": (
        "openai-codex",
        "gpt-5.5",
        {
            "providers": {
                "openai-codex": {
                    "baseUrl": "http://127.0.0.1:9/api",
                    "headers": {"X-Team": "blue", "originator": "overridden", "Accept": "*/*"},
                }
            }
        },
        {},
    ),
}


def main() -> None:
    from make_wire import pi_env, run_node

    from pi_nb.providers.catalog import find_model

    golden: dict[str, Any] = {}
    for name, (provider, model_id, level, changes, token) in VARIANTS.items():
        spec = find_model(provider, model_id)
        assert spec is not None
        env = pi_env()
        for key, value in changes.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        auth = wire_cases.pi_auth_json()
        if token is not None:
            auth["openai-codex"]["access"] = token
        job = {
            "name": name,
            "provider": provider,
            "model": model_id,
            "context": wire_cases.context_for(dict(spec.raw), "history"),
            "level": level,
            "sessionId": wire_cases.SESSION_ID,
            "responses": [wire_cases.canned_response(spec.api)],
            "settings": wire_cases.pi_settings(spec.api),
        }
        with tempfile.TemporaryDirectory() as agent_dir:
            Path(agent_dir, "auth.json").write_text(json.dumps(auth))
            got = run_node([job], agent_dir, env)["cases"][name]
        ua = next(
            (
                q["headers"]["user-agent"]
                for q in got["requests"]
                if q["headers"].get("user-agent", "").startswith("pi (")
            ),
            None,
        )
        golden[name] = {
            "requests": [wire_cases.comparable(q, ua) for q in got["requests"]],
            "message": got["message"],
        }
    for name, (provider, model_id, models_json, changes) in MODELS_JSON_VARIANTS.items():
        spec = find_model(provider, model_id)
        assert spec is not None
        env = pi_env()
        for key, value in changes.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        job = {
            "name": name,
            "provider": provider,
            "model": model_id,
            "context": wire_cases.context_for(dict(spec.raw), "tools"),
            "level": "off",
            "sessionId": wire_cases.SESSION_ID,
            "responses": [wire_cases.canned_response(spec.api)],
            "settings": wire_cases.pi_settings(spec.api),
        }
        with tempfile.TemporaryDirectory() as agent_dir:
            Path(agent_dir, "auth.json").write_text(json.dumps(wire_cases.pi_auth_json()))
            Path(agent_dir, "models.json").write_text(json.dumps(models_json))
            got = run_node([job], agent_dir, env)["cases"][name]
        ua = next(
            (
                q["headers"]["user-agent"]
                for q in got["requests"]
                if q["headers"].get("user-agent", "").startswith("pi (")
            ),
            None,
        )
        golden[name] = {
            "requests": [wire_cases.comparable(q, ua) for q in got["requests"]],
            "message": got["message"],
        }
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} variants to {GOLDEN}")


if __name__ == "__main__":
    main()
