"""Bodies of the admin origin's release and read routes (if_admin_read)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from prw_api.ids import CatalogId
from prw_platform.services import (
    AUTO,
    CollectorStatus,
    DecisionDetail,
    DecisionEvent,
    ImprovementStatus,
    ReleaseAuthorized,
    ReleasePolicyChange,
)

_ADAPTER = rf"^({AUTO}|pa_[a-z0-9_]{{1,100}}@[0-9]+\.[0-9]+\.[0-9]+)$"


# -- Releases. --------------------------------------------------------------------------------------------------
class ReleaseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog_id: CatalogId
    #: Recorded on the release's decision; a default says it was a manual release.
    rationale: str = Field(default="manual release of the accepted state", min_length=1, max_length=4000)


class ReleaseCreated(BaseModel):
    """A release authorization: accepted by the resolver; the product service publishes it once it applied
    the ``release.authorized`` event and everything it depends on."""

    decision_id: str
    catalog_id: str
    release_id: str
    publication_revision: int
    #: How many item revisions and listing assignments it publishes.
    items: int
    listings: int
    #: The outbox event ids the release committed (one ``release.authorized``).
    outbox: list[str]
    created_at: datetime

    @classmethod
    def of(cls, release: ReleaseAuthorized) -> ReleaseCreated:
        return cls(
            decision_id=release.decision_id,
            catalog_id=release.catalog_id,
            release_id=release.release_id,
            publication_revision=release.publication_revision,
            items=release.items,
            listings=release.listings,
            outbox=[event.event_id for event in release.events],
            created_at=release.created_at,
        )


class ReleasePolicyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    release_policy: Literal["manual", "automatic"]
    rationale: str = Field(min_length=1, max_length=4000)


class ReleasePolicyState(BaseModel):
    catalog_id: str
    release_policy: Literal["manual", "automatic"]
    previous: Literal["manual", "automatic"]
    #: False when the catalog already had this policy: nothing was recorded.
    changed: bool
    #: The decision that recorded the switch (null when unchanged).
    decision_id: str | None

    @classmethod
    def of(cls, change: ReleasePolicyChange) -> ReleasePolicyState:
        return cls(
            catalog_id=change.catalog_id,
            release_policy=change.policy,
            previous=change.previous,
            changed=change.changed,
            decision_id=change.decision_id,
        )


# -- GET /v1/decisions/{id}. ------------------------------------------------------------------------------------
class Provenance(BaseModel):
    actor: str
    rationale: str
    #: Capture or artifact ids the decision relied on.
    evidence: list[str]
    #: The decisions this one builds on (the case's opening decision, the mapping it replaced, ...).
    prior_decisions: list[str]


class DecisionFact(BaseModel):
    """One aggregate revision the decision wrote, with its accepted state (null once retention pruned the
    event that carries it)."""

    aggregate_type: str
    aggregate_id: str
    revision: int
    state: dict[str, Any] | None


class OutboxEvent(BaseModel):
    event_id: str
    position: int
    type: str
    dependencies: list[dict[str, Any]]
    published_at: datetime | None
    #: Retention pruned it after every consumer acknowledged it.
    pruned: bool


class DecisionView(BaseModel):
    decision_id: str
    catalog_id: str
    history_epoch: str
    action: str
    case_id: str | None
    case_revision: int | None
    item_id: str | None
    listing_id: str | None
    details: dict[str, Any]
    created_at: datetime
    provenance: Provenance
    facts: list[DecisionFact]
    outbox: list[OutboxEvent]

    @classmethod
    def of(cls, detail: DecisionDetail) -> DecisionView:
        record = detail.record
        return cls(
            decision_id=record.decision_id,
            catalog_id=record.stream.catalog_id,
            history_epoch=record.stream.history_epoch,
            action=record.action,
            case_id=record.case_id,
            case_revision=record.case_revision,
            item_id=record.item_id,
            listing_id=record.listing_id,
            details=record.details,
            created_at=record.created_at,
            provenance=Provenance(
                actor=record.actor,
                rationale=record.rationale,
                evidence=list(record.evidence),
                prior_decisions=list(record.prior_decisions),
            ),
            facts=[_fact(event) for event in detail.events],
            outbox=[_outbox(event) for event in detail.events],
        )


def _fact(event: DecisionEvent) -> DecisionFact:
    ref = event.ref
    return DecisionFact(
        aggregate_type=ref.aggregate_type,
        aggregate_id=ref.aggregate_id,
        revision=ref.revision,
        state=event.state,
    )


def _outbox(event: DecisionEvent) -> OutboxEvent:
    ref = event.ref
    return OutboxEvent(
        event_id=ref.event_id,
        position=ref.position,
        type=ref.type,
        dependencies=list(event.dependencies),
        published_at=event.published_at,
        pruned=event.pruned,
    )


# -- GET /v1/workers. -------------------------------------------------------------------------------------------
class RunReportView(BaseModel):
    at: datetime
    outcome: str | None
    pages_fetched: int | None
    captures_submitted: int | None
    failures: dict[str, int] | None
    error_code: str | None


class WorkerView(BaseModel):
    instance_id: str
    worker_id: str
    catalog_id: str
    #: The sources it registered for.
    sources: list[str]
    capabilities: list[str]
    version: str | None
    runtime: str | None
    #: active, silent (the lease lapsed) or failing (consecutive failures above the threshold).
    lease_state: str
    lease_expires_at: datetime
    state_since: datetime | None
    #: Silent or failing longer than the alert threshold while it still has grants.
    overdue: bool
    registered_at: datetime
    last_heartbeat_at: datetime | None
    consecutive_failures: int
    last_success_at: datetime | None
    last_run: RunReportView | None

    @classmethod
    def of(cls, status: CollectorStatus) -> WorkerView:
        row = status.instance
        last_run = (
            RunReportView(
                at=row.last_run_at,
                outcome=row.last_run_outcome,
                pages_fetched=row.last_run_pages_fetched,
                captures_submitted=row.last_run_captures_submitted,
                failures=row.last_run_failures,
                error_code=row.last_run_error_code,
            )
            if row.last_run_at is not None
            else None
        )
        return cls(
            instance_id=row.instance_id,
            worker_id=row.worker_id,
            catalog_id=row.catalog_id,
            sources=list(row.targets),
            capabilities=list(row.capabilities),
            version=row.version,
            runtime=row.runtime,
            lease_state=status.state.value,
            lease_expires_at=row.lease_expires_at,
            state_since=status.state_since,
            overdue=status.overdue,
            registered_at=row.registered_at,
            last_heartbeat_at=row.last_heartbeat_at,
            consecutive_failures=row.consecutive_failures,
            last_success_at=row.last_success_at,
            last_run=last_run,
        )


class WorkerList(BaseModel):
    workers: list[WorkerView]


# -- GET /v1/receipts/{id}. -------------------------------------------------------------------------------------
class OperatorReceipt(BaseModel):
    """if_receipt_get for operators: any receipt of the active tenant. ``accepted`` never means applied."""

    model_config = ConfigDict(from_attributes=True)

    receipt_id: str
    capture_id: str
    status: str
    received_at: datetime
    instance_id: str
    reason: str | None
    status_changed_at: datetime | None


# -- GET /v1/improvements. --------------------------------------------------------------------------------------
class ImprovementView(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    improvement_id: str
    catalog_id: str
    adapter_version: str | None
    profile_version: str | None
    definition_version: str | None
    selection: dict[str, Any]
    status: ImprovementStatus
    created_by: str
    created_at: datetime


class ImprovementList(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    improvements: list[ImprovementView]
    #: Pass as ``after`` for the next page; null on the last page.
    next_cursor: str | None


# -- POST /v1/resolve. ------------------------------------------------------------------------------------------
class ResolveRequest(BaseModel):
    """if_admin_read's dry run. ``dry_run`` must be true: this route never applies anything."""

    model_config = ConfigDict(extra="forbid")

    capture_id: str = Field(pattern=r"^cap_[A-Za-z0-9_]{1,120}$")
    record: str | None = Field(default=None, min_length=1, max_length=500)
    adapter: str = Field(default=AUTO, pattern=_ADAPTER)
    dry_run: Literal[True] = True


class DryRunView(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    dry_run: Literal[True] = True
    capture_id: str
    catalog_id: str
    source_id: str
    record: str | None
    #: The adapter pin that extracted (null: none supports the capture).
    adapter: str | None
    adapter_rule: str | None
    stage_outcome: str
    profile: str | None
    claims: list[dict[str, Any]]
    attributes: list[dict[str, Any]]
    problems: list[dict[str, Any]]
    diagnostics: list[str]
    #: ``would_decide`` (map_listing, create_item_and_map, open_review_case) and the rule's reasons.
    identity: dict[str, Any]
    writes: Literal[0] = 0
