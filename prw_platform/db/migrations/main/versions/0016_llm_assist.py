"""LLM proposals and advice (if_llm_extract, if_llm_review).

Revision ID: 0016_llm_assist
Revises: 0015_dead_letter_discard

* ``llm_extraction``: one row per (capture_id, artifact sha256, prompt version, model id), the seed's idempotency
  key: the claims a model proposed for a capture no adapter could read, or the OUTPUT_SCHEMA_INVALID it ended in.
* ``llm_advice``: one row per (case_id, case revision, prompt version, model id): a recommendation for an open
  review case, always ``advisory`` (DEC-02; the CHECK makes a non-advisory row impossible).
* ``llm_usage``: calls per tenant per UTC day, the per-tenant budget.

Nothing here is a fact: the decision path never reads these tables. Tenant-scoped with row-level security like
every resolver table (INV-06), readable by prw_operator (0007).
"""

from alembic import op

revision = "0016_llm_assist"
down_revision = "0015_dead_letter_discard"
branch_labels = None
depends_on = None

TABLES = """
CREATE TABLE resolver.llm_extraction (
    tenant_id        text NOT NULL,
    catalog_id       text NOT NULL,
    capture_id       text NOT NULL,
    artifact_sha256  text NOT NULL CHECK (artifact_sha256 ~ '^[0-9a-f]{64}$'),
    prompt_version   text NOT NULL,
    model_id         text NOT NULL,
    status           text NOT NULL CHECK (status IN ('proposed', 'output_schema_invalid')),
    claims           jsonb NOT NULL DEFAULT '[]',
    diagnostics      jsonb NOT NULL DEFAULT '[]',
    answered_by      text,
    repaired         boolean NOT NULL DEFAULT false,
    error            text,
    case_id          text,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, capture_id, artifact_sha256, prompt_version, model_id),
    FOREIGN KEY (tenant_id, capture_id) REFERENCES resolver.capture
);
CREATE INDEX llm_extraction_by_capture ON resolver.llm_extraction (tenant_id, capture_id);

CREATE TABLE resolver.llm_advice (
    tenant_id        text NOT NULL,
    catalog_id       text NOT NULL,
    case_id          text NOT NULL,
    case_revision    integer NOT NULL CHECK (case_revision > 0),
    prompt_version   text NOT NULL,
    model_id         text NOT NULL,
    status           text NOT NULL CHECK (status IN ('advised', 'output_schema_invalid')),
    recommendation   jsonb,
    advisory         boolean NOT NULL DEFAULT true CHECK (advisory),
    answered_by      text,
    repaired         boolean NOT NULL DEFAULT false,
    error            text,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, case_id, case_revision, prompt_version, model_id),
    CHECK ((status = 'advised') = (recommendation IS NOT NULL))
);

CREATE TABLE resolver.llm_usage (
    tenant_id  text NOT NULL,
    day        date NOT NULL,
    calls      integer NOT NULL CHECK (calls >= 0),
    PRIMARY KEY (tenant_id, day)
);
"""

NEW_TABLES = ("llm_extraction", "llm_advice", "llm_usage")
TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def upgrade() -> None:
    op.execute(TABLES)
    for name in NEW_TABLES:
        table = f"resolver.{name}"
        op.execute(f"GRANT SELECT, INSERT, UPDATE ON {table} TO resolver_app")
        op.execute(f"GRANT SELECT ON {table} TO prw_operator")
        op.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY tenant_isolation ON {table} TO resolver_app "
            f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
        )
        op.execute(f"CREATE POLICY operator_read ON {table} FOR SELECT TO prw_operator USING (true)")


def downgrade() -> None:
    for name in reversed(NEW_TABLES):
        op.execute(f"DROP TABLE resolver.{name}")
