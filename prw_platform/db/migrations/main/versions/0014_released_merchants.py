"""What each catalog publishes of its merchants, source bindings and shipping policies.

Revision ID: 0014_released_merchants
Revises: 0013_review_queue

Like ``released_item`` and ``released_listing`` (0003): the resolver remembers the revision of each merchant fact
that a release (automatic or an operator's) published, so that the next release publishes only what changed and
a manual catalog's release publishes its merchants at all. Tenant-scoped with row-level security (INV-06).

Releases written before this revision are not recorded here: the next release of such a catalog publishes its
merchants once more at their current revisions, which the product applies as the same public state.

The decision actions gain ``retire_item`` (INV-07: an operator retires an item; the next release removes it).
"""

from alembic import op

revision = "0014_released_merchants"
down_revision = "0013_review_queue"
branch_labels = None
depends_on = None

# (table, key column, the fact table its revision belongs to)
NEW_TABLES = (
    ("released_merchant", "merchant_id", "merchant"),
    ("released_merchant_source", "source_id", "merchant_source"),
    ("released_shipping_policy", "merchant_id", "shipping_policy"),
)


def _tracking_table(table: str, key: str, fact: str) -> str:
    return f"""
CREATE TABLE resolver.{table} (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    {key}  text NOT NULL,
    revision              bigint NOT NULL CHECK (revision > 0),
    publication_revision  bigint NOT NULL,
    PRIMARY KEY (tenant_id, {key}),
    FOREIGN KEY (tenant_id, {key}) REFERENCES resolver.{fact}
);"""


ACTIONS = (
    "'create_item_and_map', 'map_listing', 'open_review_case', 'dismiss_case', "
    "'authorize_release', 'set_release_policy', "
    "'provision_merchant', 'bind_source', 'accept_shipping_policy'"
)


def _decision_actions(actions: str) -> None:
    op.execute("ALTER TABLE resolver.decision DROP CONSTRAINT decision_action_check")
    op.execute(
        f"ALTER TABLE resolver.decision ADD CONSTRAINT decision_action_check CHECK (action IN ({actions}))"
    )


TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def _secure(table: str) -> None:
    op.execute(f"GRANT SELECT, INSERT, UPDATE ON {table} TO resolver_app")
    op.execute(f"GRANT SELECT ON {table} TO prw_operator")
    # INV-06: enabled, forced, one tenant_isolation policy for the application role; prw_operator reads all (0007).
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {table} TO resolver_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )
    op.execute(f"CREATE POLICY operator_read ON {table} FOR SELECT TO prw_operator USING (true)")


def upgrade() -> None:
    for table, key, fact in NEW_TABLES:
        op.execute(_tracking_table(table, key, fact))
        _secure(f"resolver.{table}")
    _decision_actions(f"{ACTIONS}, 'retire_item'")


def downgrade() -> None:
    _decision_actions(ACTIONS)
    for table, _, _ in reversed(NEW_TABLES):
        op.execute(f"DROP TABLE resolver.{table}")
