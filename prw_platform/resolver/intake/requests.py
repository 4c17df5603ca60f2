"""What a collector sends: the upload declaration and the capture submission (documented in docs/collectors.md).

Both refuse unknown fields, so a misspelt attribution field is a 422, not silently ignored. ``tenant_id``,
``catalog_id``, ``worker_id`` and ``instance_id`` are optional and only ever compared with the token
(if_capture_submit: a client-supplied value "is only checked against those grants; it never grants access").

Every refusal here is if_capture_submit's 422 VALIDATION_FAILED, "Nothing persisted": text PostgreSQL cannot
store anywhere in a request (a NUL, a lone surrogate), an ``observed_at`` outside what the platform represents or
in the future beyond the clock-skew tolerance, a ``url`` that is not an absolute http(s) URL as RFC 3986 parses
it, a country that is not an ISO 3166-1 alpha-2 code (``prw_platform.inputs``); ``declare_upload`` refuses a
``media_type`` that is not RFC 9110 syntax.

``schemas/capture.v1.json`` is generated from ``CaptureSubmission`` (``python -m prw_platform.contracts.generate``)
and checked in; tests/unit/contracts keeps the two equal.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from prw_platform.inputs import (
    InvalidInput,
    check_country_code,
    check_http_url,
    check_not_in_future,
    check_representable,
    find_unstorable_text,
)
from prw_platform.resolver.intake.errors import ValidationFailed

CAPTURE_SCHEMA_VERSION = "capture/1"

_SHA256 = r"^[0-9a-f]{64}$"
#: For the JSON Schema only: ``prw_platform.inputs.check_country_code`` validates (and words the error).
COUNTRY_PATTERN = "^[A-Z]{2}$"
_IDENTIFIER = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
# if_capture_submit: Idempotency-Key (worker_id:native_record_id:captured_at): visible ASCII, no spaces.
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _storable_text(cls, data: Any) -> Any:
        # One check for every string of every request, field names included: PostgreSQL text cannot hold it.
        unstorable = find_unstorable_text(data)
        if unstorable is not None:
            raise InvalidInput(str(unstorable))
        return data


class AttributedRequest(_Request):
    tenant_id: str | None = Field(default=None, max_length=64)
    catalog_id: str | None = Field(default=None, max_length=64)
    worker_id: str | None = Field(default=None, max_length=64)
    instance_id: str | None = Field(default=None, max_length=64)


class UploadDeclaration(AttributedRequest):
    """if_artifact_upload step 1: "Declare source_id, sha256, bytes and media_type"."""

    sha256: str = Field(pattern=_SHA256)
    size: int = Field(alias="bytes", ge=0)
    media_type: str = Field(min_length=3, max_length=255)
    #: Optional here so that a missing selector is the seed's 403 ATTRIBUTION_DENIED, not a 422.
    source_id: str | None = Field(default=None, max_length=64)
    #: "presigned" asks for a direct object-store URL when the store can presign; "streamed" always goes through
    #: PUT /v1/artifacts/uploads/{upload_id}.
    mode: Literal["streamed", "presigned"] = "streamed"
    capture_hint: str | None = Field(default=None, max_length=128)


class ArtifactSelector(_Request):
    """One artifact of a capture: its digest, or the ``r2://`` ref a declare returned. Exactly one of the two."""

    sha256: str | None = Field(default=None, pattern=_SHA256)
    ref: str | None = Field(default=None, max_length=512)

    @model_validator(mode="after")
    def _exactly_one(self) -> ArtifactSelector:
        if (self.sha256 is None) == (self.ref is None):
            raise ValueError("an artifact is given by exactly one of sha256 or ref")
        return self


