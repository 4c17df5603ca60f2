"""Strong identifiers: a GTIN, or brand + MPN, names at most one item per catalog (``resolver.item_identifier``).

The resolution consumer calls ``find_item_by_identifiers`` to choose between an automatic mapping (a match), an
automatic create (no match, required identifiers present) and a review case (no match, or an ambiguous one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from psycopg.rows import class_row

from prw_platform.db.database import Connection
from prw_platform.resolver.decisions import facts
from prw_platform.resolver.decisions.errors import IdentifierConflict
from prw_platform.resolver.decisions.identifiers import (
    BRAND_MPN,
    GTIN,
    IdentifierKey,
    brand_mpn_key,
    gtin_key,
    identifier_keys,
)


@dataclass(frozen=True, slots=True)
class ItemMatch:
    item_id: str
    revision: int
    status: str
    matched_on: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _IdentifierRow:
    scheme: str
    item_id: str


class AmbiguousIdentity(Exception):
    """The identifiers name different items (a GTIN of one, brand + MPN of another): a case for a human."""

    code = "AMBIGUOUS_IDENTITY"

    def __init__(self, matches: tuple[ItemMatch, ...]) -> None:
        super().__init__("identifiers name several items: " + ", ".join(m.item_id for m in matches))
        self.matches = matches


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
    with conn.cursor(row_factory=class_row(_IdentifierRow)) as cur:
        rows = cur.execute(
            """SELECT scheme, item_id FROM resolver.item_identifier
               WHERE tenant_id = %s AND catalog_id = %s
                 AND (scheme, value) IN (SELECT * FROM unnest(%s::text[], %s::text[]))
               ORDER BY item_id, scheme""",
            (tenant_id, catalog_id, [k.scheme for k in keys], [k.value for k in keys]),
        ).fetchall()
    matched: dict[str, tuple[str, ...]] = {}
    for row in rows:
        matched[row.item_id] = (*matched.get(row.item_id, ()), row.scheme)
    # The items' current revision and status come from their owner (facts: resolver.catalog_item).
    versions = facts.item_versions(conn, tenant_id, list(matched))
    by_item = {
        item_id: ItemMatch(item_id, versions[item_id].revision, versions[item_id].status, schemes)
        for item_id, schemes in matched.items()
    }
    if len(by_item) > 1:
        raise AmbiguousIdentity(tuple(by_item.values()))
    return next(iter(by_item.values()), None)


def ensure_identifiers_free(
    conn: Connection, tenant_id: str, catalog_id: str, keys: tuple[IdentifierKey, ...]
) -> None:
    """A new item's identifiers must be free; one already taken raises ``IdentifierConflict``. Checked under the
    stream cursor lock, so the primary key of item_identifier is only the last line of defence."""
    send_identifiers_check(conn, tenant_id, catalog_id, keys)()


def send_identifiers_check(
    conn: Connection, tenant_id: str, catalog_id: str, keys: tuple[IdentifierKey, ...]
) -> Callable[[], None]:
    """``ensure_identifiers_free`` in two steps: one query for every key is sent now, and the returned function
    raises ``IdentifierConflict`` for the first key (in ``keys`` order) already taken."""
    cur = conn.cursor(row_factory=class_row(_TakenRow))
    cur.execute(
        """SELECT scheme, value, item_id FROM resolver.item_identifier
           WHERE tenant_id = %s AND catalog_id = %s
             AND (scheme, value) IN (SELECT * FROM unnest(%s::text[], %s::text[]))""",
        (tenant_id, catalog_id, [k.scheme for k in keys], [k.value for k in keys]),
    )

    def check() -> None:
        with cur:
            taken = {(row.scheme, row.value): row.item_id for row in cur.fetchall()}
        for key in keys:
            if (key.scheme, key.value) in taken:
                raise IdentifierConflict(key.scheme, key.value, taken[key.scheme, key.value])

    return check


@dataclass(frozen=True, slots=True)
class _TakenRow:
    scheme: str
    value: str
    item_id: str


def insert_identifiers(
    conn: Connection, tenant_id: str, catalog_id: str, item_id: str, keys: tuple[IdentifierKey, ...]
) -> None:
    if not keys:
        return
    # One statement for every key (the GTIN and brand + MPN of a new item).
    conn.execute(
        """INSERT INTO resolver.item_identifier (tenant_id, catalog_id, scheme, value, item_id)
           SELECT %s, %s, scheme, value, %s FROM unnest(%s::text[], %s::text[]) AS k (scheme, value)""",
        (tenant_id, catalog_id, item_id, [k.scheme for k in keys], [k.value for k in keys]),
    )


def reassign_identifiers(
    conn: Connection, tenant_id: str, catalog_id: str, merged_item: str, survivor: str
) -> None:
    """A merge: the strong identifiers that named ``merged_item`` name ``survivor`` from now on, so a later capture
    with one of them maps to the survivor instead of opening a ``retired_item`` case."""
    conn.execute(
        """UPDATE resolver.item_identifier SET item_id = %s
           WHERE tenant_id = %s AND catalog_id = %s AND item_id = %s""",
        (survivor, tenant_id, catalog_id, merged_item),
    )


__all__ = [
    "BRAND_MPN",
    "GTIN",
    "AmbiguousIdentity",
    "IdentifierKey",
    "ItemMatch",
    "brand_mpn_key",
    "ensure_identifiers_free",
    "find_item_by_identifiers",
    "gtin_key",
    "identifier_keys",
]
