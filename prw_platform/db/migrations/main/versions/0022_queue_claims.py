"""A receive claims a message by changing unindexed columns only, so the claim is a HOT update.

Revision ID: 0022_queue_claims
Revises: 0021_inventory_history

The receive used to order and find due messages by ``visible_after`` (index ``message_due``) and then push
``visible_after`` out by the visibility timeout: every claim changed an indexed column, so it wrote a new row
version with its body elsewhere in the heap plus a new entry in both indexes, and the receive was the largest
cost of a large apply (bench/README.md, "Apply under disorder").

Now the receive order is ``due_at``: when the message became due, that is its send time plus its delay, or the
time ``retry_later`` put it back for. A claim never changes it; it changes ``visible_after``, ``receive_count``,
``first_received_at`` and ``delivery_token``, none of them indexed, so with room on the page (fillfactor 50: a
receive claims neighbouring rows together) PostgreSQL updates the row in its page and touches no index: less
server CPU and WAL per message than the old layout at the same fillfactor (bench/README.md, "Queue claims and
trims").

What is visible is unchanged: ``due_at <= now() AND visible_after <= now()`` (the first is the index range, the
second filters the rows a consumer holds). A message whose visibility timeout expired comes back at its place in
``due_at`` order, ahead of messages that became due after it (the port promises no order). Existing rows get
``due_at = visible_after``; the new fillfactor applies to the pages written from now on.
"""

from alembic import op

revision = "0022_queue_claims"
down_revision = "0021_inventory_history"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE queue.message ADD COLUMN due_at timestamptz")
    op.execute("UPDATE queue.message SET due_at = visible_after")
    op.execute(
        "ALTER TABLE queue.message ALTER COLUMN due_at SET DEFAULT now(), ALTER COLUMN due_at SET NOT NULL"
    )
    op.execute("DROP INDEX queue.message_due")
    op.execute("CREATE INDEX message_due ON queue.message (queue_name, due_at)")
    op.execute("ALTER TABLE queue.message SET (fillfactor = 50)")
    # retry_later puts a message back: it sets due_at with visible_after (0002 granted the other delivery columns).
    op.execute("GRANT UPDATE (due_at) ON queue.message TO resolver_app, product_app")


def downgrade() -> None:
    op.execute("REVOKE UPDATE (due_at) ON queue.message FROM resolver_app, product_app")
    op.execute("ALTER TABLE queue.message RESET (fillfactor)")
    op.execute("DROP INDEX queue.message_due")
    op.execute("CREATE INDEX message_due ON queue.message (queue_name, visible_after)")
    op.execute("ALTER TABLE queue.message DROP COLUMN due_at")
