"""The per-service database roles (if_db: least privilege)."""

from __future__ import annotations

RESOLVER_APP = "resolver_app"
RESOLVER_RELAY = "resolver_relay"
PRODUCT_APP = "product_app"
#: Migration 0005: the AW-02 pending-job sweeper (reads pending jobs across tenants, marks them enqueued).
RESOLVER_SWEEPER = "resolver_sweeper"
#: Migration 0016: the AW-03 pruner (retention rows of every stream; deletes published outbox rows only).
RESOLVER_PRUNER = "resolver_pruner"

SERVICE_ROLES = (RESOLVER_APP, RESOLVER_RELAY, PRODUCT_APP)
#: Migration 0007: cross-tenant, read-only reports for operators (Dagster assets and checks, the demo summary).
PRW_OPERATOR = "prw_operator"
