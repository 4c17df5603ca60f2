"""Attribution and grant checks: the request is compared with the principal, never trusted.

The seed's tables give different codes per route, and these functions keep them apart:

* if_artifact_upload: missing source selector or conflicting attribution: 403 ATTRIBUTION_DENIED; a source of
  the tenant that is not granted: 403 SOURCE_SCOPE_DENIED; a source outside the tenant: 403 TENANT_SCOPE_DENIED.
* if_capture_submit: a source that is not granted: 403 TENANT_SCOPE_DENIED (a supplied tenant, catalog or
  source is only checked against the grants, never grants access).
* Both: a supplied worker_id or instance_id that is not the token's: 403 ATTRIBUTION_DENIED.
"""

from __future__ import annotations

from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.db.database import Connection
from prw_platform.resolver import catalogs
from prw_platform.resolver.intake.errors import AttributionDenied, SourceScopeDenied, TenantScopeDenied
from prw_platform.resolver.intake.requests import AttributedRequest


def check_attribution(principal: CollectorPrincipal, request: AttributedRequest) -> None:
    if request.tenant_id is not None and request.tenant_id != principal.tenant_id:
        raise TenantScopeDenied("tenant_id is not the authenticated tenant")
    if request.catalog_id is not None and request.catalog_id != principal.catalog_id:
        raise TenantScopeDenied("catalog_id is not the authenticated catalog")
    if request.worker_id is not None and request.worker_id != principal.worker_id:
        raise AttributionDenied("worker_id conflicts with the authenticated worker")
    if request.instance_id is not None and request.instance_id != principal.instance_id:
        raise AttributionDenied("instance_id conflicts with the authenticated instance")


def check_upload_source(conn: Connection, principal: CollectorPrincipal, source_id: str | None) -> None:
    if source_id is None:
        raise AttributionDenied(
            "source_id is required: it selects the granted source the artifact comes from"
        )
    if source_id in principal.sources:
        return
    if catalogs.source_catalog(conn, principal.tenant_id, source_id) is not None:
        raise SourceScopeDenied(f"source {source_id} is not granted to this collector")
    raise TenantScopeDenied(f"source {source_id} is not a source of the authenticated tenant")


def check_capture_source(principal: CollectorPrincipal, source_id: str) -> None:
    if source_id not in principal.sources:
        raise TenantScopeDenied(f"source {source_id} is not granted to this collector")
