"""Operator reports: the read models behind the Dagster assets and checks, ``prw demo``'s summary and
``prw dev``'s banner, over both sides of the platform.

The one documented exception to "a table is read only through its owner" (docs/architecture.md): these queries
read every tenant's rows through ``prw_operator``, a read-only role, and write nothing. The edges call this
service (``Platform.reports``), never the report modules or a database pool.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Database
from prw_platform.product import reports as product
from prw_platform.product.progress import StreamProgress
from prw_platform.resolver import reports as resolver
from prw_platform.resolver.decisions.duplicates import MAX_PAIRS, DuplicatePair, catalog_duplicates
from prw_platform.resolver.intake import receipts
from prw_platform.resolver.intake.fleet import CollectorStatus, FleetPolicy, fleet_status
from prw_platform.resolver.intake.receipts import TenantReceipt
from prw_platform.resolver.intake.workers import LeaseState
from prw_platform.resolver.reports import (
    CaptureCounts,
    CatalogFileCounts,
    DecisionRow,
    EventRow,
    ReplaySummaryRow,
    ResolutionRow,
    ReviewCaseRow,
    StreamStatus,
)


@dataclass(frozen=True, slots=True)
class StreamGap:
    """One projected stream as gap closure sees it: lag, parked events and how long its first gap has
    been open; ``overdue`` when that is longer than the alert threshold (``PRW_GAP_ALERT_AFTER_SECONDS``)."""

    tenant_id: str
    catalog_id: str
    history_epoch: str
    applied_position: int
    committed_position: int
    lag: int
    parked: int
    gap_age_seconds: float
    overdue: bool


@dataclass(frozen=True, slots=True)
class CatalogDuplicates:
    """One catalog's likely duplicate item pairs, best first."""

    tenant_id: str
    catalog_id: str
    pairs: tuple[DuplicatePair, ...]


@dataclass(frozen=True, slots=True)
class DuplicateReport:
    """The likely duplicate items of every catalog (the ``likely_duplicate_items`` asset)."""

    catalogs: tuple[CatalogDuplicates, ...]

    @property
    def pair_count(self) -> int:
        return sum(len(c.pairs) for c in self.catalogs)

    def top(self, count: int) -> list[tuple[str, DuplicatePair]]:
        """The ``count`` best pairs over every catalog, with their tenant: by score, then catalog and item ids."""
        pairs = [(c.tenant_id, pair) for c in self.catalogs for pair in c.pairs]
        pairs.sort(
            key=lambda t: (-t[1].score, t[0], t[1].catalog_id, t[1].first.item_id, t[1].second.item_id)
        )
        return pairs[:count]


