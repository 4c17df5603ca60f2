"""Shared by the intake integration and e2e tests: provisioned catalogs, principals, fakes and table counts."""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import COLLECTOR_SCOPES
from prw_platform.contracts import ResolutionJob
from prw_platform.db.database import Database
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec, provision_catalog

CATALOG = "cat_primary"
SOURCE = "src_lumen_web"
UNGRANTED_SOURCE = "src_halden_us"
OTHER_TENANT_SOURCE = "src_other_shop"
WORKER = "cw_lumen_browser"
INSTANCE = "ci_lumen_fra_01"

PAGE = b"<html><head><title>Lumen P5 1TB</title></head><body>GTIN 0840006647829</body></html>"
PAGE_SHA256 = hashlib.sha256(PAGE).hexdigest()

#: Tables a refused request must leave untouched ("Nothing persisted").
INTAKE_TABLES = ("artifact_upload", "artifact", "capture", "capture_artifact", "receipt", "resolution_job")


@dataclass(frozen=True)
class World:
    """Two tenants of one test. Tests of a module share a database, so every test provisions tenants of its
    own and looks only at their rows."""

    tenant: str
    other_tenant: str

    @classmethod
    def fresh(cls) -> World:
        suffix = secrets.token_hex(5)
        return cls(tenant=f"ten_a{suffix}", other_tenant=f"ten_b{suffix}")

    def provision(self, resolver_db: Database, control_db: Database) -> None:
        """The tenant's catalog with a granted and an ungranted source; the other tenant with its own source
        and one with the same id as the tenant's (identical ids in two tenants are two sources)."""
        provision_catalog(
            resolver_db,
            control_db,
            CatalogSpec(
                self.tenant,
                CATALOG,
                "Primary catalog",
                sources=(SourceSpec(SOURCE, "Lumen web shop"), SourceSpec(UNGRANTED_SOURCE, "Halden US")),
            ),
        )
        provision_catalog(
            resolver_db,
            control_db,
            CatalogSpec(
                self.other_tenant,
                CATALOG,
                "Other tenant's catalog",
                sources=(
                    SourceSpec(OTHER_TENANT_SOURCE, "Other shop"),
                    SourceSpec(SOURCE, "Same id, other tenant"),
                ),
            ),
        )

    def principal(
        self,
        *,
        tenant_id: str | None = None,
        instance_id: str = INSTANCE,
        worker_id: str = WORKER,
        client_id: str = "cc_0123456789abcdef",
        sources: frozenset[str] = frozenset({SOURCE}),
        scopes: frozenset[str] = frozenset(COLLECTOR_SCOPES),
    ) -> CollectorPrincipal:
        """An authenticated collector, as the token service would produce it (the core trusts only this)."""
        return CollectorPrincipal(
            client_id=client_id,
            tenant_id=tenant_id or self.tenant,
            catalog_id=CATALOG,
            worker_id=worker_id,
            instance_id=instance_id,
            sources=sources,
            scopes=scopes,
            token_id="tok_test",
            expires_at=datetime.now(UTC) + timedelta(minutes=5),
        )

    def counts(self, owner_db: Database) -> dict[str, int]:
        """Rows per intake table across both tenants of this world."""
        mine, theirs = row_counts(owner_db, self.tenant), row_counts(owner_db, self.other_tenant)
        return {table: mine[table] + theirs[table] for table in INTAKE_TABLES}


@dataclass
class RecordingEnqueuer:
    """A JobEnqueuer that records what it sent, and fails while ``failing`` is set."""

    sent: list[ResolutionJob] = field(default_factory=list)
    failing: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def enqueue(self, job: ResolutionJob) -> None:
        if self.failing:
            raise ConnectionError("resolution queue unreachable")
        with self._lock:
            self.sent.append(job)

    @property
    def job_ids(self) -> list[str]:
        return [job.job_id for job in self.sent]


def row_counts(owner_db: Database, tenant_id: str) -> dict[str, int]:
    """Rows per intake table of one tenant, read as the owner."""
    counts: dict[str, int] = {}
    with owner_db.transaction(read_only=True) as conn:
        for table in INTAKE_TABLES:
            row = conn.execute(
                f"SELECT count(*) AS n FROM resolver.{table} WHERE tenant_id = %s",  # noqa: S608
                (tenant_id,),
            ).fetchone()
            assert row is not None
            counts[table] = int(str(row["n"]))
    return counts


def job_rows(owner_db: Database, tenant_id: str) -> list[dict[str, object]]:
    with owner_db.transaction(read_only=True) as conn:
        return conn.execute(
            """SELECT job_id, status, enqueued_at, message FROM resolver.resolution_job WHERE tenant_id = %s
               ORDER BY job_id""",
            (tenant_id,),
        ).fetchall()