class ExecutionRegion(_Request):
    """Where the collector ran (if_source_fetch, if_collector_bootstrap's example). Recorded on the capture and
    never treated as a market: it says where the fetch happened, not where the product is sold or shipped."""

    country: str = Field(
        description="ISO 3166-1 alpha-2 code of the country the collector ran in, e.g. DE.",
        json_schema_extra={"pattern": COUNTRY_PATTERN},
    )
    label: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="A human label, e.g. 'Frankfurt regional host'.",
    )
    declared_by: Literal["operator", "collector", "platform"] | None = Field(
        default=None,
        description="Who states the region: the operator who deployed it, the collector, a platform.",
    )

    @field_validator("country")
    @classmethod
    def _country(cls, country: str) -> str:
        return check_country_code(country)


class Egress(_Request):
    """How the collector reached the site: the country its traffic left from (if_source_fetch: "from the
    collector's own egress"). Recorded on the capture and never treated as a market."""

    country: str = Field(
        description="ISO 3166-1 alpha-2 code of the egress country, e.g. DE.",
        json_schema_extra={"pattern": COUNTRY_PATTERN},
    )
    verified: bool = Field(
        default=False,
        strict=True,
        description="True only when the egress was checked (e.g. by an IP lookup), not declared.",
    )

    @field_validator("country")
    @classmethod
    def _country(cls, country: str) -> str:
        return check_country_code(country)