class OperatorReports:
    def __init__(
        self,
        operator_db: Database,
        *,
        clock: Clock = utc_now,
        fleet: FleetPolicy | None = None,
        gap_alert_after: timedelta = timedelta(seconds=600),
        failed_file_alert_after: timedelta = timedelta(days=1),
    ) -> None:
        self._db = operator_db
        self.failed_file_alert_after = failed_file_alert_after
        self._clock = clock
        self.fleet = fleet or FleetPolicy()
        self.gap_alert_after = gap_alert_after

    # The resolver side.
    def capture_counts(self) -> list[CaptureCounts]:
        return resolver.capture_counts(self._db)

    def replay_summaries(self, limit: int = 20) -> list[ReplaySummaryRow]:
        """The newest improvement replays with their diff summaries."""
        return resolver.replay_summaries(self._db, limit)

    def stream_statuses(self) -> list[StreamStatus]:
        """Per stream: committed, published and unpublished positions of the outbox (INV-03)."""
        return resolver.stream_statuses(self._db)

    def listings_with_several_current_mappings(self) -> int:
        return resolver.listings_with_several_current_mappings(self._db)

    def resolution_results(self, tenant_id: str, catalog_id: str) -> list[ResolutionRow]:
        return resolver.resolution_results(self._db, tenant_id, catalog_id)

    def decisions(self, tenant_id: str, catalog_id: str) -> list[DecisionRow]:
        return resolver.decisions(self._db, tenant_id, catalog_id)

    def review_cases(self, tenant_id: str, catalog_id: str) -> list[ReviewCaseRow]:
        return resolver.review_cases(self._db, tenant_id, catalog_id)

    def events(self, tenant_id: str, catalog_id: str) -> list[EventRow]:
        return resolver.events(self._db, tenant_id, catalog_id)

    def receipt(self, receipt_id: str, tenant_id: str | None = None) -> TenantReceipt:
        """One receipt of any tenant (if_receipt_get: "operator dashboard (any receipt in the tenant)"); with
        ``tenant_id``, only that tenant's. NotFound or TenantScopeDenied (``prw_platform.errors.IntakeError``)
        otherwise. Its status is how far resolution got: accepted never means applied."""
        return receipts.operator_receipt(self._db, receipt_id, tenant_id)

    def collector_fleet(self, tenant_id: str | None = None) -> list[CollectorStatus]:
        """Every registered collector instance (of ``tenant_id``, if given) with its lease state (active, silent,
        failing) at the platform clock's now (if_collector_bootstrap, if_heartbeat)."""
        rows = resolver.collector_fleet(self._db, self.fleet.failing_after, tenant_id)
        return fleet_status(rows, self._clock(), self.fleet)

    def catalog_files(self) -> CatalogFileCounts:
        """Seed 004: managed catalog files per state, the oldest due cleanup, the failed ones."""
        return resolver.catalog_file_counts(self._db)

    def failed_file_waited(self) -> timedelta | None:
        """How long the oldest failed file has waited for an operator (None: no failed file)."""
        oldest = self.catalog_files().oldest_failed_at
        return None if oldest is None else self._clock() - oldest

    def likely_duplicates(self, limit_per_catalog: int = MAX_PAIRS) -> DuplicateReport:
        """Each catalog's likely duplicate item pairs (``decisions.duplicates``: a reviewer merges them), for every
        catalog with a stream; reads only."""
        catalogs = sorted({(s.tenant_id, s.catalog_id) for s in self.stream_statuses()})
        return DuplicateReport(
            tuple(
                CatalogDuplicates(
                    tenant_id,
                    catalog_id,
                    tuple(
                        self._db.run(
                            partial(
                                catalog_duplicates,
                                tenant_id=tenant_id,
                                catalog_id=catalog_id,
                                limit=limit_per_catalog,
                            ),
                            read_only=True,
                        )
                    ),
                )
                for tenant_id, catalog_id in catalogs
            )
        )

    # The product side.
    def stream_progress(self) -> list[StreamProgress]:
        """Per projected stream: the contiguous applied position and parked events (AW-04)."""
        return product.all_stream_progress(self._db)

    def public_listings_without_public_owner(self) -> int:
        return product.public_listings_without_public_owner(self._db)

    def public_counts(self) -> dict[str, int]:
        return product.public_counts(self._db)

    # Both.
    def stream_gaps(self) -> list[StreamGap]:
        """Per projected stream: lag behind the committed cursor, parked events, gap age (the ``product_gaps``
        asset check fails on a gap open longer than ``gap_alert_after``)."""
        committed = {
            (s.tenant_id, s.catalog_id, s.history_epoch): s.committed_position for s in self.stream_statuses()
        }
        now = self._clock()
        gaps = []
        for p in self.stream_progress():
            head = committed.get((p.tenant_id, p.catalog_id, p.history_epoch), 0)
            age = p.gap_age_seconds(now)
            gaps.append(
                StreamGap(
                    tenant_id=p.tenant_id,
                    catalog_id=p.catalog_id,
                    history_epoch=p.history_epoch,
                    applied_position=p.applied_position,
                    committed_position=head,
                    lag=p.lag(head),
                    parked=p.parked_count,
                    gap_age_seconds=age,
                    overdue=p.gap_opened_at is not None and age > self.gap_alert_after.total_seconds(),
                )
            )
        return gaps

    def projection_lag(self) -> int:
        """Committed positions not yet applied by the product service, over every projected stream."""
        return sum(gap.lag for gap in self.stream_gaps())


__all__ = [
    "CaptureCounts",
    "CatalogDuplicates",
    "CollectorStatus",
    "DecisionRow",
    "DuplicateReport",
    "EventRow",
    "FleetPolicy",
    "LeaseState",
    "OperatorReports",
    "ResolutionRow",
    "ReviewCaseRow",
    "StreamGap",
    "StreamProgress",
    "StreamStatus",
    "TenantReceipt",
]
