"""The identifiers the HTTP edges accept, one type each, usable as a path, query, form or body field type.

Each pattern is the database's CHECK constraint on that column (prw_platform/db/migrations), so a value the API
accepts is one the database stores: an id that fails it is a 422 at the edge, never a refused write.
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import Field

#: Migration 0001: catalog_id (and tenant_id, source_id, worker_id, instance_id).
CATALOG_ID: Final = r"^[a-z][a-z0-9_]{2,63}$"
#: Migration 0003: item_id.
ITEM_ID: Final = r"^itm_[a-z0-9_]{1,120}$"

CatalogId = Annotated[str, Field(pattern=CATALOG_ID)]
SourceId = Annotated[str, Field(pattern=CATALOG_ID)]
ItemId = Annotated[str, Field(pattern=ITEM_ID)]
ListingId = Annotated[str, Field(pattern=r"^lst_[a-z0-9_]{1,120}$")]
DecisionId = Annotated[str, Field(pattern=r"^dec_[a-z0-9_]{1,120}$")]
CaseId = Annotated[str, Field(pattern=r"^rc_[a-z0-9_]{1,120}$")]
ImprovementId = Annotated[str, Field(pattern=r"^imp_[a-z0-9_]{1,120}$")]
ReplayId = Annotated[str, Field(pattern=r"^rpl_[a-z0-9_]{1,120}$")]
MerchantId = Annotated[str, Field(pattern=r"^mer_[a-z0-9_]{1,120}$")]
ClassId = Annotated[str, Field(pattern=r"^cls_[a-z0-9_]{1,120}$")]
FileId = Annotated[str, Field(pattern=r"^fil_[0-9a-f]{24}$")]
ExportId = Annotated[str, Field(pattern=r"^exp_[a-z0-9]{8,64}$")]
