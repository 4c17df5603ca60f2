"""Dagster resources wrapping the core's composition root (STYLE.md: resources are ConfigurableResource classes
wrapping the core's services)."""

from pathlib import Path

import dagster as dg
from pydantic import PrivateAttr

from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings


class PlatformResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """The PRW platform of this process: databases (one pool per service role), object store, queues, plugins.

    Unset fields come from the ``PRW_*`` environment like every other entry point (no database URL: the embedded
    PostgreSQL under ``PRW_DATA_DIR``)."""

    database_url: str | None = None
    data_dir: str | None = None

    _platform: Platform | None = PrivateAttr(default=None)

    def settings(self) -> Settings:
        overrides: dict[str, object] = {}
        if self.database_url:
            overrides["database_url"] = self.database_url
        if self.data_dir:
            overrides["data_dir"] = Path(self.data_dir)
        return Settings(**overrides)  # type: ignore[arg-type]

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._platform = bootstrap(self.settings())

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._platform is not None:
            self._platform.close()
            self._platform = None

    @property
    def platform(self) -> Platform:
        if self._platform is None:
            # Direct use outside a run or sensor (a test calling an asset check as a function).
            self._platform = bootstrap(self.settings())
        return self._platform
