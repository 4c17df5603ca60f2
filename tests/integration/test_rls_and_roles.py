"""if_db: per-service roles with least privilege, and row-level security by tenant (INV-06)."""

from __future__ import annotations

import psycopg
import pytest

from prw_platform.db.database import Database
from prw_platform.db.errors import InsufficientPrivilege


def _seed_two_tenants(owner_db: Database) -> None:
    with owner_db.transaction() as conn:
        for tenant in ("ten_synth_a", "ten_synth_b"):
            conn.execute("INSERT INTO resolver.tenant (tenant_id, name) VALUES (%s, %s)", (tenant, tenant))
            conn.execute(
                "INSERT INTO resolver.catalog (tenant_id, catalog_id, name) VALUES (%s, 'cat_primary', 'c')",
                (tenant,),
            )
            conn.execute(
                "INSERT INTO resolver.stream_cursor (tenant_id, catalog_id, history_epoch, committed_position)"
                " VALUES (%s, 'cat_primary', 'ep_1', 1)",
                (tenant,),
            )
            conn.execute(
                """INSERT INTO resolver.outbox (tenant_id, catalog_id, history_epoch, position, event_id,
                       event_type, aggregate_type, aggregate_id, aggregate_revision, body)
                   VALUES (%s, 'cat_primary', 'ep_1', 1, %s, 'catalog_item.created', 'catalog_item', 'itm_1', 1,
                       '{}')""",
                (tenant, f"evt_{tenant}"),
            )
            conn.execute(
                """INSERT INTO product.item_projection (tenant_id, catalog_id, item_id, revision, fields, position)
                   VALUES (%s, 'cat_primary', %s, 1, '{}', 1)""",
                (tenant, f"itm_{tenant}"),
            )


def test_tenant_a_session_cannot_read_tenant_b_rows(owner_db: Database, resolver_db: Database) -> None:
    _seed_two_tenants(owner_db)
    with resolver_db.transaction(tenant_id="ten_synth_a") as conn:
        tenants = conn.execute("SELECT tenant_id FROM resolver.tenant").fetchall()
        events = conn.execute("SELECT event_id FROM resolver.outbox").fetchall()
        by_key = conn.execute(
            "SELECT count(*) AS n FROM resolver.outbox WHERE tenant_id = 'ten_synth_b'"
        ).fetchone()
    assert tenants == [{"tenant_id": "ten_synth_a"}]
    assert events == [{"event_id": "evt_ten_synth_a"}]
    assert by_key == {"n": 0}


def test_tenant_a_session_cannot_write_tenant_b_rows(owner_db: Database, resolver_db: Database) -> None:
    _seed_two_tenants(owner_db)
    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"),
        resolver_db.transaction(tenant_id="ten_synth_a") as conn,
    ):
        conn.execute(
            "INSERT INTO resolver.catalog (tenant_id, catalog_id, name) VALUES ('ten_synth_b', 'cat_other', 'x')"
        )
    with resolver_db.transaction(tenant_id="ten_synth_a") as conn:
        updated = conn.execute(
            "UPDATE resolver.stream_cursor SET committed_position = 99 WHERE tenant_id = 'ten_synth_b'"
        ).rowcount
    assert updated == 0


def test_no_tenant_set_sees_nothing(owner_db: Database, resolver_db: Database, product_db: Database) -> None:
    _seed_two_tenants(owner_db)
    with resolver_db.transaction() as conn:
        assert conn.execute("SELECT count(*) AS n FROM resolver.outbox").fetchone() == {"n": 0}
    with product_db.transaction() as conn:
        assert conn.execute("SELECT count(*) AS n FROM product.item_projection").fetchone() == {"n": 0}


def test_tenant_setting_does_not_leak_into_the_next_transaction(owner_db: Database, db_url: str) -> None:
    _seed_two_tenants(owner_db)
    one_connection = Database(db_url, role="resolver_app", max_size=1).open()
    try:
        with one_connection.transaction(tenant_id="ten_synth_a") as conn:
            assert conn.execute("SELECT count(*) AS n FROM resolver.tenant").fetchone() == {"n": 1}
        with one_connection.transaction() as conn:
            assert conn.execute("SELECT count(*) AS n FROM resolver.tenant").fetchone() == {"n": 0}
    finally:
        one_connection.close()


def test_product_rls_isolates_tenants(owner_db: Database, product_db: Database) -> None:
    _seed_two_tenants(owner_db)
    with product_db.transaction(tenant_id="ten_synth_b") as conn:
        items = conn.execute("SELECT item_id FROM product.item_projection").fetchall()
    assert items == [{"item_id": "itm_ten_synth_b"}]


