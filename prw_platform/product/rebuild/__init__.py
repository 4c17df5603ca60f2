"""Product rebuild into an isolated generation (seed 003 if_projection_bootstrap): see
``service``."""

from prw_platform.product.rebuild.client import HttpSnapshotSource, RebuildRefused, SnapshotSource
from prw_platform.product.rebuild.service import AbandonResult, ProductRebuild, RebuildFailed, RebuildResult

__all__ = [
    "AbandonResult",
    "HttpSnapshotSource",
    "ProductRebuild",
    "RebuildFailed",
    "RebuildRefused",
    "RebuildResult",
    "SnapshotSource",
]
