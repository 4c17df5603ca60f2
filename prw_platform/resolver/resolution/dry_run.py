"""A resolution dry run (if_admin_read ``POST /v1/resolve``): extraction, normalization and identity on a stored
capture, with the same code as the resolution consumer, and nothing written (``writes: 0``).

The capture is read in a READ ONLY transaction of its tenant (row-level security: another tenant's capture is
not found, INV-06), its stored bytes are read and verified (never re-fetched), the adapter is ``auto`` (the
consumer's rule: hint, then ``supports``) or pinned (``NAME@VERSION``, binding: an unknown one is
UNKNOWN_ADAPTER_VERSION), and identity is resolved in a second READ ONLY transaction, which PostgreSQL refuses
to write in. No decision is applied, no queue message sent, no object stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from prw_platform.resolver.decisions import CreateItemAndMap, MapListing
from prw_platform.resolver.intake.captures import CaptureRecord, load_capture
from prw_platform.resolver.intake.errors import NotFound
from prw_platform.resolver.resolution.documents import (
    JsonValue,
    attribute_documents,
    claim_documents,
    json_value,
    problem_documents,
)
from prw_platform.resolver.resolution.evidence import read_evidence
from prw_platform.resolver.resolution.extraction import extract
from prw_platform.resolver.resolution.identity import IdentityDecision, resolve_identity
from prw_platform.resolver.resolution.profiles import normalize, stage_outcome
from prw_platform.resolver.resolution.services import ResolutionServices

#: ``adapter`` of a request that lets the consumer's rule choose.
AUTO: Final = "auto"


@dataclass(frozen=True, slots=True)
class DryRunRequest:
    capture_id: str
    #: The capture's native record id, when the caller names one (it must be the capture's).
    record: str | None = None
    #: ``auto`` or an installed adapter pin ``pa_<name>@MAJOR.MINOR.PATCH``.
    adapter: str = AUTO
    #: An installed profile pin (``np_core@1``), or None for the consumer's rule (an improvement replay pins it).
    profile: str | None = None
    #: The identity generation to resolve with (an improvement replay pins it); None: the catalog's live ones.
    identity_generation: int | None = None


@dataclass(frozen=True, slots=True)
class DryRun:
    capture_id: str
    catalog_id: str
    source_id: str
    record: str | None
    adapter: str | None
    adapter_rule: str | None
    stage_outcome: str
    profile: str | None
    claims: list[dict[str, JsonValue]]
    attributes: list[dict[str, JsonValue]]
    problems: list[dict[str, JsonValue]]
    diagnostics: list[str]
    #: What identity would decide: the command (map_listing, create_item_and_map, open_review_case) and why.
    identity: dict[str, Any]
    #: Rows, objects and messages written: always 0 (a READ ONLY transaction).
    writes: int = 0


class DryRunService:
    """Bound by the composition root to the resolver API pool, the store, the registry and the streams."""

    def __init__(self, services: ResolutionServices) -> None:
        self._services = services

    def run(self, tenant_id: str, request: DryRunRequest) -> DryRun:
        services = self._services
        pin = None if request.adapter == AUTO else request.adapter
        if pin is not None:
            services.registry.adapter(pin)  # UNKNOWN_ADAPTER_VERSION before any evidence is read
        if request.profile is not None:
            services.registry.profile(request.profile)  # UNKNOWN_PROFILE_VERSION likewise
        capture = self._capture(tenant_id, request)
        extraction = extract(services.registry, capture, read_evidence(services.store, capture), pin)
        normalization = (
            normalize(services.registry, services.profiles, extraction.claims, request.profile)
            if extraction.stage_outcome == "extracted"
            else None
        )
        stream = services.streams(tenant_id, capture.catalog_id)
        decided: IdentityDecision = services.resolver_db.run(
            lambda conn: resolve_identity(
                conn,
                stream,
                f"dry_run:{capture.capture_id}",
                capture,
                extraction,
                normalization,
                services.registry.identity_rules,
                generation=request.identity_generation,
            ),
            tenant_id=tenant_id,
            read_only=True,
        )
        result = normalization.normalization if normalization else None
        return DryRun(
            capture_id=capture.capture_id,
            catalog_id=capture.catalog_id,
            source_id=capture.source_id,
            record=capture.native_record_id,
            adapter=extraction.adapter,
            adapter_rule=extraction.adapter_rule,
            stage_outcome=stage_outcome(extraction, normalization),
            profile=normalization.pin if normalization else None,
            claims=claim_documents(extraction.claims),
            attributes=attribute_documents(result.attributes) if result else [],
            problems=problem_documents(result.problems) if result else [],
            diagnostics=list(extraction.diagnostics),
            identity=_identity(decided),
        )

    def _capture(self, tenant_id: str, request: DryRunRequest) -> CaptureRecord:
        capture = self._services.resolver_db.run(
            lambda conn: load_capture(conn, tenant_id, request.capture_id),
            tenant_id=tenant_id,
            read_only=True,
        )
        if capture is None:
            raise NotFound(f"no capture {request.capture_id}")
        if request.record is not None and request.record != capture.native_record_id:
            raise NotFound(
                f"capture {request.capture_id} holds record {capture.native_record_id}, not {request.record}"
            )
        return capture


def _identity(decided: IdentityDecision) -> dict[str, Any]:
    """The decision the consumer would apply, as a document (``summary`` is what it stores with the results)."""
    command = decided.command
    if isinstance(command, MapListing):
        action = "map_listing"
    elif isinstance(command, CreateItemAndMap):
        action = "create_item_and_map"
    else:
        action = "open_review_case"
    summary = json_value(decided.summary)
    return {"would_decide": action, **(summary if isinstance(summary, dict) else {})}
