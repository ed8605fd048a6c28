"""Write pi_nb/_data/models.json: pi-ai 0.85.0's model catalog, as data shipped in the package.

    python tools/make_model_catalog.py                 # from the pi-oracle install
    python tools/make_model_catalog.py --pi-ai DIR     # from another @earendil-works/pi-ai directory
    python tools/make_model_catalog.py --check         # exit 1 if the shipped file is out of date

Sources, all inside pi-ai's ``dist/``:

* ``providers/data/*.json``: one file per provider, ``{api: {model_id: model}}``. pi-ai flattens
  each file with ``Object.assign({}, ...Object.values(groups))`` (``model-catalog.js``): the groups
  are merged in file order, a model id seen twice keeps its first position and its last value.
  Python's ``dict.update`` has the same semantics, so the order of the shipped models is pi-ai's.
* ``providers/data/.manifest.json``: the sha256 of every data file and the generation time; each
  file is checked against it, so a damaged install cannot become shipped data.
* ``env-api-keys.js``: which environment variables hold each provider's API key (the ``envMap``
  literal plus the providers special-cased before it, e.g. ``anthropic`` and ``github-copilot``).

The output keeps every field of every model exactly as pi-ai has it (``compat``, ``headers``,
``thinkingLevelMap`` included), so ``tests/test_catalog.py`` can compare the shipped data with
what pi-ai itself returns (``tests/golden/catalog.json``, recorded through Node by
``tests/golden/make_catalog.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "pi_nb" / "_data" / "models.json"


def default_pi_ai() -> Path:
    home = os.environ.get("PI_ORACLE_HOME") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pi-oracle"
    )
    return Path(home) / "node_modules" / "@earendil-works" / "pi-ai"


def read_models(dist: Path) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    data = dist / "providers" / "data"
    manifest = json.loads((data / ".manifest.json").read_text(encoding="utf-8"))
    files = manifest["files"]
    on_disk = sorted(p.name for p in data.glob("*.json") if not p.name.startswith("."))
    if sorted(files) != on_disk:
        raise SystemExit(f"data files {on_disk} do not match the manifest's {sorted(files)}")
    providers: dict[str, list[dict[str, Any]]] = {}
    for name in sorted(files):
        raw = (data / name).read_bytes()
        digest = hashlib.sha256(raw).hexdigest()
        if digest != files[name]:
            raise SystemExit(f"{name}: sha256 {digest} is not the manifest's {files[name]}")
        groups = json.loads(raw)
        flat: dict[str, dict[str, Any]] = {}
        for group in groups.values():
            flat.update(group)
        provider = name.removesuffix(".json")
        for model in flat.values():
            if model.get("provider") != provider:
                raise SystemExit(f"{name}: model {model.get('id')!r} says provider {model.get('provider')!r}")
        providers[provider] = list(flat.values())
    return providers, manifest


def read_api_key_env(dist: Path) -> dict[str, list[str]]:
    """``getApiKeyEnvVars(provider)`` of ``env-api-keys.js`` as a table (its literal values, parsed)."""
    source = (dist / "dist" / "env-api-keys.js").read_text(encoding="utf-8")
    constants = dict(re.findall(r'export const (\w+) = "([^"]+)";', source))
    body = source[source.index("function getApiKeyEnvVars(provider)") :]
    body = body[: body.index("\n}\n")]

    def values(items: str) -> list[str]:
        out = []
        for item in (part.strip() for part in items.split(",")):
            if not item:
                continue
            out.append(item.strip('"') if item.startswith('"') else constants[item])
        return out

    table: dict[str, list[str]] = {}
    for provider, items in re.findall(r'provider === "([^"]+)"\) \{.*?return \[([^\]]*)\];', body, re.S):
        table[provider] = values(items)
    env_map = body[body.index("const envMap = {") : body.index("};")]
    for quoted, bare, value in re.findall(r'^\s*(?:"([^"]+)"|([\w-]+)): "([^"]+)",?$', env_map, re.M):
        table.setdefault(quoted or bare, [value])
    if len(table) < 30:
        raise SystemExit(f"env-api-keys.js: only {len(table)} providers parsed; its shape changed")
    return dict(sorted(table.items()))


def render(pi_ai: Path) -> str:
    package = json.loads((pi_ai / "package.json").read_text(encoding="utf-8"))
    dist = pi_ai / "dist"
    providers, manifest = read_models(dist)
    key_env = read_api_key_env(pi_ai)
    head = {
        "source": f"{package['name']}@{package['version']}",
        "generatedAt": manifest["generatedAt"],
        "files": manifest["files"],
        "apiKeyEnv": key_env,
        "modelCount": sum(len(models) for models in providers.values()),
        "providerCount": len(providers),
    }
    # one model per line: a later pi-ai update is a readable diff
    lines = ["{"]
    for key, value in head.items():
        lines.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False, sort_keys=True)},")
    lines.append('"providers": {')
    for i, (provider, models) in enumerate(providers.items()):
        lines.append(f"{json.dumps(provider)}: [")
        lines.extend(
            json.dumps(m, ensure_ascii=False, separators=(",", ":")) + ("," if j < len(models) - 1 else "")
            for j, m in enumerate(models)
        )
        lines.append("]" + ("," if i < len(providers) - 1 else ""))
    lines.append("}")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    json.loads(text)  # it is one JSON document
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--pi-ai", type=Path, default=default_pi_ai(), help="the @earendil-works/pi-ai directory"
    )
    parser.add_argument("--check", action="store_true", help="only compare with the shipped file")
    args = parser.parse_args(argv)
    text = render(args.pi_ai)
    if args.check:
        if not OUT.is_file() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is out of date: run python tools/make_model_catalog.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    data = json.loads(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {data['modelCount']} models, {data['providerCount']} providers")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