class CaptureSubmission(AttributedRequest):
    """if_capture_submit: POST /v1/captures. Idempotency-Key (worker_id:native_record_id:captured_at) in a header."""

    schema_version: Literal["capture/1"]
    source_id: str = Field(min_length=1, max_length=64)
    native_record_id: str = Field(min_length=1, max_length=512)
    url: str | None = Field(default=None, max_length=4096)
    observed_at: AwareDatetime
    artifacts: tuple[ArtifactSelector, ...] = Field(min_length=1)
    #: A name (``pa_schemaorg``) or pin (``pa_schemaorg@1.0.0``) the resolver may prefer; never binding.
    adapter_hint: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*(@[0-9A-Za-z.+-]+)?$")
    #: if_source_fetch: "execution_region and egress are recorded on the capture and are never treated as a
    #: market". Where the collector ran and how it reached the site; never a market, a price region or a
    #: shipping destination.
    execution_region: ExecutionRegion | None = None
    egress: Egress | None = None

    @field_validator("url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        return None if url is None else check_http_url(url)

    @field_validator("observed_at")
    @classmethod
    def _representable(cls, observed_at: datetime) -> datetime:
        return check_representable(observed_at)


def check_idempotency_key(key: str | None) -> str:
    """The key is required: without it a retried submit would store a second capture."""
    if key is None or not _IDEMPOTENCY_KEY.fullmatch(key):
        raise ValidationFailed("Idempotency-Key is required: 1 to 255 visible ASCII characters")
    return key


def check_observed_at(submission: CaptureSubmission, now: datetime, tolerance: timedelta) -> None:
    """A capture cannot have been observed after now (give or take the collectors' clock skew): accepted, a
    capture from the future would outrank every later real observation of its listing."""
    try:
        check_not_in_future(submission.observed_at, now, tolerance)
    except InvalidInput as error:
        raise ValidationFailed(f"observed_at: {error}") from error


def canonical_sha256(body: dict[str, Any]) -> str:
    """if_capture_submit "same body": the sha256 of the body as canonical JSON (sorted keys, no whitespace), so
    key order and formatting do not make two identical submissions differ."""
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def attributed_capture(
    submission: CaptureSubmission, digests: tuple[str, ...], *, worker_id: str, instance_id: str
) -> dict[str, Any]:
    """The capture as stored and as compared for idempotency: attribution from the token, artifacts by digest,
    ``observed_at`` in UTC. The same key from another instance is therefore another body (409), never a replay
    of someone else's receipt."""
    body: dict[str, Any] = {
        "schema_version": submission.schema_version,
        "source_id": submission.source_id,
        "native_record_id": submission.native_record_id,
        "observed_at": submission.observed_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "artifacts": [{"sha256": digest} for digest in digests],
        "worker_id": worker_id,
        "instance_id": instance_id,
    }
    if submission.url is not None:
        body["url"] = submission.url
    if submission.adapter_hint is not None:
        body["adapter_hint"] = submission.adapter_hint
    # Part of the compared body: the same key sent from another region or egress is another request (409).
    if submission.execution_region is not None:
        body["execution_region"] = submission.execution_region.model_dump(mode="json", exclude_none=True)
    if submission.egress is not None:
        body["egress"] = submission.egress.model_dump(mode="json")
    return body


# -- Collector registration and heartbeats (if_collector_bootstrap, if_heartbeat) -------------------------------

_LABEL = r"^[A-Za-z0-9][A-Za-z0-9_.:+/-]{0,127}$"

#: if_source_fetch's error rows, as a heartbeat's run report counts them: "429 RATE_LIMITED ... 503 UPSTREAM_503
#: ... Reported as run.error in the heartbeat ... 404 NOT_FOUND ... Recorded as a run outcome".
FetchFailure = Literal["RATE_LIMITED", "UPSTREAM_503", "NOT_FOUND"]


class Registration(_Request):
    """if_collector_bootstrap: POST /v1/workers/register. ``worker_id`` and ``instance_id`` are required and must
    equal the token's binding; ``targets`` a nonempty subset of its source grants. Nothing here selects a tenant
    or a catalog: both come from the token (unknown fields are refused)."""

    worker_id: str = Field(min_length=1, max_length=64)
    instance_id: str = Field(min_length=1, max_length=64)
    version: str | None = Field(default=None, max_length=64)
    runtime: str | None = Field(default=None, pattern=_LABEL)
    runtime_kind: str | None = Field(default=None, pattern=_LABEL)
    execution_region: ExecutionRegion | None = None
    egress: Egress | None = None
    targets: tuple[str, ...] = Field(min_length=1, max_length=256)
    capabilities: tuple[str, ...] = Field(default=(), max_length=64)

    @field_validator("targets", "capabilities")
    @classmethod
    def _labels(cls, values: tuple[str, ...]) -> tuple[str, ...]:
        for value in values:
            if not re.fullmatch(_LABEL, value):
                raise ValueError(f"{value!r} is not an identifier (1 to 128 of A-Z a-z 0-9 _ . : + / -)")
        return values

    def canonical(self) -> dict[str, Any]:
        """The body as compared for "Re-registering with the same body": targets and capabilities as sets."""
        body = self.model_dump(mode="json", exclude_none=True)
        body["targets"] = sorted(set(self.targets))
        body["capabilities"] = sorted(set(self.capabilities))
        return body


class RunError(_Request):
    """if_heartbeat example: ``"error": {"code": "UPSTREAM_503", "retryable": true}``."""

    code: FetchFailure
    retryable: bool


class RunReport(_Request):
    """One run of a scheduled instance, or the last interval of a long-running one (if_heartbeat "run report")."""

    started_at: AwareDatetime | None = None
    finished_at: AwareDatetime | None = None
    outcome: Literal["succeeded", "failed"]
    error: RunError | None = None
    pages_fetched: int = Field(default=0, ge=0, le=2**31 - 1)
    captures_submitted: int = Field(default=0, ge=0, le=2**31 - 1)
    #: Fetch failures by if_source_fetch outcome.
    failures: dict[FetchFailure, int] = Field(default_factory=dict)

    @field_validator("failures")
    @classmethod
    def _counts(cls, failures: dict[str, int]) -> dict[str, int]:
        if any(not 0 <= count <= 2**31 - 1 for count in failures.values()):
            raise ValueError("a failure count is a non-negative 32-bit integer")
        return failures

    @field_validator("started_at", "finished_at")
    @classmethod
    def _representable(cls, value: datetime | None) -> datetime | None:
        return None if value is None else check_representable(value)


class Heartbeat(_Request):
    """if_heartbeat: POST /v1/workers/{id}/heartbeat. ``at`` is the idempotency key with the instance; a body
    ``instance_id`` is only compared with the path and the token."""

    instance_id: str | None = Field(default=None, max_length=64)
    at: AwareDatetime
    run: RunReport | None = None

    @field_validator("at")
    @classmethod
    def _representable(cls, at: datetime) -> datetime:
        return check_representable(at)
