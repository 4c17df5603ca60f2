"""if_resolution_job: a stored capture of a real page becomes claims, normalized attributes and one decision —
a new item and its mapping, a mapping to an existing item, or a review case — written with the inbox row and the
job's status in one transaction, then acked."""

from __future__ import annotations

import json

from prw_platform.queues import PostgresQueue
from prw_platform.resolver.resolution import (
    IGNORED_DUPLICATE,
    REVIEW_CASE_OPENED,
    RULE_CREATE,
    RULE_MAP,
    RULE_REVIEW,
    STAGE_COMPLETED,
    idempotency_key,
)
from tests.integration.resolution.pipeline import (
    ANVIL_MICRODATA,
    ANVIL_SCHEMA_ORG,
    JACKET_GTIN,
    RACING_BIKE,
    SECOND_SOURCE,
    STAGES,
    Collector,
    Resolution,
    page,
)


def test_brand_and_mpn_page_creates_the_item_and_maps_its_listing(
    collector: Collector, resolution: Resolution, queue: PostgresQueue
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    job_id = f"{capture_id}:identity:1"

    report = resolution.run()

    assert (report.received, report.acked, report.retried, report.dead_lettered) == (1, 1, 0, 0)
    (outcome,) = report.outcomes
    assert (outcome.status, outcome.stage_outcome, outcome.decision) == (
        STAGE_COMPLETED,
        "extracted",
        "create_item_and_map",
    )
    assert queue.depth().visible + queue.depth().not_visible + queue.depth().dead == 0
    item = resolution.one("SELECT * FROM resolver.catalog_item")
    assert (item["item_id"], item["title"], item["brand"], item["profile"]) == (
        outcome.item_id,
        "Executive Anvil",
        "ACME",
        "np_core@2",
    )
    assert item["identifiers"] == {"gtin": None, "mpn": "925872"}
    mapping = resolution.one("SELECT * FROM resolver.listing_mapping")
    assert (mapping["listing_id"], mapping["item_id"]) == (outcome.listing_id, outcome.item_id)
    listing = resolution.one("SELECT * FROM resolver.listing")
    # The capture row is the truth for the listing's URL, record id and observation time.
    assert (listing["native_record_id"], listing["url"], listing["capture_id"]) == (
        "anvil-1",
        "https://src-lumen-web.example/p/anvil-1",
        capture_id,
    )
    assert (str(listing["price"]), listing["currency"], listing["availability"]) == (
        "119.99",
        "USD",
        "in_stock",
    )
    decision = resolution.one("SELECT * FROM resolver.decision")
    assert (decision["decision_id"], decision["actor"], decision["idempotency_key"]) == (
        outcome.decision_id,
        RULE_CREATE,
        idempotency_key(job_id),
    )
    # Each stage job's inbox row, status and results commit together (the identity stage's with the decision).
    for stage in ("extract", "normalize", "identity"):
        stage_job = f"{capture_id}:{stage}:1"
        assert resolution.one(
            "SELECT outcome FROM resolver.consumer_inbox WHERE message_id = %s", stage_job
        ) == {"outcome": STAGE_COMPLETED}
        assert resolution.job_status(stage_job) == "completed"
    result = resolution.result(capture_id)
    assert (result["adapter"], result["adapter_rule"], result["profile"], result["profile_rule"]) == (
        "pa_schemaorg@3.0.0",
        "supports",
        "np_core@2",
        "base_profile",
    )
    assert (result["stage_outcome"], result["decision_id"], result["error"]) == (
        "extracted",
        outcome.decision_id,
        None,
    )
    assert result["identity"]["rule"] == RULE_CREATE
    assert result["listing"]["price"] == "119.99"
    claims = resolution.rows(
        "SELECT attribute, value, evidence_locator FROM resolver.extracted_claim WHERE job_id = %s ORDER BY ordinal",
        f"{capture_id}:extract:1",
    )
    assert {
        "attribute": "core:mpn",
        "value": "925872",
        "evidence_locator": "microdata[0].properties.mpn",
    } in claims
    attributes = {
        row["key"]: row
        for row in resolution.rows(
            "SELECT * FROM resolver.normalized_attribute WHERE job_id = %s", f"{capture_id}:normalize:1"
        )
    }
    assert attributes["core:price"]["value"] == "119.99"
    assert attributes["core:brand"]["evidence_locators"] == ["microdata[0].properties.brand"]
    events = [
        r["event_type"] for r in resolution.rows("SELECT event_type FROM resolver.outbox ORDER BY position")
    ]
    assert events == [
        "catalog_item.created",
        "listing.observed",
        "listing_mapping.created",
        "release.authorized",
    ]
    resolution.assert_contracts_hold()


def test_second_page_with_the_same_brand_and_mpn_maps_to_the_item_the_first_created(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    (created,) = resolution.run().outcomes
    collector.submit(page(ANVIL_SCHEMA_ORG), record="executive-anvil", source_id=SECOND_SOURCE)

    (mapped,) = resolution.run().outcomes

    assert (mapped.status, mapped.decision, mapped.item_id) == (
        STAGE_COMPLETED,
        "map_listing",
        created.item_id,
    )
    assert mapped.listing_id != created.listing_id
    assert resolution.count("resolver.catalog_item") == 1
    mappings = resolution.rows("SELECT listing_id, item_id FROM resolver.listing_mapping ORDER BY listing_id")
    assert {(m["listing_id"], m["item_id"]) for m in mappings} == {
        (created.listing_id, created.item_id),
        (mapped.listing_id, created.item_id),
    }
    result = resolution.one(
        "SELECT identity FROM resolver.resolution_result WHERE decision_id = %s", mapped.decision_id
    )
    assert result["identity"]["rule"] == RULE_MAP
    assert (result["identity"]["matched_item"], result["identity"]["matched_on"]) == (
        created.item_id,
        ["brand_mpn"],
    )
    resolution.assert_contracts_hold()


def test_gtin_page_creates_an_item_identified_by_its_gtin(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(page(JACKET_GTIN), record="jacket-l-green")

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision) == (STAGE_COMPLETED, "create_item_and_map")
    item = resolution.one("SELECT title, brand, identifiers FROM resolver.catalog_item")
    assert item == {
        "title": "Large green jacket",
        "brand": "A fashion brand",
        "identifiers": {"gtin": "12345678901231", "mpn": None},
    }
    assert resolution.rows("SELECT scheme, value FROM resolver.item_identifier ORDER BY scheme") == [
        {"scheme": "gtin", "value": "12345678901231"}
    ]
    resolution.assert_contracts_hold()


def test_page_without_a_strong_identifier_opens_a_review_case_with_ranked_candidates(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    (anvil,) = resolution.run().outcomes
    capture_id = collector.submit(page(RACING_BIKE), record="acme-racing-bike")

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision, outcome.item_id) == (
        REVIEW_CASE_OPENED,
        "open_review_case",
        None,
    )
    case = resolution.one("SELECT * FROM resolver.review_case")
    assert (case["case_id"], case["kind"], case["status"], case["revision"], case["capture_id"]) == (
        outcome.case_id,
        "no_strong_identifier",
        "awaiting_human",
        1,
        capture_id,
    )
    # The title starts with the brand of an existing item: a candidate for the reviewer, never an automatic
    # mapping. scored_match@1 gives it a low match probability and says why.
    (candidate,) = case["candidates"]
    assert candidate["item_id"] == anvil.item_id
    assert 0 < candidate["score"] < 0.05
    assert candidate["reason"].startswith(f"match probability {candidate['score']:.3f}; title similarity")
    assert "same brand acme" in candidate["reason"]
    evidence = case["evidence"]
    assert evidence["claims"][0] == {
        "attribute": "core:title",
        "value": "ACME Racing Bike in black (2008)",
        "evidence_locator": "jsonld[0].name",
        "source": "structured",
        "confidence": 0.9,
    }
    assert evidence["identifiers"] == {"core:gtin": None, "core:brand": None, "core:mpn": None}
    assert (evidence["adapter"], evidence["profile"], evidence["stage_outcome"]) == (
        "pa_schemaorg@3.0.0",
        "np_core@2",
        "extracted",
    )
    assert resolution.one(
        "SELECT actor FROM resolver.decision WHERE decision_id = %s", outcome.decision_id
    ) == {"actor": RULE_REVIEW}
    assert resolution.count("resolver.listing_mapping") == 1  # only the anvil's
    assert resolution.one(
        "SELECT outcome FROM resolver.consumer_inbox WHERE message_id = %s", outcome.job_id
    ) == {"outcome": REVIEW_CASE_OPENED}
    resolution.assert_contracts_hold()


def test_capture_no_adapter_supports_records_no_adapter_and_opens_a_review_case(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(b"Executive Anvil, ACME, part 925872\n", record="anvil-note", media_type="text/plain")

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.stage_outcome, outcome.decision) == (
        REVIEW_CASE_OPENED,
        "no_adapter",
        "open_review_case",
    )
    result = resolution.one("SELECT * FROM resolver.resolution_result WHERE job_id = %s", outcome.job_id)
    assert (result["stage_outcome"], result["adapter"], result["profile"]) == ("no_adapter", None, None)
    assert resolution.count("resolver.extracted_claim") == 0
    case = resolution.one("SELECT kind, evidence FROM resolver.review_case")
    assert case["kind"] == "no_adapter"
    assert case["evidence"]["reason"] == "no installed adapter supports media type text/plain"
    resolution.assert_contracts_hold()


def test_adapter_failure_records_the_error_and_opens_a_review_case(
    collector: Collector, resolution: Resolution
) -> None:
    capture_id = collector.submit(b"<!-- an HTML page with no element at all -->", record="empty-page")

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.stage_outcome) == (REVIEW_CASE_OPENED, "extraction_failed")
    result = resolution.result(capture_id)
    assert (result["adapter"], result["error"]["code"]) == ("pa_schemaorg@3.0.0", "EXTRACTION_FAILED")
    assert resolution.one("SELECT kind FROM resolver.review_case") == {"kind": "extraction_failed"}
    resolution.assert_contracts_hold()


def test_storage_claims_choose_the_storage_profile_and_its_attributes_reach_the_item(
    collector: Collector, resolution: Resolution
) -> None:
    listing = {
        "title": "Samsung 870 EVO 1TB 2.5 SATA SSD",
        "brand": "Samsung",
        "mpn": "MZ-77E1T0B/EU",
        "price": "89,90 €",
        "specs": {"capacity": "1 TB", "interface": "SATA 6Gb/s", "Sequential Write": "530 MB/s"},
    }
    capture_id = collector.submit(
        json.dumps(listing).encode(), record="870-evo-1tb", media_type="application/json"
    )

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision) == (STAGE_COMPLETED, "create_item_and_map")
    result = resolution.result(capture_id)
    assert (result["adapter"], result["profile"], result["profile_rule"]) == (
        "pa_prw_listing_json@1.0.0",
        "np_storage@3",
        "class_definitions",
    )
    item = resolution.one("SELECT profile, attributes FROM resolver.catalog_item")
    assert item["profile"] == "np_storage@3"
    assert item["attributes"] == {
        "storage:capacity": {"value": "1000", "unit": "GB", "definition_version": 1},
        "storage:interface": {"value": "sata", "unit": None, "definition_version": 1},
        "storage:write_speed": {"value": "530", "unit": "MB/s", "definition_version": 1},
    }
    listing_row = resolution.one("SELECT price, currency FROM resolver.listing")
    assert (str(listing_row["price"]), listing_row["currency"]) == ("89.90", "EUR")
    resolution.assert_contracts_hold()


