"""Identity edge cases: identifiers naming two items, conflicting identifier claims and a retired item all go to
a human (review cases), never to an automatic decision; a job whose inbox row retention pruned is still decided
once (the decision's idempotency key)."""

from __future__ import annotations

import json

from prw_platform.resolver.resolution import IGNORED_DUPLICATE, REVIEW_CASE_OPENED
from tests.integration.resolution.pipeline import (
    ANVIL_MICRODATA,
    JACKET_GTIN,
    SECOND_SOURCE,
    STAGES,
    Collector,
    Resolution,
    page,
)


def _listing(**fields: str) -> bytes:
    return json.dumps({"title": "Executive Anvil"} | fields).encode()


def test_identifiers_naming_two_items_open_an_ambiguous_identity_case_with_both_as_candidates(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(page(JACKET_GTIN), record="jacket-l-green")
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    jacket, anvil = resolution.run().outcomes
    # A feed that pairs the jacket's GTIN with the anvil's brand and MPN.
    collector.submit(
        _listing(gtin="12345678901231", brand="ACME", mpn="925872"),
        record="feed-17",
        media_type="application/json",
        source_id=SECOND_SOURCE,
    )

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision) == (REVIEW_CASE_OPENED, "open_review_case")
    case = resolution.one("SELECT kind, candidates FROM resolver.review_case")
    assert case["kind"] == "ambiguous_identity"
    assert sorted((c["item_id"], c["score"]) for c in case["candidates"]) == sorted(
        [(jacket.item_id, 1.0), (anvil.item_id, 1.0)]
    )
    assert resolution.count("resolver.catalog_item") == 2
    resolution.assert_contracts_hold()


def test_conflicting_gtin_claims_open_a_review_case_instead_of_trusting_the_tie_break(
    collector: Collector, resolution: Resolution
) -> None:
    product = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": "Executive Anvil",
        "gtin13": "4006381333931",
        "gtin14": "05901234123457",
    }
    html = f'<html><body><script type="application/ld+json">{json.dumps(product)}</script></body></html>'
    collector.submit(html.encode(), record="two-gtins")

    (outcome,) = resolution.run().outcomes

    assert outcome.status == REVIEW_CASE_OPENED
    case = resolution.one("SELECT kind, evidence FROM resolver.review_case")
    assert case["kind"] == "conflicting_identifiers"
    assert [p["code"] for p in case["evidence"]["problems"]] == ["CONFLICTING_CLAIMS"]
    assert resolution.count("resolver.catalog_item") == 0
    resolution.assert_contracts_hold()


def test_identifiers_of_a_retired_item_open_a_review_case_never_a_mapping(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    (anvil,) = resolution.run().outcomes
    with resolution.owner_db.transaction() as conn:
        conn.execute(
            "UPDATE resolver.catalog_item SET status = 'retired' WHERE item_id = %s", (anvil.item_id,)
        )
    collector.submit(_listing(brand="ACME", mpn="925872"), record="feed-1", media_type="application/json")

    (outcome,) = resolution.run().outcomes

    assert outcome.status == REVIEW_CASE_OPENED
    assert resolution.one("SELECT kind FROM resolver.review_case") == {"kind": "retired_item"}
    assert resolution.count("resolver.listing_mapping") == 1  # INV-07: nothing maps to a retired item
    resolution.assert_contracts_hold()


def test_job_whose_inbox_row_was_pruned_is_decided_once(collector: Collector, resolution: Resolution) -> None:
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    (first,) = resolution.run().outcomes
    with resolution.owner_db.transaction() as conn:  # retention prunes resolution inboxes (migration 0001)
        conn.execute("DELETE FROM resolver.consumer_inbox")
    for stage in STAGES:
        message = resolution.job_message(capture_id, stage)
        resolution.stage_queues[stage].send(message, message_id=message["job_id"])

    report = resolution.run()

    # Extract and normalize find their stored results; identity's idempotency key (derived from the job id)
    # returns the existing decision.
    assert [(o.stage, o.status) for o in report.outcomes] == [(s, IGNORED_DUPLICATE) for s in STAGES]
    assert report.outcomes[2].decision_id == first.decision_id
    assert len(resolution.decisions()) == 1
    assert resolution.count("resolver.resolution_result") == 3
    assert resolution.count("resolver.consumer_inbox") == 3
    resolution.assert_contracts_hold()
