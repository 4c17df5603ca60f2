"""Improvement replays (seed 003 if_replay_job).

Revision ID: 0018_replays
Revises: 0017_improvement_lifecycle

* ``replay``: one request of ``POST /v1/improvements/{id}/replays``: its mode, the pins it applies, how many
  captures it covers, how many messages were sent, how many the consumer settled, changed or failed. At most one
  replay per (improvement, pins) is ``queued`` at a time (a partial unique index: 409 REPLAY_IN_PROGRESS).
* ``replay_capture``: the consumer's result for one capture of a replay and its inbox at once (the key is the
  message's ``job_id = replay_id:capture_id``): in dry-run mode the diff (claims, normalized attributes, identity
  outcome, before vs after) and nothing else is written anywhere.
"""

from alembic import op

revision = "0018_replays"
down_revision = "0017_improvement_lifecycle"
branch_labels = None
depends_on = None

TABLES = """
CREATE TABLE resolver.replay (
    tenant_id       text NOT NULL,
    catalog_id      text NOT NULL,
    replay_id       text NOT NULL CHECK (replay_id ~ '^rpl_[a-z0-9_]{1,120}$'),
    improvement_id  text NOT NULL,
    mode            text NOT NULL CHECK (mode IN ('dry_run', 'apply')),
    pins            jsonb NOT NULL,
    pins_key        text NOT NULL,
    status          text NOT NULL CHECK (status IN ('queued', 'completed')),
    captures        integer NOT NULL CHECK (captures > 0),
    enqueued        integer NOT NULL DEFAULT 0 CHECK (enqueued >= 0),
    settled         integer NOT NULL DEFAULT 0 CHECK (settled >= 0),
    changed         integer NOT NULL DEFAULT 0 CHECK (changed >= 0),
    failed          integer NOT NULL DEFAULT 0 CHECK (failed >= 0),
    requested_by    text NOT NULL,
    history_epoch   text NOT NULL,
    created_at      timestamptz NOT NULL,
    completed_at    timestamptz,
    PRIMARY KEY (tenant_id, replay_id),
    FOREIGN KEY (tenant_id, improvement_id) REFERENCES resolver.improvement,
    CHECK (settled <= captures AND changed + failed <= settled),
    CHECK ((status = 'completed') = (completed_at IS NOT NULL))
);
CREATE UNIQUE INDEX replay_in_progress ON resolver.replay (tenant_id, improvement_id, pins_key)
    WHERE status = 'queued';
CREATE INDEX replay_by_improvement ON resolver.replay (tenant_id, improvement_id, created_at);

CREATE TABLE resolver.replay_capture (
    tenant_id        text NOT NULL,
    replay_id        text NOT NULL,
    capture_id       text NOT NULL,
    status           text NOT NULL CHECK (status IN ('diffed', 'failed')),
    outcome_changed  boolean NOT NULL DEFAULT false,
    diff             jsonb,
    error            jsonb,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, replay_id, capture_id),
    FOREIGN KEY (tenant_id, replay_id) REFERENCES resolver.replay,
    CHECK ((status = 'diffed') = (diff IS NOT NULL))
);
"""

TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def upgrade() -> None:
    op.execute(TABLES)
    for table, privileges in (("replay", "SELECT, INSERT, UPDATE"), ("replay_capture", "SELECT, INSERT")):
        name = f"resolver.{table}"
        op.execute(f"GRANT {privileges} ON {name} TO resolver_app")
        op.execute(f"GRANT SELECT ON {name} TO prw_operator")
        op.execute(f"ALTER TABLE {name} ENABLE ROW LEVEL SECURITY")
        op.execute(f"ALTER TABLE {name} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY tenant_isolation ON {name} TO resolver_app "
            f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
        )
        op.execute(f"CREATE POLICY operator_read ON {name} FOR SELECT TO prw_operator USING (true)")


def downgrade() -> None:
    op.execute("DROP TABLE resolver.replay_capture")
    op.execute("DROP TABLE resolver.replay")
