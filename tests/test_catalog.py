"""pi-ai 0.85.0's model catalog as pi_nb ships it, its costs, and get_model over it.

Goldens: tests/golden/catalog.json (pi-ai's own runtime catalog and key variables, recorded through
Node by tests/golden/make_catalog.py) and tests/golden/cost.json (pi-ai's calculateCost and
pi-coding-agent's getUsageCostBreakdown, tests/golden/make_cost.py). No Node here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from replay_server import ReplayServer, oa_chunk, sse

import pi_nb
from pi_nb.errors import InvalidMessageError, PiNbError, ProviderError
from pi_nb.providers import (
    KNOWN_MODELS,
    SPOKEN_APIS,
    Context,
    MissingProviderSettingError,
    ModelCost,
    ModelSpec,
    UnknownModelError,
    UnsupportedApiError,
    apply_cost,
    calculate_cost,
    catalog_info,
    context_window_for,
    find_model,
    get_model,
    list_models,
    list_providers,
    make_usage,
    model_spec,
    provider_api_key_env,
    session_context_window,
    session_cost,
    usage_cost_breakdown,
)

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
CATALOG = json.loads((GOLDEN / "catalog.json").read_text(encoding="utf-8"))
COSTS = json.loads((GOLDEN / "cost.json").read_text(encoding="utf-8"))
HAS_RESPONSES = importlib.util.find_spec("pi_nb.providers.openai_responses") is not None


def canonical_sha256(model: dict[str, Any]) -> str:
    text = json.dumps(model, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------------------------------
# the shipped catalog is pi-ai's


def test_shipped_catalog_equals_pi_ai_runtime_catalog_field_for_field() -> None:
    assert CATALOG["modelCount"] == 1336 and CATALOG["providerCount"] == 39
    info = catalog_info()
    assert info["source"] == "@earendil-works/pi-ai@0.85.0"
    assert (info["modelCount"], info["providerCount"]) == (1336, 39)
    assert len(list_models()) == 1336 and len(KNOWN_MODELS) == 1336
    assert list_providers() == sorted(CATALOG["providers"])
    for provider, golden in CATALOG["providers"].items():
        specs = list_models(provider)
        # same ids in pi-ai's order, and every field of every model (sha256 of its canonical JSON)
        assert [[s.id, canonical_sha256(s.to_dict())] for s in specs] == golden, provider


def test_key_variables_are_pi_ais() -> None:
    for provider in list_providers():
        assert list(provider_api_key_env(provider)) == CATALOG["apiKeyEnv"].get(provider, []), provider
    assert provider_api_key_env("groq") == ("GROQ_API_KEY",)
    assert provider_api_key_env("openrouter") == ("OPENROUTER_API_KEY",)
    assert provider_api_key_env("huggingface") == ("HF_TOKEN",)
    assert provider_api_key_env("amazon-bedrock") == ()  # AWS credentials, not one key


def test_generator_reproduces_the_shipped_file_when_pi_ai_is_installed() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import make_model_catalog
    finally:
        sys.path.pop(0)
    pi_ai = make_model_catalog.default_pi_ai()
    if not (pi_ai / "dist" / "providers" / "data").is_dir():
        pytest.skip("pi-ai's install (pi-oracle) is not here")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_model_catalog.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_wheel_ships_the_catalog() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'packages = ["pi_nb"]' in pyproject  # hatch ships every file under pi_nb/, _data included
    data = ROOT / "pi_nb" / "_data" / "models.json"
    assert data.is_file()
    if (ROOT / ".git").exists():  # hatch leaves out what git ignores: the catalog must not be
        ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", str(data)], check=False)
        assert ignored.returncode == 1
    # read the way the installed package reads it
    from importlib import resources

    assert (
        json.loads(resources.files("pi_nb").joinpath("_data", "models.json").read_text("utf-8"))["modelCount"]
        == 1336
    )


# ---------------------------------------------------------------------------------------------
# specs


def test_real_numbers_from_pi_ai_data() -> None:
    sonnet = find_model("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None
    assert (sonnet.context_window, sonnet.max_tokens, sonnet.reasoning) == (1_000_000, 64_000, True)
    assert (sonnet.api, sonnet.base_url, sonnet.name) == (
        "anthropic-messages",
        "https://api.anthropic.com",
        "Claude Sonnet 4.5 (latest)",
    )
    assert sonnet.input == ("text", "image")
    assert sonnet.cost.to_dict() == {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}
    assert (sonnet.cost["cacheRead"], sonnet.cost.cache_write, sonnet.cost["tiers"]) == (0.3, 3.75, [])
    dated = find_model("anthropic", "claude-haiku-4-5-20251001")
    assert dated is not None and dated.context_window == 200_000
    tiered = find_model("openai", "gpt-5.4")
    assert tiered is not None and tiered.api == "openai-responses"
    assert tiered.cost.to_dict() == {
        "input": 2.5,
        "output": 15,
        "cacheRead": 0.25,
        "cacheWrite": 0,
        "tiers": [
            {"inputTokensAbove": 272000, "input": 5, "output": 22.5, "cacheRead": 0.5, "cacheWrite": 0}
        ],
    }
    groq = find_model("groq", "openai/gpt-oss-120b")
    assert groq is not None and (groq.api, groq.base_url) == (
        "openai-completions",
        "https://api.groq.com/openai/v1",
    )
    nvidia = next(s for s in list_models("nvidia") if s.headers)
    assert nvidia.headers == {"NVCF-POLL-SECONDS": "3600"}


def test_spec_is_frozen_hashable_and_its_dict_is_a_copy() -> None:
    spec = find_model("anthropic", "claude-haiku-4-5")
    assert spec is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.context_window = 1  # type: ignore[misc]
    assert spec in {spec} and spec.key == "anthropic/claude-haiku-4-5"
    data = spec.to_dict()
    data["cost"]["input"] = 999
    assert spec.to_dict()["cost"]["input"] == 1 and spec.cost.input == 1
    with pytest.raises(TypeError):
        spec.raw["id"] = "x"  # type: ignore[index]
    assert ModelSpec.from_dict(spec.to_dict()) == spec
    assert KNOWN_MODELS["anthropic/claude-haiku-4-5"] is spec
    with pytest.raises(KeyError):
        KNOWN_MODELS["anthropic/nope"]


def test_lookups_of_unknown_things() -> None:
    assert find_model("anthropic", "claude-nonexistent") is None
    assert find_model("nope", "x") is None
    assert context_window_for("nope", "x") is None and context_window_for(None, None) is None
    assert context_window_for("anthropic", "claude-sonnet-4-5") == 1_000_000
    # a model whose API pi_nb does not speak is still known for budgets
    assert (
        context_window_for("google", "gemini-2.5-pro")
        == find_model("google", "gemini-2.5-pro").context_window
    )  # type: ignore[union-attr]
    with pytest.raises(UnknownModelError, match="Did you mean google"):
        list_models("gemini")
    assert len(list_models("anthropic")) == len(CATALOG["providers"]["anthropic"])


def test_new_names_are_exported_at_the_top() -> None:
    for name in (
        "list_models",
        "find_model",
        "calculate_cost",
        "context_window_for",
        "session_cost",
        "list_providers",
        "usage_cost_breakdown",
        "session_context_window",
    ):
        assert name in pi_nb.__all__
        assert getattr(pi_nb, name) is getattr(pi_nb.providers, name)
    # the hook the providers call stays in its subpackage (a curated top level)
    assert "apply_cost" not in pi_nb.__all__
    assert issubclass(UnknownModelError, PiNbError) and issubclass(UnknownModelError, ValueError)
    assert issubclass(UnsupportedApiError, ProviderError)
    # %pi model turns ValueErrors into a usage message: every get_model error is one
    for cls in (UnknownModelError, UnsupportedApiError, MissingProviderSettingError):
        assert issubclass(cls, ProviderError) and issubclass(cls, ValueError)


# ---------------------------------------------------------------------------------------------
# costs


def test_calculate_cost_equals_pi_ai_on_every_recorded_usage() -> None:
    cases = COSTS["cases"]
    assert len(cases) > 1000
    tiered = [c for c in cases if find_model(c["provider"], c["id"]).cost.tiers]  # type: ignore[union-attr]
    long_writes = [c for c in cases if c["usage"].get("cacheWrite1h")]
    assert len(tiered) > 300 and len(long_writes) > 300
    mismatches = []
    for case in cases:
        spec = find_model(case["provider"], case["id"])
        assert spec is not None
        usage = dict(case["usage"])
        got = calculate_cost(spec, usage)
        if got != case["cost"]:
            mismatches.append((case, got))
        assert usage == case["usage"]  # not changed
    assert mismatches == []


def test_tier_boundary_and_one_hour_writes_by_hand() -> None:
    spec = find_model("openai", "gpt-5.4")
    assert spec is not None
    at = calculate_cost(spec, make_usage(272_000, 0))
    above = calculate_cost(spec, make_usage(272_001, 0))
    assert at["input"] == 2.5 / 1e6 * 272_000  # not above the threshold: base prices
    assert above["input"] == 5 / 1e6 * 272_001  # above: the tier's
    # cache reads and writes count toward the input size
    assert calculate_cost(spec, make_usage(1, 0, cache_read=272_000))["cacheRead"] == 0.5 / 1e6 * 272_000
    sonnet = find_model("anthropic", "claude-sonnet-4-5")
    assert sonnet is not None
    usage = {**make_usage(0, 0, cache_write=1000), "cacheWrite1h": 400}
    cost = calculate_cost(sonnet, usage)
    assert cost["cacheWrite"] == (3.75 * 600 + 3 * 2 * 400) / 1e6
    assert cost["total"] == cost["input"] + cost["output"] + cost["cacheRead"] + cost["cacheWrite"]
    assert calculate_cost(sonnet.cost, usage) == cost  # a ModelCost works too


def test_bad_usages_are_clear_errors() -> None:
    spec = find_model("anthropic", "claude-sonnet-4-5")
    assert spec is not None
    for bad in ({"input": 1}, {**make_usage(), "output": -1}, {**make_usage(), "input": "10"}):
        with pytest.raises(InvalidMessageError, match="usage"):
            calculate_cost(spec, bad)
    with pytest.raises(InvalidMessageError):
        calculate_cost(spec, {**make_usage(), "cacheRead": True})
    with pytest.raises(InvalidMessageError):
        calculate_cost(spec, {**make_usage(), "cacheWrite": float("nan")})
    with pytest.raises(TypeError, match="ModelSpec"):
        calculate_cost("anthropic/claude-sonnet-4-5", make_usage())  # type: ignore[arg-type]


def test_apply_cost_writes_usage_cost() -> None:
    spec = find_model("anthropic", "claude-sonnet-4-5")
    usage = make_usage(1000, 100, 2000, 0)
    assert apply_cost(spec, usage) is usage
    assert usage["cost"] == {
        "input": 3 / 1e6 * 1000,
        "output": 15 / 1e6 * 100,
        "cacheRead": 0.3 / 1e6 * 2000,
        "cacheWrite": 0.0,
        "total": 3 / 1e6 * 1000 + 15 / 1e6 * 100 + 0.3 / 1e6 * 2000 + 0.0,
    }
    untouched = make_usage(5, 5)
    assert apply_cost(None, untouched)["cost"]["total"] == 0


def _session_entries(record: dict[str, Any]) -> list[dict[str, Any]]:
    if "file" in record:
        text = (ROOT / record["file"]).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    entries: list[dict[str, Any]] = record["entries"]
    return entries


def test_usage_cost_breakdown_and_session_cost_equal_pi() -> None:
    assert len(COSTS["sessions"]) >= 3
    for record in COSTS["sessions"]:
        entries = _session_entries(record)
        assert usage_cost_breakdown(entries) == record["breakdown"]
        total = sum(row["cost"] for row in record["breakdown"])
        assert session_cost(entries) == pytest.approx(total, rel=1e-12, abs=0)
    real = _session_entries({"file": "tests/fixtures/pi_session.jsonl"})
    assert session_cost(real) == pytest.approx(0.024)  # eight assistant turns at $0.003
    assert session_cost([e["message"] for e in real if e.get("type") == "message"]) == session_cost(real)


def test_session_context_window_of_a_real_pi_session() -> None:
    from pi_nb.session.context import build_session_context

    real = _session_entries({"file": "tests/fixtures/pi_session.jsonl"})
    assert build_session_context(real).model == {"provider": "anthropic", "modelId": "claude-sonnet-4-5"}
    assert session_context_window(real) == 1_000_000
    switched = [
        *real,
        {
            "type": "model_change",
            "id": "mc",
            "parentId": real[-1]["id"],
            "timestamp": "x",
            "provider": "groq",
            "modelId": "openai/gpt-oss-120b",
        },
    ]
    assert session_context_window(switched) == 131_072
    assert session_context_window(switched, leaf_id=real[-1]["id"]) == 1_000_000
    offline = _session_entries({"file": "tests/fixtures/e2e/compaction_pre_prompt.jsonl"})
    assert session_context_window(offline) is None  # pi_nb's offline model is not in the catalog
    assert session_context_window([]) is None


def test_session_cost_rejects_bad_entries() -> None:
    with pytest.raises(InvalidMessageError):
        session_cost(["not an entry"])  # type: ignore[list-item]
    bad = {"role": "assistant", "provider": "p", "model": "m", "usage": {**make_usage(), "cost": {}}}
    with pytest.raises(InvalidMessageError, match=r"cost\.total"):
        session_cost([bad])


# ---------------------------------------------------------------------------------------------
# get_model over the catalog


def test_every_catalog_model_runs_with_its_numbers_or_says_which_apis_are_spoken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "acct")
    monkeypatch.setenv("CLOUDFLARE_GATEWAY_ID", "gw")
    runnable = unsupported = 0
    for spec in list_models():
        try:
            model = get_model(spec.key)
        except UnsupportedApiError as error:
            unsupported += 1
            text = str(error)
            if spec.api not in (*SPOKEN_APIS, "mistral-conversations"):
                assert all(api in text for api in SPOKEN_APIS), text
            elif spec.provider == "github-copilot":
                assert "signs in" in text, text
            else:
                assert spec.api == "openai-responses" and not HAS_RESPONSES and "Responses provider" in text
            continue
        runnable += 1
        assert (model.provider, model.id) == (spec.provider, spec.id)
        assert (model.context_window, model.max_tokens, model.reasoning) == (
            spec.context_window,
            spec.max_tokens,
            spec.reasoning,
        )
        assert model.input == spec.input and model.name == spec.name
        assert model_spec(model) == spec
        base = getattr(model, "base_url", None)
        expected = spec.base_url.rstrip("/").replace("{CLOUDFLARE_ACCOUNT_ID}", "acct")
        expected = expected.replace("{CLOUDFLARE_GATEWAY_ID}", "gw")
        assert (base or "") == expected, spec.key  # Azure's catalog URL is "": it comes from $AZURE_OPENAI_*
        keys = provider_api_key_env(spec.provider)
        if not keys and spec.provider == "amazon-bedrock":  # AWS credentials, not one key variable
            assert getattr(model, "api_key_env", None) == ""
            continue
        if not keys:  # a sign-in (Codex): the provider's own variable, until auth.json gives the token
            assert spec.provider == "openai-codex"
            assert getattr(model, "api_key_env", None) == "OPENAI_CODEX_ACCESS_TOKEN"
            continue
        assert getattr(model, "api_key_env", None) == (
            "ANTHROPIC_API_KEY" if spec.provider == "anthropic" else keys[0]
        )
    # every model either runs or is refused (a sign-in provider, or an API pi_nb does not speak)
    assert runnable > 1100 and runnable + unsupported == len(list_models())


@pytest.mark.parametrize(
    ("provider", "key_env"),
    [
        ("groq", "GROQ_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
        ("deepseek", "DEEPSEEK_API_KEY"),
        ("together", "TOGETHER_API_KEY"),
        ("cerebras", "CEREBRAS_API_KEY"),
        ("zai", "ZAI_API_KEY"),
        ("nvidia", "NVIDIA_API_KEY"),
        ("huggingface", "HF_TOKEN"),
        ("fireworks", "FIREWORKS_API_KEY"),
        ("moonshotai", "MOONSHOT_API_KEY"),
    ],
)
def test_openai_compatible_providers_use_catalog_url_and_pi_key(provider: str, key_env: str) -> None:
    from pi_nb.providers.openai_compat import OpenAICompatModel

    spec = next(s for s in list_models(provider) if s.api == "openai-completions")
    model = get_model(spec.key)
    assert isinstance(model, OpenAICompatModel)
    assert model.api_key_env == key_env
    assert model.base_url == spec.base_url.rstrip("/")


def test_mistral_models_speak_mistrals_own_api() -> None:
    """pi-ai runs Mistral's models on ``mistral-conversations`` (its native chat API), not on
    Chat Completions: so does pi_nb, at the catalog's base URL with ``MISTRAL_API_KEY``."""
    from pi_nb.providers.mistral_conversations import MistralConversationsModel

    specs = [s for s in list_models("mistral") if s.api == "mistral-conversations"]
    assert len(specs) > 20
    for spec in specs:
        model = get_model(spec.key)
        assert isinstance(model, MistralConversationsModel), spec.key
        assert model.api_key_env == "MISTRAL_API_KEY"
        assert model.base_url == spec.base_url.rstrip("/")


