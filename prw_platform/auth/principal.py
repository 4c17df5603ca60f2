"""The authenticated collector: who is calling, for which tenant, catalog, worker, instance and sources.

Tenant and catalog come from here and never from the request (if_capture_submit: "Tenant and catalog come from
the authenticated identity"). A client-supplied tenant, catalog or source is only ever compared with these.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from prw_platform.auth.errors import MissingScope


@dataclass(frozen=True, slots=True)
class CollectorPrincipal:
    client_id: str
    tenant_id: str
    catalog_id: str
    worker_id: str
    #: The stable instance (token ``sub``), not the rotating client_id (if_receipt_get).
    instance_id: str
    sources: frozenset[str]
    scopes: frozenset[str]
    token_id: str
    expires_at: datetime

    def require_scope(self, scope: str) -> None:
        if scope not in self.scopes:
            raise MissingScope(f"this token lacks the scope {scope}")
