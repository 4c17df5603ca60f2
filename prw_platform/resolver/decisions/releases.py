"""Release authorization on the resolver side (docs/events.md ``release.authorized``, if_product_query).

A catalog whose release policy is ``automatic`` publishes in the same transaction as every decision that changes
public state: the release lists the item revisions and listing assignments the decision made public, and the
resolver remembers what each catalog publishes (``released_item``, ``released_listing``, and the merchant facts'
``released_merchant``, ``released_merchant_source``, ``released_shipping_policy``) so that the next release,
automatic or manual, publishes only what changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString, Protocol, TypeVar

from psycopg import sql
from psycopg.rows import class_row, scalar_row, tuple_row
from psycopg.types.json import Jsonb

from prw_platform import contracts
from prw_platform.db.database import Connection
from prw_platform.resolver.decisions import facts
from prw_platform.resolver.decisions import merchants as merchant_facts
from prw_platform.resolver.decisions.facts import ItemState, ListingState, MappingState
from prw_platform.resolver.decisions.merchants import MerchantSourceState, MerchantState, ShippingPolicyState
from prw_platform.resolver.files import published as file_facts
from prw_platform.resolver.files import records as file_records
from prw_platform.resolver.files.published import FileFact

AUTOMATIC = "automatic"
MANUAL = "manual"


@dataclass(frozen=True, slots=True)
class ReleasedListing:
    listing: ListingState
    mapping: MappingState


@dataclass(frozen=True, slots=True)
class Release:
    """One publication: the release aggregate ``rel_<catalog_id>`` at revision ``publication_revision``."""

    catalog_id: str
    publication_revision: int
    items: tuple[ItemState, ...] = ()
    listings: tuple[ReleasedListing, ...] = ()
    merchants: tuple[MerchantState, ...] = ()
    merchant_sources: tuple[MerchantSourceState, ...] = ()
    shipping_policies: tuple[ShippingPolicyState, ...] = ()
    #: Items at the revision that retired them: the release removes them and the listings they owned (INV-07).
    retired_items: tuple[ItemState, ...] = ()
    #: Items at the revision that merged them: removed like retired ones, their ids redirect to ``merged_into``.
    merged_items: tuple[ItemState, ...] = ()
    #: Item pictures and product classes (seed 004) at their current revisions; a deleted class is removed.
    file_facts: tuple[FileFact, ...] = ()

    @property
    def release_id(self) -> str:
        return release_id_for(self.catalog_id)

    def payload(self) -> contracts.ReleasePayload:
        return contracts.ReleasePayload(
            release=self.release_id,
            publication_revision=self.publication_revision,
            items=tuple(
                contracts.ReleasedItem(item=i.item_id, revision=i.revision, fields=i.public_fields())
                for i in self.items
            ),
            listings=tuple(
                contracts.ReleasedListing(
                    listing=r.listing.listing_id,
                    item=r.mapping.item_id,
                    mapping_revision=r.mapping.revision,
                    listing_revision=r.listing.revision,
                    fields=r.listing.payload(),
                )
                for r in self.listings
            ),
            merchants=tuple(
                contracts.ReleasedMerchant(merchant=m.merchant_id, revision=m.revision, fields=m.payload())
                for m in self.merchants
            ),
            merchant_sources=tuple(
                contracts.ReleasedMerchantSource(
                    source_id=b.source_id, merchant=b.merchant_id, revision=b.revision
                )
                for b in self.merchant_sources
            ),
            shipping_policies=tuple(
                contracts.ReleasedShippingPolicy(
                    merchant=p.merchant_id, revision=p.revision, fields=p.payload()
                )
                for p in self.shipping_policies
            ),
            retired_items=tuple(
                contracts.RetiredItem(item=i.item_id, revision=i.revision) for i in self.retired_items
            ),
            merged_items=tuple(
                contracts.MergedItem(item=i.item_id, revision=i.revision, into=i.merged_into)
                for i in self.merged_items
                if i.merged_into is not None
            ),
            item_pictures=tuple(
                contracts.ReleasedItemPictures(item=f.aggregate_id, revision=f.revision, fields=f.payload)
                for f in self.file_facts
                if isinstance(f.payload, contracts.ItemPicturesPayload)
            ),
            classes=tuple(
                contracts.ReleasedClass(class_id=f.aggregate_id, revision=f.revision, fields=f.payload)
                for f in self.file_facts
                if isinstance(f.payload, contracts.ProductClassPayload)
            ),
            removed_classes=tuple(
                contracts.RemovedClass(class_id=f.aggregate_id, revision=f.revision)
                for f in self.file_facts
                if f.deleted
            ),
        )


@dataclass(frozen=True, slots=True)
class MerchantRelease:
    """The merchant facts a release publishes: merchants, source bindings and shipping policies."""

    merchants: tuple[MerchantState, ...] = ()
    merchant_sources: tuple[MerchantSourceState, ...] = ()
    shipping_policies: tuple[ShippingPolicyState, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.merchants or self.merchant_sources or self.shipping_policies)


def release_id_for(catalog_id: str) -> str:
    return f"rel_{catalog_id}"


@dataclass(frozen=True, slots=True)
class _PublishedItem:
    item_id: str
    revision: int


@dataclass(frozen=True, slots=True)
class _PublishedListing:
    listing_id: str
    item_id: str
    mapping_revision: int
    listing_revision: int


def unreleased(
    conn: Connection,
    tenant_id: str,
    items: Sequence[ItemState],
    listings: Sequence[ReleasedListing],
) -> tuple[tuple[ItemState, ...], tuple[ReleasedListing, ...]]:
    """The subset of ``items`` and ``listings`` (current state) that the catalog does not publish yet. Both
    queries are sent before either is read (one round trip in pipeline mode)."""
    with (
        conn.cursor(row_factory=class_row(_PublishedItem)) as item_cur,
        conn.cursor(row_factory=class_row(_PublishedListing)) as listing_cur,
    ):
        item_cur.execute(
            "SELECT item_id, revision FROM resolver.released_item WHERE tenant_id = %s AND item_id = ANY(%s)",
            (tenant_id, [i.item_id for i in items]),
        )
        listing_cur.execute(
            """SELECT listing_id, item_id, mapping_revision, listing_revision FROM resolver.released_listing
               WHERE tenant_id = %s AND listing_id = ANY(%s)""",
            (tenant_id, [r.listing.listing_id for r in listings]),
        )
        published_items = {r.item_id: r.revision for r in item_cur.fetchall()}
        published_listings = {
            r.listing_id: (r.item_id, r.mapping_revision, r.listing_revision) for r in listing_cur.fetchall()
        }
    new_items = tuple(
        i for i in items if i.status == "active" and published_items.get(i.item_id, 0) < i.revision
    )
    new_listings = tuple(
        r
        for r in listings
        if published_listings.get(r.listing.listing_id)
        != (r.mapping.item_id, r.mapping.revision, r.listing.revision)
    )
    return new_items, new_listings


class _Revisioned(Protocol):
    @property
    def catalog_id(self) -> str: ...

    @property
    def revision(self) -> int: ...


_Fact = TypeVar("_Fact", bound=_Revisioned)


@dataclass(frozen=True, slots=True)
class _Tracking:
    """The table that remembers which revision of one kind of merchant fact the catalog publishes."""

    table: str
    key_column: str
    #: Its upsert, written out (the table-ownership scan reads the SQL of every write).
    upsert: LiteralString


_MERCHANTS = _Tracking(
    "released_merchant",
    "merchant_id",
    """INSERT INTO resolver.released_merchant (tenant_id, catalog_id, merchant_id, revision, publication_revision,
           fields)
       VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, merchant_id)
       DO UPDATE SET revision = excluded.revision, publication_revision = excluded.publication_revision,
           fields = excluded.fields""",
)
_MERCHANT_SOURCES = _Tracking(
    "released_merchant_source",
    "source_id",
    """INSERT INTO resolver.released_merchant_source (tenant_id, catalog_id, source_id, revision,
           publication_revision, fields)
       VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, source_id)
       DO UPDATE SET revision = excluded.revision, publication_revision = excluded.publication_revision,
           fields = excluded.fields""",
)
_SHIPPING_POLICIES = _Tracking(
    "released_shipping_policy",
    "merchant_id",
    """INSERT INTO resolver.released_shipping_policy (tenant_id, catalog_id, merchant_id, revision,
           publication_revision, fields)
       VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, merchant_id)
       DO UPDATE SET revision = excluded.revision, publication_revision = excluded.publication_revision,
           fields = excluded.fields""",
)


def unreleased_merchant_facts(conn: Connection, tenant_id: str, catalog_id: str) -> MerchantRelease:
    """The catalog's merchants, bindings and policies whose current revision it does not publish yet."""
    return MerchantRelease(
        _unreleased(
            conn,
            _MERCHANTS,
            tenant_id,
            merchant_facts.catalog_merchants(conn, tenant_id, catalog_id),
            lambda m: m.merchant_id,
        ),
        _unreleased(
            conn,
            _MERCHANT_SOURCES,
            tenant_id,
            merchant_facts.catalog_bindings(conn, tenant_id, catalog_id),
            lambda b: b.source_id,
        ),
        _unreleased(
            conn,
            _SHIPPING_POLICIES,
            tenant_id,
            merchant_facts.catalog_policies(conn, tenant_id, catalog_id),
            lambda p: p.merchant_id,
        ),
    )


