"""Released item pictures and class pictures (seed 004): through the accepted-change stream and
the release path, never before release.

Revision ID: 0019_released_pictures
Revises: 0016_retention (re-chained when branches merge)

Resolver:

- ``catalog_file_aggregate``: the revision counter of each ``item_pictures`` (aggregate id: the item id) and
  ``product_class`` aggregate, bumped by every save under the stream cursor lock (AW-01); a deleted class keeps its
  row (``deleted``) so that a class created again continues the revisions (the product compares revisions).
- ``released_file_aggregate``: the revision of each of them the catalog publishes (like ``released_merchant``),
  so the next release publishes only what changed and removes a deleted class once.
- The decision actions gain ``save_item_pictures``, ``save_product_class`` and ``delete_product_class``.
- ``catalog_file`` gains ``width`` and ``height``: pixels, when the picture's header says (null otherwise, and for
  files prepared before this revision).

Product (AW-04, per generation like ``item_projection`` / ``public_item``):

- ``item_pictures_projection``, ``product_class_projection``: the internal projection, never served;
- ``public_item_pictures``, ``public_class``: the released snapshot the public API serves.

Tenant-scoped with row-level security (INV-06).
"""

from alembic import op

revision = "0019_released_pictures"
down_revision = "0016_retention"
branch_labels = None
depends_on = None

RESOLVER_TABLES = """
CREATE TABLE resolver.catalog_file_aggregate (
    tenant_id       text NOT NULL,
    catalog_id      text NOT NULL,
    aggregate_type  text NOT NULL CHECK (aggregate_type IN ('item_pictures', 'product_class')),
    aggregate_id    text NOT NULL,
    revision        bigint NOT NULL CHECK (revision > 0),
    deleted         boolean NOT NULL DEFAULT false,
    decision_id     text NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_type, aggregate_id),
    FOREIGN KEY (tenant_id, decision_id) REFERENCES resolver.decision
);
CREATE INDEX catalog_file_aggregate_by_catalog ON resolver.catalog_file_aggregate (tenant_id, catalog_id);
CREATE TABLE resolver.released_file_aggregate (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    aggregate_type        text NOT NULL,
    aggregate_id          text NOT NULL,
    revision              bigint NOT NULL CHECK (revision > 0),
    publication_revision  bigint NOT NULL,
    PRIMARY KEY (tenant_id, aggregate_type, aggregate_id),
    FOREIGN KEY (tenant_id, aggregate_type, aggregate_id) REFERENCES resolver.catalog_file_aggregate
);
"""

ACTIONS = (
    "'create_item_and_map', 'map_listing', 'open_review_case', 'dismiss_case', "
    "'authorize_release', 'set_release_policy', "
    "'provision_merchant', 'bind_source', 'accept_shipping_policy', 'retire_item'"
)
NEW_ACTIONS = "'save_item_pictures', 'save_product_class', 'delete_product_class'"


def _projection(table: str, key: str) -> str:
    return f"""
CREATE TABLE product.{table} (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    generation   integer NOT NULL DEFAULT 1,
    {key}  text NOT NULL,
    revision     bigint NOT NULL CHECK (revision > 0),
    deleted      boolean NOT NULL DEFAULT false,
    fields       jsonb NOT NULL,
    position     bigint NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, {key})
);"""


def _public(table: str, key: str) -> str:
    return f"""
CREATE TABLE product.{table} (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    generation            integer NOT NULL DEFAULT 1,
    {key}  text NOT NULL,
    published_revision    bigint NOT NULL CHECK (published_revision > 0),
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    fields                jsonb NOT NULL,
    released_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, {key})
);"""


PRODUCT_TABLES = (
    ("item_pictures_projection", "item_id", _projection),
    ("product_class_projection", "class_id", _projection),
    ("public_item_pictures", "item_id", _public),
    ("public_class", "class_id", _public),
)

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def _secure(table: str, app_role: str, privileges: str) -> None:
    op.execute(f"GRANT {privileges} ON {table} TO {app_role}")
    op.execute(f"GRANT SELECT ON {table} TO prw_operator")
    # INV-06: enabled, forced, one tenant_isolation policy for the application role; prw_operator reads all (0007).
    op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON {table} TO {app_role} "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )
    op.execute(f"CREATE POLICY operator_read ON {table} FOR SELECT TO prw_operator USING (true)")


def _decision_actions(actions: str) -> None:
    op.execute("ALTER TABLE resolver.decision DROP CONSTRAINT decision_action_check")
    op.execute(
        f"ALTER TABLE resolver.decision ADD CONSTRAINT decision_action_check CHECK (action IN ({actions}))"
    )


def upgrade() -> None:
    op.execute(
        "ALTER TABLE resolver.catalog_file ADD COLUMN width integer CHECK (width > 0), "
        "ADD COLUMN height integer CHECK (height > 0)"
    )
    op.execute(RESOLVER_TABLES)
    for table in ("catalog_file_aggregate", "released_file_aggregate"):
        _secure(f"resolver.{table}", "resolver_app", "SELECT, INSERT, UPDATE")
    for table, key, ddl in PRODUCT_TABLES:
        op.execute(ddl(table, key))
        _secure(f"product.{table}", "product_app", "SELECT, INSERT, UPDATE, DELETE")
    _decision_actions(f"{ACTIONS}, {NEW_ACTIONS}")


def downgrade() -> None:
    _decision_actions(ACTIONS)
    for table, _, _ in reversed(PRODUCT_TABLES):
        op.execute(f"DROP TABLE product.{table}")
    op.execute("DROP TABLE resolver.released_file_aggregate")
    op.execute("DROP TABLE resolver.catalog_file_aggregate")
    op.execute("ALTER TABLE resolver.catalog_file DROP COLUMN width, DROP COLUMN height")
