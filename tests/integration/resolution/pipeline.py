"""Builders for the resolution consumer tests: a collector that submits real pages through intake (AW-02), the
resolution queue, and readers of what the consumer wrote."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import COLLECTOR_SCOPES
from prw_platform.contracts import AcceptedChange, ResolutionJob, validate
from prw_platform.db.database import Database
from prw_platform.queues import PostgresQueue
from prw_platform.resolver.intake import (
    ArtifactSelector,
    CaptureSubmission,
    IntakeService,
    UploadDeclaration,
)
from prw_platform.resolver.resolution import (
    STAGE_COMPLETED,
    BatchReport,
    ResolutionServices,
    process_resolution_jobs,
)

#: Real pages shared with the adapter's own tests (licences and provenance in that folder's PROVENANCE.md).
PAGES = Path(__file__).resolve().parents[3] / "plugins/adapters/prw-adapter-schemaorg/tests/fixtures"
ANVIL_MICRODATA = "extruct_samples/misc_product_microdata.html"
ANVIL_SCHEMA_ORG = "extruct_samples/schema.org_product.html"
JACKET_GTIN = "schemaorg_examples/eg-464.jsonld.html"
RACING_BIKE = "schemaorg_examples/eg-0029.jsonld.html"

TENANT = "ten_primary"
OTHER_TENANT = "ten_other"
CATALOG = "cat_primary"
SECOND_CATALOG = "cat_second"
SOURCE = "src_lumen_web"
SECOND_SOURCE = "src_bazaar"
T0 = datetime(2026, 10, 10, 3, 30, tzinfo=UTC)

ACCEPTED_CHANGE = "product.accepted-change.v1.json"
RESOLUTION_JOB = "resolution.job.v1.json"


def _handed_on(outcome: Any) -> bool:
    return outcome.status == STAGE_COMPLETED and outcome.next_job_id is not None


def page(name: str) -> bytes:
    return (PAGES / name).read_bytes()


@dataclass
class Collector:
    """A collector of ``TENANT`` that uploads bytes and submits captures through the intake service."""

    intake: IntakeService
    catalog_id: str = CATALOG
    _keys: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def principal(self) -> CollectorPrincipal:
        return CollectorPrincipal(
            client_id="cc_0123456789abcdef",
            tenant_id=TENANT,
            catalog_id=self.catalog_id,
            worker_id="cw_resolution_test",
            instance_id="ci_resolution_test",
            sources=frozenset({SOURCE, SECOND_SOURCE}),
            scopes=frozenset(COLLECTOR_SCOPES),
            token_id="tok_test",
            expires_at=datetime.now(UTC) + timedelta(minutes=5),
        )

    def submit(
        self,
        data: bytes,
        *,
        record: str,
        media_type: str = "text/html",
        source_id: str = SOURCE,
        adapter_hint: str | None = None,
    ) -> str:
        """Upload ``data`` and submit a capture of it; returns the capture id (its job is on the queue)."""
        principal = self.principal
        sha256 = hashlib.sha256(data).hexdigest()
        declared = self.intake.declare_upload(
            principal,
            UploadDeclaration(sha256=sha256, size=len(data), media_type=media_type, source_id=source_id),
        )
        if declared.upload_id is not None:
            upload = self.intake.open_upload(principal, declared.upload_id)
            body = self.intake.upload_body(upload, len(data))
            body.feed(data)
            self.intake.complete_upload(principal, upload, body)
        n = next(self._keys)
        submitted = self.intake.submit_capture(
            principal,
            f"cw_resolution_test:{record}:{n}",
            CaptureSubmission(
                schema_version="capture/1",
                source_id=source_id,
                native_record_id=record,
                url=f"https://{source_id.replace('_', '-')}.example/p/{record}",
                observed_at=T0 + timedelta(minutes=n),
                artifacts=(ArtifactSelector(sha256=sha256),),
                adapter_hint=adapter_hint,
            ),
        )
        assert submitted.enqueued is True
        return submitted.receipt.capture_id


STAGES = ("extract", "normalize", "identity")


@dataclass
class Resolution:
    """The resolution queues (``queue``: the extract stage's), the consumer's services and readers of the rows it
    writes (as the owner)."""

    queue: PostgresQueue
    services: ResolutionServices
    owner_db: Database
    stage_queues: dict[str, PostgresQueue]

    def run(self, services: ResolutionServices | None = None, **kwargs: Any) -> BatchReport:
        """One batch of each stage in order (extract, normalize, identity): what ended in this call. A stage that
        completed and handed on is left out (its next stage's outcome is in the report instead)."""
        reports = [self.run_stage(stage, services, **kwargs) for stage in STAGES]
        ended = [o for r in reports for o in r.outcomes if not _handed_on(o)]
        handed_on = sum(1 for r in reports for o in r.outcomes if _handed_on(o))
        return BatchReport(
            outcomes=tuple(ended),
            acked=sum(r.acked for r in reports) - handed_on,
            retried=sum(r.retried for r in reports),
            dead_lettered=sum(r.dead_lettered for r in reports),
            unsettled=sum(r.unsettled for r in reports),
        )

    def run_stage(self, stage: str, services: ResolutionServices | None = None, **kwargs: Any) -> BatchReport:
        """One batch of one stage's queue."""
        return process_resolution_jobs(self.stage_queues[stage], services or self.services, **kwargs)

    def replace_queued_jobs(self, *messages: dict[str, Any]) -> None:
        """Take what intake enqueued off the queue and send ``messages`` instead (forged or pinned jobs)."""
        while received := self.queue.receive(10):
            for delivery in received:
                assert self.queue.ack(delivery.handle)
        for message in messages:
            self.queue.send(message, message_id=str(message.get("job_id", "job_without_id")))

    def rows(self, sql: str, *params: object) -> list[dict[str, Any]]:
        with self.owner_db.transaction(read_only=True) as conn:
            return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]

    def one(self, sql: str, *params: object) -> dict[str, Any]:
        rows = self.rows(sql, *params)
        assert len(rows) == 1, rows
        return rows[0]

    def result(self, capture_id: str, attempt_group: int = 1) -> dict[str, Any]:
        """The results of the capture's three stage jobs (migration 0016) as one row: adapter, listing,
        diagnostics from extract; profile and problems from normalize; the error of whichever failed; the
        outcome, decision and identity from identity."""
        rows = {
            r["stage"]: r
            for r in self.rows(
                "SELECT * FROM resolver.resolution_result WHERE capture_id = %s AND job_id LIKE %s",
                capture_id,
                f"%:{attempt_group}",
            )
        }
        extract, normalize, identity = rows["extract"], rows["normalize"], rows["identity"]
        return {
            **{k: extract[k] for k in ("adapter", "adapter_rule", "listing", "diagnostics")},
            **{k: normalize[k] for k in ("profile", "profile_rule", "problems")},
            **{k: identity[k] for k in ("stage_outcome", "decision_id", "identity")},
            "error": extract["error"] or normalize["error"],
        }

    def count(self, table: str) -> int:
        return int(self.one(f"SELECT count(*) AS n FROM {table}")["n"])  # noqa: S608

    def job_message(self, capture_id: str, stage: str = "extract", attempt_group: int = 1) -> dict[str, Any]:
        """The job intake committed with the capture (resolver.resolution_job.message), or a later stage's."""
        message: dict[str, Any] = self.one(
            """SELECT message FROM resolver.resolution_job
               WHERE capture_id = %s AND stage = %s AND attempt_group = %s""",
            capture_id,
            stage,
            attempt_group,
        )["message"]
        return message

    def job_status(self, job_id: str) -> str:
        return str(self.one("SELECT status FROM resolver.resolution_job WHERE job_id = %s", job_id)["status"])

    def decisions(self) -> list[dict[str, Any]]:
        return self.rows("SELECT * FROM resolver.decision ORDER BY created_at, decision_id")

    def dead_letters(self) -> list[dict[str, Any]]:
        return self.rows("SELECT message_key, reason, detail FROM queue.dead_letter ORDER BY id")

    def assert_contracts_hold(self) -> None:
        """Every job message (queued or stored) validates against resolution.job.v1 and every event written
        against product.accepted-change.v1, at consecutive positions from 1 (INV-03)."""
        for row in self.rows("SELECT message FROM resolver.resolution_job"):
            validate(RESOLUTION_JOB, row["message"])
            ResolutionJob.from_message(row["message"])
        for row in self.rows(
            "SELECT body FROM queue.message WHERE queue_name IN ('resolution-jobs', 'resolution-normalize',"
            " 'resolution-identity')"
        ):
            validate(RESOLUTION_JOB, row["body"])
        streams: dict[tuple[str, str, str], list[int]] = {}
        for row in self.rows(
            """SELECT tenant_id, catalog_id, history_epoch, position, body FROM resolver.outbox
               ORDER BY tenant_id, catalog_id, history_epoch, position"""
        ):
            validate(ACCEPTED_CHANGE, row["body"])
            assert AcceptedChange.from_message(row["body"]).sequence == row["position"]
            streams.setdefault((row["tenant_id"], row["catalog_id"], row["history_epoch"]), []).append(
                row["position"]
            )
        for positions in streams.values():
            assert positions == list(range(1, len(positions) + 1))
