"""A save of pictures or classes is an accepted change (seed 004 + AW-01; issue 13 item 5).

The record transaction of every save (item pictures, class create / update / delete) first locks the stream cursor
(AW-01: BEFORE changing exported state), then makes its changes, then ``publish`` bumps the aggregate's revision,
inserts the operator's immutable decision, appends the ``item_pictures.saved`` / ``product_class.saved`` /
``product_class.deleted`` event at the next position (and ``release.authorized`` when the catalog publishes
automatically) and writes the revision: the record, its files' transitions and the outbox commit together or not
at all. The product service sees the change through the stream only; the public API shows it after a release.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection
from prw_platform.resolver import catalogs
from prw_platform.resolver.decisions import releases
from prw_platform.resolver.decisions.events import EventBatch
from prw_platform.resolver.decisions.records import DecisionRecord, insert_decision, new_decision_id
from prw_platform.resolver.files import published, records
from prw_platform.resolver.stream.cursor import LockedCursor, append_events, lock_cursor

StreamLocator = Callable[[str, str], StreamKey]

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
    decision_id = new_decision_id()
    batch = EventBatch(stream, cursor.committed_position, decision_id, now, (), None)
    batch.file_fact_changed(fact)
    release = None
    # docs/events.md: an automatic catalog publishes, in the decision's transaction, what the decision changed (a
    # class deleted before any release published it has nothing to remove).
    automatic = catalogs.release_policy(conn, tenant_id, catalog_id) == releases.AUTOMATIC
    if automatic and (
        not fact.deleted or releases.released_file_revision(conn, tenant_id, aggregate_type, aggregate_id)
    ):
        release = releases.Release(
            catalog_id,
            releases.next_publication_revision(conn, tenant_id, catalog_id),
            (),
            (),
            file_facts=(fact,),
        )
        batch.release_authorized(release)
    insert_decision(
        conn,
        DecisionRecord(
            decision_id=decision_id,
            stream=stream,
            action=action,
            actor=actor,
            rationale=f"{action.replace('_', ' ')} {aggregate_id}",
            case_id=None,
            case_revision=None,
            evidence=(),
            prior_decisions=(),
            details={"aggregate_type": aggregate_type, "aggregate_id": aggregate_id, "revision": revision},
            events=batch.refs(),
            item_id=aggregate_id if aggregate_type == "item_pictures" else None,
            listing_id=None,
            idempotency_key=None,
            request_sha256=None,
            created_at=now,
        ),
    )
    records.write_aggregate(conn, tenant_id, aggregate, decision_id, now)
    if release is not None:
        releases.record_release(conn, tenant_id, release, decision_id, actor, now)
    append_events(conn, cursor, batch.events)
    return decision_id
