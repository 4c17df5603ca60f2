"""INV-01, INV-04, INV-05, INV-06 and INV-07 on the decision path: a violating decision raises a typed error,
commits nothing and consumes no stream position."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.decisions import (
    CaseNotFound,
    DecideCase,
    InvariantViolation,
    StaleCaseRevision,
    get_decision,
)
from tests.integration.resolver.decision_builders import Catalog


def _snapshot(catalog: Catalog) -> dict[str, int]:
    tables = ("decision", "catalog_item", "listing", "listing_mapping", "review_case", "release", "outbox")
    return {table: catalog.count(table) for table in tables} | {"cursor": catalog.committed_position()}


def test_inv01_remapping_keeps_one_current_mapping_per_listing(catalog: Catalog) -> None:
    first = catalog.decide(catalog.create(1))
    second = catalog.decide(catalog.create(2))
    assert second.item_id
    catalog.decide(catalog.map("rec_1", second.item_id))
    with catalog.owner_db.transaction() as conn:
        mappings = conn.execute(
            "SELECT item_id, revision FROM resolver.listing_mapping WHERE listing_id = %s",
            (first.listing_id,),
        ).fetchall()
        public = conn.execute(
            "SELECT item_id FROM resolver.released_listing WHERE listing_id = %s", (first.listing_id,)
        ).fetchall()
    assert mappings == [{"item_id": second.item_id, "revision": 2}]
    assert public == [{"item_id": second.item_id}]  # INV-01: one public item owner


def test_inv01_the_schema_refuses_a_second_mapping_row_for_a_listing(catalog: Catalog) -> None:
    first = catalog.decide(catalog.create(1))
    second = catalog.decide(catalog.create(2))
    with (
        pytest.raises(psycopg.errors.UniqueViolation),
        catalog.resolver_db.transaction(tenant_id=catalog.tenant_id) as conn,
    ):
        conn.execute(
            """INSERT INTO resolver.listing_mapping (tenant_id, catalog_id, listing_id, item_id, revision,
                   decision_id, updated_at)
               VALUES (%s, 'cat_primary', %s, %s, 1, %s, now())""",
            (catalog.tenant_id, first.listing_id, second.item_id, second.decision_id),
        )


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("itm_does_not_exist", "does not exist"),
        ("retired", "is retired"),
        ("other_catalog", "belongs to catalog cat_manual"),
    ],
)
def test_inv07_a_mapping_to_a_missing_retired_or_foreign_item_is_refused_and_consumes_no_position(
    catalog: Catalog, manual_catalog: Catalog, target: str, reason: str
) -> None:
    existing = catalog.decide(catalog.create(1))
    foreign = manual_catalog.decide(manual_catalog.create(7, source_id="src_manual"))
    assert existing.item_id
    assert foreign.item_id
    if target == "retired":
        with catalog.owner_db.transaction() as conn:
            conn.execute(
                "UPDATE resolver.catalog_item SET status = 'retired' WHERE item_id = %s", (existing.item_id,)
            )
        target = existing.item_id
    elif target == "other_catalog":
        target = foreign.item_id
    before = _snapshot(catalog)

    with pytest.raises(InvariantViolation, match=reason) as raised:
        catalog.decide(catalog.map("rec_new", target))

    assert raised.value.invariant == "INV-07"
    assert _snapshot(catalog) == before
    next_decision = catalog.decide(catalog.create(2))
    assert next_decision.positions[0] == before["cursor"] + 1


def _open_case(catalog: Catalog) -> tuple[str, str]:
    opened = catalog.decide(catalog.review("rec_unknown"))
    target = catalog.decide(catalog.create(1))
    assert opened.case_id
    assert target.item_id
    return opened.case_id, target.item_id


def _reviewer(case_id: str, expected: int, item_id: str, reviewer: str = "reviewer:op_anna") -> DecideCase:
    return DecideCase(
        case_id=case_id,
        expected_revision=expected,
        action="map",
        actor=reviewer,
        rationale="Spec grid and title agree",
        item_id=item_id,
    )


def test_inv04_a_decision_at_the_current_case_revision_maps_the_listing_and_bumps_the_case(
    catalog: Catalog,
) -> None:
    case_id, item_id = _open_case(catalog)
    result = catalog.decide(_reviewer(case_id, 1, item_id))
    assert (result.case_id, result.case_revision) == (case_id, 2)
    assert [e.type for e in result.events] == ["listing_mapping.created", "release.authorized"]
    with catalog.owner_db.transaction() as conn:
        case = conn.execute("SELECT status, revision, opened_by FROM resolver.review_case").fetchone()
        decision = conn.execute(
            "SELECT case_id, case_revision, actor, prior_decisions FROM resolver.decision WHERE decision_id = %s",
            (result.decision_id,),
        ).fetchone()
    assert case is not None
    assert decision is not None
    assert (case["status"], case["revision"]) == ("decided", 2)
    assert decision["case_id"] == case_id
    assert decision["case_revision"] == 2
    assert decision["actor"] == "reviewer:op_anna"
    assert decision["prior_decisions"] == [case["opened_by"]]


def test_inv04_a_stale_expected_revision_is_stale_case_revision_and_writes_nothing(catalog: Catalog) -> None:
    case_id, item_id = _open_case(catalog)
    catalog.decide(_reviewer(case_id, 1, item_id, "reviewer:op_anna"))
    before = _snapshot(catalog)

    with pytest.raises(StaleCaseRevision) as raised:
        catalog.decide(_reviewer(case_id, 1, item_id, "reviewer:op_ben"))

    assert raised.value.code == "STALE_CASE_REVISION"
    assert (raised.value.expected, raised.value.actual) == (1, 2)
    assert _snapshot(catalog) == before
    with catalog.owner_db.transaction() as conn:
        assert conn.execute("SELECT revision FROM resolver.review_case").fetchone() == {"revision": 2}


def test_a_decision_on_an_unknown_case_is_case_not_found(catalog: Catalog) -> None:
    with pytest.raises(CaseNotFound):
        catalog.decide(_reviewer("rc_missing", 1, "itm_x"))
    assert catalog.count("decision") == 0


def test_a_reviewer_can_create_the_item_or_dismiss_the_case(catalog: Catalog) -> None:
    opened = catalog.decide(catalog.review("rec_a"))
    assert opened.case_id
    created = catalog.decide(
        DecideCase(
            case_id=opened.case_id,
            expected_revision=1,
            action="create_item",
            actor="reviewer:op_anna",
            rationale="new product",
            item=catalog.item(5, item_id="itm_ssd_p5_5t"),
        )
    )
    assert created.item_id == "itm_ssd_p5_5t"
    assert [e.type for e in created.events] == [
        "catalog_item.created",
        "listing_mapping.created",
        "release.authorized",
    ]
    dismissed_case = catalog.decide(catalog.review("rec_b"))
    assert dismissed_case.case_id
    dismissed = catalog.decide(
        DecideCase(
            case_id=dismissed_case.case_id,
            expected_revision=1,
            action="dismiss",
            actor="reviewer:op_anna",
            rationale="not a product page",
        )
    )
    assert dismissed.events == ()
    with catalog.owner_db.transaction() as conn:
        statuses = conn.execute("SELECT status FROM resolver.review_case ORDER BY created_at").fetchall()
    assert [s["status"] for s in statuses] == ["decided", "dismissed"]


def test_inv05_decisions_and_releases_are_insert_only_for_resolver_app(catalog: Catalog) -> None:
    catalog.decide(catalog.create(1))
    for statement in (
        "UPDATE resolver.decision SET rationale = 'rewritten'",
        "DELETE FROM resolver.decision",
        "UPDATE resolver.release SET authorized_by = 'x'",
        "DELETE FROM resolver.listing_mapping",
    ):
        with (
            pytest.raises(psycopg.errors.InsufficientPrivilege),
            catalog.resolver_db.transaction(tenant_id=catalog.tenant_id) as conn,
        ):
            conn.execute(statement)


def test_inv06_resolver_app_in_tenant_a_cannot_see_tenant_b_decisions(
    provision_catalog_for: Callable[..., Catalog], resolver_db: Database
) -> None:
    tenant_a = provision_catalog_for(tenant_id="ten_synth_a")
    tenant_b = provision_catalog_for(tenant_id="ten_synth_b")
    in_a = tenant_a.decide(tenant_a.create(1))
    in_b = tenant_b.decide(tenant_b.create(1))
    with resolver_db.transaction(tenant_id="ten_synth_a") as conn:
        decisions = conn.execute("SELECT decision_id FROM resolver.decision").fetchall()
        items = conn.execute("SELECT tenant_id FROM resolver.catalog_item").fetchall()
        assert get_decision(conn, "ten_synth_b", in_b.decision_id) is None
        seen_a = get_decision(conn, "ten_synth_a", in_a.decision_id)
    assert decisions == [{"decision_id": in_a.decision_id}]
    assert items == [{"tenant_id": "ten_synth_a"}]
    assert seen_a is not None
    assert seen_a.events == in_a.events
    # The same identifiers in two tenants are two items, each stream numbered from 1 (INV-03 per stream).
    assert in_a.positions == in_b.positions == (1, 2, 3, 4)
