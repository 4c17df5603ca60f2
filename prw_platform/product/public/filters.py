"""The conditions of a public item list query (``store.page_read``), composed of the filters given.

Each is a plain expression on the row ``i`` of the released items, so PostgreSQL uses the brand / GTIN indexes and
evaluates nothing for an absent filter; the shapes are few (prepared per connection). No table is named here:
``store`` owns the tables and wraps these conditions in its statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from psycopg import sql

from prw_platform.product.public.rows import ItemSearch

_SIMPLE_FILTERS = {
    "brand": "lower(i.fields->>'brand') = lower(%(brand)s::text)",
    "gtin": "i.fields->'identifiers'->>'gtin' = %(gtin)s::text",
    "mpn": "i.fields->'identifiers'->>'mpn' = %(mpn)s::text",
    "profile": "i.fields->>'profile' = %(profile)s::text",
}
_TERM = """concat_ws(' ', i.fields->>'title', i.fields->>'brand', i.fields->'identifiers'->>'mpn',
                    i.fields->'identifiers'->>'gtin') ILIKE {pattern}"""
# An attribute matches the text as typed (its value, or value and unit), or the canonical value and unit a profile
# read the text as, two numbers comparing as numbers ("1000" and "1000.0"): one overlap of the keys the row's
# attributes can match (``public_item.attribute_keys``, computed from ``fields`` by PostgreSQL when the row is
# written; migration 0023 describes the keys) with the keys of the filter's text, built here by
# ``attribute_filter_keys``, the Python twin of the migration's ``product.attribute_key`` (a test compares the two
# on generated values). Sent as one array parameter: built in SQL per statement they were a visible share of a
# list request's backend CPU (four function calls and a numeric cast in an InitPlan; bench/README.md). The
# coalesce keeps the planner's estimate of the old per-row comparison: a bare overlap with a parameter
# is estimated at 0.5 % of the rows, and the generic plan then read every released item and sorted them instead of
# walking the item-id order until a page is full (bench/README.md).
_ATTRIBUTE = "coalesce(i.attribute_keys && {keys}::text[], false)"
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_CLASS_KEY = "i.fields->'attributes'->{key}->>'value' = ANY({allowed}::text[])"


@dataclass(frozen=True, slots=True)
class SearchShape:
    """What the text of a list statement depends on: which filters are given, not their values. The statement of a
    shape is composed once per process (``conditions_of``' callers cache it) and prepared once per connection."""

    #: The simple filters given, in ``_SIMPLE_FILTERS`` order.
    simple: tuple[str, ...] = ()
    #: Words of the text search.
    terms: int = 0
    #: How many attribute filters (each one array of keys).
    attributes: int = 0
    #: Per alternative of the class's rule, its number of keys; None without a class filter.
    class_keys: tuple[int, ...] | None = None
    facets: bool = False


def search_params(search: ItemSearch, params: dict[str, Any]) -> SearchShape:
    """Fill ``params`` with the values of the placeholders ``conditions_of(shape)`` names; return that shape."""
    filters = search.filters
    simple = tuple(name for name in _SIMPLE_FILTERS if getattr(filters, name) is not None)
    for name in simple:
        params[name] = getattr(filters, name)
    words = (filters.text or "").split()
    for n, word in enumerate(words):
        params[f"term{n}"] = _like_pattern(word)
    for n, attribute in enumerate(search.attributes):
        params[f"attr{n}_keys"] = attribute_filter_keys(
            attribute.key, attribute.text, attribute.canonical, attribute.unit
        )
    class_keys = None
    if search.item_class is not None:
        params["class_profile"] = search.item_class.profile
        for a_n, alternative in enumerate(search.item_class.any_of):
            for k_n, (key, allowed) in enumerate(sorted(alternative.items())):
                params[f"class{a_n}_{k_n}_key"], params[f"class{a_n}_{k_n}_allowed"] = key, list(allowed)
        class_keys = tuple(len(alternative) for alternative in search.item_class.any_of)
    if search.facet_keys:
        params["facet_keys"] = list(search.facet_keys)
    return SearchShape(simple, len(words), len(search.attributes), class_keys, bool(search.facet_keys))


def conditions_of(shape: SearchShape) -> list[sql.Composable]:
    """The conditions of ``shape``, their placeholders named as ``search_params`` fills them."""
    conditions: list[sql.Composable] = [sql.SQL(_SIMPLE_FILTERS[name]) for name in shape.simple]
    for n in range(shape.terms):
        conditions.append(sql.SQL(_TERM).format(pattern=sql.Placeholder(f"term{n}")))
    for n in range(shape.attributes):
        conditions.append(sql.SQL(_ATTRIBUTE).format(keys=sql.Placeholder(f"attr{n}_keys")))
    if shape.class_keys is not None:
        alternatives: list[sql.Composable] = []
        for a_n, count in enumerate(shape.class_keys):
            keys: list[sql.Composable] = [sql.SQL("true")]
            for k_n in range(count):
                keys.append(
                    sql.SQL(_CLASS_KEY).format(
                        key=sql.Placeholder(f"class{a_n}_{k_n}_key"),
                        allowed=sql.Placeholder(f"class{a_n}_{k_n}_allowed"),
                    )
                )
            alternatives.append(sql.SQL("({})").format(sql.SQL(" AND ").join(keys)))
        conditions.append(
            sql.SQL(
                "(split_part(i.fields->>'profile', '@', 1) = %(class_profile)s::text AND coalesce({}, false))"
            ).format(sql.SQL(" OR ").join(alternatives or [sql.SQL("false")]))
        )
    return conditions


def attribute_filter_keys(name: str, text: str, canonical: str | None, unit: str | None) -> list[str]:
    """The keys an ``attr[name]=text`` filter matches (``public_item.attribute_keys`` holds a row's): the text as
    typed, as a value and as value-and-unit; and when a profile read it (``canonical`` in ``unit``), that value in
    that unit, and when it is a number, the number without leading or trailing zeros. As migration 0023's
    ``product.attribute_key(kind, name, unit, value)`` spells them."""
    keys = [_key("v", name, None, text), _key("u", name, None, text)]
    if canonical is not None:
        keys.append(_key("c", name, unit, canonical))
        if _NUMBER.fullmatch(canonical):
            keys.append(_key("n", name, unit, _trim_scale(canonical)))
    return keys


def _key(kind: str, name: str, unit: str | None, value: str) -> str:
    # kind || length(name) || ':' || name || length(coalesce(unit, '')) || ':' || coalesce(unit, '') || value
    unit = unit or ""
    return f"{kind}{len(name)}:{name}{len(unit)}:{unit}{value}"


def _trim_scale(number: str) -> str:
    """``trim_scale(number::numeric)::text`` for a plain decimal (``-?[0-9]+(.[0-9]+)?``): no leading zeros, no
    trailing fractional zeros, no minus on zero."""
    negative = number.startswith("-")
    whole, _, fraction = number.removeprefix("-").partition(".")
    whole, fraction = whole.lstrip("0") or "0", fraction.rstrip("0")
    text = f"{whole}.{fraction}" if fraction else whole
    return f"-{text}" if negative and text != "0" else text


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
