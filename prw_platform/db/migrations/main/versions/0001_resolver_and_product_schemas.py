"""Resolver and product schemas, service roles, grants and row-level security.

Revision ID: 0001
Revises:

The tables the spine needs: tenant, catalog, source, artifacts, capture, receipt, resolution job,
consumer inbox, stream_cursor, outbox; product inbox, applied revisions, parked events, projections, progress.

Roles (if_db): resolver_app reads and writes the resolver schema (captures, artifacts and receipts are
insert-only: INV-05); resolver_relay reads the outbox and may update published_at only; product_app owns the
product schema and has no access to the resolver schema. Every tenant-scoped table has row-level security
comparing tenant_id with ``app.tenant_id``, set per transaction by ``Database`` (INV-06).
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ROLES = ("resolver_app", "resolver_relay", "product_app")

RESOLVER_TABLES = """
CREATE SCHEMA resolver;

CREATE TABLE resolver.tenant (
    tenant_id   text PRIMARY KEY CHECK (tenant_id ~ '^[a-z][a-z0-9_]{2,63}$'),
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE resolver.catalog (
    tenant_id       text NOT NULL REFERENCES resolver.tenant,
    catalog_id      text NOT NULL CHECK (catalog_id ~ '^[a-z][a-z0-9_]{2,63}$'),
    name            text NOT NULL,
    -- A per-catalog release policy; 'automatic' publishes applied items without a human release.
    release_policy  text NOT NULL DEFAULT 'manual' CHECK (release_policy IN ('automatic', 'manual')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id)
);

CREATE TABLE resolver.source (
    tenant_id   text NOT NULL,
    source_id   text NOT NULL CHECK (source_id ~ '^[a-z][a-z0-9_]{2,63}$'),
    catalog_id  text NOT NULL,
    name        text NOT NULL,
    base_url    text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, source_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);

-- if_artifact_upload: a declared upload (mutable: pending -> stored); the stored artifact below is immutable.
CREATE TABLE resolver.artifact_upload (
    tenant_id    text NOT NULL REFERENCES resolver.tenant,
    upload_id    text NOT NULL,
    sha256       text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size_bytes   bigint NOT NULL CHECK (size_bytes >= 0),
    media_type   text NOT NULL,
    source_id    text NOT NULL,
    worker_id    text NOT NULL,
    instance_id  text NOT NULL,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'stored')),
    expires_at   timestamptz NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, upload_id),
    FOREIGN KEY (tenant_id, source_id) REFERENCES resolver.source
);

-- Natural key (tenant_id, sha256): identical bytes in two tenants are two artifacts (if_artifact_upload).
CREATE TABLE resolver.artifact (
    tenant_id    text NOT NULL REFERENCES resolver.tenant,
    artifact_id  text NOT NULL,
    sha256       text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size_bytes   bigint NOT NULL CHECK (size_bytes >= 0),
    media_type   text NOT NULL,
    ref          text NOT NULL,
    stored_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, artifact_id),
    UNIQUE (tenant_id, sha256)
);

CREATE TABLE resolver.capture (
    tenant_id         text NOT NULL,
    capture_id        text NOT NULL,
    catalog_id        text NOT NULL,
    source_id         text NOT NULL,
    worker_id         text NOT NULL,
    instance_id       text NOT NULL,
    native_record_id  text,
    url               text,
    schema_version    text NOT NULL,
    observed_at       timestamptz NOT NULL,
    received_at       timestamptz NOT NULL DEFAULT now(),
    body              jsonb NOT NULL,
    PRIMARY KEY (tenant_id, capture_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog,
    FOREIGN KEY (tenant_id, source_id) REFERENCES resolver.source
);

CREATE TABLE resolver.capture_artifact (
    tenant_id    text NOT NULL,
    capture_id   text NOT NULL,
    artifact_id  text NOT NULL,
    ordinal      smallint NOT NULL,
    PRIMARY KEY (tenant_id, capture_id, artifact_id),
    FOREIGN KEY (tenant_id, capture_id) REFERENCES resolver.capture,
    FOREIGN KEY (tenant_id, artifact_id) REFERENCES resolver.artifact
);

-- if_capture_submit: the Idempotency-Key is unique per tenant; request_sha256 tells "same body" from "other body".
CREATE TABLE resolver.receipt (
    tenant_id        text NOT NULL,
    receipt_id       text NOT NULL,
    capture_id       text NOT NULL,
    instance_id      text NOT NULL,
    idempotency_key  text NOT NULL,
    request_sha256   text NOT NULL,
    status           text NOT NULL DEFAULT 'stored',
    received_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, receipt_id),
    UNIQUE (tenant_id, idempotency_key),
    FOREIGN KEY (tenant_id, capture_id) REFERENCES resolver.capture
);

