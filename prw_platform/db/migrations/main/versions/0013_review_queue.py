"""The review queue (if_review_read): a case knows its source, and the queue pages by a key.

Revision ID: 0013_review_queue
Revises: 0010, 0010_operator_sessions

``GET /v1/review`` filters by status, kind and source and pages in a stable order, oldest first:
(created_at, case_id). The source is the listing's; it is copied onto the case when the case opens (a listing
never changes source: its id is derived from it), so the queue's filter reads one table, the one its owner
module (``prw_platform.resolver.decisions.cases``) queries. Existing cases take their listing's source.

``review_case_queue`` serves every filter of the queue in key order; the partial index of awaiting cases that
0003 created stays for the operator reports.
"""

from alembic import op

revision = "0013_review_queue"
# Merges the two heads of this branch; rechain onto the newest head when branches meet.
down_revision = ("0010", "0010_operator_sessions")
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE resolver.review_case ADD COLUMN source_id text")
    op.execute(
        """UPDATE resolver.review_case c SET source_id = l.source_id
           FROM resolver.listing l
           WHERE l.tenant_id = c.tenant_id AND l.catalog_id = c.catalog_id AND l.listing_id = c.listing_id"""
    )
    op.execute("ALTER TABLE resolver.review_case ALTER COLUMN source_id SET NOT NULL")
    op.execute(
        "CREATE INDEX review_case_queue ON resolver.review_case (tenant_id, status, created_at, case_id)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX resolver.review_case_queue")
    op.execute("ALTER TABLE resolver.review_case DROP COLUMN source_id")
