"""The public redirects of merged items (if_product_query): a release that names a merge records where the merged
item's public id leads, in the serving generation like every released table.

Revision ID: 0028_public_item_redirects
Revises: 0027_claim_confidence

``product.public_item_redirect`` holds one row per merged item the releases applied so far removed: the item it
was merged into. The public item read follows the rows (a into b, b into c) to the item that is public now and
answers 301 with it. Tenant-scoped with row-level security (INV-06); ``prw_operator`` reads it for reports.
"""

from alembic import op

revision = "0028_public_item_redirects"
down_revision = "0027_claim_confidence"
branch_labels = None
depends_on = None

TABLE = "product.public_item_redirect"
TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def upgrade() -> None:
    op.execute(
        f"""CREATE TABLE {TABLE} (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    generation            integer NOT NULL DEFAULT 1,
    item_id               text NOT NULL,
    target_item_id        text NOT NULL CHECK (target_item_id <> item_id),
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    released_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, item_id)
)"""
    )
    op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {TABLE} TO product_app")
    op.execute(f"GRANT SELECT ON {TABLE} TO prw_operator")
    # INV-06: enabled, forced, one tenant_isolation policy for the application role; prw_operator reads all (0007).
    op.execute(f"ALTER TABLE {TABLE} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {TABLE} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {TABLE} TO product_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )
    op.execute(f"CREATE POLICY operator_read ON {TABLE} FOR SELECT TO prw_operator USING (true)")


def downgrade() -> None:
    op.execute(f"DROP TABLE {TABLE}")
