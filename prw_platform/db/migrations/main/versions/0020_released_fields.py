"""What a release published, kept with the revisions it published (if_projection_bootstrap "all
accepted state including private/public releases").

Revision ID: 0020_released_fields
Revises: 0017_rebuild

The ``released_*`` tables remembered only which revision of each item, listing, merchant fact, item pictures and
product class the catalog's release publishes. On a catalog that releases manually the accepted state moves on
past the release, so a snapshot export could not say what the public catalog holds, and a product rebuild failed
with RELEASE_SNAPSHOT_UNAVAILABLE. Each row now keeps the fields the release published (its event's payload
entry): the export's ``release`` object carries them and the rebuild republishes exactly them. Rows released
before this migration have none (NULL): for those a rebuild still needs the released revision to be the current
one.
"""

from alembic import op

revision = "0020_released_fields"
down_revision = "0017_rebuild"
branch_labels = None
depends_on = None

TABLES = (
    "released_item",
    "released_listing",
    "released_merchant",
    "released_merchant_source",
    "released_shipping_policy",
    "released_file_aggregate",
)


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE resolver.{table} ADD COLUMN fields jsonb")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE resolver.{table} DROP COLUMN fields")
