"""Plugin output at the platform boundary: text PostgreSQL can store, and JSON documents of claims, attributes
and problems.

Adapters read untrusted pages. A page can carry NUL characters or, through JSON-LD escapes, lone UTF-16
surrogates; PostgreSQL text and jsonb accept neither, and a JSON number may be NaN. Every string that leaves a
plugin is cleaned here once, so a hostile page becomes data (with U+FFFD where it was unreadable), never a
failed transaction that would be retried until the DLQ.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from prw_platform.plugins import Claim, ClaimValue, NormalizationProblem, NormalizedAttribute

JsonValue = Any


def clean_text(text: str) -> str:
    """UTF-8 encodable and NUL-free (PostgreSQL rejects both in text and jsonb)."""
    encodable = text.encode("utf-8", errors="replace").decode("utf-8")
    return encodable.replace("\x00", "\ufffd")


def clean_claim_value(value: ClaimValue) -> ClaimValue:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # NaN and infinities are not JSON; their text is what the page said
    return value


def json_value(value: object) -> JsonValue:
    """A JSON-safe copy: Decimals as their exact text, non-finite floats as text, tuples as lists."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, Mapping):
        return {clean_text(str(k)): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


def claim_documents(claims: Iterable[Claim]) -> list[dict[str, JsonValue]]:
    return [
        {
            "attribute": c.attribute,
            "value": json_value(c.value),
            "evidence_locator": c.evidence_locator,
            "source": c.source,
            "confidence": c.confidence,
        }
        for c in claims
    ]


def attribute_documents(attributes: Iterable[NormalizedAttribute]) -> list[dict[str, JsonValue]]:
    return [
        {
            "key": a.key,
            "value": json_value(a.value),
            "unit": a.unit,
            "definition_version": a.definition_version,
            "evidence_locators": list(a.evidence_locators),
            "confidence": a.confidence,
        }
        for a in attributes
    ]


def problem_documents(problems: Iterable[NormalizationProblem]) -> list[dict[str, JsonValue]]:
    return [
        {
            "attribute": p.attribute,
            "code": p.code,
            "message": clean_text(p.message),
            "raw_value": json_value(p.raw_value),
        }
        for p in problems
    ]
