"""The ``prw`` entry point of prw-profiles-core: np_core@1 and @2, np_storage@1, @2 and @3."""

from __future__ import annotations

from prw_platform.plugins import NormalizationProfile, hookimpl
from prw_profiles_core.profiles import CoreProfile, CoreProfileV2
from prw_profiles_core.publication import OFFER_THRESHOLDS
from prw_profiles_core.storage import STORAGE_DEFINITIONS_V1, STORAGE_DEFINITIONS_V2, StorageProfile

PRW_PLUGIN_API = 1


@hookimpl
def prw_register_profiles() -> list[NormalizationProfile]:
    return [
        CoreProfile(),
        CoreProfileV2(),
        StorageProfile(1, STORAGE_DEFINITIONS_V1),
        StorageProfile(2, STORAGE_DEFINITIONS_V2),
        StorageProfile(3, STORAGE_DEFINITIONS_V2, OFFER_THRESHOLDS),
    ]
