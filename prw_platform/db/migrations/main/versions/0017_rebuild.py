"""Product rebuild into an isolated generation, and the pause of a fenced stream (seed 003
if_projection_bootstrap "Load shadow", "Catch up and cut over", "Fence restored history").

Revision ID: 0017_rebuild
Revises: 0016_retention (re-chained when branches merged)

* ``product.inbox``, ``product.parked_event`` and ``product.applied_revision`` get a ``generation``: a shadow
  generation (``serving_generation + 1``) has its own dedupe, parking and applied revisions, so its catch-up
  applies the retained tail with the same rules as the live consumer without touching the live generation.
  Existing rows are generation 1 (the default of every projection table). Old-epoch audit rows are written at
  generation 0: one audit row per delivered old-epoch event, whatever generation serves.
* ``product.projected_scope.paused_at`` / ``paused_reason``: a fenced stream (``prw epoch fence``) is paused:
  public serving answers 503 UNAVAILABLE until the rebuild from restored state cut over.
* ``product.rebuild``: one row per rebuild (export, shadow generation, W, H, status, the previous generation
  and when it was cleaned up), the operator's record and the cleanup stage's work list.
"""

from alembic import op

revision = "0017_rebuild"
down_revision = "0019_released_pictures"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE product.inbox ADD COLUMN generation integer NOT NULL DEFAULT 1 CHECK (generation >= 0);
ALTER TABLE product.inbox DROP CONSTRAINT inbox_pkey;
ALTER TABLE product.inbox ADD PRIMARY KEY (tenant_id, catalog_id, history_epoch, generation, event_id);
ALTER TABLE product.inbox DROP CONSTRAINT inbox_tenant_id_catalog_id_history_epoch_position_key;
ALTER TABLE product.inbox ADD CONSTRAINT inbox_generation_position_key
    UNIQUE (tenant_id, catalog_id, history_epoch, generation, position);

ALTER TABLE product.parked_event ADD COLUMN generation integer NOT NULL DEFAULT 1 CHECK (generation >= 1);
ALTER TABLE product.parked_event DROP CONSTRAINT parked_event_pkey;
ALTER TABLE product.parked_event ADD PRIMARY KEY (tenant_id, catalog_id, history_epoch, generation, event_id);
DROP INDEX product.parked_event_waiting;
CREATE INDEX parked_event_waiting ON product.parked_event
    (tenant_id, catalog_id, generation, waiting_for_type, waiting_for_id, waiting_for_revision);

ALTER TABLE product.applied_revision ADD COLUMN generation integer NOT NULL DEFAULT 1 CHECK (generation >= 1);
ALTER TABLE product.applied_revision DROP CONSTRAINT applied_revision_pkey;
ALTER TABLE product.applied_revision ADD PRIMARY KEY (tenant_id, catalog_id, generation, aggregate_type, aggregate_id);

ALTER TABLE product.projected_scope ADD COLUMN paused_at timestamptz;
ALTER TABLE product.projected_scope ADD COLUMN paused_reason text;

CREATE TABLE product.rebuild (
    rebuild_id           text NOT NULL CHECK (rebuild_id ~ '^rbd_[a-z0-9_]{1,120}$'),
    tenant_id            text NOT NULL,
    catalog_id           text NOT NULL,
    history_epoch        text NOT NULL,
    export_id            text NOT NULL,
    lease_id             text,
    generation           integer NOT NULL CHECK (generation >= 1),
    previous_generation  integer NOT NULL CHECK (previous_generation >= 1),
    start_position       bigint NOT NULL CHECK (start_position >= 0),
    target_position      bigint,
    loaded_rows          bigint NOT NULL DEFAULT 0,
    status               text NOT NULL
                         CHECK (status IN ('loading', 'catching_up', 'cut_over', 'failed')),
    error_code           text,
    error                text,
    started_at           timestamptz NOT NULL DEFAULT now(),
    finished_at          timestamptz,
    cleaned_at           timestamptz,
    PRIMARY KEY (tenant_id, rebuild_id)
);
-- At most one rebuild of a stream at a time (the shadow generation is serving_generation + 1).
CREATE UNIQUE INDEX rebuild_one_active ON product.rebuild (tenant_id, catalog_id)
    WHERE status IN ('loading', 'catching_up');
CREATE INDEX rebuild_uncleaned ON product.rebuild (finished_at) WHERE cleaned_at IS NULL AND finished_at IS NOT NULL;
"""

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"

DOWNGRADE = """
DROP TABLE product.rebuild;
ALTER TABLE product.projected_scope DROP COLUMN paused_reason;
ALTER TABLE product.projected_scope DROP COLUMN paused_at;
DELETE FROM product.applied_revision WHERE generation <> 1;
ALTER TABLE product.applied_revision DROP CONSTRAINT applied_revision_pkey;
ALTER TABLE product.applied_revision DROP COLUMN generation;
ALTER TABLE product.applied_revision ADD PRIMARY KEY (tenant_id, catalog_id, aggregate_type, aggregate_id);
DELETE FROM product.parked_event WHERE generation <> 1;
DROP INDEX product.parked_event_waiting;
ALTER TABLE product.parked_event DROP CONSTRAINT parked_event_pkey;
ALTER TABLE product.parked_event DROP COLUMN generation;
ALTER TABLE product.parked_event ADD PRIMARY KEY (tenant_id, catalog_id, history_epoch, event_id);
CREATE INDEX parked_event_waiting ON product.parked_event
    (tenant_id, catalog_id, waiting_for_type, waiting_for_id, waiting_for_revision);
DELETE FROM product.inbox WHERE generation NOT IN (0, 1);
DELETE FROM product.inbox a USING product.inbox b
 WHERE a.generation = 0 AND b.generation = 1 AND (a.tenant_id, a.catalog_id, a.history_epoch, a.event_id)
       = (b.tenant_id, b.catalog_id, b.history_epoch, b.event_id);
ALTER TABLE product.inbox DROP CONSTRAINT inbox_generation_position_key;
ALTER TABLE product.inbox DROP CONSTRAINT inbox_pkey;
ALTER TABLE product.inbox DROP COLUMN generation;
ALTER TABLE product.inbox ADD PRIMARY KEY (tenant_id, catalog_id, history_epoch, event_id);
ALTER TABLE product.inbox ADD CONSTRAINT inbox_tenant_id_catalog_id_history_epoch_position_key
    UNIQUE (tenant_id, catalog_id, history_epoch, position);
"""


def upgrade() -> None:
    op.execute(UPGRADE)
    op.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON product.rebuild TO product_app")
    op.execute("GRANT SELECT ON product.rebuild TO prw_operator")
    op.execute("ALTER TABLE product.rebuild ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE product.rebuild FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON product.rebuild TO product_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )
    op.execute("CREATE POLICY operator_read ON product.rebuild FOR SELECT TO prw_operator USING (true)")


def downgrade() -> None:
    op.execute(DOWNGRADE)