def test_job_pins_choose_the_adapter_and_the_profile(
    collector: Collector, resolution: Resolution, queue: PostgresQueue
) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.run()
    # A replay of the same capture (if_replay_job): a new attempt group, pinned to exact versions.
    message = resolution.job_message(capture_id) | {
        "job_id": f"{capture_id}:extract:2",
        "attempt_group": 2,
        "pins": {"adapter": "pa_schemaorg@1.0.0", "profile": "np_storage@1"},
    }
    queue.send(message, message_id=message["job_id"])

    (outcome,) = resolution.run().outcomes

    # The same listing and identifiers: the pinned run maps to the item the first run created.
    assert (outcome.status, outcome.decision) == (STAGE_COMPLETED, "map_listing")
    # The pins flow through the three stages of the attempt group.
    assert {resolution.job_message(capture_id, stage, 2)["pins"]["profile"] for stage in STAGES} == {
        "np_storage@1"
    }
    result = resolution.result(capture_id, 2)
    assert (result["adapter"], result["adapter_rule"], result["profile"], result["profile_rule"]) == (
        "pa_schemaorg@1.0.0",
        "job_pin",
        "np_storage@1",
        "job_pin",
    )
    assert resolution.job_status(message["job_id"]) == "completed"
    resolution.assert_contracts_hold()