def test_a_groq_turn_goes_to_its_url_with_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openai")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test-groq-key")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key")
    server = ReplayServer()
    usage = {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230}
    server.queues["/openai/v1/chat/completions"] = [
        (
            200,
            "text/event-stream",
            sse(
                [
                    oa_chunk({"role": "assistant", "content": "hi"}),
                    oa_chunk({}, "stop"),
                    oa_chunk(None, usage=usage),
                    "[DONE]",
                ]
            ),
        )
    ]
    try:
        spec = find_model("groq", "openai/gpt-oss-120b")
        assert spec is not None
        # the catalog's URL path, on the local server
        model = get_model(spec.key, base_url=server.url + "/openai/v1", max_retries=0)
        ctx = Context(system_prompt="s", messages=[{"role": "user", "content": "hi", "timestamp": 1}])
        message = asyncio.run(model.complete(ctx))
    finally:
        server.shutdown()
    assert message["stopReason"] == "stop" and message["provider"] == "groq"
    assert server.requests[0]["body"]["model"] == "openai/gpt-oss-120b"
    assert server.seen_keys == ["Bearer gsk-test-groq-key"]
    # what Pi records as this turn's cost
    priced = apply_cost(model_spec(model), dict(message["usage"]))
    assert priced["cost"] == calculate_cost(spec, message["usage"]) and priced["cost"]["total"] > 0


