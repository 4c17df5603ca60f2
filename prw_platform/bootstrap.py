"""The composition root: ``bootstrap(settings) -> Platform`` builds every service once, from settings.

Nothing in the core reads settings or connects at import time, and no edge assembles a service: the CLI, the APIs
and the Dagster code location call ``bootstrap`` and use the ``Platform`` it returns (``prw_platform.composition``
holds its parts) and the stages it registers (``prw_platform.pipeline``), which ``prw_platform.runtime`` runs.
"""

from __future__ import annotations

from prw_platform.auth import TokenSettings
from prw_platform.clock import Clock, utc_now
from prw_platform.composition.platform import Platform
from prw_platform.config import Settings
from prw_platform.db.locate import locate_databases
from prw_platform.db.migrate import migrate_all
from prw_platform.pipeline import default_stages
from prw_platform.resolver.intake import IntakeSettings

__all__ = ["Platform", "bootstrap"]


def bootstrap(
    settings: Settings | None = None,
    *,
    migrate: bool = False,
    clock: Clock = utc_now,
    intake_settings: IntakeSettings | None = None,
    token_settings: TokenSettings | None = None,
    wait_for_database: bool = True,
) -> Platform:
    """Locate (or start) the databases and, with ``migrate=True``, bring them to the newest schema.
    ``wait_for_database=False``: see ``Platform.wait_for_database`` (what ``prw serve`` workers use)."""
    settings = settings or Settings()
    urls = locate_databases(settings)
    migrations = tuple(migrate_all(urls.main, urls.control)) if migrate else ()
    return Platform(
        settings=settings,
        urls=urls,
        migrations=migrations,
        clock=clock,
        intake_settings=intake_settings or IntakeSettings(),
        token_settings=token_settings or TokenSettings(),
        wait_for_database=wait_for_database,
        stages=default_stages(),
    )
