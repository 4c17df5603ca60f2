"""Versioned prompts and the output schemas they ask for (if_llm_extract ``extract-listing@5``, ``claims/1``;
if_llm_review ``review-case@3``, ``review-advice/1``).

A prompt is a file named ``<name>@<version>.md`` beside this module; changing its text means a new file and a new
version, because the version keys every cached result (a cached answer to another prompt is never reused).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from types import MappingProxyType
from typing import Any, Final

EXTRACT_PROMPT: Final = "extract-listing@5"
REVIEW_PROMPT: Final = "review-case@3"

ATTRIBUTES: Final = (
    "core:title",
    "core:brand",
    "core:mpn",
    "core:gtin",
    "core:sku",
    "offer:price",
    "offer:currency",
    "offer:availability",
)
ACTIONS: Final = ("accept", "correct", "create_item", "map_to", "reject")

#: ``claims/1``: strict structured output (every property required, nothing else allowed).
CLAIMS_SCHEMA_NAME: Final = "claims-1"
CLAIMS_SCHEMA: Final = MappingProxyType(
    {
        "type": "object",
        "additionalProperties": False,
        "required": ["claims", "diagnostics"],
        "properties": {
            "claims": {
                "type": "array",
                "maxItems": 40,
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["attribute", "value", "evidence_locator"],
                    "properties": {
                        "attribute": {"type": "string", "enum": list(ATTRIBUTES)},
                        "value": {"type": "string", "minLength": 1, "maxLength": 500},
                        "evidence_locator": {"type": "string", "minLength": 1, "maxLength": 300},
                    },
                },
            },
            "diagnostics": {"type": "array", "maxItems": 20, "items": {"type": "string", "maxLength": 500}},
        },
    }
)

#: ``review-advice/1``: the recommendation only; ``advisory: true`` is the platform's to add, never the model's.
ADVICE_SCHEMA_NAME: Final = "review-advice-1"
ADVICE_SCHEMA: Final = MappingProxyType(
    {
        "type": "object",
        "additionalProperties": False,
        "required": ["recommendation"],
        "properties": {
            "recommendation": {
                "type": "object",
                "additionalProperties": False,
                "required": ["action", "item_id", "rationale", "cited_evidence"],
                "properties": {
                    "action": {"type": "string", "enum": list(ACTIONS)},
                    "item_id": {"type": ["string", "null"], "maxLength": 200},
                    "rationale": {"type": "string", "minLength": 1, "maxLength": 2000},
                    "cited_evidence": {
                        "type": "array",
                        "maxItems": 20,
                        "items": {"type": "string", "maxLength": 200},
                    },
                },
            }
        },
    }
)


@cache
def prompt_text(version: str) -> str:
    """The system prompt of ``version`` (``extract-listing@5``); KeyError for a version that is not shipped."""
    resource = resources.files("prw_platform.llm").joinpath("prompts", f"{version}.md")
    if not resource.is_file():
        raise KeyError(f"no prompt {version!r} is shipped")
    return resource.read_text(encoding="utf-8")


def plain(schema: MappingProxyType[str, Any]) -> dict[str, Any]:
    """A JSON-serializable copy of a schema constant."""
    return {k: (plain(v) if isinstance(v, MappingProxyType) else v) for k, v in schema.items()}
