"""Publication by confidence: an offer value the profile withholds (np_core@2, under 0.75) sends the listing to
review as an ``offer_uncertain`` case whose evidence shows the competing values with their sources and
confidences; the listing is recorded without them (price and currency as a pair). The same page with agreeing
statements is decided automatically, with its price. Through the real stages, on a real PostgreSQL."""

from __future__ import annotations

import json
from decimal import Decimal

from prw_platform.resolver.resolution import REVIEW_CASE_OPENED, RULE_REVIEW, STAGE_COMPLETED
from tests.integration.resolution.pipeline import Collector, Resolution

GTIN = "4006381333931"


def product_page(visible_price: str, *, markup_price: str = "20.00", gtin: str = GTIN) -> bytes:
    product = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": "Desk lamp Nova",
        "brand": {"@type": "Brand", "name": "Lumen"},
        "gtin13": gtin,
        "offers": {
            "@type": "Offer",
            "price": markup_price,
            "priceCurrency": "EUR",
            "availability": "https://schema.org/InStock",
        },
    }
    return (
        "<html><head><title>Desk lamp Nova</title>"
        f'<script type="application/ld+json">{json.dumps(product)}</script></head>'
        f'<body><h1>Desk lamp Nova</h1><span class="amount">{visible_price}</span>'
        "<button>Add to cart</button></body></html>"
    ).encode()


def _case(resolution: Resolution) -> dict[str, object]:
    return resolution.one("SELECT kind, status, evidence, candidates FROM resolver.review_case")


def test_a_disputed_price_opens_an_offer_uncertain_case_and_the_listing_keeps_no_price(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(product_page("€25.00"), record="lamp-1")

    (outcome,) = [o for o in resolution.run().outcomes if o.stage == "identity"]

    assert (outcome.status, outcome.decision) == (REVIEW_CASE_OPENED, "open_review_case")
    case = _case(resolution)
    assert (case["kind"], case["status"]) == ("offer_uncertain", "awaiting_human")
    evidence = case["evidence"]
    assert isinstance(evidence, dict)
    assert evidence["profile"] == "np_core@2"
    assert "core:price 20.00 at confidence 0.53" in evidence["reason"]
    prices = {
        (c["value"], c["evidence_locator"], c["source"], c["confidence"])
        for c in evidence["claims"]
        if c["attribute"] == "core:price"
    }
    assert prices == {
        ("20.00", "jsonld[0].offers.price", "structured", 0.85),
        ("€25.00", "css:span.amount", "buy_box", 0.8),
    }
    codes = {(p["attribute"], p["code"]) for p in evidence["problems"]}
    assert {("core:price", "UNCERTAIN_VALUE"), ("core:price", "CONFLICTING_CLAIMS")} <= codes
    listing = resolution.one("SELECT price, currency, availability FROM resolver.listing")
    assert (listing["price"], listing["currency"], listing["availability"]) == (None, None, "in_stock")
    decision = resolution.one("SELECT actor, action FROM resolver.decision")
    assert (decision["actor"], decision["action"]) == (RULE_REVIEW, "open_review_case")
    assert resolution.count("resolver.catalog_item") == 0
    # The withheld value is stored as such, with its confidence.
    withheld = resolution.one(
        "SELECT value, confidence FROM resolver.normalized_attribute WHERE key = 'core:price' AND withheld"
    )
    assert (withheld["value"], round(withheld["confidence"], 2)) == ("20.00", 0.53)


def test_agreeing_statements_publish_the_offer_and_identity_decides(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(product_page("€20.00"), record="lamp-1")

    (outcome,) = [o for o in resolution.run().outcomes if o.stage == "identity"]

    assert (outcome.status, outcome.decision) == (STAGE_COMPLETED, "create_item_and_map")
    listing = resolution.one("SELECT price, currency FROM resolver.listing")
    assert (listing["price"], listing["currency"]) == (Decimal("20.00"), "EUR")
    assert resolution.count("resolver.review_case") == 0


def test_the_item_the_identifiers_name_is_the_case_s_candidate(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(product_page("€20.00"), record="lamp-1")
    resolution.run()
    item_id = resolution.one("SELECT item_id FROM resolver.catalog_item")["item_id"]
    collector.submit(product_page("€25.00"), record="lamp-2")

    (outcome,) = [o for o in resolution.run().outcomes if o.stage == "identity"]

    assert outcome.status == REVIEW_CASE_OPENED
    case = _case(resolution)
    assert case["kind"] == "offer_uncertain"
    assert case["candidates"] == [{"item_id": item_id, "score": 1.0, "reason": "gtin name this item"}]


def test_a_currency_from_a_default_alone_is_withheld_with_its_price(
    collector: Collector, resolution: Resolution
) -> None:
    page = product_page("$20.00").replace(b'"priceCurrency": "EUR", ', b"")
    collector.submit(page, record="lamp-1")

    (outcome,) = [o for o in resolution.run().outcomes if o.stage == "identity"]

    assert outcome.status == REVIEW_CASE_OPENED
    evidence = _case(resolution)["evidence"]
    assert isinstance(evidence, dict)
    assert ("core:currency", "UNCERTAIN_VALUE") in {(p["attribute"], p["code"]) for p in evidence["problems"]}
    listing = resolution.one("SELECT price, currency FROM resolver.listing")
    assert (listing["price"], listing["currency"]) == (None, None)
