"""What the admin origin reads for operators (if_admin_read, if_receipt_get's operator side), filtered to the
operator's active tenant (INV-06): the collector fleet, receipts, improvements and resolution dry runs.
Decisions are read through ``DecisionService.decision``. Built by the composition root (``Platform.admin_reads``).
"""

from __future__ import annotations

from prw_platform.db.database import Database
from prw_platform.reports import OperatorReports
from prw_platform.resolver.improvements import ImprovementPage, list_improvements
from prw_platform.resolver.improvements.store import ImprovementStatus
from prw_platform.resolver.intake.fleet import CollectorStatus
from prw_platform.resolver.intake.receipts import TenantReceipt
from prw_platform.resolver.resolution.dry_run import DryRun, DryRunRequest, DryRunService


class AdminReads:
    def __init__(self, reports: OperatorReports, resolver_db: Database, dry_runs: DryRunService) -> None:
        self._reports = reports
        self._resolver = resolver_db
        self._dry_runs = dry_runs

    def workers(self, tenant_id: str) -> list[CollectorStatus]:
        """The tenant's collector instances with their lease state, last heartbeat and last run report."""
        return self._reports.collector_fleet(tenant_id)

    def receipt(self, tenant_id: str, receipt_id: str) -> TenantReceipt:
        """Any receipt of the tenant; NOT_FOUND, or TENANT_SCOPE_DENIED for another tenant's."""
        return self._reports.receipt(receipt_id, tenant_id)

    def improvements(
        self, tenant_id: str, *, limit: int, after: str | None = None, status: ImprovementStatus | None = None
    ) -> ImprovementPage:
        return self._resolver.run(
            lambda conn: list_improvements(conn, tenant_id, limit=limit, after=after, status=status),
            tenant_id=tenant_id,
            read_only=True,
        )

    def dry_run(self, tenant_id: str, request: DryRunRequest) -> DryRun:
        """Re-resolve a stored capture of the tenant without writing anything (``writes: 0``)."""
        return self._dry_runs.run(tenant_id, request)