def _unreleased(
    conn: Connection,
    tracking: _Tracking,
    tenant_id: str,
    current: Sequence[_Fact],
    key: Callable[[_Fact], str],
) -> tuple[_Fact, ...]:
    query = sql.SQL(
        "SELECT {key}, revision FROM resolver.{table} WHERE tenant_id = %s AND {key} = ANY(%s)"
    ).format(key=sql.Identifier(tracking.key_column), table=sql.Identifier(tracking.table))
    with conn.cursor(row_factory=tuple_row) as cur:
        published: dict[str, int] = dict(
            cur.execute(query, (tenant_id, [key(fact) for fact in current])).fetchall()
        )
    return tuple(fact for fact in current if published.get(key(fact), 0) < fact.revision)


def unreleased_file_facts(conn: Connection, tenant_id: str, catalog_id: str) -> tuple[FileFact, ...]:
    """Item pictures and product classes whose current revision the catalog does not publish yet (seed 004), and
    deleted classes it still publishes at an earlier revision (the release removes them once)."""
    aggregates = file_records.catalog_aggregates(conn, tenant_id, catalog_id)
    with conn.cursor(row_factory=tuple_row) as cur:
        published: dict[tuple[str, str], int] = {
            (t, i): r
            for t, i, r in cur.execute(
                """SELECT aggregate_type, aggregate_id, revision FROM resolver.released_file_aggregate
                   WHERE tenant_id = %s AND catalog_id = %s""",
                (tenant_id, catalog_id),
            ).fetchall()
        }
    due = []
    for aggregate in aggregates:
        released = published.get((aggregate.aggregate_type, aggregate.aggregate_id), 0)
        if released >= aggregate.revision or (aggregate.deleted and released == 0):
            continue  # published already, or deleted before any release published it
        due.append(file_facts.current_fact(conn, tenant_id, aggregate))
    return tuple(due)


