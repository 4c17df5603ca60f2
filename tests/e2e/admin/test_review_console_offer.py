"""An ``offer_uncertain`` case in the review console over real HTTP: the offer in question (each withheld
attribute with the profile's confidence and threshold, every competing claim with its source, confidence and
place), the claims table with their ratings, and the JSON read of the same case."""

from __future__ import annotations

from collections.abc import Callable

from tests.e2e.admin.conftest import Cases, Operator
from tests.integration.resolution.test_offer_uncertain import product_page

Login = Callable[[str], Operator]


def _offer_case(cases: Cases) -> str:
    capture_id = cases.collector.submit(product_page("€25.00"), record="lamp-disputed")
    cases.resolution.run()
    row = cases.resolution.one(
        "SELECT case_id, kind FROM resolver.review_case WHERE capture_id = %s", capture_id
    )
    assert row["kind"] == "offer_uncertain"
    return str(row["case_id"])


def test_the_console_shows_the_offer_in_question_with_each_competing_value_and_its_evidence(
    login: Login, cases: Cases
) -> None:
    case_id = _offer_case(cases)
    rita = login("rita")

    page = rita.http.get(f"/console/review/{case_id}")

    assert page.status_code == 200, page.text
    text = page.text
    assert "Offer in question" in text
    section = text[text.index('class="offer-uncertain"') : text.index("</section>")]
    assert "<code>core:price</code>" in section
    assert "under the publication threshold 0.75" in section
    assert "claims disagree" in section
    for value, source, confidence, where in (
        ("20.00", "structured", "0.85", "jsonld[0].offers.price"),
        ("€25.00", "buy_box", "0.80", "css:span.amount"),
    ):
        assert (
            f'<tr><td>{value}</td><td>{source}</td><td>{confidence}</td><td class="locator">{where}</td></tr>'
            in section
        )
    assert "offer uncertain" in text  # the case kind's label


def test_another_kind_of_case_has_no_offer_section_and_its_claims_show_their_ratings(
    login: Login, cases: Cases
) -> None:
    case = cases.open()
    page = login("rita").http.get(f"/console/review/{case['case_id']}")
    assert page.status_code == 200
    assert "Offer in question" not in page.text
    assert '<th scope="col">Confidence</th>' in page.text


def test_the_json_read_of_the_case_carries_each_claim_s_source_and_confidence(
    login: Login, cases: Cases
) -> None:
    case_id = _offer_case(cases)

    response = login("rita").http.get(f"/v1/review/{case_id}")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["kind"] == "offer_uncertain"
    prices = {
        (c["value"], c["source"], c["confidence"]) for c in body["claims"] if c["attribute"] == "core:price"
    }
    assert prices == {("20.00", "structured", 0.85), ("€25.00", "buy_box", 0.8)}
    assert ("core:price", "UNCERTAIN_VALUE") in {(p["attribute"], p["code"]) for p in body["problems"]}
    assert "core:price" not in {a["key"] for a in body["attributes"]}
    assert all(a["confidence"] is not None for a in body["attributes"])
