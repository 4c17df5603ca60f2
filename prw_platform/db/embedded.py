"""Embedded PostgreSQL (the default when no database URL is configured).

The ``pgserver`` wheel ships PostgreSQL 16 binaries; the server keeps its data under the project's data folder and
listens on a Unix socket only, so it never collides with a server on 5432.
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

from prw_platform.db.urls import with_database

log = logging.getLogger(__name__)

EMBEDDED_DATABASE = "prw"


class EmbeddedPostgres:
    """A handle on the embedded server. ``start()`` initializes and starts it when needed (idempotent across
    processes: pgserver serializes with a file lock and reuses a running postmaster)."""

    def __init__(self, data_dir: Path, *, keep_running: bool = True) -> None:
        self._pgdata = data_dir.resolve()
        self._keep_running = keep_running
        self._server: object | None = None
        self._admin_url: str | None = None

    @property
    def pgdata(self) -> Path:
        return self._pgdata

    def start(self) -> str:
        """Start (or attach to) the server; return a conninfo for its ``postgres`` database."""
        if self._admin_url is None:
            from pgserver.postgres_server import get_server  # lazily: only the embedded path needs it

            self._pgdata.parent.mkdir(parents=True, exist_ok=True)
            server = get_server(self._pgdata, cleanup_mode=None if self._keep_running else "stop")
            self._server = server
            self._admin_url = str(server.get_uri())
            log.info("embedded PostgreSQL at %s", self._pgdata)
        return self._admin_url

    def database_url(self, dbname: str = EMBEDDED_DATABASE) -> str:
        return with_database(self.start(), dbname)


def pg_ctl_stop(pgdata: Path) -> None:
    """Stop an embedded server (fast shutdown). ``prw`` leaves the server running between commands on purpose;
    tests stop theirs."""
    from pgserver._commands import POSTGRES_BIN_PATH  # the binaries shipped in the wheel

    # pgserver runs the server as the system user "pgserver" when we are root (PostgreSQL refuses root).
    user = "pgserver" if os.geteuid() == 0 else None
    subprocess.run(
        [str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(pgdata), "-w", "-m", "fast", "stop"],
        check=False,
        capture_output=True,
        user=user,
        timeout=60,
    )