def test_redelivered_job_of_each_stage_is_an_ignored_duplicate_without_a_second_decision(
    collector: Collector, resolution: Resolution
) -> None:
    """if_resolution_job: "A duplicate is acked without side effects", whichever stage it belongs to."""
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    (first,) = resolution.run().outcomes
    positions = resolution.count("resolver.outbox")
    claims = resolution.count("resolver.extracted_claim")
    attributes = resolution.count("resolver.normalized_attribute")

    for stage in STAGES:  # at-least-once: each stage's job again, on its own queue
        message = resolution.job_message(capture_id, stage)
        resolution.stage_queues[stage].send(message, message_id=message["job_id"])
    report = resolution.run()

    assert [(o.stage, o.status, o.job_id) for o in report.outcomes] == [
        (stage, IGNORED_DUPLICATE, f"{capture_id}:{stage}:1") for stage in STAGES
    ]
    assert (report.outcomes[2].decision_id, report.outcomes[2].item_id) == (first.decision_id, first.item_id)
    assert report.acked == 3
    assert len(resolution.decisions()) == 1
    assert resolution.count("resolver.outbox") == positions
    assert resolution.count("resolver.resolution_result") == 3
    assert (
        resolution.count("resolver.extracted_claim"),
        resolution.count("resolver.normalized_attribute"),
    ) == (
        claims,
        attributes,
    )
    for stage_queue in resolution.stage_queues.values():
        assert stage_queue.depth().visible + stage_queue.depth().not_visible == 0
    resolution.assert_contracts_hold()
