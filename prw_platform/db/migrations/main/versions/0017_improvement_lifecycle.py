"""Improvements are created, approved and abandoned by operators.

Revision ID: 0017_improvement_lifecycle
Revises: 0016_llm_assist

* ``improvement`` gains the author's ``rationale``, who moved it last and when (``status_by``, ``status_at``), and
  ``idempotency_key`` (a create retried with the same key is the same improvement).
* ``improvement_transition``: every status change with its actor, rationale and time (draft → reviewer_approved
  → applied, draft / reviewer_approved → abandoned), written in the transaction that changes the status.
  A trigger refuses any other change of ``status`` whatever the code path: the transitions are data.
"""

from alembic import op

revision = "0017_improvement_lifecycle"
down_revision = "0016_llm_assist"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE resolver.improvement
    ADD COLUMN rationale text NOT NULL DEFAULT '',
    ADD COLUMN status_by text,
    ADD COLUMN status_at timestamptz,
    ADD COLUMN idempotency_key text;
UPDATE resolver.improvement SET status_by = created_by, status_at = created_at;
ALTER TABLE resolver.improvement ALTER COLUMN status_by SET NOT NULL, ALTER COLUMN status_at SET NOT NULL;
CREATE UNIQUE INDEX improvement_idempotency ON resolver.improvement (tenant_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
GRANT UPDATE (status, status_by, status_at) ON resolver.improvement TO resolver_app;

CREATE TABLE resolver.improvement_transition (
    tenant_id        text NOT NULL,
    improvement_id   text NOT NULL,
    ordinal          integer NOT NULL CHECK (ordinal > 0),
    from_status      text,
    to_status        text NOT NULL,
    actor            text NOT NULL,
    rationale        text NOT NULL,
    at               timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, improvement_id, ordinal),
    FOREIGN KEY (tenant_id, improvement_id) REFERENCES resolver.improvement
);
GRANT SELECT, INSERT ON resolver.improvement_transition TO resolver_app;
GRANT SELECT ON resolver.improvement_transition TO prw_operator;
ALTER TABLE resolver.improvement_transition ENABLE ROW LEVEL SECURITY;
ALTER TABLE resolver.improvement_transition FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON resolver.improvement_transition TO resolver_app
    USING (tenant_id = current_setting('app.tenant_id', true))
    WITH CHECK (tenant_id = current_setting('app.tenant_id', true));
CREATE POLICY operator_read ON resolver.improvement_transition FOR SELECT TO prw_operator USING (true);

CREATE FUNCTION resolver.improvement_status_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status IS DISTINCT FROM OLD.status AND NOT (
        (OLD.status = 'draft' AND NEW.status IN ('reviewer_approved', 'abandoned'))
        OR (OLD.status = 'reviewer_approved' AND NEW.status IN ('applied', 'abandoned'))
    ) THEN
        RAISE EXCEPTION 'improvement %: % -> % is not a transition', OLD.improvement_id, OLD.status, NEW.status
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER improvement_status_guard BEFORE UPDATE OF status ON resolver.improvement
    FOR EACH ROW EXECUTE FUNCTION resolver.improvement_status_guard();
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute("DROP TRIGGER improvement_status_guard ON resolver.improvement")
    op.execute("DROP FUNCTION resolver.improvement_status_guard()")
    op.execute("DROP TABLE resolver.improvement_transition")
    op.execute("DROP INDEX resolver.improvement_idempotency")
    op.execute(
        "ALTER TABLE resolver.improvement DROP COLUMN rationale, DROP COLUMN status_by, DROP COLUMN status_at,"
        " DROP COLUMN idempotency_key"
    )
