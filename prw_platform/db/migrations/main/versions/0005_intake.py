"""Capture intake (AW-02): collector clients, receipt lookup by id, and the pending-job sweeper role.

Revision ID: 0005
Revises: 0001

- ``resolver.collector_client``: a per-instance machine client provisioned by an operator
  (if_collector_bootstrap: "Operator provisioning establishes worker, stable instance, tenant and source grants
  before token issuance"). The secret is stored as an scrypt hash only; ``revoked_at`` makes every token of the
  client fail with CREDENTIAL_REVOKED. Source grants are rows of ``collector_client_source`` with a foreign key
  to the tenant's source, so a grant can never name a source that does not exist in the tenant.
- Tenant isolation (INV-06) as in 0001, plus two narrow point-lookup policies for ``resolver_app``. The token
  endpoint knows only a client_id before it authenticates, so it may read the one client row whose id it names
  in ``app.client_id``. A receipt lookup must tell "another tenant's receipt" (403 TENANT_SCOPE_DENIED) from an
  unknown one (404, if_receipt_get), so it may read the one receipt whose id it names in ``app.receipt_id``;
  intake code never returns that row's contents across tenants. Neither policy allows a scan.
- ``resolver_sweeper``: the AW-02 pending-job sweeper works across tenants, like the relay (0001). It reads only
  pending (and just enqueued) resolution jobs and may only move a pending job to ``enqueued``.
"""

from alembic import op

revision = "0005"
down_revision = "0001"
branch_labels = None
depends_on = None

SWEEPER_ROLE = "resolver_sweeper"

TABLES = """
CREATE TABLE resolver.collector_client (
    client_id      text PRIMARY KEY CHECK (client_id ~ '^cc_[a-z0-9]{16,64}$'),
    tenant_id      text NOT NULL REFERENCES resolver.tenant,
    catalog_id     text NOT NULL,
    worker_id      text NOT NULL CHECK (worker_id ~ '^[a-z][a-z0-9_]{2,63}$'),
    -- if_receipt_get: receipts belong to the stable instance, not to the rotating client_id.
    instance_id    text NOT NULL CHECK (instance_id ~ '^[a-z][a-z0-9_]{2,63}$'),
    scopes         text[] NOT NULL CHECK (cardinality(scopes) > 0),
    secret_hash    text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    revoked_at     timestamptz,
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);
CREATE INDEX collector_client_instance ON resolver.collector_client (tenant_id, instance_id);

CREATE TABLE resolver.collector_client_source (
    tenant_id   text NOT NULL,
    client_id   text NOT NULL REFERENCES resolver.collector_client,
    source_id   text NOT NULL,
    PRIMARY KEY (client_id, source_id),
    FOREIGN KEY (tenant_id, source_id) REFERENCES resolver.source
);

-- Receipt ids are random and global, so a lookup by id alone names at most one receipt in any tenant.
CREATE UNIQUE INDEX receipt_id_global ON resolver.receipt (receipt_id);
-- A declare reuses the caller's own pending upload of the same digest (if_artifact_upload: "A repeated declare
-- returns the same ref").
CREATE INDEX artifact_upload_digest ON resolver.artifact_upload (tenant_id, sha256, instance_id)
    WHERE status = 'pending';
"""

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def _tenant_rls(table: str) -> None:
    op.execute(f"ALTER TABLE resolver.{table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE resolver.{table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON resolver.{table} TO resolver_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )


def _create_sweeper_role() -> None:
    # Roles are cluster-wide: create once, tolerate a concurrent migration of another database (as 0001 does).
    op.execute(
        f"""
        DO $$ BEGIN
            CREATE ROLE {SWEEPER_ROLE} NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END $$;
        """
    )
    op.execute(
        f"""
        DO $$ BEGIN
            EXECUTE format('GRANT {SWEEPER_ROLE} TO %I', current_user);
        EXCEPTION WHEN duplicate_object OR invalid_grant_operation THEN NULL;
        END $$;
        """
    )


def upgrade() -> None:
    op.execute(TABLES)

    op.execute(
        "GRANT SELECT, INSERT ON resolver.collector_client, resolver.collector_client_source TO resolver_app"
    )
    # Revocation is the only change a client ever sees; its binding and secret hash are immutable.
    op.execute("GRANT UPDATE (revoked_at) ON resolver.collector_client TO resolver_app")
    _tenant_rls("collector_client")
    _tenant_rls("collector_client_source")
    op.execute(
        "CREATE POLICY client_by_id ON resolver.collector_client FOR SELECT TO resolver_app "
        "USING (client_id = current_setting('app.client_id', true))"
    )
    op.execute(
        "CREATE POLICY client_sources_by_id ON resolver.collector_client_source FOR SELECT TO resolver_app "
        "USING (client_id = current_setting('app.client_id', true))"
    )
    op.execute(
        "CREATE POLICY receipt_by_id ON resolver.receipt FOR SELECT TO resolver_app "
        "USING (receipt_id = current_setting('app.receipt_id', true))"
    )

    _create_sweeper_role()
    op.execute(f"GRANT USAGE ON SCHEMA resolver TO {SWEEPER_ROLE}")
    op.execute(
        f"GRANT SELECT (tenant_id, job_id, status, message, created_at, enqueued_at) "
        f"ON resolver.resolution_job TO {SWEEPER_ROLE}"
    )
    op.execute(f"GRANT UPDATE (status, enqueued_at) ON resolver.resolution_job TO {SWEEPER_ROLE}")
    # An UPDATE that reads the row must see both the old and the new row, so the read policy admits both states.
    op.execute(
        f"CREATE POLICY sweeper_read ON resolver.resolution_job FOR SELECT TO {SWEEPER_ROLE} "
        "USING (status IN ('pending', 'enqueued'))"
    )
    op.execute(
        f"CREATE POLICY sweeper_mark ON resolver.resolution_job FOR UPDATE TO {SWEEPER_ROLE} "
        "USING (status = 'pending') WITH CHECK (status = 'enqueued' AND enqueued_at IS NOT NULL)"
    )


def downgrade() -> None:
    op.execute("DROP POLICY sweeper_mark ON resolver.resolution_job")
    op.execute("DROP POLICY sweeper_read ON resolver.resolution_job")
    op.execute(f"REVOKE ALL ON resolver.resolution_job FROM {SWEEPER_ROLE}")
    op.execute(f"REVOKE USAGE ON SCHEMA resolver FROM {SWEEPER_ROLE}")
    op.execute("DROP POLICY receipt_by_id ON resolver.receipt")
    op.execute("DROP INDEX resolver.artifact_upload_digest")
    op.execute("DROP INDEX resolver.receipt_id_global")
    op.execute("DROP TABLE resolver.collector_client_source")
    op.execute("DROP TABLE resolver.collector_client")
