"""The ``prw`` entry point of ``prw-adapter-schemaorg``: registers ``pa_schemaorg@1.0.0``, ``@1.1.0``, ``@2.0.0``
and ``@3.0.0`` (all installed: a pin keeps its version; automatic selection takes the newest)."""

from __future__ import annotations

from prw_adapter_schemaorg.adapter import SchemaOrgAdapter
from prw_adapter_schemaorg.adapter_1_1 import SchemaOrgAdapterV11
from prw_adapter_schemaorg.adapter_2 import SchemaOrgAdapterV2
from prw_adapter_schemaorg.adapter_3 import SchemaOrgAdapterV3
from prw_platform.plugins import SourceAdapter, hookimpl

#: The plugin API this module was written for; the manager refuses a mismatch (STYLE.md: Plugins).
PRW_PLUGIN_API = 1


@hookimpl
def prw_register_adapters() -> list[SourceAdapter]:
    return [SchemaOrgAdapter(), SchemaOrgAdapterV11(), SchemaOrgAdapterV2(), SchemaOrgAdapterV3()]
