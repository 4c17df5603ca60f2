"""A GIN trigram index on ``catalog_item.title_key`` for the model-number part of candidate search.

Revision ID: 0030_model_token_index
Revises: 0029_identity_generations

The candidate pool reads the items whose normalized title contains one of the listing's model-number tokens
(``title_key LIKE ANY('{%sx110is%,...}')``). The GiST index of 0014_trgm serves nearest-title scans; a substring
match over a large catalog is what GIN trigram indexes are for (a bitmap of the rows holding every trigram of the
token). Created only where the server has pg_trgm, like the GiST index.
"""

from alembic import op

revision = "0030_model_token_index"
down_revision = "0029_identity_generations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """DO $$
           BEGIN
             IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
               CREATE INDEX catalog_item_title_gin_trgm ON resolver.catalog_item
                 USING gin (title_key public.gin_trgm_ops);
             END IF;
           END $$"""
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS resolver.catalog_item_title_gin_trgm")
