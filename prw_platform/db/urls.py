"""Connection-string helpers. We use libpq conninfo strings and URIs as psycopg accepts them."""

from __future__ import annotations

from psycopg.conninfo import conninfo_to_dict, make_conninfo


def with_database(conninfo: str, dbname: str) -> str:
    """The same server and credentials, another database."""
    return make_conninfo(conninfo, dbname=dbname)


def database_name(conninfo: str) -> str:
    name = conninfo_to_dict(conninfo).get("dbname")
    return str(name) if name else "postgres"


def control_database_url(main: str) -> str:
    """The default control database: ``<main>_control`` on the same server (if_projection_bootstrap: epochs live in a
    control plane outside the restored database)."""
    return with_database(main, f"{database_name(main)}_control")
