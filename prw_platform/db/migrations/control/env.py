from prw_platform.db.migrations.env_common import run_migrations

run_migrations(version_table_schema="public")
