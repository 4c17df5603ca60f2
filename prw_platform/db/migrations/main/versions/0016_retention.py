"""Retention control, the outbox pruner and snapshot exports (AW-03 "Prune",
if_accepted_change and if_projection_bootstrap Delivery).

Revision ID: 0016_retention
Revises: 0016_staged_resolution (re-chained when branches merged)

* ``resolver.retention_stream``: one row per stream (tenant, catalog, history_epoch). Its row lock is THE
  retention-control lock: lease creation and advance, consumer registration and pruning all take it first
  (``prw_platform.resolver.stream.retention.lock_stream``). It records the pruned-through cursor P and when retention
  was first seen blocked.
* ``resolver.retention_consumer``: the registered live consumers of a stream and their acknowledged durable
  progress (monotonic; only what the consumer reported after its own commit).
* ``resolver.retention_lease``: renewable rebuild leases pinned at a position, with an expiry.
* ``resolver.export_snapshot``: snapshot exports (POST /v1/exports/snapshots), idempotent per Idempotency-Key.
* ``product.progress.reported_position``: the product side's durable memory of the last position retention
  control acknowledged, so that the ``progress`` stage's probe is one indexed comparison in any process (a Dagster
  run, a restarted worker) instead of a report of every stream on every round.

Roles: ``resolver_app`` reads and writes the four tables of its tenant (RLS, INV-06): the export API, the
progress reports and the export job. A new role ``resolver_pruner`` runs the pruner across tenants (like the relay
and the sweeper, it is not tenant-scoped): it reads the retention rows of every tenant, updates
``retention_stream`` (P, the block) and may DELETE published outbox rows only (its policy refuses an unpublished
row); the relay keeps its least privilege (publish and mark, nothing else). It also reads pending exports to hand
them to the export job. ``prw_operator`` reads all of it for reports.
"""

from alembic import op

revision = "0016_retention"
down_revision = "0016_staged_resolution"
branch_labels = None
depends_on = None

TABLES = """
CREATE TABLE resolver.retention_stream (
    tenant_id        text NOT NULL,
    catalog_id       text NOT NULL,
    history_epoch    text NOT NULL,
    -- Every position <= pruned_through is gone from the outbox (P of if_projection_bootstrap).
    pruned_through   bigint NOT NULL DEFAULT 0 CHECK (pruned_through >= 0),
    pruned_rows      bigint NOT NULL DEFAULT 0 CHECK (pruned_rows >= 0),
    last_pruned_at   timestamptz,
    -- Set when a prune found eligible rows held back by a consumer or a lease; cleared when it is not.
    blocked_since    timestamptz,
    blocked_by       text,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, history_epoch),
    FOREIGN KEY (tenant_id, catalog_id, history_epoch) REFERENCES resolver.stream_cursor
);

CREATE TABLE resolver.retention_consumer (
    tenant_id              text NOT NULL,
    catalog_id             text NOT NULL,
    history_epoch          text NOT NULL,
    consumer               text NOT NULL CHECK (consumer ~ '^[a-z][a-z0-9_]{0,62}$'),
    acknowledged_position  bigint NOT NULL DEFAULT 0 CHECK (acknowledged_position >= 0),
    registered_at          timestamptz NOT NULL,
    reported_at            timestamptz,
    -- An operator retires a consumer explicitly; it is never dropped because it lags.
    retired_at             timestamptz,
    PRIMARY KEY (tenant_id, catalog_id, history_epoch, consumer),
    FOREIGN KEY (tenant_id, catalog_id, history_epoch) REFERENCES resolver.retention_stream
);

CREATE TABLE resolver.retention_lease (
    lease_id        text PRIMARY KEY CHECK (lease_id ~ '^lse_[a-z0-9]{8,64}$'),
    tenant_id       text NOT NULL,
    catalog_id      text NOT NULL,
    history_epoch   text NOT NULL,
    -- Every position > pinned_at is retained while the lease is unexpired.
    pinned_at       bigint NOT NULL CHECK (pinned_at >= 0),
    purpose         text NOT NULL,
    created_at      timestamptz NOT NULL,
    renewed_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    released_at     timestamptz,
    FOREIGN KEY (tenant_id, catalog_id, history_epoch) REFERENCES resolver.retention_stream
);
CREATE INDEX retention_lease_stream ON resolver.retention_lease (tenant_id, catalog_id, history_epoch)
    WHERE released_at IS NULL;

CREATE TABLE resolver.export_snapshot (
    export_id        text PRIMARY KEY CHECK (export_id ~ '^exp_[a-z0-9]{8,64}$'),
    tenant_id        text NOT NULL,
    catalog_id       text NOT NULL,
    idempotency_key  text NOT NULL,
    aggregates       text[] NOT NULL,
    status           text NOT NULL CHECK (status IN ('pending', 'ready', 'failed')),
    history_epoch    text,
    lease_id         text REFERENCES resolver.retention_lease,
    -- The committed cursor W the snapshot read; the product catches up from W.
    position         bigint,
    manifest         jsonb,
    error_code       text,
    error            text,
    created_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    UNIQUE (tenant_id, catalog_id, idempotency_key),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);
CREATE INDEX export_snapshot_pending ON resolver.export_snapshot (created_at) WHERE status = 'pending';
"""

