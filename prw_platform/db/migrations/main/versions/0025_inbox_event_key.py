"""The inbox probe's lookups through keys of their own (AW-04 "Inbox check").

Revision ID: 0025_inbox_event_key
Revises: 0024_public_item_brand_order

``inbox.known`` looks up each delivery of a batch by event id in the stream's inbox. Written as equalities on the
stream (tenant, catalog, history epoch, generation) and the event id, the lookup could use the primary key (all
five columns: one entry) or the position key's stream prefix with the event id as a filter (the whole stream):
with statistics taken while the inbox was empty (every new deployment: ``prw migrate``, then deliveries), both are
estimated at one row, the tie goes to the later-created index, which is the position key, and every probed id
read the whole stream: 400 ids x 3,000 rows = 1.2 million rows fetched for one batch (a test pins it), and apply
slowed down as a fresh stream's inbox grew (bench/README.md).

``inbox.event_key`` and ``inbox.position_key`` spell the stream and the event id, or the stream and the position, as
one text key each (``product.inbox_stream_key``, each part length-prefixed, so no part can run into the next),
stored with the row (generated columns) under unique indexes, and each half of the probe compares its column with
the probed key: no other index has the column, and the stream is no longer a set of equalities another index's
prefix could be scanned by (only row-level security's tenant condition is, estimated at 0.5 % of the table, which
loses to a unique match as soon as the table has a few hundred rows). Both halves, so that neither depends on
which index wins a tie (the position half did, and won it only by being the later index).

Not covered: statistics taken while the inbox's pages held no live row (an ANALYZE after deleting everything, when
the VACUUM before it could not give the empty pages back) say it holds no rows at any size, which ties every index
path at one row again. Columns and not indexes on the expression: under row-level security a condition calling a
function that is not leakproof is not used as an index condition (it must not run before the policy's), and only
a superuser may declare one leakproof; ``=`` on text is.
"""

from alembic import op

revision = "0025_inbox_event_key"
down_revision = "0024_public_item_brand_order"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE FUNCTION product.inbox_stream_key(tenant_id text, catalog_id text, history_epoch text, generation integer,
                                         part text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN length(tenant_id) || ':' || tenant_id || length(catalog_id) || ':' || catalog_id
           || length(history_epoch) || ':' || history_epoch || generation || ':' || part;

ALTER TABLE product.inbox
    ADD COLUMN event_key text NOT NULL
        GENERATED ALWAYS AS (product.inbox_stream_key(tenant_id, catalog_id, history_epoch, generation, event_id))
        STORED,
    ADD COLUMN position_key text NOT NULL
        GENERATED ALWAYS AS
            (product.inbox_stream_key(tenant_id, catalog_id, history_epoch, generation, position::text)) STORED;
CREATE UNIQUE INDEX inbox_event_key ON product.inbox (event_key);
CREATE UNIQUE INDEX inbox_position_key ON product.inbox (position_key);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute("ALTER TABLE product.inbox DROP COLUMN event_key, DROP COLUMN position_key")
    op.execute("DROP FUNCTION product.inbox_stream_key(text, text, text, integer, text)")
