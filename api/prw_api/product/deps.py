"""Dependencies of the product routes: the public catalog service and the parsed item query.

Query parameters of ``GET /v1/items`` (if_product_query example: ``/v1/items?class=...&attr[storage:capacity]=1 TB``):
``class``, ``profile``, ``brand``, ``gtin``, ``mpn``, ``q`` (text search), ``attr[<key>]=<value>`` (compared with
the attribute's canonical value and unit: 1 TB matches 1000 GB), ``facets`` (attribute keys to count values of),
``limit`` and ``cursor``. Anything else, and any parameter given twice, is a 422 INVALID_QUERY: a misspelt filter
silently ignored would answer a different question than the one asked.

The item query is read by ``item_query_of`` in one pass over the query string, not by FastAPI's per-parameter
dependency solving (a large share of a list request's CPU: bench/README.md); ``ITEM_QUERY_OPENAPI``
documents the same parameters, with the same schemas, that the checks below enforce.
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
MAX_CURSOR_LENGTH: Final = 512
_ATTRIBUTE_PARAMETER = re.compile(r"^attr\[(?P<key>[^\[\]]{1,100})\]$")
_FACET_KEY = re.compile(r"^[^\[\],]{1,100}$")
_LIMIT = re.compile(r"^[0-9]{1,9}$")
#: Parameters a client may expect that the public read model cannot answer, with the reason.
_UNSUPPORTED_PARAMETERS: Final = {
    "offset": "pages are keyset pages: pass the previous page's next_cursor as cursor=",
}


@dataclass(frozen=True, slots=True)
class _Text:
    """A text parameter of the item query: its length bounds (or pattern) and its documentation."""

    description: str
    max_length: int = MAX_FILTER_LENGTH
    pattern: str | None = None

    def schema(self, name: str) -> dict[str, Any]:
        text: dict[str, Any] = (
            {"pattern": self.pattern, "type": "string"}
            if self.pattern
            else {"maxLength": self.max_length, "minLength": 1, "type": "string"}
        )
        return {"anyOf": [text, {"type": "null"}], "description": self.description, "title": name.title()}

    def check(self, name: str, value: str) -> str:
        if self.pattern is not None:
            if re.fullmatch(self.pattern.strip("^$"), value) is None:
                raise _invalid(f"query.{name}: String should match pattern '{self.pattern}'")
        elif not 1 <= len(value) <= self.max_length:
            raise _invalid(f"query.{name}: a value of 1 to {self.max_length} characters")
        return value


#: The text parameters of ``GET /v1/items``, in the order the OpenAPI document lists them.
_TEXT_PARAMETERS: Final = {
    "class": _Text("Product class a normalization profile declares, e.g. cls_storage_ssd", max_length=100),
    "profile": _Text("Normalization profile, e.g. np_storage@1"),
    "brand": _Text("Brand, case-insensitive"),
    "gtin": _Text("GTIN, 8 to 14 digits", pattern=r"^[0-9]{8,14}$"),
    "mpn": _Text("Manufacturer part number"),
    "q": _Text("Text search: every word occurs in the title, brand, MPN or GTIN, case-insensitive"),
    "facets": _Text(
        "Comma-separated attribute keys (e.g. storage:capacity,storage:interface): the response's facets "
        f"count the items per value of each over every matching item, not only the page. At most {MAX_FACETS}."
    ),
}
_LIMIT_DESCRIPTION: Final = "Items per page"
_CURSOR = _Text("next_cursor of the previous page", max_length=MAX_CURSOR_LENGTH)


def _parameter(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": description, "in": "query", "name": name, "required": False, "schema": schema}


#: OpenAPI of ``GET /v1/items``'s parameters, as FastAPI would declare them, and the ``attr[<key>]`` family, which
#: FastAPI cannot declare as a parameter.
ITEM_QUERY_OPENAPI: Final[dict[str, Any]] = {
    "parameters": [
        *(_parameter(name, p.description, p.schema(name)) for name, p in _TEXT_PARAMETERS.items()),
        _parameter(
            "limit",
            _LIMIT_DESCRIPTION,
            {
                "default": DEFAULT_PAGE_SIZE,
                "description": _LIMIT_DESCRIPTION,
                "maximum": MAX_PAGE_SIZE,
                "minimum": 1,
                "title": "Limit",
                "type": "integer",
            },
        ),
        _parameter("cursor", _CURSOR.description, _CURSOR.schema("cursor")),
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
        },
    ]
}


async def get_catalog(request: Request) -> PublicCatalog:
    return catalog_of(request)


def catalog_of(request: Request) -> PublicCatalog:
    """The released catalog this deployment serves (``create_app``'s ``catalog``)."""
    catalog: PublicCatalog = request.app.state.catalog
    return catalog


CatalogDep = Annotated[PublicCatalog, Depends(get_catalog)]
#: ``cursor`` of a released collection's page (merchants, categories).
CursorQuery = Annotated[
    str | None, Query(min_length=1, max_length=MAX_CURSOR_LENGTH, description=_CURSOR.description)
]


def limit_query(description: str) -> Any:
    """``limit`` of a released collection's page: ``Annotated[int, limit_query("Merchants per page")]``."""
    return Query(ge=1, le=MAX_PAGE_SIZE, description=description)


@dataclass(frozen=True, slots=True)
class ItemQuery:
    filters: ItemFilters
    limit: int
    cursor: str | None
    facets: tuple[str, ...] = ()


def item_query_of(request: Request) -> ItemQuery:
    """The item query of ``GET /v1/items``, after checking every parameter: known, given once, within its
    bounds (``ITEM_QUERY_OPENAPI``); a 422 INVALID_QUERY otherwise."""
    texts, attributes, limit, cursor = _parameters(request.query_params)
    filters = ItemFilters(
        brand=texts.get("brand"),
        gtin=texts.get("gtin"),
        mpn=texts.get("mpn"),
        profile=texts.get("profile"),
        text=texts.get("q"),
        attributes=attributes,
        item_class=texts.get("class"),
    )
    return ItemQuery(filters, limit, cursor, _facet_keys(texts.get("facets")))


def _parameters(
    params: QueryParams,
) -> tuple[dict[str, str], tuple[tuple[str, str], ...], int, str | None]:
    texts: dict[str, str] = {}
    attributes: dict[str, str] = {}
    limit, cursor = DEFAULT_PAGE_SIZE, None
    seen: set[str] = set()
    for name, value in params.multi_items():
        if name in seen:
            raise _invalid(f"query parameter {name!r} is given more than once")
        seen.add(name)
        if (text := _TEXT_PARAMETERS.get(name)) is not None:
            texts[name] = text.check(name, value)
        elif name == "limit":
            if _LIMIT.match(value) is None or not 1 <= int(value) <= MAX_PAGE_SIZE:
                raise _invalid(f"query.limit: an integer from 1 to {MAX_PAGE_SIZE}")
            limit = int(value)
        elif name == "cursor":
            cursor = _CURSOR.check(name, value)
        elif (match := _ATTRIBUTE_PARAMETER.match(name)) is not None:
            if not 1 <= len(value) <= MAX_FILTER_LENGTH:
                raise _invalid(f"{name}: a value of 1 to {MAX_FILTER_LENGTH} characters")
            attributes[match["key"]] = value
        else:
            reason = _UNSUPPORTED_PARAMETERS.get(name, "not a filter of this route")
            raise _invalid(f"unknown query parameter {name!r}: {reason}")
    if len(attributes) > MAX_ATTRIBUTE_FILTERS:
        raise _invalid(f"at most {MAX_ATTRIBUTE_FILTERS} attribute filters")
    return texts, tuple(sorted(attributes.items())), limit, cursor


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
