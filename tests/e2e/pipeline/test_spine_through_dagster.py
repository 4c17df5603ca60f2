"""The spine end to end: from intake over HTTP, through the Dagster sensors and jobs, to GET /v1/items; the public
catalog does not change when the same captures arrive again; a relay crash between publish and mark changes
nothing in the projection (AW-03 duplicates, AW-04 inbox dedupe)."""

from __future__ import annotations

import contextlib

import dagster as dg

from prw_cli.commands.demo import CATALOG, TENANT, run_demo
from prw_orchestration.instance import instance_config
from prw_platform.bootstrap import Platform
from prw_platform.contracts import AcceptedChange
from prw_platform.resolver import reports
from prw_platform.services import ItemFilters

#: The bundled pages with a strong identifier (brand + MPN, or GTIN) and what the public item must say.
EXPECTED_ITEMS = {
    "Executive Anvil": {"brand": "ACME", "identifiers": {"mpn": "925872"}, "listings": 2},
    "Keystick Wall Sconce": {"brand": "Rejuvenation", "identifiers": {"mpn": "A1686"}, "listings": 1},
    "Large green jacket": {
        "brand": "A fashion brand",
        "identifiers": {"gtin": "12345678901231"},
        "listings": 1,
    },
    "Large light blue coat": {"identifiers": {"gtin": "98766051104399"}, "listings": 1},
}


