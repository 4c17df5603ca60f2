"""Dependencies of the product routes: the public catalog service and the parsed item query.

Query parameters of ``GET /v1/items`` (if_product_query example: ``/v1/items?class=...&attr[storage:capacity]=1 TB``):
``profile``, ``brand``, ``gtin``, ``mpn``, ``q`` (title text), ``attr[<key>]=<value>`` (the attribute's value,
or its value and unit), ``limit`` and ``cursor``. Anything else, and any parameter given twice, is a 422
INVALID_QUERY: a misspelt filter silently ignored would answer a different question than the one asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Any, Final

from fastapi import Depends, Query, Request
from starlette.datastructures import QueryParams

from prw_api.errors import ApiError
from prw_platform.errors import InvalidQuery
from prw_platform.services import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, ItemFilters, PublicCatalog

MAX_FILTER_LENGTH: Final = 200
MAX_ATTRIBUTE_FILTERS: Final = 10
_ATTRIBUTE_PARAMETER = re.compile(r"^attr\[(?P<key>[^\[\]]{1,100})\]$")
_NAMED_PARAMETERS: Final = frozenset({"profile", "brand", "gtin", "mpn", "q", "limit", "cursor"})
#: Parameters a client may expect from the seed that the public read model cannot answer, with the reason.
_UNSUPPORTED_PARAMETERS: Final = {
    "class": "public items carry their normalization profile, not a class: filter with profile=",
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
                f"whose value, or value and unit, equals the text. At most {MAX_ATTRIBUTE_FILTERS}."
            ),
            "schema": {"type": "object", "additionalProperties": {"type": "string"}},
        }
    ]
}


def get_catalog(request: Request) -> PublicCatalog:
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


def item_query(
    request: Request,
    profile: Annotated[str | None, _text_filter("Normalization profile, e.g. np_storage@1")] = None,
    brand: Annotated[str | None, _text_filter("Brand, case-insensitive")] = None,
    gtin: Annotated[str | None, Query(pattern=r"^[0-9]{8,14}$", description="GTIN, 8 to 14 digits")] = None,
    mpn: Annotated[str | None, _text_filter("Manufacturer part number")] = None,
    q: Annotated[str | None, _text_filter("Text contained in the title, case-insensitive")] = None,
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
    )
    return ItemQuery(filters, limit, cursor)


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


def _invalid(message: str) -> ApiError:
    return ApiError(422, InvalidQuery.code, message)
