"""The ownership map (``prw_platform.db.ownership``) against the tables the migrations create."""

from __future__ import annotations

from prw_platform.db.database import Database
from prw_platform.db.ownership import TABLE_OWNERS

_TABLES = "SELECT schemaname || '.' || tablename AS name FROM pg_tables WHERE schemaname = ANY(%s) ORDER BY 1"


def _tables(db: Database, schemas: list[str]) -> set[str]:
    with db.transaction(read_only=True) as conn:
        return {str(row["name"]) for row in conn.execute(_TABLES, (schemas,)).fetchall()}


def test_every_migrated_table_is_in_the_ownership_map_and_the_map_names_no_other(
    owner_db: Database, control_db: Database
) -> None:
    migrated = _tables(owner_db, ["resolver", "product", "queue"]) | _tables(control_db, ["control"])
    assert sorted(migrated - set(TABLE_OWNERS)) == [], "tables without an owner in TABLE_OWNERS"
    assert sorted(set(TABLE_OWNERS) - migrated) == [], "TABLE_OWNERS names tables no migration creates"
