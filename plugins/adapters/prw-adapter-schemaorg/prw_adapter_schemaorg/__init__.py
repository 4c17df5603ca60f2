"""PRW source adapter ``pa_schemaorg``: schema.org Product data from merchant pages (see README.md)."""

from prw_adapter_schemaorg.adapter import SchemaOrgAdapter

__all__ = ["SchemaOrgAdapter"]
