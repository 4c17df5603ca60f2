"""The per-service database roles (if_db: least privilege)."""

from __future__ import annotations

RESOLVER_APP = "resolver_app"
RESOLVER_RELAY = "resolver_relay"
PRODUCT_APP = "product_app"

SERVICE_ROLES = (RESOLVER_APP, RESOLVER_RELAY, PRODUCT_APP)