PRUNER_ROLE = "resolver_pruner"
RETENTION_TABLES = ("retention_stream", "retention_consumer", "retention_lease", "export_snapshot")
TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def _create_pruner_role() -> None:
    # Roles are cluster-wide: create once, tolerate a concurrent migration of another database (as 0001/0005 do).
    op.execute(
        f"""
        DO $$ BEGIN
            CREATE ROLE {PRUNER_ROLE} NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END $$;
        """
    )
    op.execute(
        f"""
        DO $$ BEGIN
            EXECUTE format('GRANT {PRUNER_ROLE} TO %I', current_user);
        EXCEPTION WHEN duplicate_object OR invalid_grant_operation THEN NULL;
        END $$;
        """
    )


def upgrade() -> None:
    op.execute(TABLES)
    op.execute(
        "ALTER TABLE product.progress ADD COLUMN reported_position bigint NOT NULL DEFAULT 0 "
        "CHECK (reported_position >= 0)"
    )
    for table in RETENTION_TABLES:
        op.execute(f"GRANT SELECT, INSERT, UPDATE ON resolver.{table} TO resolver_app")
        op.execute(f"ALTER TABLE resolver.{table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE resolver.{table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY tenant_isolation ON resolver.{table} TO resolver_app "
            f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
        )
        op.execute(f"GRANT SELECT ON resolver.{table} TO prw_operator")
        op.execute(f"CREATE POLICY operator_read ON resolver.{table} FOR SELECT TO prw_operator USING (true)")
    # The pruner (AW-03 "Prune"): every stream's retention rows, published outbox rows only.
    _create_pruner_role()
    op.execute(f"GRANT USAGE ON SCHEMA resolver TO {PRUNER_ROLE}")
    for table in ("retention_stream", "retention_consumer", "retention_lease", "outbox", "stream_cursor"):
        op.execute(f"GRANT SELECT ON resolver.{table} TO {PRUNER_ROLE}")
        op.execute(f"CREATE POLICY pruner_read ON resolver.{table} FOR SELECT TO {PRUNER_ROLE} USING (true)")
    op.execute(f"GRANT UPDATE ON resolver.retention_stream TO {PRUNER_ROLE}")
    op.execute(
        f"CREATE POLICY pruner_write ON resolver.retention_stream FOR UPDATE TO {PRUNER_ROLE} "
        "USING (true) WITH CHECK (true)"
    )
    op.execute(f"GRANT DELETE ON resolver.outbox TO {PRUNER_ROLE}")
    op.execute(
        f"CREATE POLICY pruner_delete ON resolver.outbox FOR DELETE TO {PRUNER_ROLE} "
        "USING (published_at IS NOT NULL)"
    )
    # The export job takes pending exports of every tenant (then works in the export's tenant as resolver_app).
    op.execute(f"GRANT SELECT ON resolver.export_snapshot TO {PRUNER_ROLE}")
    op.execute(
        f"CREATE POLICY export_claim ON resolver.export_snapshot FOR SELECT TO {PRUNER_ROLE} "
        "USING (status = 'pending')"
    )
    # Streams opened before this migration: a retention row each, and the product's live consumer registered at
    # 0 (it reports its real progress on its next round; until then nothing is pruned).
    op.execute(
        """INSERT INTO resolver.retention_stream (tenant_id, catalog_id, history_epoch)
           SELECT tenant_id, catalog_id, history_epoch FROM resolver.stream_cursor"""
    )
    op.execute(
        """INSERT INTO resolver.retention_consumer (tenant_id, catalog_id, history_epoch, consumer, registered_at)
           SELECT tenant_id, catalog_id, history_epoch, 'product_live', now() FROM resolver.stream_cursor
           WHERE fenced_at IS NULL"""
    )


def downgrade() -> None:
    op.execute("ALTER TABLE product.progress DROP COLUMN reported_position")
    for table in ("outbox", "stream_cursor"):
        op.execute(f"DROP POLICY pruner_read ON resolver.{table}")
        op.execute(f"REVOKE ALL ON resolver.{table} FROM {PRUNER_ROLE}")
    op.execute("DROP POLICY pruner_delete ON resolver.outbox")
    op.execute(
        "DROP TABLE resolver.export_snapshot, resolver.retention_lease, resolver.retention_consumer, "
        "resolver.retention_stream"
    )
    op.execute(f"REVOKE USAGE ON SCHEMA resolver FROM {PRUNER_ROLE}")
