"""Merge the branches; the read-only operator role for cross-tenant reports.

Revision ID: 0007
Revises: 0002, 0004, 0005, 0006

Operators (Dagster assets and asset checks, ``prw demo``'s summary, the SQL in docs/operators) read every
tenant's streams, jobs and projections. They used the schema owner, which sees across tenants only while it is a
superuser: under FORCE ROW LEVEL SECURITY a non-superuser owner with no policy of its own sees no row at all.
``prw_operator`` is the least privilege for that: SELECT on the resolver, product and queue schemas, a
``FOR SELECT ... USING (true)`` policy on every table with row-level security, and no write privilege anywhere.
A later migration that adds a tenant-scoped table adds its ``operator_read`` policy too.
"""

from alembic import op

revision = "0007"
down_revision = ("0002", "0004", "0005", "0006")
branch_labels = None
depends_on = None

ROLE = "prw_operator"
SCHEMAS = ("resolver", "product", "queue")


def upgrade() -> None:
    op.execute(
        f"""
        DO $$ BEGIN
            CREATE ROLE {ROLE} NOLOGIN;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END $$;
        DO $$ BEGIN
            EXECUTE format('GRANT {ROLE} TO %I', current_user);
        EXCEPTION WHEN duplicate_object OR invalid_grant_operation THEN NULL;
        END $$;
        """
    )
    for schema in SCHEMAS:
        op.execute(f"GRANT USAGE ON SCHEMA {schema} TO {ROLE}")
        op.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {ROLE}")
    op.execute(
        f"""
        DO $$
        DECLARE t record;
        BEGIN
            FOR t IN SELECT n.nspname AS schema_name, c.relname AS table_name
                       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                      WHERE c.relkind = 'r' AND c.relrowsecurity AND n.nspname IN ('resolver', 'product')
            LOOP
                EXECUTE format('CREATE POLICY operator_read ON %I.%I FOR SELECT TO {ROLE} USING (true)',
                               t.schema_name, t.table_name);
            END LOOP;
        END $$;
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DO $$
        DECLARE t record;
        BEGIN
            FOR t IN SELECT schemaname, tablename FROM pg_policies WHERE policyname = 'operator_read'
            LOOP
                EXECUTE format('DROP POLICY operator_read ON %I.%I', t.schemaname, t.tablename);
            END LOOP;
        END $$;
        """
    )
    for schema in SCHEMAS:
        op.execute(f"REVOKE SELECT ON ALL TABLES IN SCHEMA {schema} FROM {ROLE}")
        op.execute(f"REVOKE USAGE ON SCHEMA {schema} FROM {ROLE}")
