"""Identity rule generations per catalog: a scoring rule's fitted model and auto-map band as versioned data.

Revision ID: 0029_identity_generations
Revises: 0028_public_item_redirects

- ``identity_generation``: one row per generation a calibration proposed for a catalog (numbered from 2 per
  catalog; generation 1 is what the installed rule plugins ship). A generation is written once (``document``, the
  rule's own JSON) and moves ``proposed`` → ``live`` → ``superseded``; at most one is live per catalog and rule.
  It records the precision promise of its band, what the held-out estimate measured (precision, its lower bound,
  coverage), the label counts and the whole curve.
- ``improvement.identity_generation``: the generation an improvement proposes (if_replay_job pins
  ``identity_generation``); its replays resolve with it, and applying the improvement makes it live.
"""

from alembic import op

revision = "0029_identity_generations"
down_revision = "0028_public_item_redirects"
branch_labels = None
depends_on = None

GENERATIONS = """
CREATE TABLE resolver.identity_generation (
    tenant_id              text NOT NULL,
    catalog_id             text NOT NULL,
    generation             integer NOT NULL CHECK (generation >= 2),
    rule                   text NOT NULL,
    status                 text NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'live', 'superseded')),
    document               jsonb NOT NULL CHECK (jsonb_typeof(document) = 'object'),
    promise                numeric NOT NULL CHECK (promise > 0 AND promise <= 1),
    estimated_precision    numeric CHECK (estimated_precision BETWEEN 0 AND 1),
    precision_lower_bound  numeric CHECK (precision_lower_bound BETWEEN 0 AND 1),
    coverage               numeric CHECK (coverage BETWEEN 0 AND 1),
    labels                 jsonb NOT NULL CHECK (jsonb_typeof(labels) = 'object'),
    curve                  jsonb NOT NULL CHECK (jsonb_typeof(curve) = 'array'),
    proposed_by            text NOT NULL,
    proposed_at            timestamptz NOT NULL,
    live_at                timestamptz,
    live_by                text,
    PRIMARY KEY (tenant_id, catalog_id, generation),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);
CREATE UNIQUE INDEX identity_generation_one_live ON resolver.identity_generation (tenant_id, catalog_id, rule)
    WHERE status = 'live';
GRANT SELECT, INSERT ON resolver.identity_generation TO resolver_app;
GRANT UPDATE (status, live_at, live_by) ON resolver.identity_generation TO resolver_app;
ALTER TABLE resolver.identity_generation ENABLE ROW LEVEL SECURITY;
ALTER TABLE resolver.identity_generation FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON resolver.identity_generation TO resolver_app
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
GRANT SELECT ON resolver.identity_generation TO prw_operator;
CREATE POLICY operator_read ON resolver.identity_generation FOR SELECT TO prw_operator USING (true);

ALTER TABLE resolver.improvement ADD COLUMN identity_generation integer CHECK (identity_generation >= 1);
"""


def upgrade() -> None:
    op.execute(GENERATIONS)


def downgrade() -> None:
    op.execute("ALTER TABLE resolver.improvement DROP COLUMN identity_generation")
    op.execute("DROP TABLE resolver.identity_generation")
