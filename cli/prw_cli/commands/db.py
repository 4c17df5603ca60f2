"""``prw migrate``: bring the main and control databases to the newest schema.

The database stack (Alembic, SQLAlchemy, psycopg) is imported when the command runs, not for ``--help``."""

from __future__ import annotations

import json

import typer
from rich.table import Table

from prw_cli.output import results_console

console = results_console()


def migrate(as_json: bool = typer.Option(False, "--json", help="Print the result as JSON.")) -> None:
    """Apply Alembic migrations to the main database (schemas resolver, product, queue) and the control
    database (history epochs). Starts the embedded PostgreSQL when no PRW_DATABASE_URL is set."""
    from prw_cli.settings import databases, load_settings
    from prw_platform.deployment import database_name, migrate_all

    settings = load_settings()
    with console.status("locating databases", spinner="dots") as status:
        urls = databases(settings)
        status.update(f"migrating {database_name(urls.main)} and {database_name(urls.control)}")
        results = migrate_all(urls.main, urls.control)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "embedded": urls.embedded,
                    "databases": [
                        {"database": r.database, "kind": r.kind, "before": r.before, "after": r.after}
                        for r in results
                    ],
                }
            )
        )
        return
    table = Table(title="prw migrate" + (" (embedded PostgreSQL)" if urls.embedded else ""))
    for column in ("database", "kind", "before", "after"):
        table.add_column(column)
    for r in results:
        table.add_row(r.database, r.kind, r.before or "(empty)", r.after or "(empty)")
    console.print(table)
