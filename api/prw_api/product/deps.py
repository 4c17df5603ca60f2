"""Dependencies of the product routes: the public catalog service and the parsed item query.

Query parameters of ``GET /v1/items`` (if_product_query example: ``/v1/items?class=...&attr[storage:capacity]=1 TB``):
``class``, ``profile``, ``brand``, ``gtin``, ``mpn``, ``q`` (text search), ``attr[<key>]=<value>`` (compared with
the attribute's canonical value and unit: 1 TB matches 1000 GB), ``facets`` (attribute keys to count values of),
``limit`` and ``cursor``. Anything else, and any parameter given twice, is a 422 INVALID_QUERY: a misspelt filter
silently ignored would answer a different question than the one asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Final

from fastapi import Depends, Query, Request
from starlette.datastructures import QueryParams

from prw_api.errors import ApiError
from prw_platform.errors import InvalidQuery
from prw_platform.services import DEFAULT_PAGE_SIZE, MAX_FACETS, MAX_PAGE_SIZE, ItemFilters, PublicCatalog

MAX_FILTER_LENGTH: Final = 200
MAX_ATTRIBUTE_FILTERS: Final = 10
_ATTRIBUTE_PARAMETER = re.compile(r"^attr\[(?P<key>[^\[\]]{1,100})\]$")
_NAMED_PARAMETERS: Final = frozenset(
    {"class", "profile", "brand", "gtin", "mpn", "q", "facets", "limit", "cursor"}
)
_FACET_KEY = re.compile(r"^[^\[\],]{1,100}$")
#: Parameters a client may expect that the public read model cannot answer, with the reason.
_UNSUPPORTED_PARAMETERS: Final = {
    "offset": "pages are keyset pages: pass the previous page's next_cursor as cursor=",
}

#: OpenAPI for the ``attr[<key>]`` family, which FastAPI cannot declare as a parameter.
ATTRIBUTE_FILTER_OPENAPI: Final[dict[str, Any]] = {
    "parameters": [
        {
            "name": "attr",
            "in": "query",
            "required": False,
            "style": "deepObject",
            "explode": True,
            "description": (
                "Attribute filters, all of which must match: attr[storage:capacity]=1 TB matches an attribute "
                "whose value, or value and unit, equals the text, or whose canonical value and unit equal what "
                "the item's normalization profile reads the text as (1 TB is 1000 GB). "
                f"At most {MAX_ATTRIBUTE_FILTERS}."
            ),
            "schema": {"type": "object", "additionalProperties": {"type": "string"}},
        }
    ]
}


async def get_catalog(request: Request) -> PublicCatalog:
    catalog: PublicCatalog = request.app.state.catalog
    return catalog


CatalogDep = Annotated[PublicCatalog, Depends(get_catalog)]


def _text_filter(description: str) -> Any:
    return Query(min_length=1, max_length=MAX_FILTER_LENGTH, description=description)


@dataclass(frozen=True, slots=True)
class ItemQuery:
    filters: ItemFilters
    limit: int
    cursor: str | None
    facets: tuple[str, ...] = ()


async def item_query(
    request: Request,
    item_class: Annotated[
        str | None,
        Query(
            alias="class",
            min_length=1,
            max_length=100,
            description="Product class a normalization profile declares, e.g. cls_storage_ssd",
        ),
    ] = None,
    profile: Annotated[str | None, _text_filter("Normalization profile, e.g. np_storage@1")] = None,
    brand: Annotated[str | None, _text_filter("Brand, case-insensitive")] = None,
    gtin: Annotated[str | None, Query(pattern=r"^[0-9]{8,14}$", description="GTIN, 8 to 14 digits")] = None,
    mpn: Annotated[str | None, _text_filter("Manufacturer part number")] = None,
    q: Annotated[
        str | None,
        _text_filter("Text search: every word occurs in the title, brand, MPN or GTIN, case-insensitive"),
    ] = None,
    facets: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=MAX_FILTER_LENGTH,
            description=(
                "Comma-separated attribute keys (e.g. storage:capacity,storage:interface): the response's facets "
                f"count the items per value of each over every matching item, not only the page. At most {MAX_FACETS}."
            ),
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE, description="Items per page")] = DEFAULT_PAGE_SIZE,
    cursor: Annotated[
        str | None, Query(min_length=1, max_length=512, description="next_cursor of the previous page")
    ] = None,
) -> ItemQuery:
    filters = ItemFilters(
        brand=brand,
        gtin=gtin,
        mpn=mpn,
        profile=profile,
        text=q,
        attributes=_attribute_filters(request.query_params),
        item_class=item_class,
    )
    return ItemQuery(filters, limit, cursor, _facet_keys(facets))


ItemQueryDep = Annotated[ItemQuery, Depends(item_query)]


def _attribute_filters(params: QueryParams) -> tuple[tuple[str, str], ...]:
    """The ``attr[<key>]`` filters, after checking every parameter: known, and given once."""
    attributes: dict[str, str] = {}
    seen: set[str] = set()
    for name, value in params.multi_items():
        if name in seen:
            raise _invalid(f"query parameter {name!r} is given more than once")
        seen.add(name)
        if name in _NAMED_PARAMETERS:
            continue
        match = _ATTRIBUTE_PARAMETER.match(name)
        if match is None:
            reason = _UNSUPPORTED_PARAMETERS.get(name, "not a filter of this route")
            raise _invalid(f"unknown query parameter {name!r}: {reason}")
        if not 1 <= len(value) <= MAX_FILTER_LENGTH:
            raise _invalid(f"{name}: a value of 1 to {MAX_FILTER_LENGTH} characters")
        attributes[match["key"]] = value
    if len(attributes) > MAX_ATTRIBUTE_FILTERS:
        raise _invalid(f"at most {MAX_ATTRIBUTE_FILTERS} attribute filters")
    return tuple(sorted(attributes.items()))


def _facet_keys(facets: str | None) -> tuple[str, ...]:
    if facets is None:
        return ()
    keys = tuple(dict.fromkeys(key.strip() for key in facets.split(",")))
    if not all(_FACET_KEY.match(key) for key in keys):
        raise _invalid("facets: comma-separated attribute keys, none empty")
    if len(keys) > MAX_FACETS:
        raise _invalid(f"facets: at most {MAX_FACETS} attribute keys")
    return keys


def _invalid(message: str) -> ApiError:
    return ApiError(422, InvalidQuery.code, message)
