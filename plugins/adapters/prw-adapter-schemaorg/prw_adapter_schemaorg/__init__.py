"""PRW source adapter ``pa_schemaorg``: schema.org Product data from merchant pages (see README.md)."""

from prw_adapter_schemaorg.adapter import SchemaOrgAdapter
from prw_adapter_schemaorg.adapter_1_1 import SchemaOrgAdapterV11
from prw_adapter_schemaorg.adapter_2 import SchemaOrgAdapterV2
from prw_adapter_schemaorg.adapter_3 import SchemaOrgAdapterV3

__all__ = ["SchemaOrgAdapter", "SchemaOrgAdapterV2", "SchemaOrgAdapterV3", "SchemaOrgAdapterV11"]
