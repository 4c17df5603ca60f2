"""Shared Alembic environment: migrations run on one psycopg connection handed in by ``prw_platform.db.migrate``.

Migrations are plain SQL (``op.execute``): the schema is owned by the modules that own the tables, and the SQL is
what a reviewer reads.
"""

from __future__ import annotations

import psycopg
from alembic import context
from sqlalchemy import create_engine
from sqlalchemy.pool import NullPool


def run_migrations(version_table_schema: str | None) -> None:
    conninfo = context.config.attributes["conninfo"]
    engine = create_engine(
        "postgresql+psycopg://",
        creator=lambda: psycopg.connect(conninfo),
        poolclass=NullPool,
    )
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=None,
            version_table_schema=version_table_schema,
            transaction_per_migration=True,
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()