def test_known_provider_unknown_id_needs_a_window() -> None:
    with pytest.raises(UnknownModelError, match="claude-sonnet-4-5") as info:
        get_model("anthropic/claude-sonet-4-5")
    assert "context_window=" in str(info.value)
    model = get_model("groq/my-finetune", context_window=32_000)
    assert (model.context_window, model.max_tokens) == (32_000, 16_384)
    assert getattr(model, "base_url", None) == "https://api.groq.com/openai/v1"
    assert getattr(model, "api_key_env", None) == "GROQ_API_KEY"
    small = get_model("deepseek/tiny", context_window=8_000, max_tokens=1_000)
    assert (small.context_window, small.max_tokens) == (8_000, 1_000)


def test_unknown_provider_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-be-used")
    with pytest.raises(UnknownModelError, match=r"Unknown provider 'gemini'.*google"):
        get_model("gemini/gemini-2.5-pro")
    with pytest.raises(UnknownModelError, match="Unknown model"):
        get_model("nonsense")
    with pytest.raises(UnknownModelError):
        get_model("/x")
    # explicit: a self-hosted OpenAI-compatible server
    model = get_model(
        "vllm/qwen", base_url="http://127.0.0.1:9/v1", context_window=32_768, api_key_env="VLLM_KEY"
    )
    assert (model.provider, model.context_window, getattr(model, "api_key_env", None)) == (
        "vllm",
        32_768,
        "VLLM_KEY",
    )