def released_file_revision(conn: Connection, tenant_id: str, aggregate_type: str, aggregate_id: str) -> int:
    """The revision of an item's pictures or a class the catalog publishes (0: none)."""
    with conn.cursor(row_factory=scalar_row) as cur:
        found: int | None = cur.execute(
            """SELECT revision FROM resolver.released_file_aggregate
               WHERE tenant_id = %s AND aggregate_type = %s AND aggregate_id = %s""",
            (tenant_id, aggregate_type, aggregate_id),
        ).fetchone()
    return found or 0


def unreleased_retirements(conn: Connection, tenant_id: str, catalog_id: str) -> tuple[ItemState, ...]:
    """Retired items the catalog still publishes at an earlier revision: the next release removes them (INV-07).
    Merged items are not among them (``unreleased_merges``)."""
    retired = [
        i for i in facts.items_with_status(conn, tenant_id, catalog_id, "retired") if i.merged_into is None
    ]
    published = _published_revisions(conn, tenant_id, retired)
    return tuple(i for i in retired if i.item_id in published and published[i.item_id] < i.revision)


def unreleased_merges(conn: Connection, tenant_id: str, catalog_id: str) -> tuple[ItemState, ...]:
    """Merged items whose merge no release names yet: the next release removes them and redirects their ids to
    the items they were merged into. Also those never published, so that a chain of merges (a into b, b into c)
    redirects a through b whatever was public when."""
    merged = [i for i in facts.items_with_status(conn, tenant_id, catalog_id, "retired") if i.merged_into]
    published = _published_revisions(conn, tenant_id, merged)
    return tuple(i for i in merged if published.get(i.item_id, 0) < i.revision)


def _published_revisions(conn: Connection, tenant_id: str, items: Sequence[ItemState]) -> dict[str, int]:
    with conn.cursor(row_factory=class_row(_PublishedItem)) as cur:
        return {
            r.item_id: r.revision
            for r in cur.execute(
                "SELECT item_id, revision FROM resolver.released_item WHERE tenant_id = %s AND item_id = ANY(%s)",
                (tenant_id, [i.item_id for i in items]),
            )
        }


def next_publication_revision(conn: Connection, tenant_id: str, catalog_id: str) -> int:
    """The release aggregate's next revision, from the catalog's counter row (never max()). The decision holds
    the stream cursor lock; the row lock taken here also orders releases written outside a decision."""
    with conn.cursor(row_factory=scalar_row) as cur:
        current: int | None = cur.execute(
            """SELECT publication_revision FROM resolver.release_pointer
               WHERE tenant_id = %s AND catalog_id = %s FOR UPDATE""",
            (tenant_id, catalog_id),
        ).fetchone()
    return (current or 0) + 1


