"""One decision's unit of work (AW-01): every decision path (rules, reviewers, releases, retirements, release
policies, merchants, pictures and classes) writes through a ``DecisionWriter`` in the caller's transaction.

A writer exists only once the stream cursor is locked, before anything exported changes; ``write`` inserts the
immutable decision (INV-05), applies its facts, records the release it authorizes and appends its events at the
consecutive positions after the cursor (INV-03). A rollback consumes no position.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from prw_platform.clock import Clock
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection
from prw_platform.resolver import catalogs
from prw_platform.resolver.decisions import releases
from prw_platform.resolver.decisions.events import EventBatch
from prw_platform.resolver.decisions.records import DecisionRecord, insert_decision, new_decision_id
from prw_platform.resolver.stream.cursor import LockedCursor, append_events, lock_cursor

#: (tenant_id, catalog_id) -> the stream decisions write to now (the catalog at its current history epoch).
StreamLocator = Callable[[str, str], StreamKey]


class DecisionWriter:
    """AW-01 for one decision under the locked cursor, in a transaction that set ``app.tenant_id`` to the
    stream's tenant. ``decision_id`` and ``now`` are the decision's from the start, so a plan can name them."""

    def __init__(self, conn: Connection, cursor: LockedCursor, now: datetime) -> None:
        if now.tzinfo is None:
            raise ValueError("the clock must return timezone-aware datetimes")
        self.conn = conn
        self.cursor = cursor
        self.now = now
        self.decision_id = new_decision_id()

    @classmethod
    def lock(cls, conn: Connection, stream: StreamKey, clock: Clock) -> DecisionWriter:
        """AW-01: lock the stream cursor BEFORE changing exported state; a second writer waits here."""
        return cls(conn, lock_cursor(conn, stream), clock())

    @property
    def stream(self) -> StreamKey:
        return self.cursor.stream

    def publishes_automatically(self, policy: catalogs.ReleasePolicy | None = None) -> bool:
        """docs/events.md: a catalog with the automatic release policy publishes what a decision changed in the
        decision's transaction. ``policy`` when the caller read it already."""
        stream = self.stream
        if policy is None:
            policy = catalogs.release_policy(self.conn, stream.tenant_id, stream.catalog_id)
        return policy == releases.AUTOMATIC

    def release(self, **published: Any) -> releases.Release:
        """The catalog's next publication of ``published`` (``Release``'s fact fields)."""
        tenant, catalog = self.stream.tenant_id, self.stream.catalog_id
        return releases.Release(
            catalog, releases.next_publication_revision(self.conn, tenant, catalog), **published
        )

    def write(
        self,
        action: str,
        actor: str,
        rationale: str,
        details: dict[str, Any],
        *,
        events: Callable[[EventBatch], None] = lambda batch: None,
        facts: Callable[[], object] = lambda: None,
        release: releases.Release | None = None,
        evidence: tuple[str, ...] = (),
        observed_at: datetime | None = None,
        prior_decisions: tuple[str, ...] = (),
        case_id: str | None = None,
        case_revision: int | None = None,
        item_id: str | None = None,
        listing_id: str | None = None,
        idempotency_key: str | None = None,
        request_sha256: str | None = None,
    ) -> DecisionRecord:
        """Insert the decision, apply ``facts`` (which write each changed fact at revision + 1), record
        ``release`` and append the events: those ``events`` adds, then ``release.authorized``."""
        batch = EventBatch(
            self.stream, self.cursor.committed_position, self.decision_id, self.now, evidence, observed_at
        )
        events(batch)
        if release is not None:
            batch.release_authorized(release)
        record = DecisionRecord(
            decision_id=self.decision_id,
            stream=self.stream,
            action=action,
            actor=actor,
            rationale=rationale,
            case_id=case_id,
            case_revision=case_revision,
            evidence=evidence,
            prior_decisions=prior_decisions,
            details=details,
            events=batch.refs(),
            item_id=item_id,
            listing_id=listing_id,
            idempotency_key=idempotency_key,
            request_sha256=request_sha256,
            created_at=self.now,
        )
        insert_decision(self.conn, record)
        facts()
        if release is not None:
            releases.record_release(
                self.conn, self.stream.tenant_id, release, self.decision_id, actor, self.now
            )
        append_events(self.conn, self.cursor, batch.events)
        return record
