"""A save of pictures or classes is an accepted change (seed 004, AW-01).

The record transaction of every save (item pictures, class create / update / delete) first locks the stream cursor
(``lock_stream``: BEFORE changing exported state), then makes its changes; ``publish`` then bumps the aggregate's
revision and writes it through the ``DecisionWriter``: the operator's decision, the ``item_pictures.saved`` /
``product_class.saved`` / ``product_class.deleted`` event (and ``release.authorized`` when the catalog publishes
automatically). The product service sees the change through the stream only; the public API after a release.
"""

from __future__ import annotations

from datetime import datetime

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection
from prw_platform.resolver.decisions import releases
from prw_platform.resolver.decisions.writer import DecisionWriter, StreamLocator
from prw_platform.resolver.files import published, records
from prw_platform.resolver.stream.cursor import LockedCursor, lock_cursor

__all__ = ["LockedCursor", "StreamLocator", "lock_stream", "publish"]

SAVE_ITEM_PICTURES = "save_item_pictures"
SAVE_PRODUCT_CLASS = "save_product_class"
DELETE_PRODUCT_CLASS = "delete_product_class"


def lock_stream(conn: Connection, stream: StreamKey) -> LockedCursor:
    """AW-01: the first statement of the record transaction."""
    return lock_cursor(conn, stream)


def publish(
    conn: Connection,
    stream: StreamKey,
    cursor: LockedCursor,
    *,
    action: str,
    aggregate_type: str,
    aggregate_id: str,
    deleted: bool,
    actor: str,
    now: datetime,
) -> str:
    """Append the aggregate's next revision (built from the records as this transaction left them); returns the
    decision id."""
    tenant_id, catalog_id = stream.tenant_id, stream.catalog_id
    revision = records.aggregate_revision(conn, tenant_id, aggregate_type, aggregate_id) + 1
    aggregate = records.FileAggregate(aggregate_type, aggregate_id, catalog_id, revision, deleted)
    fact = published.current_fact(conn, tenant_id, aggregate)
    writer = DecisionWriter(conn, cursor, now)
    release = None
    # A class deleted before any release published it has nothing to remove.
    if writer.publishes_automatically() and (
        not fact.deleted or releases.released_file_revision(conn, tenant_id, aggregate_type, aggregate_id)
    ):
        release = writer.release(file_facts=(fact,))
    writer.write(
        action,
        actor,
        f"{action.replace('_', ' ')} {aggregate_id}",
        {"aggregate_type": aggregate_type, "aggregate_id": aggregate_id, "revision": revision},
        events=lambda batch: batch.file_fact_changed(fact),
        facts=lambda: records.write_aggregate(conn, tenant_id, aggregate, writer.decision_id, now),
        release=release,
        item_id=aggregate_id if aggregate_type == "item_pictures" else None,
    )
    return writer.decision_id
