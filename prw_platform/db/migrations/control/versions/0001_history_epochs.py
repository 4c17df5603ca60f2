"""Control database: history epochs.

Revision ID: c0001
Revises:

Seed 003 (if_projection_bootstrap, "Fence restored history"): a restore gets a NEW epoch from a trusted control
plane outside the restored database. At most one epoch per (tenant, catalog) is current.
"""

from alembic import op

revision = "c0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE SCHEMA control;
        CREATE TABLE control.history_epoch (
            epoch_id       text PRIMARY KEY,
            tenant_id      text NOT NULL,
            catalog_id     text NOT NULL,
            ordinal        integer NOT NULL CHECK (ordinal > 0),
            reason         text NOT NULL,
            issued_at      timestamptz NOT NULL DEFAULT now(),
            superseded_at  timestamptz,
            UNIQUE (tenant_id, catalog_id, ordinal)
        );
        CREATE UNIQUE INDEX history_epoch_current ON control.history_epoch (tenant_id, catalog_id)
            WHERE superseded_at IS NULL;
        REVOKE ALL ON SCHEMA control FROM PUBLIC;
        """
    )
    for role in ("resolver_app", "product_app"):
        op.execute(
            f"""
            DO $$ BEGIN
                CREATE ROLE {role} NOLOGIN;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
            END $$;
            GRANT USAGE ON SCHEMA control TO {role};
            GRANT SELECT ON control.history_epoch TO {role};
            """
        )


def downgrade() -> None:
    op.execute("DROP SCHEMA control CASCADE")
