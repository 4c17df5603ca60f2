"""Claims and normalized values keep their ratings (docs/adapter-authors.md, "Confidence").

Revision ID: 0027_claim_confidence
Revises: 0026_item_merges

``extracted_claim`` gains the claim's evidence ``source`` and ``confidence`` (NULL: the adapter did not rate it),
so the normalize stage, which reads the stored claims, weighs exactly what the adapter said. ``normalized_attribute``
gains the value's weighed ``confidence`` and ``withheld``: a value the profile read but holds back because its
confidence is under the profile's publication threshold (it is not the listing's until a reviewer confirms it).
Existing rows are unrated and published, as they were.
"""

from alembic import op

revision = "0027_claim_confidence"
down_revision = "0026_item_merges"
branch_labels = None
depends_on = None

UPGRADE = r"""
ALTER TABLE resolver.extracted_claim
    ADD COLUMN source text CHECK (source IN ('structured', 'meta', 'buy_box', 'url', 'text')),
    ADD COLUMN confidence double precision CHECK (confidence >= 0 AND confidence <= 1);
ALTER TABLE resolver.normalized_attribute
    ADD COLUMN confidence double precision CHECK (confidence >= 0 AND confidence <= 1),
    ADD COLUMN withheld boolean NOT NULL DEFAULT false;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(
        "ALTER TABLE resolver.extracted_claim DROP COLUMN source, DROP COLUMN confidence;"
        "ALTER TABLE resolver.normalized_attribute DROP COLUMN confidence, DROP COLUMN withheld"
    )
