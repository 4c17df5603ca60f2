"""Item merges and splits on the decision path (AW-01, INV-07).

Revision ID: 0026_item_merges
Revises: 0025_inbox_event_key

- ``catalog_item.merged_into``: the item a reviewer merged this one into (a duplicate). Only a retired item names
  one, and only an item of its own catalog (the foreign key includes the catalog).
- ``released_item.merged_into``: the release that removed a merged item remembers where its public id redirects,
  so a snapshot export, and the rebuild that loads it, keep the redirect.
- The decision actions gain ``merge_items`` and ``split_item``.
"""

from alembic import op

revision = "0026_item_merges"
down_revision = "0025_inbox_event_key"
branch_labels = None
depends_on = None

ACTIONS = (
    "'create_item_and_map', 'map_listing', 'open_review_case', 'dismiss_case', "
    "'authorize_release', 'set_release_policy', "
    "'provision_merchant', 'bind_source', 'accept_shipping_policy', 'retire_item', "
    "'save_item_pictures', 'save_product_class', 'delete_product_class'"
)
NEW_ACTIONS = "'merge_items', 'split_item'"


def _decision_actions(actions: str) -> None:
    op.execute("ALTER TABLE resolver.decision DROP CONSTRAINT decision_action_check")
    op.execute(
        f"ALTER TABLE resolver.decision ADD CONSTRAINT decision_action_check CHECK (action IN ({actions}))"
    )


def upgrade() -> None:
    op.execute(
        """ALTER TABLE resolver.catalog_item ADD COLUMN merged_into text,
               ADD CONSTRAINT catalog_item_merged_is_retired CHECK (merged_into IS NULL OR status = 'retired'),
               ADD CONSTRAINT catalog_item_merged_into_same_catalog FOREIGN KEY (tenant_id, catalog_id, merged_into)
                   REFERENCES resolver.catalog_item (tenant_id, catalog_id, item_id)"""
    )
    op.execute("ALTER TABLE resolver.released_item ADD COLUMN merged_into text")
    _decision_actions(f"{ACTIONS}, {NEW_ACTIONS}")


def downgrade() -> None:
    _decision_actions(ACTIONS)
    op.execute("ALTER TABLE resolver.released_item DROP COLUMN merged_into")
    op.execute(
        """ALTER TABLE resolver.catalog_item DROP CONSTRAINT catalog_item_merged_into_same_catalog,
               DROP CONSTRAINT catalog_item_merged_is_retired, DROP COLUMN merged_into"""
    )