-- if_resolution_job: one row per job, committed with the capture; a sweeper re-enqueues rows left pending.
CREATE TABLE resolver.resolution_job (
    tenant_id      text NOT NULL,
    job_id         text NOT NULL,
    capture_id     text NOT NULL,
    stage          text NOT NULL,
    attempt_group  integer NOT NULL DEFAULT 1,
    status         text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'enqueued', 'completed', 'dead_lettered')),
    message        jsonb NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    enqueued_at    timestamptz,
    completed_at   timestamptz,
    PRIMARY KEY (tenant_id, job_id),
    FOREIGN KEY (tenant_id, capture_id) REFERENCES resolver.capture
);
CREATE INDEX resolution_job_pending ON resolver.resolution_job (created_at) WHERE status = 'pending';

-- STYLE.md / if_resolution_job: a consumer records (consumer, message_id) in the same transaction as its effect.
CREATE TABLE resolver.consumer_inbox (
    tenant_id     text NOT NULL,
    consumer      text NOT NULL,
    message_id    text NOT NULL,
    outcome       text NOT NULL,
    processed_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, consumer, message_id)
);

-- AW-01 / INV-03: positions are allocated under a row lock on this cursor, never from a sequence or max().
CREATE TABLE resolver.stream_cursor (
    tenant_id           text NOT NULL,
    catalog_id          text NOT NULL,
    history_epoch       text NOT NULL,
    committed_position  bigint NOT NULL DEFAULT 0 CHECK (committed_position >= 0),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, history_epoch),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);

CREATE TABLE resolver.outbox (
    tenant_id           text NOT NULL,
    catalog_id          text NOT NULL,
    history_epoch       text NOT NULL,
    position            bigint NOT NULL CHECK (position > 0),
    event_id            text NOT NULL,
    event_type          text NOT NULL,
    aggregate_type      text NOT NULL,
    aggregate_id        text NOT NULL,
    aggregate_revision  bigint NOT NULL CHECK (aggregate_revision > 0),
    decision_id         text,
    body                jsonb NOT NULL,
    accepted_at         timestamptz NOT NULL DEFAULT now(),
    published_at        timestamptz,
    PRIMARY KEY (tenant_id, catalog_id, history_epoch, position),
    UNIQUE (tenant_id, catalog_id, history_epoch, event_id),
    FOREIGN KEY (tenant_id, catalog_id, history_epoch) REFERENCES resolver.stream_cursor
);
CREATE INDEX outbox_unpublished ON resolver.outbox (tenant_id, catalog_id, history_epoch, position)
    WHERE published_at IS NULL;
"""

PRODUCT_TABLES = """
CREATE SCHEMA product;

-- if_accepted_change: the product service projects only configured (tenant, catalog) pairs; others -> DLQ
-- SCOPE_NOT_PROJECTED. history_epoch is the current epoch: older-epoch events are terminally ignored.
CREATE TABLE product.projected_scope (
    tenant_id           text NOT NULL,
    catalog_id          text NOT NULL,
    history_epoch       text NOT NULL,
    serving_generation  integer NOT NULL DEFAULT 1,
    created_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id)
);

-- AW-04: INSERT inbox(event_id) ON CONFLICT DO NOTHING; the outcome records how the delivery was settled.
CREATE TABLE product.inbox (
    tenant_id           text NOT NULL,
    catalog_id          text NOT NULL,
    history_epoch       text NOT NULL,
    event_id            text NOT NULL,
    position            bigint NOT NULL CHECK (position > 0),
    aggregate_type      text NOT NULL,
    aggregate_id        text NOT NULL,
    aggregate_revision  bigint NOT NULL,
    outcome             text NOT NULL
                        CHECK (outcome IN ('applied', 'ignored_stale_revision', 'parked', 'ignored_old_epoch')),
    received_at         timestamptz NOT NULL DEFAULT now(),
    settled_at          timestamptz,
    PRIMARY KEY (tenant_id, catalog_id, history_epoch, event_id),
    UNIQUE (tenant_id, catalog_id, history_epoch, position)
);

CREATE TABLE product.applied_revision (
    tenant_id       text NOT NULL,
    catalog_id      text NOT NULL,
    aggregate_type  text NOT NULL,
    aggregate_id    text NOT NULL,
    revision        bigint NOT NULL CHECK (revision > 0),
    position        bigint NOT NULL,
    applied_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, aggregate_type, aggregate_id)
);

-- AW-04: a missing dependency parks the event; it is released when the dependency applies.
CREATE TABLE product.parked_event (
    tenant_id            text NOT NULL,
    catalog_id           text NOT NULL,
    history_epoch        text NOT NULL,
    event_id             text NOT NULL,
    position             bigint NOT NULL,
    waiting_for_type     text NOT NULL,
    waiting_for_id       text NOT NULL,
    waiting_for_revision bigint NOT NULL,
    event                jsonb NOT NULL,
    parked_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, history_epoch, event_id)
);
CREATE INDEX parked_event_waiting ON product.parked_event
    (tenant_id, catalog_id, waiting_for_type, waiting_for_id, waiting_for_revision);

