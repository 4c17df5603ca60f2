"""The conditions of a public item list query (``public_store.find_page``), composed of the filters given.

Each is a plain expression on the row ``i`` of the released items, so PostgreSQL uses the brand / GTIN indexes and
evaluates nothing for an absent filter; the shapes are few (prepared per connection). No table is named here:
``public_store`` owns the tables and wraps these conditions in its statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from psycopg import sql

from prw_platform.product.public_rows import ItemSearch

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
# attributes can match (``public_item.attribute_keys``, computed from ``fields`` when the row is written) with the
# keys of the text, built by the same function (migration 0023 describes the keys). The text's keys are a scalar
# subquery, built once per statement (in the generic plan of a prepared statement an expression of parameters is
# evaluated for every row it filters). The coalesce keeps the planner's estimate of the old per-row comparison: a
# bare overlap with a parameter is estimated at 0.5 % of the rows, and the generic plan then read every released
# item and sorted them instead of walking the item-id order until a page is full (2.1 against 0.7 ms of backend
# CPU for the benchmark's page).
_AS_TYPED = "product.attribute_key('v', {key}, NULL, {text}), product.attribute_key('u', {key}, NULL, {text})"
_CANONICAL = "product.attribute_key('c', {key}, {unit}, {canonical})"
_NUMBER = "product.attribute_key('n', {key}, {unit}, trim_scale({canonical}::numeric)::text)"
_ATTRIBUTE = "coalesce(i.attribute_keys && (SELECT ARRAY[{keys}]::text[]), false)"
_CLASS_KEY = "i.fields->'attributes'->{key}->>'value' = ANY({allowed}::text[])"


@dataclass(frozen=True, slots=True)
class SearchShape:
    """What the text of a list statement depends on: which filters are given, not their values. The statement of a
    shape is composed once per process (``conditions_of``' callers cache it) and prepared once per connection."""

    #: The simple filters given, in ``_SIMPLE_FILTERS`` order.
    simple: tuple[str, ...] = ()
    #: Words of the text search.
    terms: int = 0
    #: Per attribute filter, how its canonical value compares: "none" (the profile did not read it), "number"
    #: (compared as a number too) or "text".
    attributes: tuple[Literal["none", "number", "text"], ...] = ()
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
    kinds: list[Literal["none", "number", "text"]] = []
    for n, attribute in enumerate(search.attributes):
        params[f"attr{n}_key"], params[f"attr{n}_text"] = attribute.key, attribute.text
        if attribute.canonical is None:
            kinds.append("none")
            continue
        params[f"attr{n}_canonical"], params[f"attr{n}_unit"] = attribute.canonical, attribute.unit or ""
        # A canonical value that is not a number is never cast (the CASE needs both sides numeric).
        kinds.append("number" if re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", attribute.canonical) else "text")
    class_keys = None
    if search.item_class is not None:
        params["class_profile"] = search.item_class.profile
        for a_n, alternative in enumerate(search.item_class.any_of):
            for k_n, (key, allowed) in enumerate(sorted(alternative.items())):
                params[f"class{a_n}_{k_n}_key"], params[f"class{a_n}_{k_n}_allowed"] = key, list(allowed)
        class_keys = tuple(len(alternative) for alternative in search.item_class.any_of)
    if search.facet_keys:
        params["facet_keys"] = list(search.facet_keys)
    return SearchShape(simple, len(words), tuple(kinds), class_keys, bool(search.facet_keys))


def conditions_of(shape: SearchShape) -> list[sql.Composable]:
    """The conditions of ``shape``, their placeholders named as ``search_params`` fills them."""
    conditions: list[sql.Composable] = [sql.SQL(_SIMPLE_FILTERS[name]) for name in shape.simple]
    for n in range(shape.terms):
        conditions.append(sql.SQL(_TERM).format(pattern=sql.Placeholder(f"term{n}")))
    for n, kind in enumerate(shape.attributes):
        key, text = sql.Placeholder(f"attr{n}_key"), sql.Placeholder(f"attr{n}_text")
        matches: list[sql.Composable] = [sql.SQL(_AS_TYPED).format(key=key, text=text)]
        canonical, unit = sql.Placeholder(f"attr{n}_canonical"), sql.Placeholder(f"attr{n}_unit")
        if kind != "none":
            matches.append(sql.SQL(_CANONICAL).format(key=key, unit=unit, canonical=canonical))
        if kind == "number":
            matches.append(sql.SQL(_NUMBER).format(key=key, unit=unit, canonical=canonical))
        conditions.append(sql.SQL(_ATTRIBUTE).format(keys=sql.SQL(", ").join(matches)))
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


def _like_pattern(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
