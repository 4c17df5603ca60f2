"""Strong identifiers: a GTIN, or brand + MPN, names at most one item per catalog (``resolver.item_identifier``).

The resolution consumer calls ``find_item_by_identifiers`` to choose between an automatic mapping (a match), an
automatic create (no match, required identifiers present) and a review case (no match, or an ambiguous one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prw_platform.db.database import Connection
from prw_platform.resolver.decisions.errors import IdentifierConflict

GTIN = "gtin"
BRAND_MPN = "brand_mpn"

_GTIN_SEPARATORS = re.compile(r"[\s\-.]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class IdentifierKey:
    scheme: str
    value: str


@dataclass(frozen=True, slots=True)
class ItemMatch:
    item_id: str
    revision: int
    status: str
    matched_on: tuple[str, ...]


class AmbiguousIdentity(Exception):
    """The identifiers name different items (a GTIN of one, brand + MPN of another): a case for a human."""

    code = "AMBIGUOUS_IDENTITY"

    def __init__(self, matches: tuple[ItemMatch, ...]) -> None:
        super().__init__("identifiers name several items: " + ", ".join(m.item_id for m in matches))
        self.matches = matches


def gtin_key(gtin: str) -> str:
    """The profile already normalizes GTINs to GTIN-14; padding again keeps a GTIN-13 and its GTIN-14 one key."""
    digits = _GTIN_SEPARATORS.sub("", gtin)
    return digits.zfill(14) if digits.isdigit() and len(digits) <= 14 else digits


def brand_mpn_key(brand: str, mpn: str) -> str:
    return f"{_SPACES.sub(' ', brand.strip()).casefold()}|{_SPACES.sub('', mpn).upper()}"


def identifier_keys(gtin: str | None, brand: str | None, mpn: str | None) -> tuple[IdentifierKey, ...]:
    keys: list[IdentifierKey] = []
    if gtin and gtin.strip():
        keys.append(IdentifierKey(GTIN, gtin_key(gtin)))
    if brand and brand.strip() and mpn and mpn.strip():
        keys.append(IdentifierKey(BRAND_MPN, brand_mpn_key(brand, mpn)))
    return tuple(keys)


def find_item_by_identifiers(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    *,
    gtin: str | None = None,
    brand: str | None = None,
    mpn: str | None = None,
) -> ItemMatch | None:
    """The item these strong identifiers name in the catalog, or None. Raises ``AmbiguousIdentity`` when they
    name different items. A retired item is returned too (``status``): the caller must not map to it (INV-07)."""
    keys = identifier_keys(gtin, brand, mpn)
    if not keys:
        return None
    rows = conn.execute(
        """SELECT i.scheme, i.item_id, c.revision, c.status
           FROM resolver.item_identifier i
           JOIN resolver.catalog_item c USING (tenant_id, catalog_id, item_id)
           WHERE i.tenant_id = %s AND i.catalog_id = %s
             AND (i.scheme, i.value) IN (SELECT * FROM unnest(%s::text[], %s::text[]))
           ORDER BY i.item_id, i.scheme""",
        (tenant_id, catalog_id, [k.scheme for k in keys], [k.value for k in keys]),
    ).fetchall()
    by_item: dict[str, ItemMatch] = {}
    for row in rows:
        item_id = str(row["item_id"])
        known = by_item.get(item_id)
        schemes = (*known.matched_on, str(row["scheme"])) if known else (str(row["scheme"]),)
        by_item[item_id] = ItemMatch(item_id, int(str(row["revision"])), str(row["status"]), schemes)
    if len(by_item) > 1:
        raise AmbiguousIdentity(tuple(by_item.values()))
    return next(iter(by_item.values()), None)


def ensure_identifiers_free(
    conn: Connection, tenant_id: str, catalog_id: str, keys: tuple[IdentifierKey, ...]
) -> None:
    """A new item's identifiers must be free; one already taken raises ``IdentifierConflict``. Checked under the
    stream cursor lock, so the primary key of item_identifier is only the last line of defence."""
    for key in keys:
        taken = conn.execute(
            """SELECT item_id FROM resolver.item_identifier
               WHERE tenant_id = %s AND catalog_id = %s AND scheme = %s AND value = %s""",
            (tenant_id, catalog_id, key.scheme, key.value),
        ).fetchone()
        if taken is not None:
            raise IdentifierConflict(key.scheme, key.value, str(taken["item_id"]))


def insert_identifiers(
    conn: Connection, tenant_id: str, catalog_id: str, item_id: str, keys: tuple[IdentifierKey, ...]
) -> None:
    for key in keys:
        conn.execute(
            """INSERT INTO resolver.item_identifier (tenant_id, catalog_id, scheme, value, item_id)
               VALUES (%s, %s, %s, %s, %s)""",
            (tenant_id, catalog_id, key.scheme, key.value, item_id),
        )


@dataclass(frozen=True, slots=True)
class ItemSummary:
    item_id: str
    title: str | None
    brand: str


def active_items_by_brand(
    conn: Connection, tenant_id: str, catalog_id: str, brand_keys: list[str], *, limit: int
) -> list[ItemSummary]:
    """Active items (INV-07) whose brand, lower-cased with runs of non-word characters as one space, is one of
    ``brand_keys``; at most ``limit``, by item id. Review-case candidates are ranked from these."""
    rows = conn.execute(
        """SELECT item_id, title, brand FROM resolver.catalog_item
           WHERE tenant_id = %s AND catalog_id = %s AND status = 'active'
             AND lower(trim(regexp_replace(brand, '\\W+', ' ', 'g'))) = ANY(%s)
           ORDER BY item_id LIMIT %s""",
        (tenant_id, catalog_id, brand_keys, limit),
    ).fetchall()
    return [
        ItemSummary(str(r["item_id"]), None if r["title"] is None else str(r["title"]), str(r["brand"]))
        for r in rows
    ]
