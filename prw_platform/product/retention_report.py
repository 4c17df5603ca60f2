"""The live consumer reports its durable progress to resolver retention control (AW-04, if_accepted_change).

What is reported is ``product.progress``'s contiguous position, read after the apply transaction committed it:
never a delivery, a queue ack or a parked event, so the pruner only ever counts durable progress. The product side
never imports the resolver: the report goes through the ``ProgressSink`` port, which the composition root binds to
``POST /v1/exports/progress`` as the product principal (the client of the export stream, ``gaps.HttpExportSource``)
or, in a single process without an export URL, to the resolver's retention service. A failed report is tried again
next round; meanwhile the resolver holds the older position, which only retains more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Database
from prw_platform.product import progress
from prw_platform.product.gaps import ExportUnavailable
from prw_platform.product.progress import LIVE_CONSUMER, UnreportedProgress

log = logging.getLogger(__name__)


class ProgressSink(Protocol):
    def report_progress(self, stream: StreamKey, consumer: str, position: int) -> int:
        """Report ``consumer``'s durable position of ``stream``; the acknowledged position (which may be higher:
        reports are monotonic). Raises ``ExportUnavailable``."""
        ...


@dataclass(frozen=True, slots=True)
class ReportRound:
    reported: int = 0
    failed: int = 0
    #: Streams whose acknowledged position moved in this round.
    advanced: int = 0


@dataclass
class ProgressReporter:
    """The ``progress`` stage's service: report every stream whose durable contiguous position is above the
    position retention control last acknowledged (``product.progress.reported_position``, read across tenants
    through ``reads``, written through ``writes`` as ``product_app`` after each acknowledgement). The probe is one
    comparison of two columns, the same in every process."""

    reads: Database
    writes: Database
    sink: ProgressSink | None = None
    sink_factory: Callable[[], ProgressSink | None] | None = None

    def _sink(self) -> ProgressSink | None:
        if self.sink is None and self.sink_factory is not None:
            self.sink = self.sink_factory()
            self.sink_factory = None
        return self.sink

    def due(self, limit: int = 1_000) -> list[UnreportedProgress]:
        return progress.unreported(self.reads, limit)

    def has_work(self) -> bool:
        return self._sink() is not None and bool(self.due(1))

    def run_batch(self, max_streams: int = 50) -> ReportRound:
        sink = self._sink()
        if sink is None:
            return ReportRound()
        reported = failed = advanced = 0
        for p in self.due(max_streams):
            key = StreamKey(p.tenant_id, p.catalog_id, p.history_epoch)
            try:
                acknowledged = sink.report_progress(key, LIVE_CONSUMER, p.contiguous_position)
            except ExportUnavailable as unavailable:
                log.warning("progress report of %s failed: %s (%s)", key, unavailable, unavailable.code)
                failed += 1
                continue
            # Only after the acknowledgement: an interrupted report is simply sent again (it only retains more).
            progress.mark_reported(
                self.writes, p.tenant_id, p.catalog_id, p.history_epoch, p.contiguous_position
            )
            reported += 1
            advanced += acknowledged > p.reported_position
        return ReportRound(reported, failed, advanced)
