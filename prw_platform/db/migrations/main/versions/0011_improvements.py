"""Merge the two 0010 heads; operator release decisions; the improvement table (listed by if_admin_read's ``GET /v1/improvements``).

Revision ID: 0011
Revises: 0010, 0010_operator_sessions

- ``resolver.decision.action`` gains ``authorize_release`` (an operator releases a catalog's accepted state,
  ``POST /v1/releases``) and ``set_release_policy`` (an operator switches a catalog between manual and automatic
  release). Both are immutable decision rows like every other (AW-01, INV-05).
- ``resolver.improvement``: a proposed re-resolution of a catalog's captures with pinned adapter, profile and
  definition versions (docs/architecture.md "Improvements and replays"). Status draft -> reviewer_approved ->
  applied, or abandoned. Tenant-scoped with row-level security for resolver_app (INV-06) and the operator_read
  policy of 0007 for prw_operator.
"""

from alembic import op

revision = "0011"
down_revision = ("0010", "0010_operator_sessions")
branch_labels = None
depends_on = None

ACTIONS_BEFORE = "'create_item_and_map', 'map_listing', 'open_review_case', 'dismiss_case'"
ACTIONS_AFTER = f"{ACTIONS_BEFORE}, 'authorize_release', 'set_release_policy'"

IMPROVEMENT = """
CREATE TABLE resolver.improvement (
    tenant_id           text NOT NULL,
    catalog_id          text NOT NULL,
    improvement_id      text NOT NULL CHECK (improvement_id ~ '^imp_[a-z0-9_]{1,120}$'),
    -- The versions a replay pins (if_replay_job): NAME@VERSION of the adapter, the profile and its definitions.
    adapter_version     text,
    profile_version     text,
    definition_version  text,
    -- Which captures the improvement re-resolves: {"source_id": ..., "capture_ids": [...], ...}.
    selection           jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(selection) = 'object'),
    status              text NOT NULL DEFAULT 'draft'
                        CHECK (status IN ('draft', 'reviewer_approved', 'applied', 'abandoned')),
    created_by          text NOT NULL,
    created_at          timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, improvement_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);
-- GET /v1/improvements pages newest first by (created_at, improvement_id).
CREATE INDEX improvement_recent ON resolver.improvement (tenant_id, created_at DESC, improvement_id DESC);

GRANT SELECT, INSERT ON resolver.improvement TO resolver_app;
GRANT UPDATE (status) ON resolver.improvement TO resolver_app;
ALTER TABLE resolver.improvement ENABLE ROW LEVEL SECURITY;
ALTER TABLE resolver.improvement FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON resolver.improvement TO resolver_app
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT ON resolver.improvement TO prw_operator;
CREATE POLICY operator_read ON resolver.improvement FOR SELECT TO prw_operator USING (true);
"""


def _actions(actions: str) -> None:
    op.execute("ALTER TABLE resolver.decision DROP CONSTRAINT decision_action_check")
    op.execute(
        f"ALTER TABLE resolver.decision ADD CONSTRAINT decision_action_check CHECK (action IN ({actions}))"
    )


def upgrade() -> None:
    _actions(ACTIONS_AFTER)
    op.execute(IMPROVEMENT)


def downgrade() -> None:
    op.execute("DROP TABLE resolver.improvement")
    _actions(ACTIONS_BEFORE)
