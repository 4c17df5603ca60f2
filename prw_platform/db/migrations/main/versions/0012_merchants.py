"""Merchants, source → merchant bindings, shipping policies and inventory observations.

Revision ID: 0012_merchants
Revises: 0011 (the merge of 0010 and 0010_operator_sessions; until it lands here, both of them)

Resolver side (AW-01): an operator provisions a merchant, binds a source to it and has a shipping policy accepted,
each a decision with its fact at revision + 1 and an outbox event (``merchant.*``, ``shipping_policy.accepted``),
under the stream cursor lock like every other fact.

Product side (AW-04): the internal projections of those aggregates, ``inventory_observation`` (one row per listing
revision observed: the history of price, currency, availability and observed_at), and the released public
snapshot of merchants, bindings and policies (if_product_query: only released data is public). Every table is
tenant-scoped with row-level security like 0001/0003/0004 (INV-06), readable by prw_operator like 0007.
"""

from alembic import op

revision = "0012_merchants"
down_revision = "0011"
branch_labels = None
depends_on = None

RESOLVER_TABLES = """
-- An operator-provisioned merchant (AW-01 fact, revision + 1 per accepted change).
CREATE TABLE resolver.merchant (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    merchant_id  text NOT NULL CHECK (merchant_id ~ '^mer_[a-z0-9_]{1,120}$'),
    revision     bigint NOT NULL CHECK (revision > 0),
    name         text NOT NULL CHECK (name <> ''),
    url          text,
    decision_id  text NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, merchant_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog,
    FOREIGN KEY (tenant_id, decision_id) REFERENCES resolver.decision
);

-- One merchant per source: the source's listings are that merchant's offers.
CREATE TABLE resolver.merchant_source (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    source_id    text NOT NULL,
    merchant_id  text NOT NULL,
    revision     bigint NOT NULL CHECK (revision > 0),
    decision_id  text NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, source_id),
    FOREIGN KEY (tenant_id, source_id) REFERENCES resolver.source,
    FOREIGN KEY (tenant_id, merchant_id) REFERENCES resolver.merchant,
    FOREIGN KEY (tenant_id, decision_id) REFERENCES resolver.decision
);

-- A merchant's one shipping policy: rates per ISO 3166-1 alpha-2 destination, free-shipping threshold, currency.
CREATE TABLE resolver.shipping_policy (
    tenant_id                text NOT NULL,
    catalog_id               text NOT NULL,
    merchant_id              text NOT NULL,
    revision                 bigint NOT NULL CHECK (revision > 0),
    currency                 text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    rates                    jsonb NOT NULL,
    free_shipping_threshold  numeric CHECK (free_shipping_threshold >= 0),
    decision_id              text NOT NULL,
    updated_at               timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, merchant_id),
    FOREIGN KEY (tenant_id, merchant_id) REFERENCES resolver.merchant,
    FOREIGN KEY (tenant_id, decision_id) REFERENCES resolver.decision
);

ALTER TABLE resolver.decision DROP CONSTRAINT decision_action_check;
ALTER TABLE resolver.decision ADD CONSTRAINT decision_action_check CHECK (action IN (
    'create_item_and_map', 'map_listing', 'open_review_case', 'dismiss_case',
    'authorize_release', 'set_release_policy',
    'provision_merchant', 'bind_source', 'accept_shipping_policy'));
"""


def _fact_projection(table: str, key: str) -> str:
    """AW-04 internal projection of one merchant fact (full state per revision), never served publicly."""
    return f"""
CREATE TABLE product.{table} (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    generation   integer NOT NULL DEFAULT 1,
    {key}  text NOT NULL,
    revision     bigint NOT NULL CHECK (revision > 0),
    fields       jsonb NOT NULL,
    position     bigint NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, {key})
);"""


FACT_PROJECTIONS = (
    ("merchant_projection", "merchant_id"),
    ("merchant_source_projection", "source_id"),
    ("shipping_policy_projection", "merchant_id"),
)

PRODUCT_TABLES = """
-- History kept: one row per observed listing revision (listing.observed), never updated.
CREATE TABLE product.inventory_observation (
    tenant_id         text NOT NULL,
    catalog_id        text NOT NULL,
    generation        integer NOT NULL DEFAULT 1,
    listing_id        text NOT NULL,
    listing_revision  bigint NOT NULL CHECK (listing_revision > 0),
    price             numeric,
    currency          text,
    availability      text,
    observed_at       timestamptz NOT NULL,
    position          bigint NOT NULL,
    PRIMARY KEY (tenant_id, catalog_id, generation, listing_id, listing_revision)
);

-- The released public snapshot (if_product_query), written when a release.authorized event applies.
CREATE TABLE product.public_merchant (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    generation            integer NOT NULL DEFAULT 1,
    merchant_id           text NOT NULL,
    published_revision    bigint NOT NULL CHECK (published_revision > 0),
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    fields                jsonb NOT NULL,
    released_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, merchant_id)
);
CREATE TABLE product.public_merchant_source (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    generation            integer NOT NULL DEFAULT 1,
    source_id             text NOT NULL,
    merchant_id           text NOT NULL,
    published_revision    bigint NOT NULL CHECK (published_revision > 0),
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    released_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, source_id)
);
CREATE INDEX public_merchant_source_by_merchant
    ON product.public_merchant_source (tenant_id, catalog_id, generation, merchant_id);
CREATE TABLE product.public_shipping_policy (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    generation            integer NOT NULL DEFAULT 1,
    merchant_id           text NOT NULL,
    published_revision    bigint NOT NULL CHECK (published_revision > 0),
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    fields                jsonb NOT NULL,
    released_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, merchant_id)
);
"""

RESOLVER_GRANTS = (
    ("merchant", "SELECT, INSERT, UPDATE"),
    ("merchant_source", "SELECT, INSERT, UPDATE"),
    ("shipping_policy", "SELECT, INSERT, UPDATE"),
)
PRODUCT_TABLES_NEW = (
    "merchant_projection",
    "merchant_source_projection",
    "shipping_policy_projection",
    "inventory_observation",
    "public_merchant",
    "public_merchant_source",
    "public_shipping_policy",
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


def upgrade() -> None:
    op.execute(RESOLVER_TABLES)
    for table, privileges in RESOLVER_GRANTS:
        _secure(f"resolver.{table}", "resolver_app", privileges)
    for table, key in FACT_PROJECTIONS:
        op.execute(_fact_projection(table, key))
    op.execute(PRODUCT_TABLES)
    for table in PRODUCT_TABLES_NEW:
        _secure(f"product.{table}", "product_app", "SELECT, INSERT, UPDATE, DELETE")


def downgrade() -> None:
    for table in reversed(PRODUCT_TABLES_NEW):
        op.execute(f"DROP TABLE product.{table}")
    for table, _ in reversed(RESOLVER_GRANTS):
        op.execute(f"DROP TABLE resolver.{table}")
    op.execute("ALTER TABLE resolver.decision DROP CONSTRAINT decision_action_check")
    op.execute(
        "ALTER TABLE resolver.decision ADD CONSTRAINT decision_action_check CHECK (action IN ("
        "'create_item_and_map', 'map_listing', 'open_review_case', 'dismiss_case',"
        " 'authorize_release', 'set_release_policy'))"
    )
