"""Pydantic models of the queue messages; ``to_message()`` output is validated against ``schemas/``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from prw_platform.contracts.schemas import (
    ACCEPTED_CHANGE_SCHEMA,
    RESOLUTION_JOB_SCHEMA,
    RESOLUTION_REPLAY_SCHEMA,
    validate,
)
from prw_platform.contracts.vocabulary import VOCABULARY
from prw_platform.contracts.vocabulary import AggregateRevision as AggregateRevision

ACCEPTED_CHANGE_SCHEMA_VERSION: Final = "accepted-change/1"
RESOLUTION_JOB_SCHEMA_VERSION: Final = "resolution.job/1"
RESOLUTION_REPLAY_SCHEMA_VERSION: Final = "resolution.replay/1"
#: At run time a message is checked against the schema WITHOUT its type → payload union (``allOf``); the payload
#: is checked by the model of its type (``EventType.parse``), which that union is generated from: the same
#: contract, without jsonschema walking every payload on the decision (AW-01) and the apply (AW-04) path, where
#: it cost more than the rest of the parse (bench/README.md). Tests validate against the whole schema.
PAYLOAD_UNION: Final = frozenset({"allOf"})


class _Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AcceptedChange(_Message):
    """product.accepted-change.v1 (if_accepted_change). ``sequence`` is the committed outbox position."""

    event_id: str
    tenant_id: str
    catalog_id: str
    history_epoch: str
    sequence: int = Field(ge=1)
    type: str
    schema_version: Literal["accepted-change/1"] = ACCEPTED_CHANGE_SCHEMA_VERSION
    aggregate: AggregateRevision
    dependencies: tuple[AggregateRevision, ...] = ()
    decision_id: str | None = None
    evidence: tuple[str, ...] = ()
    observed_at: datetime | None = None
    accepted_at: datetime
    published_at: datetime | None = None
    #: The payload's wire document. The envelope stays type-agnostic so that a consumer can read the event id and
    #: position of a type it does not know (UNSUPPORTED_EVENT_TYPE, not SCHEMA_INVALID) and re-read a parked
    #: message; ``VOCABULARY[type].document(...)`` writes it from a payload model, ``.parse(...)`` reads it back.
    payload: dict[str, Any]

    def to_message(self) -> dict[str, Any]:
        """The queue message, checked against product.accepted-change.v1: the envelope by the schema, the payload
        of a vocabulary type by its model (``PAYLOAD_UNION``). Raises ``SchemaViolation``."""
        message = self.model_dump(mode="json")
        validate(ACCEPTED_CHANGE_SCHEMA, message, without=PAYLOAD_UNION)
        event_type = VOCABULARY.get(self.type)
        if event_type is not None:
            event_type.parse(self.aggregate, message["payload"])
        return message

    @classmethod
    def from_message(cls, message: object) -> AcceptedChange:
        """The envelope of a queue message; its payload is parsed by ``VOCABULARY[type].parse`` (the product does),
        so an unknown type is still an envelope (UNSUPPORTED_EVENT_TYPE), not a malformed message."""
        validate(ACCEPTED_CHANGE_SCHEMA, message, without=PAYLOAD_UNION)
        return cls.model_validate(message)


class ArtifactRef(_Message):
    artifact_id: str
    ref: str
    sha256: str
    media_type: str
    bytes: int = Field(ge=0)


class JobPins(_Message):
    adapter: str | None = None
    profile: str | None = None


class ResolutionJob(_Message):
    """resolution.job.v1 (if_resolution_job). ``job_id = capture_id:stage:attempt_group``."""

    schema_version: Literal["resolution.job/1"] = RESOLUTION_JOB_SCHEMA_VERSION
    job_id: str
    stage: Literal["extract", "normalize", "identity"]
    tenant_id: str
    catalog_id: str
    capture_id: str
    receipt_id: str
    source_id: str
    artifacts: tuple[ArtifactRef, ...]
    pins: JobPins | None = None
    enqueued_at: datetime
    attempt_group: int = Field(ge=1, default=1)
    trace_id: str | None = None
    history_epoch: str

    @staticmethod
    def make_job_id(capture_id: str, stage: str, attempt_group: int) -> str:
        return f"{capture_id}:{stage}:{attempt_group}"

    def to_message(self) -> dict[str, Any]:
        message = self.model_dump(mode="json", exclude_none=True)
        message["pins"] = message.get("pins")
        validate(RESOLUTION_JOB_SCHEMA, message)
        return message

    @classmethod
    def from_message(cls, message: object) -> ResolutionJob:
        validate(RESOLUTION_JOB_SCHEMA, message)
        return cls.model_validate(message)


class ReplayPins(_Message):
    """What a replay pins (if_replay_job): the adapter and profile versions, the identity rules' generation and the
    attribute definition versions."""

    adapter: str | None = None
    profile: str | None = None
    identity_generation: int | None = Field(default=None, ge=1)
    definition_versions: dict[str, int] | None = None


class ResolutionReplay(_Message):
    """resolution.replay.v1 (if_replay_job). ``job_id = replay_id:capture_id``."""

    schema_version: Literal["resolution.replay/1"] = RESOLUTION_REPLAY_SCHEMA_VERSION
    job_id: str
    replay_id: str
    improvement_id: str
    tenant_id: str
    catalog_id: str
    capture_id: str
    artifacts: tuple[ArtifactRef, ...]
    pins: ReplayPins
    mode: Literal["dry_run", "apply"]
    preserve_observed_at: Literal[True] = True
    requested_by: str
    enqueued_at: datetime
    history_epoch: str

    @staticmethod
    def make_job_id(replay_id: str, capture_id: str) -> str:
        return f"{replay_id}:{capture_id}"

    def to_message(self) -> dict[str, Any]:
        message = self.model_dump(mode="json", exclude_none=True)
        validate(RESOLUTION_REPLAY_SCHEMA, message)
        return message

    @classmethod
    def from_message(cls, message: object) -> ResolutionReplay:
        validate(RESOLUTION_REPLAY_SCHEMA, message)
        return cls.model_validate(message)
