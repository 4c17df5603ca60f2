"""Resolver facts: catalog items, identifiers, listings, mappings, review cases, decisions, releases.

Revision ID: 0003
Revises: 0001

The decision write path (AW-01) applies these facts under the stream cursor lock, in the same transaction as the
immutable decision row and the outbox events. Every table is tenant-scoped with row-level security for
resolver_app, exactly like 0001 (INV-06).

- INV-01: ``listing_mapping`` has the listing as its primary key (one current mapping per listing), and
  ``released_listing`` likewise (one public item owner per listing).
- INV-05: decisions and releases are insert-only for resolver_app.
- INV-07: a mapping's foreign key names the item *within the listing's catalog*; "not retired" is checked by the
  decision service under the cursor lock (every writer of these tables holds it).
- AW-03: an index in the relay's read order (lowest unpublished positions first, across streams).
- History epochs: a cursor of a superseded epoch is fenced (``stream_cursor.fenced_at``) when the current epoch's
  cursor is opened, so old writers cannot commit into abandoned history.
"""

from alembic import op

revision = "0003"
down_revision = "0001"
branch_labels = None
depends_on = None

FACT_TABLES = """
ALTER TABLE resolver.stream_cursor ADD COLUMN fenced_at timestamptz;

-- AW-03: the relay takes the lowest unpublished positions across streams; this index serves that order directly.
CREATE INDEX outbox_relay_order ON resolver.outbox (position, tenant_id, catalog_id, history_epoch)
    WHERE published_at IS NULL;

CREATE TABLE resolver.catalog_item (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    item_id      text NOT NULL CHECK (item_id ~ '^itm_[a-z0-9_]{1,120}$'),
    revision     bigint NOT NULL CHECK (revision > 0),
    status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retired')),
    profile      text NOT NULL,
    title        text,
    brand        text,
    identifiers  jsonb NOT NULL DEFAULT '{}'::jsonb,
    -- INV-02: {key: {value, unit, definition_version}}, values already normalized by the pinned profile.
    attributes   jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, item_id),
    UNIQUE (tenant_id, catalog_id, item_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);

-- Strong-identifier lookup: a normalized GTIN-14 or brand + MPN names at most one item per catalog.
CREATE TABLE resolver.item_identifier (
    tenant_id   text NOT NULL,
    catalog_id  text NOT NULL,
    scheme      text NOT NULL CHECK (scheme IN ('gtin', 'brand_mpn')),
    value       text NOT NULL CHECK (value <> ''),
    item_id     text NOT NULL,
    PRIMARY KEY (tenant_id, catalog_id, scheme, value),
    FOREIGN KEY (tenant_id, catalog_id, item_id) REFERENCES resolver.catalog_item (tenant_id, catalog_id, item_id)
);
CREATE INDEX item_identifier_item ON resolver.item_identifier (tenant_id, item_id);

-- A merchant's listing, keyed naturally by (source, native record id or URL); the latest observed fields.
CREATE TABLE resolver.listing (
    tenant_id         text NOT NULL,
    catalog_id        text NOT NULL,
    listing_id        text NOT NULL CHECK (listing_id ~ '^lst_[a-z0-9_]{1,120}$'),
    source_id         text NOT NULL,
    natural_key       text NOT NULL,
    native_record_id  text,
    revision          bigint NOT NULL CHECK (revision > 0),
    url               text,
    title             text,
    price             numeric,
    currency          text CHECK (currency ~ '^[A-Z]{3}$'),
    availability      text,
    observed_at       timestamptz NOT NULL,
    capture_id        text,
    updated_at        timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, listing_id),
    UNIQUE (tenant_id, catalog_id, listing_id),
    UNIQUE (tenant_id, source_id, natural_key),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog,
    FOREIGN KEY (tenant_id, source_id) REFERENCES resolver.source
);

-- AW-01 (INV-05): the immutable decision. case_id names the case a reviewer decided (case_revision: its revision
-- after the decision) or the case a rule opened; it is null for automatic mappings and creations. effects records
-- the outbox events it committed, so a redelivered job gets the existing result back.
CREATE TABLE resolver.decision (
    tenant_id        text NOT NULL,
    catalog_id       text NOT NULL,
    history_epoch    text NOT NULL,
    decision_id      text NOT NULL CHECK (decision_id ~ '^dec_[a-z0-9_]{1,120}$'),
    case_id          text,
    case_revision    bigint,
    action           text NOT NULL
                     CHECK (action IN ('create_item_and_map', 'map_listing', 'open_review_case', 'dismiss_case')),
    actor            text NOT NULL CHECK (actor ~ '^(rule|reviewer|operator):.+$'),
    rationale        text NOT NULL,
    evidence         jsonb NOT NULL DEFAULT '[]'::jsonb,
    prior_decisions  jsonb NOT NULL DEFAULT '[]'::jsonb,
    details          jsonb NOT NULL DEFAULT '{}'::jsonb,
    effects          jsonb NOT NULL DEFAULT '{}'::jsonb,
    idempotency_key  text,
    request_sha256   text CHECK (request_sha256 ~ '^[0-9a-f]{64}$'),
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, decision_id),
    FOREIGN KEY (tenant_id, catalog_id, history_epoch) REFERENCES resolver.stream_cursor
);
CREATE UNIQUE INDEX decision_idempotency_key ON resolver.decision (tenant_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX decision_case ON resolver.decision (tenant_id, case_id) WHERE case_id IS NOT NULL;

-- INV-01: the primary key is the listing, so a listing has at most one current mapping.
CREATE TABLE resolver.listing_mapping (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    listing_id   text NOT NULL,
    item_id      text NOT NULL,
    revision     bigint NOT NULL CHECK (revision > 0),
    decision_id  text NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, listing_id),
    FOREIGN KEY (tenant_id, catalog_id, listing_id) REFERENCES resolver.listing (tenant_id, catalog_id, listing_id),
    -- INV-07: the target item exists in the listing's catalog.
    FOREIGN KEY (tenant_id, catalog_id, item_id) REFERENCES resolver.catalog_item (tenant_id, catalog_id, item_id),
    FOREIGN KEY (tenant_id, decision_id) REFERENCES resolver.decision
);
CREATE INDEX listing_mapping_item ON resolver.listing_mapping (tenant_id, item_id);

-- if_review_decision: a case is decided at the revision the reviewer saw (INV-04).
CREATE TABLE resolver.review_case (
    tenant_id    text NOT NULL,
    catalog_id   text NOT NULL,
    case_id      text NOT NULL CHECK (case_id ~ '^rc_[a-z0-9_]{1,120}$'),
    kind         text NOT NULL,
    status       text NOT NULL DEFAULT 'awaiting_human' CHECK (status IN ('awaiting_human', 'decided', 'dismissed')),
    revision     bigint NOT NULL CHECK (revision > 0),
    capture_id   text NOT NULL,
    listing_id   text NOT NULL,
    candidates   jsonb NOT NULL DEFAULT '[]'::jsonb,
    evidence     jsonb NOT NULL DEFAULT '{}'::jsonb,
    opened_by    text NOT NULL,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, case_id),
    FOREIGN KEY (tenant_id, capture_id) REFERENCES resolver.capture,
    FOREIGN KEY (tenant_id, catalog_id, listing_id) REFERENCES resolver.listing (tenant_id, catalog_id, listing_id),
    FOREIGN KEY (tenant_id, opened_by) REFERENCES resolver.decision
);
CREATE INDEX review_case_awaiting ON resolver.review_case (tenant_id, catalog_id, created_at)
    WHERE status = 'awaiting_human';

-- Release (docs/events.md): one release aggregate per catalog, its revision is the publication revision.
CREATE TABLE resolver.release_pointer (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    updated_at            timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, catalog_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);

-- INV-05: a release authorization is immutable, like the decision that caused it.
CREATE TABLE resolver.release (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    publication_revision  bigint NOT NULL CHECK (publication_revision > 0),
    decision_id           text NOT NULL,
    authorized_by         text NOT NULL,
    authorized_at         timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, catalog_id, publication_revision),
    FOREIGN KEY (tenant_id, decision_id) REFERENCES resolver.decision
);

-- The item revision and listing assignment each catalog currently publishes (INV-01: one public owner).
CREATE TABLE resolver.released_item (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    item_id               text NOT NULL,
    revision              bigint NOT NULL CHECK (revision > 0),
    publication_revision  bigint NOT NULL,
    PRIMARY KEY (tenant_id, item_id),
    FOREIGN KEY (tenant_id, catalog_id, item_id) REFERENCES resolver.catalog_item (tenant_id, catalog_id, item_id)
);

CREATE TABLE resolver.released_listing (
    tenant_id             text NOT NULL,
    catalog_id            text NOT NULL,
    listing_id            text NOT NULL,
    item_id               text NOT NULL,
    mapping_revision      bigint NOT NULL CHECK (mapping_revision > 0),
    listing_revision      bigint NOT NULL CHECK (listing_revision > 0),
    publication_revision  bigint NOT NULL,
    PRIMARY KEY (tenant_id, listing_id),
    FOREIGN KEY (tenant_id, catalog_id, listing_id) REFERENCES resolver.listing (tenant_id, catalog_id, listing_id),
    FOREIGN KEY (tenant_id, catalog_id, item_id) REFERENCES resolver.catalog_item (tenant_id, catalog_id, item_id)
);
"""

