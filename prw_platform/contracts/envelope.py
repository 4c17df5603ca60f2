"""The hand-written part of product.accepted-change.v1: the envelope every event type shares (if_accepted_change).

``generate.py`` adds what depends on the event type (the payload models and the ``type`` → ``payload`` union)
and writes ``schemas/product.accepted-change.v1.json``. Edit the envelope here, keep ``AcceptedChange``
(messages.py) in step (tests/unit/contracts checks both name the same fields), and run the generator.
"""

from __future__ import annotations

from typing import Any, Final

SCHEMA_ID: Final = "https://prw.example/schemas/product.accepted-change.v1.json"

_ID_PATTERN: Final = "^[a-z][a-z0-9_]{2,63}$"

ENVELOPE: Final[dict[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": SCHEMA_ID,
    "title": "product.accepted-change.v1",
    "description": (
        "One accepted change to one aggregate revision, written to the resolver outbox in the same transaction "
        "as the decision and facts (AW-01) and delivered at least once, in any order, to the product service "
        "(if_accepted_change). tenant_id, catalog_id and history_epoch are stamped from the outbox row; sequence "
        "is the committed position in (tenant_id, catalog_id, history_epoch), contiguous from 1 (INV-03)."
    ),
    "type": "object",
    "additionalProperties": False,
    "required": [
        "event_id",
        "tenant_id",
        "catalog_id",
        "history_epoch",
        "sequence",
        "type",
        "schema_version",
        "aggregate",
        "dependencies",
        "accepted_at",
        "payload",
    ],
    "properties": {
        "event_id": {"type": "string", "minLength": 1, "maxLength": 128},
        "tenant_id": {"type": "string", "pattern": _ID_PATTERN},
        "catalog_id": {"type": "string", "pattern": _ID_PATTERN},
        "history_epoch": {"type": "string", "minLength": 1, "maxLength": 128},
        "sequence": {"type": "integer", "minimum": 1},
        "type": {
            "type": "string",
            "pattern": "^[a-z][a-z_]*\\.[a-z][a-z_]*$",
            # Not an enum: a well-formed event of a type the consumer does not know is UNSUPPORTED_EVENT_TYPE
            # (dead-lettered, the gap stays visible), not a malformed message.
            "description": "<aggregate type>.<what happened>, e.g. catalog_item.created, listing_mapping.corrected.",
        },
        "schema_version": {"const": "accepted-change/1"},
        "aggregate": {"$ref": "#/$defs/aggregate_revision"},
        "dependencies": {
            "type": "array",
            "description": "Aggregate revisions that must be applied before this event (AW-04: otherwise it is parked).",
            "items": {"$ref": "#/$defs/aggregate_revision"},
        },
        "decision_id": {"type": ["string", "null"], "minLength": 1},
        "evidence": {
            "type": "array",
            "description": "Capture ids the decision rests on. Internal: never emitted by a public serializer.",
            "items": {"type": "string", "minLength": 1},
        },
        "observed_at": {"type": ["string", "null"], "format": "date-time"},
        "accepted_at": {"type": "string", "format": "date-time"},
        "published_at": {"type": ["string", "null"], "format": "date-time"},
        "payload": {
            "type": "object",
            "description": "The full state of the aggregate at this revision; its schema depends on `type` (allOf).",
        },
    },
    "$defs": {
        "aggregate_revision": {
            "type": "object",
            "additionalProperties": False,
            "required": ["type", "id", "revision"],
            "properties": {
                "type": {"type": "string", "pattern": "^[a-z][a-z_]*$"},
                "id": {"type": "string", "minLength": 1, "maxLength": 128},
                "revision": {"type": "integer", "minimum": 1},
            },
        }
    },
    # The seed's complete example (003, if_accepted_change @event:evt_0142); tests/fixtures/seed_examples holds
    # the same document.
    "examples": [
        {
            "event_id": "evt_0142",
            "tenant_id": "ten_primary",
            "catalog_id": "cat_primary",
            "sequence": 9,
            "type": "listing_mapping.corrected",
            "schema_version": "accepted-change/1",
            "aggregate": {"type": "listing_mapping", "id": "lst_lum_p5_1t_hs", "revision": 2},
            "dependencies": [{"type": "catalog_item", "id": "itm_ssd_p5_1t_hs", "revision": 1}],
            "decision_id": "dec_0141",
            "evidence": ["cap_lum_0310"],
            "observed_at": "2026-10-10T03:31:55Z",
            "accepted_at": "2026-10-11T09:12:20Z",
            "published_at": "2026-10-11T09:12:22Z",
            "payload": {"listing": "lst_lum_p5_1t_hs", "from": "itm_ssd_p5_1t", "item": "itm_ssd_p5_1t_hs"},
            "history_epoch": "history-demo-1",
        }
    ],
}
