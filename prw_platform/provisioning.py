"""Catalog provisioning across both sides: the resolver's tenant, catalog, sources and stream (at the control
plane's current history epoch), and the product service's projected scope for that stream.

The one place that knows both sides have to agree on a catalog; an operator command or the demo calls
``Platform.catalogs.provision(spec)`` instead of writing to either side itself. Safe to repeat.
"""

from __future__ import annotations

from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Database
from prw_platform.product.scopes import project_catalog
from prw_platform.resolver.catalogs import (
    CatalogSpec,
    ProvisionedCatalog,
    ReleasePolicy,
    SourceSpec,
    provision_catalog,
    set_release_policy,
)


class CatalogProvisioning:
    def __init__(
        self, resolver_db: Database, control_db: Database, product_db: Database, *, clock: Clock = utc_now
    ) -> None:
        self._resolver = resolver_db
        self._control = control_db
        self._product = product_db
        self._clock = clock

    def provision(self, spec: CatalogSpec) -> ProvisionedCatalog:
        """Create or update the catalog and open its stream, then project it on the product side (if_accepted_change
        Authorization: events of a (tenant, catalog) the product service does not project are dead-lettered)."""
        provisioned = provision_catalog(self._resolver, self._control, spec, clock=self._clock)
        stream = provisioned.stream
        project_catalog(self._product, stream.tenant_id, stream.catalog_id, stream.history_epoch)
        return provisioned

    def set_release_policy(self, tenant_id: str, catalog_id: str, policy: ReleasePolicy) -> None:
        set_release_policy(self._resolver, tenant_id, catalog_id, policy)


__all__ = ["CatalogProvisioning", "CatalogSpec", "ProvisionedCatalog", "ReleasePolicy", "SourceSpec"]
