"""Bodies of the improvement routes: create, read, approve, abandon."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prw_api.ids import CatalogId, SourceId
from prw_platform.inputs import check_representable
from prw_platform.services import ImprovementDraft, ImprovementRecord, ReplayView, Selection

ImprovementStatus = Literal["draft", "reviewer_approved", "applied", "abandoned"]
_ADAPTER_PIN = r"^pa_[a-z0-9_]{1,100}@[0-9]+\.[0-9]+\.[0-9]+$"
_PROFILE_PIN = r"^np_[a-z0-9_]{1,100}@[0-9]+$"


class SelectionBody(BaseModel):
    """Which stored captures to re-resolve; every given criterion must hold, and at least one must be given."""

    model_config = ConfigDict(extra="forbid")

    source_id: SourceId | None = None
    adapter: str | None = Field(
        default=None, pattern=_ADAPTER_PIN, description="the adapter pin that extracted them"
    )
    observed_from: datetime | None = None
    observed_to: datetime | None = Field(default=None, description="exclusive")
    review_case_kind: str | None = Field(default=None, pattern=r"^[a-z_]{1,60}$")
    capture_ids: list[str] | None = Field(default=None, min_length=1, max_length=1000)

    @model_validator(mode="after")
    def _something(self) -> SelectionBody:
        if all(getattr(self, name) is None for name in type(self).model_fields):
            raise ValueError("a selection needs at least one criterion")
        for when in (self.observed_from, self.observed_to):
            if when is not None and when.tzinfo is None:
                raise ValueError("observed_from and observed_to need a time zone offset")
            if when is not None:
                check_representable(when)  # as intake's moments: within years 1 to 9999 in UTC
        if self.observed_from and self.observed_to and self.observed_from >= self.observed_to:
            raise ValueError("observed_from must be before observed_to")
        return self

    def selection(self) -> Selection:
        return Selection(
            source_id=self.source_id,
            adapter=self.adapter,
            observed_from=self.observed_from,
            observed_to=self.observed_to,
            review_case_kind=self.review_case_kind,
            capture_ids=tuple(self.capture_ids) if self.capture_ids is not None else None,
        )


class ImprovementRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog_id: CatalogId
    adapter_version: str | None = Field(default=None, pattern=_ADAPTER_PIN)
    profile_version: str | None = Field(default=None, pattern=_PROFILE_PIN)
    definition_version: str | None = Field(default=None, min_length=1, max_length=200)
    #: A calibrated identity generation of the catalog (``prw identity calibrate``); 1 is the shipped rules.
    identity_generation: int | None = Field(default=None, ge=1, le=2_147_483_647)
    selection: SelectionBody
    rationale: str = Field(min_length=1, max_length=4000)

    @model_validator(mode="after")
    def _pins(self) -> ImprovementRequest:
        pins = (self.adapter_version, self.profile_version, self.definition_version, self.identity_generation)
        if all(pin is None for pin in pins):
            raise ValueError(
                "an improvement pins at least one of adapter_version, profile_version, definition_version,"
                " identity_generation"
            )
        return self

    def draft(self) -> ImprovementDraft:
        return ImprovementDraft(
            catalog_id=self.catalog_id,
            selection=self.selection.selection(),
            rationale=self.rationale,
            adapter_version=self.adapter_version,
            profile_version=self.profile_version,
            definition_version=self.definition_version,
            identity_generation=self.identity_generation,
        )


class TransitionRequest(BaseModel):
    """approve / abandon: why (recorded with the transition)."""

    model_config = ConfigDict(extra="forbid")

    rationale: str = Field(min_length=1, max_length=4000)


class TransitionView(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    from_status: ImprovementStatus | None
    to_status: ImprovementStatus
    actor: str
    rationale: str
    at: datetime


class ImprovementDetail(BaseModel):
    improvement_id: str
    catalog_id: str
    status: ImprovementStatus
    adapter_version: str | None
    profile_version: str | None
    definition_version: str | None
    identity_generation: int | None
    selection: dict[str, Any]
    rationale: str
    created_by: str
    created_at: datetime
    #: Stored captures the selection matches now, and the first of them.
    captures: int
    sample_capture_ids: list[str]
    transitions: list[TransitionView]
    #: Its replays, oldest first.
    replays: list[ReplaySummary] = Field(default_factory=list)

    @classmethod
    def of(cls, record: ImprovementRecord, replays: list[Any] | None = None) -> ImprovementDetail:
        i = record.improvement
        return cls(
            improvement_id=i.improvement_id,
            catalog_id=i.catalog_id,
            status=i.status,
            adapter_version=i.adapter_version,
            profile_version=i.profile_version,
            definition_version=i.definition_version,
            identity_generation=i.identity_generation,
            selection=i.selection,
            rationale=i.rationale,
            created_by=i.created_by,
            created_at=i.created_at,
            captures=record.captures,
            sample_capture_ids=list(record.sample),
            transitions=[TransitionView.model_validate(t) for t in record.transitions],
            replays=[ReplaySummary.model_validate(r) for r in replays or []],
        )


# -- replays (if_replay_job) --------------------------------------------------------------------------------------
class ReplayRequest(BaseModel):
    """``mode``: ``dry_run`` (the default: writes the diff and nothing else) or ``apply``."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["dry_run", "apply"] = "dry_run"


class ReplaySummary(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    replay_id: str
    improvement_id: str
    mode: Literal["dry_run", "apply"]
    status: Literal["queued", "completed"]
    pins: dict[str, Any]
    captures: int
    enqueued: int
    settled: int
    changed: int
    failed: int
    preserves_observed_at: Literal[True] = True
    requested_by: str
    created_at: datetime
    completed_at: datetime | None


class ReplayCaptureView(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    capture_id: str
    status: Literal["diffed", "failed"]
    outcome_changed: bool
    diff: dict[str, Any] | None
    error: dict[str, Any] | None


class ReplayDetail(ReplaySummary):
    #: Captures whose claims, attributes, stage outcome or identity outcome change, new review cases, errors.
    summary: dict[str, int]
    #: The first changed or failed captures with their diff.
    changed_captures: list[ReplayCaptureView]

    @classmethod
    def of_view(cls, view: ReplayView) -> ReplayDetail:
        base = ReplaySummary.model_validate(view.replay).model_dump()
        return cls(
            **base,
            summary=view.summary,
            changed_captures=[ReplayCaptureView.model_validate(c) for c in view.changed],
        )
