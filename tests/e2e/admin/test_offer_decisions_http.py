"""A reviewer confirms the offer of an ``offer_uncertain`` case (if_review_decision ``offer``, AW-01) over real
HTTP on a real PostgreSQL: the chosen price goes on the listing and, once released, on the public product API; a
value no claim states is 422 and writes nothing; a new capture of the same page keeps the choice while its offer
claims are the same, and changed claims open a new case; the console's "Offer in question" radio buttons."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import httpx
import pytest

from prw_api.product import create_app
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform
from prw_platform.product.scopes import project_catalog
from prw_platform.queues import PostgresQueue
from prw_platform.runtime import drain
from tests.e2e.admin.conftest import TENANT, Cases, Operator
from tests.integration.resolution.pipeline import CATALOG
from tests.integration.resolution.test_offer_uncertain import product_page

Login = Callable[[str], Operator]
DISPUTED = product_page("€25.00")
CHOSEN = {"core:price": "€25.00", "core:currency": "EUR"}


def _offer_case(cases: Cases, page: bytes = DISPUTED, record: str = "lamp-disputed") -> dict[str, Any]:
    capture_id = cases.collector.submit(page, record=record)
    cases.resolution.run()
    case = cases.resolution.one("SELECT * FROM resolver.review_case WHERE capture_id = %s", capture_id)
    assert case["kind"] == "offer_uncertain"
    return case


def _decide(rita: Operator, case: dict[str, Any], **fields: Any) -> httpx.Response:
    body = {
        "case_id": case["case_id"],
        "expected_revision": case["revision"],
        "action": "create_item",
        "rationale": "the buy box shows the price the shop charges",
        **fields,
    }
    return rita.decide(body)


def _listing(cases: Cases, listing_id: str) -> dict[str, Any]:
    return cases.resolution.one(
        "SELECT revision, price, currency, availability FROM resolver.listing WHERE listing_id = %s",
        listing_id,
    )


def test_the_chosen_price_is_on_the_listing_and_after_the_release_on_the_public_product_api(
    login: Login, cases: Cases, admin_platform: Platform
) -> None:
    stream = admin_platform.decisions.streams(TENANT, CATALOG)
    # The product service projects this catalog, as provisioning does.
    project_catalog(admin_platform.product_db, TENANT, CATALOG, stream.history_epoch)
    ada, rita = login("ada"), login("rita")
    manual = ada.http.put(
        f"/v1/catalogs/{CATALOG}/release-policy",
        json={"release_policy": "manual", "rationale": "publish only what an operator releases"},
        headers={"X-CSRF-Token": ada.csrf},
    )
    assert manual.status_code == 200, manual.text
    case = _offer_case(cases)

    decided = _decide(rita, case, offer=CHOSEN)

    assert decided.status_code == 201, decided.text
    item_id = decided.json()["item_id"]
    listing = _listing(cases, case["listing_id"])
    assert (listing["price"], listing["currency"], listing["availability"]) == (
        Decimal("25.00"),
        "EUR",
        "in_stock",
    )
    details = cases.resolution.one(
        "SELECT details FROM resolver.decision WHERE decision_id = %s", decided.json()["decision_id"]
    )["details"]
    assert details["offer"]["chosen"] == CHOSEN
    assert (details["offer"]["price"], details["offer"]["currency"]) == ("25.00", "EUR")
    assert details["offer"]["claims"]["core:price"] == ["20.00", "€25.00"]
    released = ada.http.post("/v1/releases", json={"catalog_id": CATALOG}, headers={"X-CSRF-Token": ada.csrf})
    assert released.status_code == 201, released.text
    drain(admin_platform)
    served = admin_platform.public_catalog(TENANT, CATALOG)
    with (
        BackgroundServer(create_app(admin_platform.settings, served)) as product,
        httpx.Client(base_url=product.url, timeout=10) as public,
    ):
        item = public.get(f"/v1/items/{item_id}")
    assert item.status_code == 200, item.text
    (published,) = item.json()["listings"]
    assert (published["price"], published["currency"], published["availability"]) == (
        "25.00",
        "EUR",
        "in_stock",
    )


@pytest.mark.parametrize(
    "offer",
    [
        {"core:price": "30.00", "core:currency": "EUR"},  # no claim states it
        {"core:price": "€25.00"},  # a price without its currency
        {"core:currency": "USD", "core:price": "20.00"},  # no claim states USD
    ],
)
def test_a_value_no_claim_states_is_422_and_writes_nothing(
    login: Login, cases: Cases, offer: dict[str, str]
) -> None:
    case = _offer_case(cases)
    rita = login("rita")
    before = (
        cases.written(),
        _listing(cases, case["listing_id"]),
        cases.count("resolver.inventory_observation"),
    )

    refused = _decide(rita, case, offer=offer)

    assert refused.status_code == 422, refused.text
    assert refused.json()["error"]["code"] == "VALIDATION_FAILED"
    after = (
        cases.written(),
        _listing(cases, case["listing_id"]),
        cases.count("resolver.inventory_observation"),
    )
    assert after == before


def test_an_offer_on_another_kind_of_case_is_422_and_writes_nothing(login: Login, cases: Cases) -> None:
    case = cases.open()
    before = cases.written()

    refused = login("rita").decide(
        {
            "case_id": case["case_id"],
            "expected_revision": case["revision"],
            "action": "reject",
            "rationale": "not this product",
            "not_an_offer": True,
        }
    )

    assert refused.status_code == 422, refused.text
    assert cases.written() == before


def test_a_new_capture_of_the_same_page_keeps_the_reviewer_s_choice(login: Login, cases: Cases) -> None:
    case = _offer_case(cases)
    decided = _decide(login("rita"), case, offer=CHOSEN)
    assert decided.status_code == 201, decided.text
    again = DISPUTED.replace(b"</body>", b"<p>Seen again</p></body>")

    capture_id = cases.collector.submit(again, record="lamp-disputed")
    cases.resolution.run()

    assert cases.count("resolver.review_case") == 1
    decision = cases.resolution.one(
        "SELECT action, actor, evidence FROM resolver.decision WHERE evidence ? %s AND actor LIKE 'rule:%%'",
        capture_id,
    )
    assert decision["action"] == "map_listing"
    assert decided.json()["decision_id"] in decision["evidence"]
    listing = _listing(cases, case["listing_id"])
    assert (listing["price"], listing["currency"]) == (Decimal("25.00"), "EUR")


def test_a_replay_of_the_capture_keeps_the_reviewer_s_choice(
    login: Login, cases: Cases, queue: PostgresQueue
) -> None:
    case = _offer_case(cases)
    decided = _decide(login("rita"), case, offer=CHOSEN)
    assert decided.status_code == 201, decided.text
    listing_before = _listing(cases, case["listing_id"])
    # A replay of the same capture (if_replay_job): a new attempt group of its jobs.
    capture_id = case["capture_id"]
    message = cases.resolution.job_message(capture_id) | {
        "job_id": f"{capture_id}:extract:2",
        "attempt_group": 2,
    }
    queue.send(message, message_id=message["job_id"])

    (outcome,) = [o for o in cases.resolution.run().outcomes if o.stage == "identity"]

    assert outcome.decision == "map_listing"
    assert cases.count("resolver.review_case") == 1
    assert _listing(cases, case["listing_id"]) == listing_before  # 25.00 EUR, nothing rolled back


def test_not_an_offer_is_kept_too_and_the_listing_keeps_no_offer(login: Login, cases: Cases) -> None:
    case = _offer_case(cases)
    decided = _decide(login("rita"), case, not_an_offer=True)
    assert decided.status_code == 201, decided.text
    listing = _listing(cases, case["listing_id"])
    assert (listing["price"], listing["currency"], listing["availability"]) == (None, None, None)

    cases.collector.submit(DISPUTED.replace(b"</body>", b"<p>Seen again</p></body>"), record="lamp-disputed")
    cases.resolution.run()

    assert cases.count("resolver.review_case") == 1
    listing = _listing(cases, case["listing_id"])
    assert (listing["price"], listing["currency"], listing["availability"]) == (None, None, None)


def test_changed_claims_open_a_new_case(login: Login, cases: Cases) -> None:
    case = _offer_case(cases)
    assert _decide(login("rita"), case, offer=CHOSEN).status_code == 201

    changed = _offer_case(cases, product_page("€27.00"), record="lamp-disputed")

    assert changed["case_id"] != case["case_id"]
    assert changed["listing_id"] == case["listing_id"]
    assert cases.count("resolver.review_case") == 2


def _field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no {name} field"
    return found.group(1)


def test_in_the_console_a_reviewer_picks_the_price_with_the_radio_buttons(login: Login, cases: Cases) -> None:
    cases.collector.submit(product_page("€20.00"), record="lamp-1")
    cases.resolution.run()
    case = _offer_case(cases)
    rita = login("rita")
    page = rita.http.get(f"/console/review/{case['case_id']}")
    assert page.status_code == 200, page.text
    section = page.text[page.text.index('class="offer-uncertain"') : page.text.index("</section>")]
    for name, value in (("offer_price", "20.00"), ("offer_price", "€25.00"), ("offer_currency", "EUR")):
        assert f'<input type="radio" form="decision" name="{name}" value="{value}">' in section
    form = {
        name: _field(page.text, name)
        for name in ("csrf_token", "idempotency_key", "expected_revision", "status", "kind", "source")
    }

    posted = rita.http.post(
        f"/console/review/{case['case_id']}/decision",
        data={**form, "decision": "accept", "offer_price": "20.00", "offer_currency": "EUR"},
    )

    assert posted.status_code == 200, posted.text
    listing = _listing(cases, case["listing_id"])
    assert (listing["price"], listing["currency"]) == (Decimal("20.00"), "EUR")
    decision = cases.resolution.one(
        "SELECT rationale, details FROM resolver.decision WHERE case_id = %s AND actor = 'reviewer:rita'",
        case["case_id"],
    )
    assert decision["details"]["offer"]["chosen"] == {"core:price": "20.00", "core:currency": "EUR"}
    assert "offer confirmed from the claims: core:price 20.00, core:currency EUR" in decision["rationale"]


def test_in_the_console_a_value_no_claim_states_is_the_case_page_with_its_code_and_writes_nothing(
    login: Login, cases: Cases
) -> None:
    case = _offer_case(cases)
    rita = login("rita")
    page = rita.http.get(f"/console/review/{case['case_id']}").text
    form = {name: _field(page, name) for name in ("csrf_token", "idempotency_key", "expected_revision")}
    before = cases.written()

    posted = rita.http.post(
        f"/console/review/{case['case_id']}/decision",
        data={**form, "decision": "reject", "offer_price": "99.00", "offer_currency": "EUR"},
    )

    assert posted.status_code == 409
    assert "VALIDATION_FAILED" in posted.text
    assert cases.written() == before
