"""Operator sessions (if_operator_session): server-side rows behind the admin origin's session cookie.

Revision ID: 0010_operator_sessions
Revises: 0007

- ``resolver.operator_session``: one row per login. The cookie carries a random token; the row keeps only its
  sha256 (a leaked table does not leak sessions). The row holds the operator's identity (issuer + subject), the
  tenant memberships with their role (viewer, reviewer, operator_admin) as the identity provider asserted them at
  login, the active tenant (one of them), the CSRF token state-changing requests must echo, and the two deadlines
  of if_operator_session: idle 30 min (``last_seen_at``) and absolute 12 h (``expires_at``). Logout sets
  ``revoked_at``; rows are never reused.
- Not tenant-scoped (an operator may belong to several tenants), so no row-level security: only the admin API
  (``prw_platform.auth.operators``, as resolver_app) reads and writes it; prw_operator may read it for reports.
"""

from alembic import op

revision = "0010_operator_sessions"
down_revision = "0007"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE resolver.operator_session (
    token_sha256   text PRIMARY KEY CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
    issuer         text NOT NULL,
    subject        text NOT NULL,
    display_name   text,
    email          text,
    -- {"ten_primary": "reviewer", ...}: the roles per tenant the identity provider asserted at login.
    memberships    jsonb NOT NULL CHECK (jsonb_typeof(memberships) = 'object'),
    active_tenant  text,
    csrf_token     text NOT NULL,
    created_at     timestamptz NOT NULL,
    last_seen_at   timestamptz NOT NULL,
    expires_at     timestamptz NOT NULL,
    revoked_at     timestamptz,
    CHECK (active_tenant IS NULL OR memberships ? active_tenant)
);
CREATE INDEX operator_session_subject ON resolver.operator_session (issuer, subject);

GRANT SELECT, INSERT ON resolver.operator_session TO resolver_app;
GRANT UPDATE (active_tenant, last_seen_at, revoked_at) ON resolver.operator_session TO resolver_app;
GRANT SELECT ON resolver.operator_session TO prw_operator;
"""

DOWNGRADE = """
DROP TABLE resolver.operator_session;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
