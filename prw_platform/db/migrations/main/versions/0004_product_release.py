"""Product release and public read model: internal listing state, release pointer, public items and listings.

Revision ID: 0004
Revises: 0001

AW-04 applies accepted changes into the internal projection (0001: item_projection, listing_mapping_projection,
plus listing_projection here). Internal application never publishes (if_product_query): a ``release.authorized``
event switches ``release_pointer`` and copies its public snapshot into ``public_item`` / ``public_listing`` in
the same product transaction, and the public serializer reads only those two tables.

INV-01: ``public_listing`` is keyed by listing, so a listing has at most one public item owner. The owner is not a
foreign key: a release may assign a listing to an item a later release publishes, and a listing shows only under
a public item, so such a row stays invisible rather than poisoning the release. Every table is tenant-scoped with row-level security
exactly like 0001 (INV-06).
"""

from alembic import op

revision = "0004"
down_revision = "0001"
branch_labels = None
depends_on = None

PRODUCT_RELEASE_TABLES = """
-- AW-04: listing.observed events apply here (full state per revision); internal, never served publicly.
CREATE TABLE product.listing_projection (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    generation   integer NOT NULL DEFAULT 1,
    listing_id   text NOT NULL,
    revision     bigint NOT NULL CHECK (revision > 0),
    fields       jsonb NOT NULL,
    position     bigint NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, listing_id)
);

-- if_product_query: the release the public API serves; publication_revision identifies it.
CREATE TABLE product.release_pointer (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    generation            integer NOT NULL DEFAULT 1,
    release_id            text NOT NULL,
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    event_id              text NOT NULL,
    position              bigint NOT NULL,
    applied_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation)
);

-- The released snapshot of an item: published_revision is the item revision in the release that last published
-- it, publication_revision that release. fields holds public fields only (whitelisted when applied).
CREATE TABLE product.public_item (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    generation            integer NOT NULL DEFAULT 1,
    item_id               text NOT NULL,
    published_revision    bigint NOT NULL CHECK (published_revision > 0),
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    fields                jsonb NOT NULL,
    released_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, item_id)
);
CREATE INDEX public_item_brand ON product.public_item
    (tenant_id, catalog_id, generation, lower(fields->>'brand'));
CREATE INDEX public_item_gtin ON product.public_item
    (tenant_id, catalog_id, generation, (fields->'identifiers'->>'gtin'));

-- INV-01: one row per listing, so one public item owner (shown only while that item is public).
CREATE TABLE product.public_listing (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    generation            integer NOT NULL DEFAULT 1,
    listing_id            text NOT NULL,
    item_id               text NOT NULL,
    mapping_revision      bigint NOT NULL CHECK (mapping_revision > 0),
    listing_revision      bigint NOT NULL CHECK (listing_revision > 0),
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    fields                jsonb NOT NULL,
    released_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, catalog_id, generation, listing_id)
);
CREATE INDEX public_listing_by_item ON product.public_listing (tenant_id, catalog_id, generation, item_id);

-- Lag and parked reports read the inbox by outcome per stream.
CREATE INDEX inbox_by_outcome ON product.inbox (tenant_id, catalog_id, history_epoch, outcome);
"""

NEW_TABLES = ("listing_projection", "release_pointer", "public_item", "public_listing")

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def upgrade() -> None:
    op.execute(PRODUCT_RELEASE_TABLES)
    for table in NEW_TABLES:
        op.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON product.{table} TO product_app")
        # INV-06: the same policy as every product table in 0001.
        op.execute(f"ALTER TABLE product.{table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE product.{table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY tenant_isolation ON product.{table} TO product_app "
            f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
        )


def downgrade() -> None:
    op.execute("DROP INDEX product.inbox_by_outcome")
    for table in reversed(NEW_TABLES):
        op.execute(f"DROP TABLE product.{table}")
