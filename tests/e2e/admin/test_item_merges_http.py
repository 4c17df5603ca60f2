"""Item merges and splits over real HTTP on the admin origin (AW-01, INV-07): the JSON routes
(``POST /v1/items/{id}/merge``, ``/split``, ``GET /v1/catalogs/{id}/duplicates``) and the console's pages
(``/console/duplicates``, ``/console/items/{id}``) with the roles and CSRF rules of every decision route: a
reviewer decides, a viewer reads, a refused request is its code and writes nothing."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from prw_platform.bootstrap import Platform
from prw_platform.resolver.decisions import MapListing
from tests.e2e.admin.conftest import TENANT, Cases, Operator
from tests.e2e.product.decisions import create_and_map
from tests.integration.resolution.pipeline import CATALOG, SOURCE

Login = Callable[[str], Operator]


@pytest.fixture
def items(cases: Cases, admin_platform: Platform) -> dict[str, str]:
    """Item ``a`` (Strata P5 1 TB) and its near duplicate ``b`` (another brand spelling, the same MPN, no GTIN),
    a listing each; ``c``, another product, with two listings."""
    cases.item()  # the catalog and its stream exist
    found: dict[str, str] = {}
    for name, n, change in (
        ("a", 1, {}),
        ("b", 1, {"title": "Strata P5 1 TB SSD", "brand": "Corvana Storage", "gtin": None}),
        ("c", 5, {}),
    ):
        command = create_and_map(CATALOG, SOURCE, f"adm{name}", n)
        command = dataclasses.replace(command, item=dataclasses.replace(command.item, **change))
        decided = admin_platform.decisions.decide(command, TENANT, CATALOG)
        found[name], found[f"{name}_listing"] = str(decided.item_id), str(decided.listing_id)
    listing = create_and_map(CATALOG, SOURCE, "admc2", 6).listing
    mapped = MapListing(listing, found["c"], "rule:strong_identifier@1", "GTIN matches", "job:admc2")
    found["c_listing_2"] = str(admin_platform.decisions.decide(mapped, TENANT, CATALOG).listing_id)
    return found


def _post(operator: Operator, path: str, body: dict[str, Any], key: str | None = None) -> httpx.Response:
    headers = {"X-CSRF-Token": operator.csrf, **({"Idempotency-Key": key} if key else {})}
    return operator.http.post(path, json=body, headers=headers)


def _merge(operator: Operator, item_id: str, into: str, key: str | None = None) -> httpx.Response:
    body = {"catalog_id": CATALOG, "into": into, "rationale": "the same SSD, two spellings of the brand"}
    return _post(operator, f"/v1/items/{item_id}/merge", body, key)


def _split(operator: Operator, item_id: str, listings: list[str], **extra: Any) -> httpx.Response:
    body = {
        "catalog_id": CATALOG,
        "listing_ids": listings,
        "title": "Strata P5 6 TB",
        "rationale": "two items",
    }
    return _post(operator, f"/v1/items/{item_id}/split", {**body, **extra})


def _owner(cases: Cases, listing_id: str) -> str:
    row = cases.resolution.one(
        "SELECT item_id FROM resolver.listing_mapping WHERE listing_id = %s", listing_id
    )
    return str(row["item_id"])


def test_a_reviewer_merges_a_duplicate_and_a_replay_of_the_key_returns_the_first_decision(
    login: Login, cases: Cases, items: dict[str, str]
) -> None:
    rita = login("rita")

    merged = _merge(rita, items["b"], items["a"], key="merge-b-1")

    assert merged.status_code == 201, merged.text
    body = merged.json()
    assert (body["item_id"], body["into"], body["listings"]) == (items["b"], items["a"], [items["b_listing"]])
    # The test catalog releases automatically: the merge also commits a release.authorized event.
    assert [e["type"] for e in body["outbox"]] == [
        "listing_mapping.corrected",
        "catalog_item.merged",
        "release.authorized",
    ]
    assert _owner(cases, items["b_listing"]) == items["a"]
    decision = cases.resolution.one(
        "SELECT action, actor FROM resolver.decision WHERE decision_id = %s", body["decision_id"]
    )
    assert decision == {"action": "merge_items", "actor": "reviewer:rita"}
    again = _merge(rita, items["b"], items["a"], key="merge-b-1")
    assert (again.status_code, again.headers["Idempotent-Replayed"]) == (200, "true")
    assert again.json()["decision_id"] == body["decision_id"]


@pytest.mark.parametrize(
    ("who", "csrf", "status", "code"),
    [("vic", True, 403, "FORBIDDEN"), ("rita", False, 403, "CSRF_REJECTED")],
)
def test_a_merge_needs_the_reviewer_role_and_the_sessions_csrf_token(
    login: Login, cases: Cases, items: dict[str, str], who: str, csrf: bool, status: int, code: str
) -> None:
    operator = login(who)
    before = cases.written()

    refused = operator.http.post(
        f"/v1/items/{items['b']}/merge",
        json={"catalog_id": CATALOG, "into": items["a"], "rationale": "dup"},
        headers={"X-CSRF-Token": operator.csrf if csrf else "forged"},
    )

    assert refused.status_code == status, refused.text
    assert refused.json()["error"]["code"] == code
    assert cases.written() == before


@pytest.mark.parametrize(
    ("request_of", "status", "code"),
    [
        (lambda i: ("merge", i["a"], {"into": i["a"]}), 422, "MERGE_INTO_SELF"),
        (lambda i: ("merge", "itm_nowhere", {"into": i["a"]}), 404, "NOT_FOUND"),
        (lambda i: ("merge", i["a"], {"into": "itm_nowhere"}), 404, "NOT_FOUND"),
        (lambda i: ("merge", i["a"], {"into": i["b"], "catalog_id": "cat_nowhere"}), 404, "NOT_FOUND"),
        (lambda i: ("merge", i["a"], {"into": i["b"], "catalog_id": "cat_second"}), 409, "CROSS_CATALOG"),
        (lambda i: ("split", i["a"], {"listing_ids": [i["c_listing"]]}), 409, "LISTING_NOT_ON_ITEM"),
        (lambda i: ("split", i["a"], {"listing_ids": []}), 422, "VALIDATION_FAILED"),
        (
            lambda i: ("split", i["c"], {"listing_ids": [i["c_listing"]], "gtin": "12"}),
            422,
            "VALIDATION_FAILED",
        ),
    ],
    ids=[
        "into-itself",
        "unknown-item",
        "unknown-survivor",
        "unknown-catalog",
        "other-catalog",
        "foreign-listing",
        "no-listing",
        "bad-gtin",
    ],
)
def test_a_refused_merge_or_split_is_its_code_and_writes_nothing(
    login: Login,
    cases: Cases,
    items: dict[str, str],
    request_of: Callable[[dict[str, str]], tuple[str, str, dict[str, Any]]],
    status: int,
    code: str,
) -> None:
    rita = login("rita")
    action, item_id, fields = request_of(items)
    body = {"catalog_id": CATALOG, "rationale": "dup", **fields}
    if action == "split":
        body.setdefault("title", "Another SSD")
    before = cases.written()

    refused = _post(rita, f"/v1/items/{item_id}/{action}", body)

    assert refused.status_code == status, refused.text
    assert refused.json()["error"]["code"] == code
    assert cases.written() == before


def test_a_reviewer_splits_listings_off_an_item_into_a_new_one(
    login: Login, cases: Cases, items: dict[str, str]
) -> None:
    rita = login("rita")

    split = _split(rita, items["c"], [items["c_listing_2"]], mpn="CVN-SP5-6T0")

    assert split.status_code == 201, split.text
    body = split.json()
    assert body["item_id"] == items["c"]
    assert body["listings"] == [items["c_listing_2"]]
    assert [e["type"] for e in body["outbox"]] == [
        "catalog_item.created",
        "listing_mapping.corrected",
        "release.authorized",
    ]
    assert _owner(cases, items["c_listing_2"]) == body["new_item_id"]
    assert _owner(cases, items["c_listing"]) == items["c"]


def test_a_viewer_reads_the_likely_duplicates_with_their_evidence(
    login: Login, items: dict[str, str]
) -> None:
    vic = login("vic")

    listed = vic.http.get(f"/v1/catalogs/{CATALOG}/duplicates")
    unknown = vic.http.get("/v1/catalogs/cat_nowhere/duplicates")

    assert listed.status_code == 200, listed.text
    pairs = listed.json()["pairs"]
    pair = next(
        p for p in pairs if {p["first"]["item_id"], p["second"]["item_id"]} == {items["a"], items["b"]}
    )
    assert pair["score"] >= 0.6
    assert any(reason.startswith("same MPN") for reason in pair["evidence"])
    assert all(items["c"] not in (p["first"]["item_id"], p["second"]["item_id"]) for p in pairs)
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, "NOT_FOUND")


def _field(page: str, name: str, after: str = "") -> str:
    """The value of the first ``name`` field after ``after`` in the page."""
    found = re.search(rf'name="{name}" value="([^"]*)"', page[page.index(after) :] if after else page)
    assert found, f"no {name} field"
    return found.group(1)


def test_in_the_console_a_reviewer_merges_a_pair_from_the_duplicates_page(
    login: Login, cases: Cases, items: dict[str, str]
) -> None:
    rita = login("rita")
    duplicates = rita.http.get("/console/duplicates")
    assert duplicates.status_code == 200, duplicates.text
    form = f'action="/console/items/{items["b"]}/merge"'
    assert form in duplicates.text
    fields = {name: _field(duplicates.text, name, form) for name in ("csrf_token", "idempotency_key", "into")}
    assert fields["into"] == items["a"]

    merged = rita.http.post(
        f"/console/items/{items['b']}/merge", data={**fields, "catalog_id": CATALOG}, follow_redirects=False
    )

    assert merged.status_code == 303, merged.text
    assert merged.headers["location"] == f"/console/items/{items['a']}?merged={items['b']}"
    page = rita.http.get(merged.headers["location"])
    assert page.status_code == 200
    assert f"Merged <code>{items['b']}</code>" in page.text
    assert items["b_listing"] in page.text
    assert _owner(cases, items["b_listing"]) == items["a"]
    # The same form again is its first decision: nothing new is written.
    before = cases.written()
    rita.http.post(f"/console/items/{items['b']}/merge", data={**fields, "catalog_id": CATALOG})
    assert cases.written() == before


def test_in_the_console_a_reviewer_splits_the_checked_listings_off_an_item(
    login: Login, cases: Cases, items: dict[str, str]
) -> None:
    rita = login("rita")
    page = rita.http.get(f"/console/items/{items['c']}")
    assert page.status_code == 200, page.text
    split_form = f'action="/console/items/{items["c"]}/split"'
    fields = {name: _field(page.text, name, split_form) for name in ("csrf_token", "idempotency_key")}

    split = rita.http.post(
        f"/console/items/{items['c']}/split",
        data={
            **fields,
            "catalog_id": CATALOG,
            "title": "Strata P5 6 TB",
            "listing_ids": [items["c_listing_2"]],
        },
        follow_redirects=False,
    )

    assert split.status_code == 303, split.text
    new_item = _owner(cases, items["c_listing_2"])
    assert new_item != items["c"]
    assert split.headers["location"] == f"/console/items/{new_item}?split_from={items['c']}"


def test_in_the_console_a_refused_merge_is_the_item_page_with_its_code_and_writes_nothing(
    login: Login, cases: Cases, items: dict[str, str]
) -> None:
    rita = login("rita")
    page = rita.http.get(f"/console/items/{items['a']}")
    merge_form = f'action="/console/items/{items["a"]}/merge"'
    fields = {name: _field(page.text, name, merge_form) for name in ("csrf_token", "idempotency_key")}
    before = cases.written()

    refused = rita.http.post(
        f"/console/items/{items['a']}/merge", data={**fields, "catalog_id": CATALOG, "into": items["a"]}
    )

    assert refused.status_code == 422, refused.text
    assert "MERGE_INTO_SELF" in refused.text
    assert cases.written() == before


def test_in_the_console_a_viewer_sees_no_merge_form_and_a_posted_one_is_a_403_page(
    login: Login, cases: Cases, items: dict[str, str]
) -> None:
    vic = login("vic")
    page = vic.http.get(f"/console/items/{items['a']}")
    assert page.status_code == 200
    assert "/merge" not in page.text
    assert "merging needs the reviewer role" in vic.http.get("/console/duplicates").text
    before = cases.written()

    refused = vic.http.post(
        f"/console/items/{items['b']}/merge",
        data={
            "csrf_token": _field(page.text, "csrf_token"),
            "catalog_id": CATALOG,
            "into": items["a"],
            "idempotency_key": "console:merge:vic",
        },
    )

    assert refused.status_code == 403
    assert "FORBIDDEN" in refused.text
    assert cases.written() == before