def _public_catalog(items: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    return {str(item["title"]): item for item in items}


def test_captures_over_http_become_public_items_through_dagster_runs(platform: Platform) -> None:
    run = run_demo(platform)

    # Every page stored with 202, the repeated page replayed with 200 and the same receipt.
    statuses = [submitted.status for _, submitted in run.submissions]
    assert statuses[:-1] == [202] * (len(statuses) - 1)
    assert statuses[-1] == 200
    assert run.submissions[-1][1].receipt_id == run.submissions[0][1].receipt_id

    # The pipeline ran as Dagster runs launched from the three sensors, all successful, recorded on the instance.
    assert run.drive.failed_runs == []
    instance = dg.DagsterInstance.get()
    jobs = {r.job_name for r in instance.get_runs(filters=dg.RunsFilter(tags={"prw/batch": "1"}))}
    assert {"resolution_job", "relay_job", "apply_job"} <= jobs
    sensor_runs = instance.get_runs(
        filters=dg.RunsFilter(tags={"dagster/sensor_name": "resolution_jobs_sensor"})
    )
    assert all(r.tags["dagster/run_key"].startswith("resolution_job-batch-") for r in sensor_runs)

    # Public items carry the fields read from the real pages; the two ACME anvil pages map to one item.
    catalog = _public_catalog(run.public_items)
    for title, expected in EXPECTED_ITEMS.items():
        item = catalog[title]
        if "brand" in expected:
            assert item["brand"] == expected["brand"]
        identifiers = {k: v for k, v in dict(item["identifiers"]).items() if v}  # type: ignore[call-overload]
        assert identifiers == expected["identifiers"]
        assert len(item["listings"]) == expected["listings"]  # type: ignore[arg-type]
    anvil_prices = {
        (listing["source_id"], listing["price"]) for listing in catalog["Executive Anvil"]["listings"]
    }  # type: ignore[union-attr]
    assert anvil_prices == {("src_acme_web", "119.99"), ("src_schemaorg_docs", "119.99")}

    # The demo's merchants (one per source, operator decisions) went the same way and are public with the items:
    # the Anvil's two listings are offers of two merchants.
    public = platform.public_catalog(TENANT, CATALOG)
    merchants = {m.merchant_id: m.sources for m in public.merchants(limit=100).entries}
    assert {"mer_acme_web": ("src_acme_web",), "mer_schemaorg_docs": ("src_schemaorg_docs",)}.items() <= (
        merchants.items()
    )
    anvil = next(
        i for i in public.items(ItemFilters(), limit=100).items if i.fields["title"] == "Executive Anvil"
    )
    offers = public.item_listings(anvil.item_id).listings
    assert {
        (o.listing.fields["source_id"], o.merchant.merchant_id if o.merchant else None) for o in offers
    } == {
        ("src_acme_web", "mer_acme_web"),
        ("src_schemaorg_docs", "mer_schemaorg_docs"),
    }

    # Pages without a strong identifier became review cases; the demo's reviewer decided both over HTTP (no
    # candidate is a confident match, so each page became an item of its own), Dagster applied the decisions,
    # and the catalog (automatic release policy) published them.
    cases = reports.review_cases(platform.operator_db, TENANT, CATALOG)
    assert len(cases) == 2
    assert {c.status for c in cases} == {"decided"}
    assert sorted(r.case_id for r in run.reviews) == sorted(c.case_id for c in cases)
    assert {(r.action, r.replayed) for r in run.reviews} == {("create_item", False)}
    assert run.review_drive.failed_runs == []
    assert run.review_drive.runs
    decisions = {d.decision_id: d for d in reports.decisions(platform.operator_db, TENANT, CATALOG)}
    assert {(decisions[r.decision_id].actor, decisions[r.decision_id].case_id) for r in run.reviews} == {
        ("reviewer:rita", c.case_id) for c in cases
    }
    assert "Modern LED Wall Sconce" in " ".join(catalog)

    # Every event on the stream validates against the contract, and the stream is fully relayed and applied.
    (stream,) = reports.stream_statuses(platform.operator_db)
    assert stream.contiguous
    assert stream.unpublished == 0
    with platform.operator_db.transaction() as conn:
        bodies = conn.execute("SELECT body FROM resolver.outbox ORDER BY position").fetchall()
    for row in bodies:
        AcceptedChange.from_message(row["body"])

    # The state assets were materialized and the invariant checks passed.
    assert run.drive.state_run is not None
    checks = _check_results(instance, run.drive.state_run)
    assert checks == {
        "collectors_reporting": True,
        "dead_letter_queues_empty": True,
        "failed_files_reviewed": True,
        "identity_live_precision": True,
        "inv01_one_mapping_one_owner": True,
        "inv03_contiguous_positions": True,
        "inv08_projection_lag": True,
        "product_gap_age": True,
    }


def _check_results(instance: dg.DagsterInstance, run_id: str) -> dict[str, bool]:
    results: dict[str, bool] = {}
    for record in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        data = record.get_dagster_event().asset_check_evaluation_data
        results[data.check_name] = data.passed
    return results


def test_running_the_demo_again_leaves_the_public_catalog_unchanged(platform: Platform) -> None:
    first = run_demo(platform)
    events_before = reports.events(platform.operator_db, TENANT, CATALOG)
    second = run_demo(platform)

    assert {s.status for _, s in second.submissions} == {200}  # every capture an idempotent replay
    assert second.drive.runs == []  # nothing to do: no job, no event, no run
    assert second.reviews == []  # the review queue is empty
    assert reports.events(platform.operator_db, TENANT, CATALOG) == events_before
    assert second.public_items == first.public_items


def test_relay_crash_between_publish_and_mark_changes_nothing_in_the_projection(platform: Platform) -> None:
    from prw_platform.resolver.stream.relay import publish_to_queue, relay_batch
    from prw_platform.runtime import Budget, run_stage

    run_demo(platform, drive=False)
    for stage in ("resolution", "normalize", "identity"):  # if_resolution_job's three stages
        assert run_stage(platform, stage, Budget()).drained

    publish = publish_to_queue(platform.accepted_changes_out)

    def publish_then_crash(messages):  # type: ignore[no-untyped-def]
        publish(messages)
        raise RuntimeError("relay process killed after publish, before mark")

    # The relay publishes every committed event, then dies before marking them published.
    with contextlib.suppress(RuntimeError):
        relay_batch(platform.relay_db, publish_then_crash, 1000)
    (stream,) = reports.stream_statuses(platform.operator_db)
    assert stream.unpublished == stream.committed_position > 0

    applied = run_stage(platform, "apply", Budget())
    assert applied.counts["applied"] > 0
    before = _projection(platform)

    # Restarted, the relay publishes the same events again (duplicates) and marks them.
    result = platform.relay.run_batch(1000)
    assert result.published == stream.committed_position
    again = run_stage(platform, "apply", Budget())
    assert again.counts == {"duplicate": stream.committed_position}
    assert _projection(platform) == before


def _projection(platform: Platform) -> dict[str, list[dict[str, object]]]:
    tables = (
        "item_projection",
        "listing_projection",
        "listing_mapping_projection",
        "public_item",
        "public_listing",
        "applied_revision",
        "progress",
        "release_pointer",
    )
    snapshot: dict[str, list[dict[str, object]]] = {}
    with platform.operator_db.transaction() as conn:
        for table in tables:
            rows = conn.execute(f"SELECT * FROM product.{table}").fetchall()  # noqa: S608
            snapshot[table] = sorted(
                ({k: v for k, v in row.items() if not k.endswith("_at")} for row in rows), key=repr
            )
    return snapshot


def test_dagster_uses_postgres_storage_when_a_server_is_configured(platform: Platform) -> None:
    config = instance_config(platform.settings)
    postgres_db = config["storage"]["postgres"]["postgres_db"]  # type: ignore[index]
    assert postgres_db["scheme"] == "postgresql+psycopg2"
    assert postgres_db["db_name"].endswith("_dagster")
