"""The conditions of a public item list query (``public_store.find_page``), composed of the filters given.

Each is a plain expression on the row ``i`` of the released items, so PostgreSQL uses the brand / GTIN indexes and
evaluates nothing for an absent filter; the shapes are few (prepared per connection). No table is named here:
``public_store`` owns the tables and wraps these conditions in its statement.
"""

from __future__ import annotations

import re
from typing import Any

from psycopg import sql

from prw_platform.product.public_rows import ItemSearch

_NUMBER = "'^-?[0-9]+(\\.[0-9]+)?$'"
_ATTRIBUTE = "i.fields->'attributes'->{key}"
_SIMPLE_FILTERS = {
    "brand": "lower(i.fields->>'brand') = lower(%(brand)s::text)",
    "gtin": "i.fields->'identifiers'->>'gtin' = %(gtin)s::text",
    "mpn": "i.fields->'identifiers'->>'mpn' = %(mpn)s::text",
    "profile": "i.fields->>'profile' = %(profile)s::text",
}
_TERM = """concat_ws(' ', i.fields->>'title', i.fields->>'brand', i.fields->'identifiers'->>'mpn',
                    i.fields->'identifiers'->>'gtin') ILIKE {pattern}"""
# An attribute matches the text as typed (its value, or value and unit), or the canonical value and unit a profile
# read the text as; two numbers compare as numbers ("1000" and "1000.0"), in a CASE so no other text is cast.
_AS_TYPED = "({a}->>'value' = {text} OR concat_ws(' ', {a}->>'value', {a}->>'unit') = {text})"
_CANONICAL = """coalesce({a}->>'unit', '') = {unit} AND ({a}->>'value' = {canonical}
                 OR CASE WHEN {a}->>'value' ~ {number} THEN ({a}->>'value')::numeric = {canonical}::numeric
                         ELSE false END)"""
_CLASS_KEY = "i.fields->'attributes'->{key}->>'value' = ANY({allowed}::text[])"


def item_conditions(search: ItemSearch, params: dict[str, Any]) -> list[sql.Composable]:
    """The conditions ``search`` sets; fills ``params`` with the values of their placeholders."""
    filters = search.filters
    conditions: list[sql.Composable] = []
    for name, condition in _SIMPLE_FILTERS.items():
        if getattr(filters, name) is not None:
            params[name] = getattr(filters, name)
            conditions.append(sql.SQL(condition))
    for n, word in enumerate((filters.text or "").split()):
        params[f"term{n}"] = _like_pattern(word)
        conditions.append(sql.SQL(_TERM).format(pattern=sql.Placeholder(f"term{n}")))
    for n, attribute in enumerate(search.attributes):
        params[f"attr{n}_key"], params[f"attr{n}_text"] = attribute.key, attribute.text
        a = sql.SQL(_ATTRIBUTE).format(key=sql.Placeholder(f"attr{n}_key"))
        match = sql.SQL(_AS_TYPED).format(a=a, text=sql.Placeholder(f"attr{n}_text"))
        if attribute.canonical is not None:
            params[f"attr{n}_canonical"], params[f"attr{n}_unit"] = attribute.canonical, attribute.unit or ""
            canonical = sql.SQL(_CANONICAL).format(
                a=a,
                canonical=sql.Placeholder(f"attr{n}_canonical"),
                unit=sql.Placeholder(f"attr{n}_unit"),
                number=sql.SQL(_NUMBER),
            )
            # A canonical value that is not a number is never cast (the CASE needs both sides numeric).
            if not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", attribute.canonical):
                canonical = sql.SQL(
                    "coalesce({a}->>'unit', '') = {unit} AND {a}->>'value' = {canonical}"
                ).format(
                    a=a,
                    canonical=sql.Placeholder(f"attr{n}_canonical"),
                    unit=sql.Placeholder(f"attr{n}_unit"),
                )
            match = sql.SQL("({} OR ({}))").format(match, canonical)
        conditions.append(sql.SQL("coalesce({}, false)").format(match))
    if search.item_class is not None:
        params["class_profile"] = search.item_class.profile
        alternatives: list[sql.Composable] = []
        for a_n, alternative in enumerate(search.item_class.any_of):
            keys: list[sql.Composable] = [sql.SQL("true")]
            for k_n, (key, allowed) in enumerate(sorted(alternative.items())):
                params[f"class{a_n}_{k_n}_key"], params[f"class{a_n}_{k_n}_allowed"] = key, list(allowed)
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
