"""``Platform``: both sides joined, with the services that need both: catalog provisioning, epoch fencing, the
product's progress reported in process to the resolver's retention, both sides' dead-letter queues, the matching
bench. Only the composition root joins the sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from prw_platform.composition.curation import CurationServices
from prw_platform.composition.product import ProductServices
from prw_platform.contracts import StreamKey
from prw_platform.fencing import EpochFencing
from prw_platform.product.gaps import HttpExportSource
from prw_platform.product.retention_report import ProgressReporter, ProgressSink
from prw_platform.provisioning import CatalogProvisioning
from prw_platform.queues import (
    ACCEPTED_CHANGES,
    CATALOG_FILE_CLEANUP,
    RESOLUTION_REPLAYS,
    RESOLUTION_STAGE_QUEUES,
)
from prw_platform.queues.operations import DeadLetterOperations
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.resolution.matching import EvaluationSources, MatchingBench
from prw_platform.resolver.stream.retention import RetentionControl
from prw_platform.runtime.stages import StageRegistry


@dataclass(frozen=True, slots=True)
class _InProcessProgressSink:
    """The product's ``ProgressSink`` bound to the resolver's retention service in the same process."""

    retention: RetentionControl

    def report_progress(self, stream: StreamKey, consumer: str, position: int) -> int:
        return self.retention.report_progress(stream, consumer, position).acknowledged_position


@dataclass
class Platform(CurationServices, ProductServices):
    """Every long-lived service of one process. Close it (or use it as a context manager) to release pools."""

    #: Every background path of the platform (``prw_platform.pipeline``, registered by ``bootstrap``), run by
    #: ``prw_platform.runtime``.
    stages: StageRegistry[Platform] = field(default_factory=StageRegistry)

    @cached_property
    def catalogs(self) -> CatalogProvisioning:
        """Tenants, catalogs, sources and their streams on both sides (an operator action)."""
        return CatalogProvisioning(self.resolver_db, self.control_db, self.product_db, clock=self.clock)

    @cached_property
    def epoch_fencing(self) -> EpochFencing:
        """Fence restored history (``prw epoch fence``, the Dagster ``epoch_fence`` job)."""
        return EpochFencing(
            self.resolver_db, self.control_db, self.product_db, self.product_rebuild, clock=self.clock
        )

    @cached_property
    def progress_reporter(self) -> ProgressReporter:
        """The live consumer's durable progress to resolver retention control, after its commit: over HTTP as
        the product principal when an export URL is configured, else in process (one deployment, one database)."""
        return ProgressReporter(self.operator_db, self.product_db, sink_factory=lambda: self._progress_sink())

    def _progress_sink(self) -> ProgressSink:
        source = self.export_source
        if isinstance(source, HttpExportSource):
            return source
        return _InProcessProgressSink(self.retention)

    @cached_property
    def dead_letters(self) -> DeadLetterOperations:
        """The dead-letter queues an operator looks at and re-drives, each through its consumer's end."""
        return DeadLetterOperations(
            {
                **{RESOLUTION_STAGE_QUEUES[s].name: q for s, q in self.resolution_stage_queues.items()},
                RESOLUTION_REPLAYS.name: self.replay_queue,
                ACCEPTED_CHANGES.name: self.accepted_changes_in,
                CATALOG_FILE_CLEANUP.name: self.files_cleanup.queue,
            },
            not_redriven={
                CATALOG_FILE_CLEANUP.name: "a dead-lettered cleanup is a failed file: retry it with POST"
                " /v1/files/{file_id}/retry (docs/operators/files.md), then discard the entry",
                ACCEPTED_CHANGES.name: "the relay alone sends accepted changes, and gap closure re-fetches a"
                " dead-lettered position from the export stream (docs/operators/gaps.md); discard the entry",
            },
        )

    def matching_bench(self, tenant_id: str, catalog_id: str) -> MatchingBench:
        """``prw eval matching``: a catalog of its own for one benchmark run, provisioned here (safe to repeat)."""
        own = EvaluationSources.of(catalog_id)
        sources = (
            SourceSpec(own.catalog, "evaluation catalog"),
            SourceSpec(own.listings, "evaluation listings"),
        )
        self.catalogs.provision(
            CatalogSpec(tenant_id, catalog_id, f"matching evaluation {catalog_id}", sources=sources)
        )
        return MatchingBench(
            self.resolver_db,
            self.decisions,
            self.streams,
            self.registry,
            tenant_id=tenant_id,
            catalog_id=catalog_id,
        )
