"""Record pi-ai 0.85.0's runtime model catalog into tests/golden/catalog.json.

The shipped catalog (pi_nb/_data/models.json) is written by tools/make_model_catalog.py, which
reads pi-ai's data files in Python. This golden comes the other way: Node imports pi-ai and asks
it for its models (``getBuiltinProviders()``/``getBuiltinModels()``, after pi-ai's own flattening)
and for each provider's key variables (``findEnvKeys``), through tests/golden/_pi_ai_direct.mjs.
Every model is recorded as the sha256 of its canonical JSON (sorted keys), so the test compares
every field of every model without a second copy of the catalog. Run by hand:

    /work/venv/bin/python tests/golden/make_catalog.py
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "catalog.json"


def pi_ai(fn: str, args: dict[str, Any]) -> Any:
    proc = subprocess.run(
        ["node", str(HERE / "_pi_ai_direct.mjs")],
        input=json.dumps({"fn": fn, "args": args}),
        capture_output=True,
        text=True,
        check=True,
    )
    answer = json.loads(proc.stdout)
    if not answer["ok"]:
        raise RuntimeError(answer["error"])
    return answer["result"]


def canonical_sha256(model: dict[str, Any]) -> str:
    text = json.dumps(model, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main() -> None:
    result = pi_ai("catalog", {"extraProviders": ["radius"]})
    providers = result["providers"]
    golden = {
        "source": "@earendil-works/pi-ai@0.85.0 (getBuiltinModels, findEnvKeys)",
        "modelCount": sum(len(models) for models in providers.values()),
        "providerCount": len(providers),
        "providers": {p: [[m["id"], canonical_sha256(m)] for m in models] for p, models in providers.items()},
        "apiKeyEnv": result["apiKeyEnv"],
    }
    OUT.write_text(json.dumps(golden, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT.name}: {golden['modelCount']} models, {golden['providerCount']} providers")


if __name__ == "__main__":
    main()
