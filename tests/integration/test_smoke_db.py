from prw_platform.db.database import Database


def test_fresh_database_is_migrated_and_resolver_role_is_active(resolver_db: Database) -> None:
    with resolver_db.transaction(tenant_id="ten_a") as conn:
        row = conn.execute("SELECT current_user AS u, current_setting('app.tenant_id') AS t").fetchone()
    assert row == {"u": "resolver_app", "t": "ten_a"}