def test_unspoken_apis_and_sign_ins_are_known_but_not_runnable() -> None:
    unspoken = [
        m
        for m in list_models()
        if m.api not in SPOKEN_APIS and m.provider not in ("github-copilot", "openai-codex")
    ]
    for key in sorted({f"{m.provider}/{m.id}" for m in unspoken})[:2]:
        spec = find_model(*key.split("/", 1))
        assert spec is not None and spec.context_window > 0
        with pytest.raises(UnsupportedApiError) as info:
            get_model(key)
        assert spec.api in str(info.value)
        assert all(api in str(info.value) for api in SPOKEN_APIS)
    # GitHub Copilot runs (pi_nb.auth exchanges its token): every model on its catalog API
    for copilot in list_models("github-copilot"):
        assert get_model("github-copilot/" + copilot.id).pi_ai_model()["api"] == copilot.api
    if unspoken:
        with pytest.raises(UnsupportedApiError, match="speaks"):
            get_model("anthropic/claude-sonnet-4-5", api=unspoken[0].api)


def test_gemini_and_vertex_models_are_runnable() -> None:
    for key, api in (
        ("google/gemini-2.5-pro", "google-generative-ai"),
        ("google-vertex/gemini-2.5-pro", "google-vertex"),
    ):
        model = get_model(key)
        assert model.api == api and model.context_window == find_model(*key.split("/", 1)).context_window  # type: ignore[union-attr]