def test_product_app_has_no_access_to_the_resolver_schema(product_db: Database) -> None:
    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="schema resolver"),
        product_db.transaction(tenant_id="ten_synth_a") as conn,
    ):
        conn.execute("SELECT 1 FROM resolver.outbox")


def test_resolver_app_cannot_update_or_delete_captures_or_receipts(resolver_db: Database) -> None:
    # INV-05: captures, artifacts and receipts are immutable for the application role.
    for statement in (
        "UPDATE resolver.capture SET url = 'x'",
        "DELETE FROM resolver.capture",
        "UPDATE resolver.artifact SET media_type = 'x'",
        "DELETE FROM resolver.receipt",
    ):
        with (
            pytest.raises(psycopg.errors.InsufficientPrivilege),
            resolver_db.transaction(tenant_id="ten_synth_a") as conn,
        ):
            conn.execute(statement)


def test_relay_reads_every_stream_and_marks_published(owner_db: Database, relay_db: Database) -> None:
    _seed_two_tenants(owner_db)
    with relay_db.transaction() as conn:
        events = conn.execute("SELECT event_id FROM resolver.outbox ORDER BY event_id").fetchall()
        marked = conn.execute(
            "UPDATE resolver.outbox SET published_at = now() WHERE published_at IS NULL"
        ).rowcount
    assert [e["event_id"] for e in events] == ["evt_ten_synth_a", "evt_ten_synth_b"]
    assert marked == 2


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE resolver.outbox SET body = '{\"forged\": true}'",
        "UPDATE resolver.outbox SET position = 7",
        "UPDATE resolver.outbox SET published_at = now(), aggregate_revision = 9",
        "DELETE FROM resolver.outbox",
        """INSERT INTO resolver.outbox (tenant_id, catalog_id, history_epoch, position, event_id, event_type,
               aggregate_type, aggregate_id, aggregate_revision, body)
           VALUES ('ten_synth_a', 'cat_primary', 'ep_1', 2, 'evt_x', 't', 'a', 'i', 1, '{}')""",
        "UPDATE resolver.stream_cursor SET committed_position = 5",
        "SELECT * FROM resolver.capture",
        "SELECT * FROM resolver.stream_cursor",
    ],
)
def test_relay_role_can_update_nothing_but_published_at(
    owner_db: Database, relay_db: Database, statement: str
) -> None:
    _seed_two_tenants(owner_db)
    with pytest.raises(psycopg.errors.InsufficientPrivilege), relay_db.transaction() as conn:
        conn.execute(statement)


def test_insufficient_privilege_is_not_retried(relay_db: Database) -> None:
    calls = []

    def work(conn: psycopg.Connection[dict[str, object]]) -> None:
        calls.append(1)
        conn.execute("DELETE FROM resolver.outbox")

    with pytest.raises(InsufficientPrivilege):
        relay_db.run(work)
    assert len(calls) == 1


def test_operator_role_reads_every_tenant_and_writes_nothing(owner_db: Database, db_url: str) -> None:
    """Migration 0007: prw_operator sees across tenants (reports, Dagster assets) and can change nothing."""
    _seed_two_tenants(owner_db)
    operator = Database(db_url, role="prw_operator", max_size=1).open()
    try:
        with operator.transaction() as conn:
            events = conn.execute("SELECT event_id FROM resolver.outbox ORDER BY event_id").fetchall()
            items = conn.execute("SELECT item_id FROM product.item_projection ORDER BY item_id").fetchall()
            conn.execute("SELECT count(*) FROM queue.message")
        assert [e["event_id"] for e in events] == ["evt_ten_synth_a", "evt_ten_synth_b"]
        assert [i["item_id"] for i in items] == ["itm_ten_synth_a", "itm_ten_synth_b"]
        for statement in (
            "UPDATE resolver.outbox SET published_at = now()",
            "DELETE FROM product.item_projection",
            "INSERT INTO resolver.tenant (tenant_id, name) VALUES ('ten_forged', 'x')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege), operator.transaction() as conn:
                conn.execute(statement)
    finally:
        operator.close()


def test_every_row_level_security_table_has_an_operator_policy(owner_db: Database) -> None:
    """A tenant-scoped table without operator_read would make the operator's reports silently miss its rows."""
    with owner_db.transaction() as conn:
        missing = conn.execute(
            """SELECT n.nspname || '.' || c.relname AS name
                 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind = 'r' AND c.relrowsecurity AND n.nspname IN ('resolver', 'product')
                  AND NOT EXISTS (SELECT 1 FROM pg_policies p WHERE p.schemaname = n.nspname
                                     AND p.tablename = c.relname AND p.policyname = 'operator_read')"""
        ).fetchall()
    assert missing == []
