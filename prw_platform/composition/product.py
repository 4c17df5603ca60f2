"""The product side's services, each acting as ``product_app``: the accepted-change consumer (AW-04), gap
closure and rebuilds from the resolver's export API, and the public catalog the product API serves.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cached_property

from prw_platform.auth.keys import derived_secret
from prw_platform.composition.shared import Shared
from prw_platform.plugins.query import QueryVocabulary
from prw_platform.product.consumer.driver import ProductApply
from prw_platform.product.gaps import ExportSource, GapCloser, HttpExportSource
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.items import CursorCodec
from prw_platform.product.public.pictures import PictureLinks
from prw_platform.product.ratelimit import RateLimiter, TokenBucketLimiter
from prw_platform.product.rebuild import HttpSnapshotSource, ProductRebuild, SnapshotSource
from prw_platform.product.rebuild.service import RebuildCleanup


class ProductServices(Shared):
    # -- The accepted-change consumer and the resolver's export API. -----------------------------------------
    @cached_property
    def product_apply(self) -> ProductApply:
        """AW-04: the accepted-change queue into the product projection. A dead-lettered delivery asks the gap
        closer to fetch its stream at once."""
        return ProductApply(
            self.accepted_changes_in,
            self.product_db,
            retry=self.retry,
            on_dead_letter=self.gap_closer.request,
        )

    @cached_property
    def gap_closer(self) -> GapCloser:
        """Gap closure: due streams from the operator read model, fetched over HTTP, applied as product_app. The
        source is looked up on first use, so ``prw worker apply`` builds no HTTP client."""
        return GapCloser(
            self.product_db,
            source=None,
            streams=lambda: self.reports.stream_progress(),
            fetch_after=timedelta(seconds=self.settings.gap_fetch_after_seconds),
            head_check=timedelta(seconds=self.settings.gap_head_check_seconds),
            clock=self.clock,
            source_factory=lambda: self.export_source,
        )

    @cached_property
    def export_source(self) -> ExportSource | None:
        """The resolver's export stream as the product principal (``PRW_EXPORTS_URL`` + client credentials);
        None when not configured."""
        s = self.settings
        if not (s.exports_url and s.exports_client_id and s.exports_client_secret):
            return None
        source = HttpExportSource(
            s.exports_url, s.exports_client_id, s.exports_client_secret.get_secret_value()
        )
        self._opened.callback(source.close)
        return source

    @cached_property
    def snapshot_source(self) -> SnapshotSource | None:
        """The export API for a rebuild (snapshot exports, leases, the retained tail) with the export stream's
        credentials; None when not configured."""
        source = self.export_source
        return HttpSnapshotSource(source) if isinstance(source, HttpExportSource) else None

    # -- Rebuilds (if_projection_bootstrap). -----------------------------------------------------------------
    @cached_property
    def product_rebuild(self) -> ProductRebuild:
        """Rebuild a catalog's projection into an isolated generation, then cut over."""
        return ProductRebuild(
            self.product_db,
            source_factory=lambda: self.snapshot_source,
            gap_source_factory=lambda: self.export_source,
            clock=self.clock,
            stale_after=timedelta(seconds=self.settings.rebuild_stale_after_seconds),
            cleanup_chunk_rows=self.settings.rebuild_cleanup_chunk_rows,
        )

    @cached_property
    def rebuild_cleanup(self) -> RebuildCleanup:
        """The ``rebuild-cleanup`` stage: finished rebuilds found through prw_operator, generations dropped as
        product_app in their tenant."""
        return RebuildCleanup(
            self.product_rebuild,
            self.operator_db,
            timedelta(seconds=self.settings.rebuild_cleanup_after_seconds),
        )

    # -- The public catalog (if_product_query). --------------------------------------------------------------
    def public_catalog(self, tenant_id: str | None = None, catalog_id: str | None = None) -> PublicCatalog:
        """The released catalog the product API serves: the deployment's binding (``PRW_PRODUCT_TENANT_ID``,
        ``PRW_PRODUCT_CATALOG_ID``) unless a caller that binds another deployment names it."""
        key = (tenant_id or self.settings.product_tenant_id, catalog_id or self.settings.product_catalog_id)
        if key not in self._catalogs:
            vocabulary = QueryVocabulary.from_registry(self.registry)
            self._catalogs[key] = PublicCatalog(
                self.product_api_db, *key, vocabulary, self.product_cursors, self.picture_links
            )
        return self._catalogs[key]

    @cached_property
    def _catalogs(self) -> dict[tuple[str, str], PublicCatalog]:
        return {}

    @cached_property
    def picture_links(self) -> PictureLinks:
        """Signed links of released pictures (seed 004): the bytes are read from the managed store's catalog-files
        bucket, links signed with a key derived from the token signing key (the same in every worker process)."""
        return PictureLinks(
            self.store,
            self.settings.catalog_files_bucket,
            derived_secret(self.token_signing_key, "prw product pictures v1"),
            ttl=timedelta(seconds=self.settings.product_picture_link_ttl_seconds),
            clock=self.clock,
        )

    @cached_property
    def product_cursors(self) -> CursorCodec:
        """The public API's cursor signer: ``PRW_PRODUCT_CURSOR_SECRET``, else a key derived from the token
        signing key (the same in every worker process of a deployment)."""
        secret = self.settings.product_cursor_secret
        if secret is not None:
            return CursorCodec(secret.get_secret_value().encode())
        return CursorCodec(derived_secret(self.token_signing_key, "prw product cursor v1"))

    @cached_property
    def public_rate_limiter(self) -> RateLimiter | None:
        """if_product_query 429 RATE_LIMITED: the per-client limiter of the product API, if one is configured."""
        rate = self.settings.product_rate_limit_per_second
        return None if rate is None else TokenBucketLimiter(rate, self.settings.product_rate_limit_burst)
