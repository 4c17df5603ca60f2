"""The composition root: ``bootstrap(settings) -> Platform`` builds every service once, from settings.

Nothing in the core reads settings or connects at import time; edges (the CLI, the APIs, the Dagster code
location) call ``bootstrap`` and pass the pieces on. Each service acts as its own database role (if_db): the
resolver as ``resolver_app``, the relay as ``resolver_relay``, the product side as ``product_app``; a queue on the
PostgreSQL backend is bound to the role of the side that uses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import TracebackType

from prw_platform.config import Settings
from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.db.locate import DatabaseUrls, locate_databases
from prw_platform.db.migrate import MigrationStatus, migrate_all
from prw_platform.plugins import PluginRegistry, get_plugin_manager
from prw_platform.queues import ACCEPTED_CHANGES, RESOLUTION_JOBS, Queue, build_queue
from prw_platform.storage import ObjectStore, build_object_store


@dataclass
class Platform:
    """Every long-lived service of one process. Close it (or use it as a context manager) to release pools."""

    settings: Settings
    urls: DatabaseUrls
    migrations: tuple[MigrationStatus, ...] = ()
    _databases: list[Database] = field(default_factory=list, repr=False)

    def _database(self, url: str, role: str | None, timeout_ms: int, name: str) -> Database:
        db = Database(
            url,
            role=role,
            statement_timeout_ms=timeout_ms,
            max_size=self.settings.db_pool_max_size,
            application_name=f"prw-{name}",
        ).open()
        self._databases.append(db)
        return db

    @cached_property
    def resolver_db(self) -> Database:
        """resolver_app, consumer timeouts (30 s)."""
        return self._database(
            self.urls.main, roles.RESOLVER_APP, self.settings.statement_timeout_consumer_ms, "resolver"
        )

    @cached_property
    def resolver_api_db(self) -> Database:
        """resolver_app, API timeouts (5 s)."""
        return self._database(
            self.urls.main, roles.RESOLVER_APP, self.settings.statement_timeout_api_ms, "resolver-api"
        )

    @cached_property
    def sweeper_db(self) -> Database:
        """resolver_sweeper: reads pending resolution jobs of every tenant and marks them enqueued, nothing else."""
        return self._database(
            self.urls.main, roles.RESOLVER_SWEEPER, self.settings.statement_timeout_consumer_ms, "sweeper"
        )

    @cached_property
    def relay_db(self) -> Database:
        return self._database(
            self.urls.main, roles.RESOLVER_RELAY, self.settings.statement_timeout_consumer_ms, "relay"
        )

    @cached_property
    def product_db(self) -> Database:
        return self._database(
            self.urls.main, roles.PRODUCT_APP, self.settings.statement_timeout_consumer_ms, "product"
        )

    @cached_property
    def product_api_db(self) -> Database:
        return self._database(
            self.urls.main, roles.PRODUCT_APP, self.settings.statement_timeout_api_ms, "product-api"
        )

    @cached_property
    def control_db(self) -> Database:
        """The control plane (history epochs); issuing an epoch is an operator action, so this is the owner."""
        return self._database(self.urls.control, None, self.settings.statement_timeout_api_ms, "control")

    @cached_property
    def operator_db(self) -> Database:
        """prw_operator: reads every tenant's rows (Dagster assets and checks, reports), writes nothing."""
        return self._database(
            self.urls.main, roles.PRW_OPERATOR, self.settings.statement_timeout_consumer_ms, "operator"
        )

    @cached_property
    def store(self) -> ObjectStore:
        return build_object_store(self.settings)

    @cached_property
    def registry(self) -> PluginRegistry:
        return PluginRegistry.from_manager(get_plugin_manager())

    # Queues, each bound to the role of the side that uses it (ADR-009).
    @cached_property
    def resolution_queue(self) -> Queue:
        return build_queue(self.settings, RESOLUTION_JOBS.name, db=self.resolver_db)

    @cached_property
    def accepted_changes_out(self) -> Queue:
        """The relay's end of the accepted-change queue (send only)."""
        return build_queue(self.settings, ACCEPTED_CHANGES.name, db=self.relay_db)

    @cached_property
    def accepted_changes_in(self) -> Queue:
        """The product consumer's end of the accepted-change queue."""
        return build_queue(self.settings, ACCEPTED_CHANGES.name, db=self.product_db)

    def close(self) -> None:
        while self._databases:
            self._databases.pop().close()

    def __enter__(self) -> Platform:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def bootstrap(settings: Settings | None = None, *, migrate: bool = False) -> Platform:
    """Locate (or start) the databases and, with ``migrate=True``, bring them to the newest schema."""
    settings = settings or Settings()
    urls = locate_databases(settings)
    migrations = tuple(migrate_all(urls.main, urls.control)) if migrate else ()
    return Platform(settings=settings, urls=urls, migrations=migrations)