def test_openai_models_speak_responses() -> None:
    if HAS_RESPONSES:
        model = get_model("openai/gpt-4o")
        assert type(model).__name__ == "OpenAIResponsesProvider"
        assert (model.context_window, getattr(model, "api_key_env", None)) == (128_000, "OPENAI_API_KEY")
    else:
        with pytest.raises(UnsupportedApiError, match="openai-responses"):
            get_model("openai/gpt-4o")
    chat = get_model("openai/gpt-4o", api="openai-completions")
    assert chat.api == "openai-completions" and chat.context_window == 128_000
    assert getattr(chat, "base_url", None) == "https://api.openai.com/v1"


def test_base_url_variables_still_point_at_compatible_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    model = get_model("openai/gpt-4o")
    assert model.api == "openai-completions" and getattr(model, "base_url", None) == "http://127.0.0.1:9/v1"
    assert model.context_window == 128_000  # still the catalog's numbers
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    claude = get_model("anthropic/claude-haiku-4-5")
    assert getattr(claude, "base_url", None) == "http://127.0.0.1:9"


def test_base_url_placeholders_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID", raising=False)
    spec = list_models("cloudflare-workers-ai")[0]
    with pytest.raises(MissingProviderSettingError, match="CLOUDFLARE_ACCOUNT_ID"):
        get_model(spec.key)
    monkeypatch.setenv("CLOUDFLARE_ACCOUNT_ID", "abc123")
    model = get_model(spec.key)
    assert getattr(model, "base_url", None) == "https://api.cloudflare.com/client/v4/accounts/abc123/ai/v1"


def test_offline_scripted_and_ollama_are_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_BASE_URL", raising=False)
    assert get_model().provider == "pi_nb" and get_model("offline").provider == "pi_nb"
    assert get_model("scripted").provider
    ollama = get_model("ollama/llama3.1")
    assert (ollama.context_window, ollama.max_tokens) == (32_768, 8_192)
    assert getattr(ollama, "base_url", None) == "http://127.0.0.1:11434/v1"


def test_cost_with_a_model_object() -> None:
    model = get_model("anthropic/claude-haiku-4-5")
    spec = model_spec(model)
    assert spec is not None and spec.cost == ModelCost(1, 5, 0.1, 1.25)
    assert model_spec(get_model("groq/unknown", context_window=1000)) is None
