"""The product consumer may discard its own dead letters (operators act on each DLQ).

Revision ID: 0015_dead_letter_discard
Revises: 0014_trgm

``product_app`` dead-letters accepted changes (it could INSERT into ``queue.dead_letter``) but could not remove an
entry, so an operator who had looked at one could never clear it. Accepted changes are never re-driven (the relay
alone sends them; gap closure re-fetches a dead-lettered position from the export stream): the operator discards
the entry instead, through the consumer's role (``prw dlq discard accepted-changes ID``).
"""

from alembic import op

revision = "0015_dead_letter_discard"
down_revision = "0014_trgm"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("GRANT DELETE ON queue.dead_letter TO product_app")


def downgrade() -> None:
    op.execute("REVOKE DELETE ON queue.dead_letter FROM product_app")
