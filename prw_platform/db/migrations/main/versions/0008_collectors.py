"""Collector registration, leases and heartbeats (if_collector_bootstrap, if_heartbeat).

Revision ID: 0008
Revises: 0007

- ``resolver.collector_instance``: one row per registered stable instance, upserted by
  ``POST /v1/workers/register`` ("Registration is an upsert keyed by instance_id"). It records what the instance
  declared (version, runtime, execution region, egress, targets, capabilities), the canonical sha256 of that body
  (a re-register with the same body returns the existing lease) and the lease (``lease_expires_at``, 90 s, DEC-05).
  A heartbeat renews the lease and keeps the run-report counters (consecutive failures, last success).
- ``resolver.collector_heartbeat``: one row per heartbeat, keyed by (tenant, instance_id, at) (if_heartbeat:
  "Keyed by (instance_id, at). A duplicate is recorded once."), with the run report it carried and the
  consecutive-failure count after it.
- Tenant isolation (INV-06) as in 0005: row-level security on ``app.tenant_id`` for ``resolver_app``, and the
  ``operator_read`` policy of 0007 for ``prw_operator`` (the fleet view, ``prw workers``, the Dagster asset).
  Heartbeats are insert-only; an instance row is updated only in its declaration, lease and counters.
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

OPERATOR = "prw_operator"

TABLES = """
CREATE TABLE resolver.collector_instance (
    tenant_id             text NOT NULL REFERENCES resolver.tenant,
    instance_id           text NOT NULL CHECK (instance_id ~ '^[a-z][a-z0-9_]{2,63}$'),
    catalog_id            text NOT NULL,
    worker_id             text NOT NULL CHECK (worker_id ~ '^[a-z][a-z0-9_]{2,63}$'),
    version               text,
    runtime               text,
    runtime_kind          text,
    execution_region      jsonb,
    egress                jsonb,
    -- if_collector_bootstrap: "targets must be a nonempty subset of provisioned source grants".
    targets               text[] NOT NULL CHECK (cardinality(targets) > 0),
    capabilities          text[] NOT NULL,
    registration_sha256   text NOT NULL CHECK (registration_sha256 ~ '^[0-9a-f]{64}$'),
    registered_at         timestamptz NOT NULL,
    updated_at            timestamptz NOT NULL,
    lease_expires_at      timestamptz NOT NULL,
    last_heartbeat_at     timestamptz,
    consecutive_failures  integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
    last_success_at       timestamptz,
    PRIMARY KEY (tenant_id, instance_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);

CREATE TABLE resolver.collector_heartbeat (
    tenant_id             text NOT NULL,
    instance_id           text NOT NULL,
    at                    timestamptz NOT NULL,
    received_at           timestamptz NOT NULL,
    -- The run report (if_heartbeat); NULL run_outcome: a liveness-only heartbeat.
    run_started_at        timestamptz,
    run_finished_at       timestamptz,
    run_outcome           text CHECK (run_outcome IN ('succeeded', 'failed')),
    error_code            text,
    error_retryable       boolean,
    pages_fetched         integer CHECK (pages_fetched >= 0),
    captures_submitted    integer CHECK (captures_submitted >= 0),
    -- if_source_fetch outcomes by kind: {"RATE_LIMITED": 2, "UPSTREAM_503": 1, "NOT_FOUND": 0}.
    failures              jsonb NOT NULL DEFAULT '{}'::jsonb,
    consecutive_failures  integer NOT NULL CHECK (consecutive_failures >= 0),
    PRIMARY KEY (tenant_id, instance_id, at),
    FOREIGN KEY (tenant_id, instance_id) REFERENCES resolver.collector_instance
);
CREATE INDEX collector_heartbeat_latest ON resolver.collector_heartbeat (tenant_id, instance_id, received_at);
"""

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def _tenant_rls(table: str) -> None:
    op.execute(f"ALTER TABLE resolver.{table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE resolver.{table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON resolver.{table} TO resolver_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )
    # 0007: "A later migration that adds a tenant-scoped table adds its operator_read policy too."
    op.execute(f"GRANT SELECT ON resolver.{table} TO {OPERATOR}")
    op.execute(f"CREATE POLICY operator_read ON resolver.{table} FOR SELECT TO {OPERATOR} USING (true)")


def upgrade() -> None:
    op.execute(TABLES)
    op.execute(
        "GRANT SELECT, INSERT ON resolver.collector_instance, resolver.collector_heartbeat TO resolver_app"
    )
    # The instance's identity (tenant, instance, registered_at) never changes; its declaration, lease and
    # counters do.
    op.execute(
        "GRANT UPDATE (catalog_id, worker_id, version, runtime, runtime_kind, execution_region, egress, targets, "
        "capabilities, registration_sha256, updated_at, lease_expires_at, last_heartbeat_at, "
        "consecutive_failures, last_success_at) ON resolver.collector_instance TO resolver_app"
    )
    _tenant_rls("collector_instance")
    _tenant_rls("collector_heartbeat")


def downgrade() -> None:
    op.execute("DROP TABLE resolver.collector_heartbeat")
    op.execute("DROP TABLE resolver.collector_instance")