def record_release(
    conn: Connection, tenant_id: str, release: Release, decision_id: str, actor: str, now: datetime
) -> None:
    conn.execute(
        """INSERT INTO resolver.release_pointer (tenant_id, catalog_id, publication_revision, updated_at)
           VALUES (%s, %s, %s, %s)
           ON CONFLICT (tenant_id, catalog_id)
           DO UPDATE SET publication_revision = excluded.publication_revision, updated_at = excluded.updated_at""",
        (tenant_id, release.catalog_id, release.publication_revision, now),
    )
    conn.execute(
        """INSERT INTO resolver.release (tenant_id, catalog_id, publication_revision, decision_id, authorized_by,
               authorized_at)
           VALUES (%s, %s, %s, %s, %s, %s)""",
        (tenant_id, release.catalog_id, release.publication_revision, decision_id, actor, now),
    )
    # Each row keeps the fields its release published (the payload's entry): a snapshot export republishes
    # exactly them, however far the accepted state has moved since (a manual catalog).
    published = _published_fields(release.payload())
    # A retired or merged item is remembered at the revision that retired it: it is removed once, never published
    # again; a merged one with the item its id redirects to.
    for item in (*release.items, *release.retired_items, *release.merged_items):
        conn.execute(
            """INSERT INTO resolver.released_item (tenant_id, catalog_id, item_id, revision, publication_revision,
                   fields, merged_into)
               VALUES (%s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (tenant_id, item_id)
               DO UPDATE SET revision = excluded.revision, publication_revision = excluded.publication_revision,
                   fields = excluded.fields, merged_into = excluded.merged_into""",
            (
                tenant_id,
                item.catalog_id,
                item.item_id,
                item.revision,
                release.publication_revision,
                published.get(("items", item.item_id, item.revision)),
                item.merged_into,
            ),
        )
    for entry in release.listings:
        conn.execute(
            """INSERT INTO resolver.released_listing (tenant_id, catalog_id, listing_id, item_id, mapping_revision,
                   listing_revision, publication_revision, fields)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (tenant_id, listing_id)
               DO UPDATE SET item_id = excluded.item_id, mapping_revision = excluded.mapping_revision,
                   listing_revision = excluded.listing_revision,
                   publication_revision = excluded.publication_revision, fields = excluded.fields""",
            (
                tenant_id,
                entry.listing.catalog_id,
                entry.listing.listing_id,
                entry.mapping.item_id,
                entry.mapping.revision,
                entry.listing.revision,
                release.publication_revision,
                published.get(("listings", entry.listing.listing_id, entry.listing.revision)),
            ),
        )
    _remember(
        conn,
        _MERCHANTS,
        tenant_id,
        release,
        published,
        "merchants",
        [(m.merchant_id, m) for m in release.merchants],
    )
    _remember(
        conn,
        _MERCHANT_SOURCES,
        tenant_id,
        release,
        published,
        "merchant_sources",
        [(b.source_id, b) for b in release.merchant_sources],
    )
    _remember(
        conn,
        _SHIPPING_POLICIES,
        tenant_id,
        release,
        published,
        "shipping_policies",
        [(p.merchant_id, p) for p in release.shipping_policies],
    )
    for fact in release.file_facts:
        conn.execute(
            """INSERT INTO resolver.released_file_aggregate (tenant_id, catalog_id, aggregate_type, aggregate_id,
                   revision, publication_revision, fields)
               VALUES (%s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (tenant_id, aggregate_type, aggregate_id)
               DO UPDATE SET revision = excluded.revision, publication_revision = excluded.publication_revision,
                   fields = excluded.fields""",
            (
                tenant_id,
                fact.catalog_id,
                fact.aggregate_type,
                fact.aggregate_id,
                fact.revision,
                release.publication_revision,
                published.get(
                    (
                        "item_pictures" if fact.aggregate_type == "item_pictures" else "classes",
                        fact.aggregate_id,
                        fact.revision,
                    )
                ),
            ),
        )


def _remember(
    conn: Connection,
    tracking: _Tracking,
    tenant_id: str,
    release: Release,
    published: dict[tuple[str, str, int], Jsonb],
    kind: str,
    facts: Sequence[tuple[str, _Revisioned]],
) -> None:
    statement = tracking.upsert
    for key, fact in facts:
        conn.execute(
            statement,
            (
                tenant_id,
                fact.catalog_id,
                key,
                fact.revision,
                release.publication_revision,
                published.get((kind, key, fact.revision)),
            ),
        )


