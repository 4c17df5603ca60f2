"""A save of pictures or classes is an accepted change (seed 004 + AW-01): the record transaction
locks the stream cursor, inserts the operator's decision and appends the ``item_pictures`` / ``product_class``
event at the next contiguous position (INV-03), plus ``release.authorized`` on an automatic catalog; a manual
catalog's next release publishes what changed, and removes a class deleted after it was published."""

from __future__ import annotations

from typing import Any

import pytest

from prw_platform.clock import utc_now
from prw_platform.db.database import Database
from prw_platform.resolver.catalogs import write_release_policy
from prw_platform.resolver.decisions import AuthorizeRelease, NothingToRelease
from prw_platform.resolver.decisions.catalog_decisions import authorize_release, pending_releases
from prw_platform.resolver.exports.snapshots import read_snapshot
from prw_platform.resolver.files.errors import UnreadableSource
from prw_platform.resolver.files.publication import StreamLocator
from prw_platform.resolver.files.service import CatalogFiles
from prw_platform.resolver.files.sources import UploadSource
from prw_platform.storage.port import sha256_hex
from tests.integration.files.conftest import ACTOR, Items, Rows, png, stream_locator
from tests.integration.resolution.pipeline import CATALOG, TENANT


def _events(rows: Rows) -> list[dict[str, Any]]:
    return rows.all(
        """SELECT position, event_type, aggregate_type, aggregate_id, aggregate_revision, decision_id, body
           FROM resolver.outbox WHERE tenant_id = %s AND catalog_id = %s ORDER BY position""",
        TENANT,
        CATALOG,
    )


def _manual(owner_db: Database) -> None:
    owner_db.run(lambda c: write_release_policy(c, TENANT, CATALOG, "manual"))


@pytest.fixture
def streams(control_db: Database) -> StreamLocator:
    return stream_locator(control_db)


def test_saving_item_pictures_appends_the_event_and_an_automatic_release_under_the_cursor(
    files: CatalogFiles, items: Items, rows: Rows
) -> None:
    item = items.add("itm_anvil")
    front = png()
    before = len(_events(rows))

    files.save_item_pictures(TENANT, item, UploadSource(front), [], actor=ACTOR)

    saved, release = _events(rows)[before:]
    assert [e["position"] for e in (saved, release)] == [before + 1, before + 2]  # INV-03: contiguous
    assert (
        saved["event_type"],
        saved["aggregate_type"],
        saved["aggregate_id"],
        saved["aggregate_revision"],
    ) == (
        "item_pictures.saved",
        "item_pictures",
        item,
        1,
    )
    main = saved["body"]["payload"]["main"]
    assert (main["sha256"], main["media_type"], main["size_bytes"]) == (
        sha256_hex(front),
        "image/png",
        len(front),
    )
    assert release["event_type"] == "release.authorized"
    assert release["body"]["payload"]["item_pictures"][0]["revision"] == 1
    assert {"type": "item_pictures", "id": item, "revision": 1} in release["body"]["dependencies"]
    (decision,) = rows.all(
        "SELECT action, actor FROM resolver.decision WHERE decision_id = %s", saved["decision_id"]
    )
    assert decision == {"action": "save_item_pictures", "actor": ACTOR}


def test_a_refused_save_appends_no_event_and_consumes_no_position(
    files: CatalogFiles, items: Items, rows: Rows
) -> None:
    item = items.add("itm_anvil")
    written = rows.written()

    with pytest.raises(UnreadableSource):
        files.save_item_pictures(TENANT, item, UploadSource(b"not a picture"), [], actor=ACTOR)

    assert rows.written() == written


def test_a_manual_catalog_publishes_pictures_and_classes_at_its_next_release_and_removes_a_deleted_class(
    files: CatalogFiles,
    items: Items,
    rows: Rows,
    owner_db: Database,
    resolver_db: Database,
    streams: StreamLocator,
) -> None:
    _manual(owner_db)
    item = items.add("itm_anvil")
    files.save_item_pictures(TENANT, item, UploadSource(png()), [UploadSource(png())], actor=ACTOR)
    files.create_class(
        TENANT, CATALOG, "cls_tools", "Tools", picture=UploadSource(png()), members=[item], actor=ACTOR
    )
    files.create_class(TENANT, CATALOG, "cls_draft", "Draft", picture=None, members=[], actor=ACTOR)
    files.delete_class(TENANT, "cls_draft", actor=ACTOR)  # deleted before any release published it
    assert "release.authorized" not in [e["event_type"] for e in _events(rows)]
    (pending,) = [
        p
        for p in resolver_db.run(lambda c: pending_releases(c, TENANT), tenant_id=TENANT)
        if p.catalog_id == CATALOG
    ]
    assert pending.pictures_and_classes == 2

    def release(conn: Any) -> Any:
        return authorize_release(
            conn, AuthorizeRelease(CATALOG, ACTOR, "publish"), streams(TENANT, CATALOG), clock=utc_now
        )

    resolver_db.run(release, tenant_id=TENANT)
    payload = _events(rows)[-1]["body"]["payload"]
    assert [p["item"] for p in payload["item_pictures"]] == [item]
    assert [(c["class"], c["revision"]) for c in payload["classes"]] == [("cls_tools", 1)]
    assert payload.get("removed_classes", []) == []
    with pytest.raises(NothingToRelease):
        resolver_db.run(release, tenant_id=TENANT)

    files.delete_class(TENANT, "cls_tools", actor=ACTOR)
    deleted = _events(rows)[-1]
    assert (deleted["event_type"], deleted["aggregate_revision"]) == ("product_class.deleted", 2)
    resolver_db.run(release, tenant_id=TENANT)
    removal = _events(rows)[-1]["body"]
    assert removal["payload"]["removed_classes"] == [{"class": "cls_tools", "revision": 2}]
    assert {"type": "product_class", "id": "cls_tools", "revision": 2} in removal["dependencies"]


def test_a_snapshot_export_carries_item_pictures_and_classes_at_their_revisions(
    files: CatalogFiles, items: Items, resolver_db: Database
) -> None:
    item = items.add("itm_anvil")
    files.save_item_pictures(TENANT, item, UploadSource(png()), [], actor=ACTOR)
    files.create_class(TENANT, CATALOG, "cls_tools", "Tools", picture=None, members=[item], actor=ACTOR)
    files.create_class(TENANT, CATALOG, "cls_gone", "Gone", picture=None, members=[], actor=ACTOR)
    files.delete_class(TENANT, "cls_gone", actor=ACTOR)

    state = resolver_db.run(
        lambda c: read_snapshot(c, TENANT, CATALOG, ["item_pictures", "product_class"]),
        tenant_id=TENANT,
        read_only=True,
    )

    assert state is not None
    (pictures,) = state.objects["item_pictures"]
    assert (pictures["aggregate"], pictures["payload"]["gallery"]) == (
        {"type": "item_pictures", "id": item, "revision": 1},
        [],
    )
    classes = {e["aggregate"]["id"]: e for e in state.objects["product_class"]}
    assert classes["cls_tools"]["payload"]["members"] == [item]
    assert (classes["cls_gone"]["aggregate"]["revision"], classes["cls_gone"]["payload"]) == (
        2,
        {"class": "cls_gone"},
    )
