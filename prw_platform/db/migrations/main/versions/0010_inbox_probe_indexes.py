"""The product inbox is probed by its keys only (batched apply).

Revision ID: 0010
Revises: 0009

``product.inbox_by_outcome`` (tenant, catalog, epoch, outcome) shared its leading columns with the two unique
indexes the consumer probes: (…, event_id) for dedupe and (…, position) for POSITION_CONFLICT and contiguous
progress. With statistics that lag a fast-growing inbox (a stream applied at thousands of events per second
before autovacuum analyzes it) the planner estimated one row per stream and probed ``inbox_by_outcome``,
filtering the whole stream's inbox for every batch (bench/README.md, "Apply under disorder"). The
only query by outcome is the operator report's count of old-epoch deliveries per catalog, which gets a partial
index of its own; every other inbox query has exactly one index to use.
"""

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("DROP INDEX product.inbox_by_outcome")
    op.execute(
        "CREATE INDEX inbox_old_epoch ON product.inbox (tenant_id, catalog_id) WHERE outcome = 'ignored_old_epoch'"
    )


def downgrade() -> None:
    op.execute("DROP INDEX product.inbox_old_epoch")
    op.execute(
        "CREATE INDEX inbox_by_outcome ON product.inbox (tenant_id, catalog_id, history_epoch, outcome)"
    )