#: The payload list of each kind of released row, and the key of its entries (``_published_fields``).
_PUBLISHED_KEYS: dict[str, str] = {
    "items": "item",
    "listings": "listing",
    "merchants": "merchant",
    "merchant_sources": "source_id",
    "shipping_policies": "merchant",
    "item_pictures": "item",
    "classes": "class",
}


def _published_fields(payload: contracts.ReleasePayload) -> dict[tuple[str, str, int], Jsonb]:
    """(kind, id, revision) -> the fields the release publishes for that row, as its event carries them (a
    listing by its listing revision; a source binding as the merchant it names)."""
    document = payload.model_dump(mode="json", by_alias=True)
    found: dict[tuple[str, str, int], Jsonb] = {}
    for kind, key in _PUBLISHED_KEYS.items():
        for entry in document.get(kind, []):
            revision = entry["listing_revision"] if kind == "listings" else entry["revision"]
            fields = {"merchant": entry["merchant"]} if kind == "merchant_sources" else entry["fields"]
            found[(kind, str(entry[key]), int(revision))] = Jsonb(fields)
    return found


def released_revisions(conn: Connection, tenant_id: str, catalog_id: str) -> dict[str, Any]:
    """What the catalog's current public release holds, as revisions (the snapshot export's ``release`` object,
    if_projection_bootstrap "all accepted state including private/public releases and aggregate revisions"): the
    publication revision and every released item and listing with the revisions it published."""
    with conn.cursor(row_factory=scalar_row) as cur:
        publication: int | None = cur.execute(
            "SELECT publication_revision FROM resolver.release_pointer WHERE tenant_id = %s AND catalog_id = %s",
            (tenant_id, catalog_id),
        ).fetchone()
    items = conn.execute(
        """SELECT item_id, revision, publication_revision, fields, merged_into FROM resolver.released_item
           WHERE tenant_id = %s AND catalog_id = %s ORDER BY item_id""",
        (tenant_id, catalog_id),
    ).fetchall()
    listings = conn.execute(
        """SELECT listing_id, item_id, mapping_revision, listing_revision, publication_revision, fields
           FROM resolver.released_listing WHERE tenant_id = %s AND catalog_id = %s ORDER BY listing_id""",
        (tenant_id, catalog_id),
    ).fetchall()
    # The merchant facts the release publishes (a rebuild republishes them in its generation).
    merchants = conn.execute(
        """SELECT merchant_id, revision, publication_revision, fields FROM resolver.released_merchant
           WHERE tenant_id = %s AND catalog_id = %s ORDER BY merchant_id""",
        (tenant_id, catalog_id),
    ).fetchall()
    sources = conn.execute(
        """SELECT source_id, revision, publication_revision, fields FROM resolver.released_merchant_source
           WHERE tenant_id = %s AND catalog_id = %s ORDER BY source_id""",
        (tenant_id, catalog_id),
    ).fetchall()
    policies = conn.execute(
        """SELECT merchant_id, revision, publication_revision, fields FROM resolver.released_shipping_policy
           WHERE tenant_id = %s AND catalog_id = %s ORDER BY merchant_id""",
        (tenant_id, catalog_id),
    ).fetchall()
    # Seed 004: the item pictures and product classes it publishes (a class whose released revision is its
    # deletion is not public: a rebuild leaves it out).
    file_aggregates = conn.execute(
        """SELECT aggregate_type, aggregate_id, revision, publication_revision, fields
           FROM resolver.released_file_aggregate
           WHERE tenant_id = %s AND catalog_id = %s ORDER BY aggregate_type, aggregate_id""",
        (tenant_id, catalog_id),
    ).fetchall()
    return {
        "release": release_id_for(catalog_id),
        "publication_revision": publication,
        "items": [dict(row) for row in items],
        "listings": [dict(row) for row in listings],
        "merchants": [dict(row) for row in merchants],
        "merchant_sources": [dict(row) for row in sources],
        "shipping_policies": [dict(row) for row in policies],
        "item_pictures": [
            {
                "item_id": r["aggregate_id"],
                "revision": r["revision"],
                "publication_revision": r["publication_revision"],
                "fields": r["fields"],
            }
            for r in file_aggregates
            if r["aggregate_type"] == "item_pictures"
        ],
        "classes": [
            {
                "class_id": r["aggregate_id"],
                "revision": r["revision"],
                "publication_revision": r["publication_revision"],
                "fields": r["fields"],
            }
            for r in file_aggregates
            if r["aggregate_type"] == "product_class"
        ],
    }