CREATE TABLE product.item_projection (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    generation   integer NOT NULL DEFAULT 1,
    item_id      text NOT NULL,
    revision     bigint NOT NULL,
    status       text NOT NULL DEFAULT 'active',
    fields       jsonb NOT NULL,
    position     bigint NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, item_id)
);

CREATE TABLE product.listing_mapping_projection (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    generation   integer NOT NULL DEFAULT 1,
    listing_id   text NOT NULL,
    item_id      text,
    revision     bigint NOT NULL,
    fields       jsonb NOT NULL DEFAULT '{}'::jsonb,
    position     bigint NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, listing_id)
);

-- AW-04: the greatest contiguous processed position, committed in the same transaction as the projection.
CREATE TABLE product.progress (
    tenant_id            text NOT NULL,
    catalog_id           text NOT NULL,
    history_epoch        text NOT NULL,
    consumer             text NOT NULL,
    contiguous_position  bigint NOT NULL DEFAULT 0 CHECK (contiguous_position >= 0),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, history_epoch, consumer)
);
"""

RESOLVER_RLS_TABLES = (
    "tenant",
    "catalog",
    "source",
    "artifact_upload",
    "artifact",
    "capture",
    "capture_artifact",
    "receipt",
    "resolution_job",
    "consumer_inbox",
    "stream_cursor",
    "outbox",
)
# INV-05: captures, artifacts and receipts are immutable for the application role.
RESOLVER_INSERT_ONLY = ("artifact", "capture", "capture_artifact", "receipt", "tenant")
PRODUCT_RLS_TABLES = (
    "projected_scope",
    "inbox",
    "applied_revision",
    "parked_event",
    "item_projection",
    "listing_mapping_projection",
    "progress",
)

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def _create_roles() -> None:
    # Roles are cluster-wide: create them once, tolerate a concurrent migration of another database.
    for role in ROLES:
        op.execute(
            f"""
            DO $$ BEGIN
                CREATE ROLE {role} NOLOGIN;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END $$;
            """
        )
        # The migrating user must be able to SET ROLE (a no-op for a superuser).
        op.execute(
            f"""
            DO $$ BEGIN
                EXECUTE format('GRANT {role} TO %I', current_user);
            EXCEPTION WHEN duplicate_object OR invalid_grant_operation THEN NULL;
            END $$;
            """
        )


def _tenant_rls(schema: str, table: str, role: str) -> None:
    op.execute(f"ALTER TABLE {schema}.{table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {schema}.{table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {schema}.{table} TO {role} "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )


def upgrade() -> None:
    _create_roles()
    op.execute(RESOLVER_TABLES)
    op.execute(PRODUCT_TABLES)

    op.execute("REVOKE ALL ON SCHEMA resolver, product FROM PUBLIC")

    # resolver_app: the resolver schema only.
    op.execute("GRANT USAGE ON SCHEMA resolver TO resolver_app")
    for table in RESOLVER_RLS_TABLES:
        privileges = "SELECT, INSERT" if table in RESOLVER_INSERT_ONLY else "SELECT, INSERT, UPDATE"
        op.execute(f"GRANT {privileges} ON resolver.{table} TO resolver_app")
        _tenant_rls("resolver", table, "resolver_app")
    # Resolution stage inboxes may be pruned by retention; nothing else is ever deleted by the app.
    op.execute("GRANT DELETE ON resolver.consumer_inbox TO resolver_app")

    # resolver_relay (AW-03): read the outbox across streams, update published_at and nothing else. The relay
    # stamps tenant and catalog from the row itself (if_accepted_change), so it is not tenant-scoped.
    op.execute("GRANT USAGE ON SCHEMA resolver TO resolver_relay")
    op.execute("GRANT SELECT ON resolver.outbox TO resolver_relay")
    op.execute("GRANT UPDATE (published_at) ON resolver.outbox TO resolver_relay")
    op.execute("CREATE POLICY relay_read ON resolver.outbox FOR SELECT TO resolver_relay USING (true)")
    op.execute(
        "CREATE POLICY relay_mark ON resolver.outbox FOR UPDATE TO resolver_relay "
        "USING (published_at IS NULL) WITH CHECK (published_at IS NOT NULL)"
    )

    # product_app: the product schema only; no privilege at all on resolver.
    op.execute("GRANT USAGE ON SCHEMA product TO product_app")
    for table in PRODUCT_RLS_TABLES:
        op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON product.{table} TO product_app")
        _tenant_rls("product", table, "product_app")


def downgrade() -> None:
    op.execute("DROP SCHEMA product CASCADE")
    op.execute("DROP SCHEMA resolver CASCADE")
