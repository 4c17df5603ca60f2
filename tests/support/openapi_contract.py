"""``schemas/openapi.yaml``: the checked-in contract of both HTTP origins (intake and product), one document.

Each origin's test checks its part against the running app: its paths (listed under ``x-prw-origins``) and every
component schema it uses are exactly the served ones, and the paths of the document are exactly the origins'.
``info`` and the security schemes are the intake app's (the product app has no security). After an intentional
change: ``PRW_UPDATE_OPENAPI=1`` rewrites the origin's part (review the diff like any contract change).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CONTRACT = ROOT / "schemas" / "openapi.yaml"
ORIGINS = "x-prw-origins"


def _dump(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=True, allow_unicode=True, width=110)


def _load() -> dict[str, Any]:
    loaded = yaml.safe_load(CONTRACT.read_text()) if CONTRACT.exists() else None
    return loaded if isinstance(loaded, dict) else {}


def _merged(contract: dict[str, Any], origin: str, served: dict[str, Any]) -> dict[str, Any]:
    origins: dict[str, list[str]] = dict(contract.get(ORIGINS, {}))
    others = {path for name, paths in origins.items() if name != origin for path in paths}
    paths = {p: v for p, v in contract.get("paths", {}).items() if p in others}
    paths.update(served.get("paths", {}))
    origins[origin] = sorted(served.get("paths", {}))
    schemas = dict(contract.get("components", {}).get("schemas", {}))
    schemas.update(served.get("components", {}).get("schemas", {}))
    merged = dict(contract) | {"paths": paths, ORIGINS: origins}
    merged["components"] = dict(contract.get("components", {})) | {"schemas": schemas}
    if origin == "intake":
        merged |= {k: v for k, v in served.items() if k not in ("paths", "components")}
        merged["components"] |= {k: v for k, v in served.get("components", {}).items() if k != "schemas"}
    merged.setdefault("openapi", served.get("openapi"))
    return merged


def check_origin(origin: str, served: dict[str, Any]) -> None:
    """Assert that the served document of ``origin`` is its part of the contract (rewrite it first when asked)."""
    if os.environ.get("PRW_UPDATE_OPENAPI") == "1":
        CONTRACT.write_text(_dump(_merged(_load(), origin, served)))
    assert CONTRACT.exists(), f"{CONTRACT} is missing: run with PRW_UPDATE_OPENAPI=1 to write it"
    contract = _load()
    hint = f"the {origin} OpenAPI changed: review it, then rerun with PRW_UPDATE_OPENAPI=1"
    assert contract.get(ORIGINS, {}).get(origin) == sorted(served["paths"]), hint
    for path, operations in served["paths"].items():
        assert contract["paths"].get(path) == operations, f"{path}: {hint}"
    for name, schema in served.get("components", {}).get("schemas", {}).items():
        assert contract["components"]["schemas"].get(name) == schema, f"schema {name}: {hint}"
    listed = {path for paths in contract[ORIGINS].values() for path in paths}
    assert set(contract["paths"]) == listed, "a path of the contract belongs to no origin"
    if origin == "intake":
        assert {k: v for k, v in contract.items() if k not in ("paths", "components", ORIGINS)} == {
            k: v for k, v in served.items() if k not in ("paths", "components")
        }, hint
