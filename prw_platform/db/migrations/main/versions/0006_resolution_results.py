"""Resolution results: what the resolution consumer extracted, normalized and decided for each job.

Revision ID: 0006
Revises: 0003

The review UI shows a reviewer the claims (with their evidence locators), the normalized attributes, the
problems and the diagnostics behind a case; an improvement replay (if_replay_job) compares them with a rerun
under other pins. Both need them per capture and per adapter / profile pin, so the consumer writes them in the
same transaction as its decision, its inbox row and the job's status (if_resolution_job: "The consumer writes
job_id to its inbox table in the same transaction as its results").

- ``resolution_result``: one row per resolution job. ``stage_outcome`` says how far the job got
  (``extracted``; ``no_adapter``: no installed adapter supports the capture, the LLM fallback's future case;
  ``extraction_failed``; ``normalization_failed``); ``adapter`` and ``profile`` are the exact pins that ran and
  ``*_rule`` says why they were chosen; ``decision_id`` is the decision the job led to.
- ``extracted_claim``: the adapter's claims in its order, values as found (jsonb keeps strings, numbers and
  booleans apart).
- ``normalized_attribute``: the profile's values in canonical form with their definition version (INV-02) and
  the locators of the claims they came from.

Results are derived evidence: insert-only for resolver_app (like decisions, INV-05); a rerun is a new job (a new
attempt group) with rows of its own. Tenant isolation exactly like 0001 and 0003 (INV-06).
"""

from alembic import op

revision = "0006"
down_revision = "0003"
branch_labels = None
depends_on = None

RESULT_TABLES = """
CREATE TABLE resolver.resolution_result (
    tenant_id      text NOT NULL,
    job_id         text NOT NULL,
    capture_id     text NOT NULL,
    catalog_id     text NOT NULL,
    stage_outcome  text NOT NULL
                   CHECK (stage_outcome IN ('extracted', 'no_adapter', 'extraction_failed', 'normalization_failed')),
    adapter        text,
    adapter_rule   text CHECK (adapter_rule IN ('job_pin', 'capture_hint', 'supports')),
    profile        text,
    profile_rule   text CHECK (profile_rule IN ('job_pin', 'class_definitions', 'base_profile')),
    -- The listing (offer) fields the adapter read: title, url, price (exact text), currency, availability.
    listing        jsonb NOT NULL DEFAULT '{}'::jsonb,
    problems       jsonb NOT NULL DEFAULT '[]'::jsonb,
    diagnostics    jsonb NOT NULL DEFAULT '[]'::jsonb,
    -- {code, message} of a failed extraction or normalization.
    error          jsonb,
    -- How identity was resolved: the rule, the identifiers present, the matched item or why none applied.
    identity       jsonb NOT NULL DEFAULT '{}'::jsonb,
    decision_id    text NOT NULL,
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, job_id),
    CHECK ((adapter IS NULL) = (adapter_rule IS NULL)),
    CHECK ((profile IS NULL) = (profile_rule IS NULL)),
    FOREIGN KEY (tenant_id, job_id) REFERENCES resolver.resolution_job,
    FOREIGN KEY (tenant_id, capture_id) REFERENCES resolver.capture,
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog,
    FOREIGN KEY (tenant_id, decision_id) REFERENCES resolver.decision
);
CREATE INDEX resolution_result_capture ON resolver.resolution_result (tenant_id, capture_id);

CREATE TABLE resolver.extracted_claim (
    tenant_id         text NOT NULL,
    job_id            text NOT NULL,
    ordinal           integer NOT NULL CHECK (ordinal >= 0),
    attribute         text NOT NULL,
    value             jsonb NOT NULL,
    evidence_locator  text NOT NULL,
    PRIMARY KEY (tenant_id, job_id, ordinal),
    FOREIGN KEY (tenant_id, job_id) REFERENCES resolver.resolution_result
);

CREATE TABLE resolver.normalized_attribute (
    tenant_id           text NOT NULL,
    job_id              text NOT NULL,
    key                 text NOT NULL,
    -- Decimals as their exact text, like catalog_item.attributes.
    value               jsonb NOT NULL,
    unit                text,
    definition_version  integer NOT NULL CHECK (definition_version > 0),
    evidence_locators   jsonb NOT NULL DEFAULT '[]'::jsonb,
    PRIMARY KEY (tenant_id, job_id, key),
    FOREIGN KEY (tenant_id, job_id) REFERENCES resolver.resolution_result
);
"""

#: INV-05: results are immutable for the application role; a rerun writes a new job's rows.
TABLES = ("resolution_result", "extracted_claim", "normalized_attribute")

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def _tenant_rls(table: str) -> None:
    # The same pattern as 0001 and 0003: enabled, forced, one tenant_isolation policy for the application role.
    op.execute(f"ALTER TABLE resolver.{table} ENABLE ROW LEVEL SECURITY")
    op.execute(f"ALTER TABLE resolver.{table} FORCE ROW LEVEL SECURITY")
    op.execute(
        f"CREATE POLICY tenant_isolation ON resolver.{table} TO resolver_app "
        f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
    )


def upgrade() -> None:
    op.execute(RESULT_TABLES)
    for table in TABLES:
        op.execute(f"GRANT SELECT, INSERT ON resolver.{table} TO resolver_app")
        _tenant_rls(table)


def downgrade() -> None:
    for table in reversed(TABLES):
        op.execute(f"DROP TABLE resolver.{table}")
