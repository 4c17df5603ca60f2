"""Provisioning tenants, catalogs and sources is idempotent, and opens the stream at the control plane's current
history epoch; a new epoch fences the old stream's writers."""

from __future__ import annotations

import pytest

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Database
from prw_platform.epochs import current_epoch, issue_epoch
from prw_platform.resolver.catalogs import (
    CatalogSpec,
    SourceCatalogConflict,
    SourceSpec,
    StreamNotProvisioned,
    current_stream,
    provision_catalog,
    set_release_policy,
)
from prw_platform.resolver.decisions import HistoryEpochFenced, StreamNotOpen, decide
from tests.integration.resolver.decision_builders import Catalog

SPEC = CatalogSpec(
    "ten_primary",
    "cat_primary",
    "Primary",
    "automatic",
    (SourceSpec("src_lumen", "Lumen", "https://lumen.test"),),
)


def _rows(owner_db: Database, sql: str) -> list[dict[str, object]]:
    with owner_db.transaction() as conn:
        return conn.execute(sql).fetchall()


def test_provisioning_twice_is_idempotent_and_opens_the_stream_once(
    resolver_db: Database, control_db: Database, owner_db: Database
) -> None:
    first = provision_catalog(resolver_db, control_db, SPEC)
    again = provision_catalog(resolver_db, control_db, SPEC)

    epoch = current_epoch(control_db, "ten_primary", "cat_primary")
    assert epoch is not None
    assert first.stream == again.stream == StreamKey("ten_primary", "cat_primary", epoch.epoch_id)
    assert (first.stream_opened, again.stream_opened) == (True, False)
    assert _rows(owner_db, "SELECT tenant_id FROM resolver.tenant") == [{"tenant_id": "ten_primary"}]
    assert _rows(owner_db, "SELECT release_policy FROM resolver.catalog") == [{"release_policy": "automatic"}]
    assert _rows(owner_db, "SELECT source_id, catalog_id FROM resolver.source") == [
        {"source_id": "src_lumen", "catalog_id": "cat_primary"}
    ]
    assert _rows(owner_db, "SELECT history_epoch, committed_position FROM resolver.stream_cursor") == [
        {"history_epoch": epoch.epoch_id, "committed_position": 0}
    ]
    assert current_stream(control_db, "ten_primary", "cat_primary") == first.stream


def test_provisioning_again_updates_the_release_policy_and_source_details(
    resolver_db: Database, control_db: Database, owner_db: Database
) -> None:
    provision_catalog(resolver_db, control_db, SPEC)
    provision_catalog(
        resolver_db,
        control_db,
        CatalogSpec(
            "ten_primary", "cat_primary", "Primary", "manual", (SourceSpec("src_lumen", "Lumen EU"),)
        ),
    )
    assert _rows(owner_db, "SELECT release_policy FROM resolver.catalog") == [{"release_policy": "manual"}]
    assert _rows(owner_db, "SELECT name FROM resolver.source") == [{"name": "Lumen EU"}]
    set_release_policy(resolver_db, "ten_primary", "cat_primary", "automatic")
    assert _rows(owner_db, "SELECT release_policy FROM resolver.catalog") == [{"release_policy": "automatic"}]
    with pytest.raises(LookupError):
        set_release_policy(resolver_db, "ten_primary", "cat_missing", "automatic")


def test_a_source_cannot_move_to_another_catalog(resolver_db: Database, control_db: Database) -> None:
    provision_catalog(resolver_db, control_db, SPEC)
    moved = CatalogSpec("ten_primary", "cat_other", "Other", "manual", (SourceSpec("src_lumen", "Lumen"),))
    with pytest.raises(SourceCatalogConflict):
        provision_catalog(resolver_db, control_db, moved)


def test_a_stream_that_was_never_provisioned_is_refused(catalog: Catalog, control_db: Database) -> None:
    unknown = StreamKey(catalog.tenant_id, catalog.stream.catalog_id, "hep_unknown")
    with pytest.raises(StreamNotOpen):
        decide(catalog.create(1), catalog.resolver_db, unknown)
    with pytest.raises(StreamNotProvisioned):
        current_stream(control_db, catalog.tenant_id, "cat_never")


def test_a_new_history_epoch_opens_a_new_stream_and_fences_writers_of_the_old_one(
    catalog: Catalog, control_db: Database
) -> None:
    old = catalog.stream
    catalog.decide(catalog.create(1))
    issue_epoch(control_db, old.tenant_id, old.catalog_id, "restore from backup")
    reopened = provision_catalog(
        catalog.resolver_db,
        control_db,
        CatalogSpec(
            old.tenant_id, old.catalog_id, "Primary", "automatic", (SourceSpec("src_lumen", "Lumen"),)
        ),
    )

    assert reopened.stream_opened
    assert reopened.stream.history_epoch != old.history_epoch
    with pytest.raises(HistoryEpochFenced):
        decide(catalog.create(2), catalog.resolver_db, old)
    # The new epoch's stream starts again at position 1 (INV-03 per (tenant, catalog, history_epoch)).
    fresh = decide(catalog.create(3), catalog.resolver_db, reopened.stream)
    assert fresh.positions[0] == 1