#: (table, privileges for resolver_app). INV-05: decisions and releases are never updated or deleted.
TABLE_GRANTS = (
    ("catalog_item", "SELECT, INSERT, UPDATE"),
    ("item_identifier", "SELECT, INSERT, UPDATE"),
    ("listing", "SELECT, INSERT, UPDATE"),
    ("decision", "SELECT, INSERT"),
    ("listing_mapping", "SELECT, INSERT, UPDATE"),
    ("review_case", "SELECT, INSERT, UPDATE"),
    ("release_pointer", "SELECT, INSERT, UPDATE"),
    ("release", "SELECT, INSERT"),
    ("released_item", "SELECT, INSERT, UPDATE"),
    ("released_listing", "SELECT, INSERT, UPDATE"),
)

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def _tenant_rls(table: str) -> None:
    # The same pattern as 0001: enabled, forced, one tenant_isolation policy for the application role (INV-06).
    op.execute(f"ALTER TABLE resolver.{table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE resolver.{table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON resolver.{table} TO resolver_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )


def upgrade() -> None:
    op.execute(FACT_TABLES)
    for table, privileges in TABLE_GRANTS:
        op.execute(f"GRANT {privileges} ON resolver.{table} TO resolver_app")
        _tenant_rls(table)


def downgrade() -> None:
    for table, _ in reversed(TABLE_GRANTS):
        op.execute(f"DROP TABLE resolver.{table}")
    op.execute("DROP INDEX resolver.outbox_relay_order")
    op.execute("ALTER TABLE resolver.stream_cursor DROP COLUMN fenced_at")
