"""The inventory history, a rebuild's heartbeat and the relay's pause of a fenced catalog: one migration, as
the house rules ask.

Revision ID: 0021_inventory_history
Revises: 0020_released_fields

* ``product.rebuild.heartbeat_at``: the rebuild's owner renews it with the export lease. A rebuild whose heartbeat
  is older than ``PRW_REBUILD_STALE_AFTER_SECONDS`` is stale: ``prw product rebuild --abandon`` marks it
  ``abandoned`` (a new status, a finished one: the cleanup drops its shadow generation), so a new rebuild may
  start. Existing rows get ``started_at`` as their heartbeat (an old ``loading`` row is stale at once).
* ``resolver.outbox_relay_pause``: a catalog whose history epoch is being fenced (``prw epoch fence``) is not
  relayed until the fence completed (if_projection_bootstrap "Pause writers, relay, consumers and public
  serving"). The relay reads every row (its role sees all tenants); the fence writes them as ``resolver_app``.
* ``resolver.inventory_observation``: every accepted observation of a listing (price, currency, availability,
  observed_at, the listing revision that carried it), appended in the decision transaction that writes the
  listing's revision (``decisions.facts.write_listing``). ``resolver.listing`` keeps only the current state, so
  a snapshot export could not carry the history before W; it now does (the ``inventory_history`` object).
  Append-only: ``resolver_app`` may insert and read, never update or delete. Backfilled with each listing's
  current revision (the history before this migration is not known on the resolver side).
"""

from alembic import op

revision = "0021_inventory_history"
down_revision = "0020_released_fields"
branch_labels = None
depends_on = None

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"

UPGRADE = """
ALTER TABLE product.rebuild ADD COLUMN heartbeat_at timestamptz;
UPDATE product.rebuild SET heartbeat_at = started_at;
ALTER TABLE product.rebuild ALTER COLUMN heartbeat_at SET NOT NULL;
ALTER TABLE product.rebuild ALTER COLUMN heartbeat_at SET DEFAULT now();
ALTER TABLE product.rebuild DROP CONSTRAINT rebuild_status_check;
ALTER TABLE product.rebuild ADD CONSTRAINT rebuild_status_check
    CHECK (status IN ('loading', 'catching_up', 'cut_over', 'failed', 'abandoned'));

CREATE TABLE resolver.inventory_observation (
    tenant_id         text NOT NULL,
    catalog_id        text NOT NULL,
    listing_id        text NOT NULL,
    listing_revision  bigint NOT NULL CHECK (listing_revision > 0),
    price             numeric,
    currency          text,
    availability      text,
    observed_at       timestamptz NOT NULL,
    recorded_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, listing_id, listing_revision)
);
CREATE INDEX inventory_observation_catalog ON resolver.inventory_observation (tenant_id, catalog_id, listing_id);
INSERT INTO resolver.inventory_observation (tenant_id, catalog_id, listing_id, listing_revision, price, currency,
    availability, observed_at, recorded_at)
SELECT tenant_id, catalog_id, listing_id, revision, price, currency, availability, observed_at, updated_at
  FROM resolver.listing;

CREATE TABLE resolver.outbox_relay_pause (
    tenant_id   text NOT NULL,
    catalog_id  text NOT NULL,
    paused_at   timestamptz NOT NULL DEFAULT now(),
    reason      text NOT NULL,
    PRIMARY KEY (tenant_id, catalog_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);
"""

DOWNGRADE = """
DROP TABLE resolver.outbox_relay_pause;
DROP TABLE resolver.inventory_observation;
UPDATE product.rebuild SET status = 'failed' WHERE status = 'abandoned';
ALTER TABLE product.rebuild DROP CONSTRAINT rebuild_status_check;
ALTER TABLE product.rebuild ADD CONSTRAINT rebuild_status_check
    CHECK (status IN ('loading', 'catching_up', 'cut_over', 'failed'));
ALTER TABLE product.rebuild DROP COLUMN heartbeat_at;
"""


def upgrade() -> None:
    op.execute(UPGRADE)
    op.execute("GRANT SELECT, INSERT ON resolver.inventory_observation TO resolver_app")
    op.execute("ALTER TABLE resolver.inventory_observation ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE resolver.inventory_observation FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON resolver.inventory_observation TO resolver_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )
    op.execute("GRANT SELECT ON resolver.inventory_observation TO prw_operator")
    op.execute(
        "CREATE POLICY operator_read ON resolver.inventory_observation FOR SELECT TO prw_operator USING (true)"
    )
    op.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON resolver.outbox_relay_pause TO resolver_app")
    op.execute("ALTER TABLE resolver.outbox_relay_pause ENABLE ROW LEVEL SECURITY")
    op.execute("ALTER TABLE resolver.outbox_relay_pause FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON resolver.outbox_relay_pause TO resolver_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )
    op.execute("GRANT SELECT ON resolver.outbox_relay_pause TO resolver_relay, prw_operator")
    op.execute(
        "CREATE POLICY relay_read ON resolver.outbox_relay_pause FOR SELECT TO resolver_relay USING (true)"
    )
    op.execute(
        "CREATE POLICY operator_read ON resolver.outbox_relay_pause FOR SELECT TO prw_operator USING (true)"
    )


def downgrade() -> None:
    op.execute(DOWNGRADE)
