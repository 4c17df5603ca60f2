"""The test databases' mill (tests/support/postgres.py ``_DatabaseMill``): a recycled database holds what a fresh
copy of the template holds, and one whose schema a test changed is never handed out again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import uuid4

import psycopg
import pytest

from tests.support.postgres import MAIN, _DatabaseMill, with_database


@pytest.fixture
def prefix() -> str:
    """A prefix of this test's own: xdist workers run the cases side by side on one server."""
    return f"prw_mill{uuid4().hex[:6]}"


@pytest.fixture
def mill(pg_admin_url: str) -> Iterator[_DatabaseMill]:
    mill = _DatabaseMill()
    yield mill
    mill.close(pg_admin_url)


def oid_of(admin_url: str, name: str) -> int:
    with psycopg.connect(admin_url) as conn:
        row = conn.execute("SELECT oid FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert row is not None, name
    return int(row[0])


def snapshot(url: str) -> dict[str, Any]:
    """Every row of every table, the sequences' positions and the schema's tables, of the database at ``url``."""
    with psycopg.connect(url, autocommit=True) as conn:
        tables = [
            str(r[0])
            for r in conn.execute(
                """SELECT format('%I.%I', schemaname, tablename) FROM pg_tables
                    WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1"""
            ).fetchall()
        ]
        rows = {t: sorted(map(repr, conn.execute(f"SELECT * FROM {t}").fetchall())) for t in tables}  # noqa: S608
        sequences = conn.execute("SELECT sequencename, last_value FROM pg_sequences ORDER BY 1").fetchall()
        columns = conn.execute(
            """SELECT table_schema, table_name, column_name FROM information_schema.columns
                WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2, 3"""
        ).fetchall()
    return {"tables": tables, "columns": columns, "rows": rows, "sequences": sequences}


def test_a_used_database_comes_back_as_a_fresh_copy_under_a_new_name(
    mill: _DatabaseMill, pg_admin_url: str, pg_templates: dict[str, str], prefix: str
) -> None:
    first = mill.take(pg_admin_url, pg_templates[MAIN], prefix)
    oid = oid_of(pg_admin_url, first)
    fresh = snapshot(with_database(pg_admin_url, first))
    assert any(fresh["rows"].values()), "the template's seed rows (catalog file transitions) are expected"
    with psycopg.connect(with_database(pg_admin_url, first), autocommit=True) as conn:
        # A row where there was none, the seeded rows gone, every sequence moved.
        conn.execute(
            """INSERT INTO product.progress (tenant_id, catalog_id, history_epoch, consumer)
               VALUES ('ten_a', 'cat_a', 'hep_a', 'product')"""
        )
        conn.execute("DELETE FROM resolver.catalog_file_transition")
        for sequence in conn.execute("SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences"):
            conn.execute("SELECT nextval(%s::regclass)", (sequence[0],))
    left_open = psycopg.connect(with_database(pg_admin_url, first), autocommit=True)
    mill.give_back(pg_admin_url, first)

    second = mill.take(pg_admin_url, pg_templates[MAIN], prefix)

    assert second != first
    assert oid_of(pg_admin_url, second) == oid, "the same database, renamed: not a new copy"
    assert snapshot(with_database(pg_admin_url, second)) == fresh
    # The connection the test left open was ended: nothing reaches the next test's database by the old name.
    with pytest.raises(psycopg.OperationalError):
        left_open.execute("SELECT 1")
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(with_database(pg_admin_url, first)).close()
    mill.give_back(pg_admin_url, second)


@pytest.mark.parametrize(
    "change",
    [
        "CREATE TABLE public.scratch (id int)",
        "ALTER TABLE product.projected_scope ADD COLUMN extra int",
        "GRANT SELECT ON resolver.capture TO PUBLIC",
        "TRUNCATE product.projected_scope",
        "CREATE FUNCTION public.f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "ALTER TABLE resolver.capture DISABLE ROW LEVEL SECURITY",
        "ALTER DATABASE {db} SET work_mem = '8MB'",
        "DROP INDEX resolver.listing_mapping_item",
        "DROP FUNCTION product.public_attribute_keys(jsonb) CASCADE",
        "DROP TRIGGER catalog_file_guard ON resolver.catalog_file",
    ],
)
def test_a_database_whose_schema_or_settings_changed_is_dropped_not_recycled(
    mill: _DatabaseMill, pg_admin_url: str, pg_templates: dict[str, str], prefix: str, change: str
) -> None:
    used = mill.take(pg_admin_url, pg_templates[MAIN], prefix)
    oid = oid_of(pg_admin_url, used)
    fresh = snapshot(with_database(pg_admin_url, used))
    with psycopg.connect(with_database(pg_admin_url, used), autocommit=True) as conn:
        conn.execute(change.format(db=used))  # type: ignore[arg-type]
    mill.give_back(pg_admin_url, used)

    again = mill.take(pg_admin_url, pg_templates[MAIN], prefix)

    names = [
        r[0] for r in psycopg.connect(pg_admin_url).execute("SELECT datname FROM pg_database").fetchall()
    ]
    assert not [n for n in names if n.startswith(f"{prefix}_") and n != again], (
        "the changed database was kept"
    )
    assert oid_of(pg_admin_url, again) != oid, "a new copy"
    assert snapshot(with_database(pg_admin_url, again)) == fresh
    mill.give_back(pg_admin_url, again)
