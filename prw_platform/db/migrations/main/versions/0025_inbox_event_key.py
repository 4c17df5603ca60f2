"""The inbox probe's event-id lookups through a key of their own (issue 9, AW-04 "Inbox check").

Revision ID: 0025_inbox_event_key
Revises: 0024_public_item_brand_order

``inbox.known`` looks up each delivery of a batch by event id in the stream's inbox. Written as equalities on the
stream (tenant, catalog, history epoch, generation) and the event id, the lookup could use the primary key (all
five columns: one entry) or the position key's stream prefix with the event id as a filter (the whole stream):
with statistics taken while the inbox was empty (every new deployment: ``prw migrate``, then deliveries), both are
estimated at one row, the tie goes to the later-created index, which is the position key, and every probed id
read the whole stream: 400 ids x 3,000 rows = 1.2 million rows fetched for one batch (a test pins it), apply
slowing from 1,473 to 369 events/s over the first 15,000 events of a fresh stream (bench/README.md).

``inbox.event_key`` spells the stream and the event id as one text key (``product.inbox_event_key``, each part
length-prefixed, so no id can run into the next), stored with the row (a generated column) under a unique index,
and the probe's event-id half compares that column with the key of the probed id: no other index has the column,
and the stream columns are no longer equalities the position key could be scanned by (only row-level security's
tenant condition is, estimated at 0.5 % of the table, which loses to a unique match as soon as the table has a few
hundred rows). A column and not an index on the expression: under row-level security a condition calling a
function that is not leakproof is not used as an index condition (it must not run before the policy's), and only a
superuser may declare one leakproof; ``=`` on text is.
"""

from alembic import op

revision = "0025_inbox_event_key"
down_revision = "0024_public_item_brand_order"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE FUNCTION product.inbox_event_key(tenant_id text, catalog_id text, history_epoch text, generation integer,
                                        event_id text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN length(tenant_id) || ':' || tenant_id || length(catalog_id) || ':' || catalog_id
           || length(history_epoch) || ':' || history_epoch || generation || ':' || event_id;

ALTER TABLE product.inbox ADD COLUMN event_key text NOT NULL
    GENERATED ALWAYS AS (product.inbox_event_key(tenant_id, catalog_id, history_epoch, generation, event_id)) STORED;
CREATE UNIQUE INDEX inbox_event_key ON product.inbox (event_key);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute("ALTER TABLE product.inbox DROP COLUMN event_key")
    op.execute("DROP FUNCTION product.inbox_event_key(text, text, text, integer, text)")
