"""Review-case candidates by trigram similarity: a normalized title on catalog items.

Revision ID: 0014_trgm
Revises: 0014_released_merchants

``catalog_item.title_key`` is the title lower-cased with runs of non-word characters as one space, the same
normalization ``prw_platform.resolver.resolution.candidates`` applies to a listing's title. Where the server offers
``pg_trgm`` (PostgreSQL 15 on 127.0.0.1 does; the embedded ``pgserver`` build does not ship it), the extension is
created in ``public`` and a GiST trigram index serves nearest-title lookups (``<->``) and model-number ``LIKE``
lookups. Without it the column exists all the same and the candidate ranking scans the catalog's active items
(bounded) instead: same scores, no index.
"""

from alembic import op

revision = "0014_trgm"
down_revision = "0014_released_merchants"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        r"""ALTER TABLE resolver.catalog_item ADD COLUMN title_key text
            GENERATED ALWAYS AS (lower(trim(regexp_replace(coalesce(title, ''), '\W+', ' ', 'g')))) STORED"""
    )
    op.execute(
        """DO $$
           BEGIN
             IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
               CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
               CREATE INDEX catalog_item_title_trgm ON resolver.catalog_item
                 USING gist (title_key public.gist_trgm_ops);
             ELSE
               RAISE NOTICE 'pg_trgm is not available: review-case candidates scan active items instead';
             END IF;
           END $$"""
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS resolver.catalog_item_title_trgm")
    op.execute("ALTER TABLE resolver.catalog_item DROP COLUMN title_key")
