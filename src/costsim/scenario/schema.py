"""The JSON schema of scenario files, made from the scenario model and the parameter models of
costsim's own strategies (shipped as ``costsim/schemas/scenario.schema.json``, so editors
validate and complete scenario YAML; a test keeps the file equal to what this makes)::

    # yaml-language-server: $schema=<site-packages>/costsim/schemas/scenario.schema.json

Regenerate with ``python -m costsim.scenario.schema > src/costsim/schemas/scenario.schema.json``.
"""

from __future__ import annotations

import json
from typing import Any

from costsim.scenario.model import Scenario
from costsim.strategies.registry import strategies

__all__ = ["scenario_schema"]

_PERCENT = r"^\s*[0-9]+(\.[0-9]+)?\s*%?\s*$"


def _entry(defs: dict[str, Any]) -> dict[str, Any]:
    """One entry of a variant: a strategy in the strategy syntax, or ``{name: {params}}``."""
    known: dict[str, Any] = {}
    for name, strategy in strategies().items():
        if not type(strategy).__module__.startswith("costsim."):
            continue  # another package's strategy: allowed, not described here
        params = strategy.params.model_json_schema()
        defs.update(params.pop("$defs", {}))
        params["description"] = strategy.summary
        known[name] = {"anyOf": [params, {"type": "null"}]}
    return {
        "anyOf": [
            {
                "type": "string",
                "description": "A strategy in the strategy syntax: caching, caching:ttl=1h, "
                "truncation & caching.",
            },
            {
                "type": "object",
                "description": "One strategy and its parameters: {caching: {ttl: 1h}}.",
                "minProperties": 1,
                "maxProperties": 1,
                "properties": known,
                "additionalProperties": {"type": ["object", "null"]},
            },
        ]
    }


def scenario_schema() -> dict[str, Any]:
    schema = Scenario.model_json_schema()
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    entry = _entry(defs)
    variants = schema["properties"]["variants"]
    variants["additionalProperties"] = {
        "anyOf": [
            {"type": "array", "items": entry},
            {"type": "string", "description": "Strategies in the strategy syntax, stacked."},
        ]
    }
    budget = defs["Budget"]["properties"]["max_regression_pct"]
    budget["anyOf"].insert(1, {"type": "string", "pattern": _PERCENT})
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://costsim.dev/schemas/scenario.schema.json",
        **schema,
        "title": "costsim scenario file",
        "$defs": dict(sorted(defs.items())),
    }


if __name__ == "__main__":
    print(json.dumps(scenario_schema(), indent=2))
