"""What the accepted-change stream carries of the owner records (seed 004): an item's pictures
(``item_pictures``, aggregate id the item id) and a product class (``product_class``), each as its full state at a
revision, built from the saved records and their files' content addresses.

The product service never reads the resolver's tables: a picture travels as its managed file id, its content
address in the managed asset store (``sha256``: the object key ``<bucket>/<tenant>/<sha256>``), its media type and
size, and the product API serves the bytes from the store by that address (``prw_platform.product.public.pictures``).
"""

from __future__ import annotations

from dataclasses import dataclass

from prw_platform import contracts
from prw_platform.db.database import Connection
from prw_platform.resolver.files import records, store


@dataclass(frozen=True, slots=True)
class FileFact:
    """One ``item_pictures`` or ``product_class`` aggregate at a revision, with its payload (None: deleted)."""

    aggregate_type: str
    aggregate_id: str
    catalog_id: str
    revision: int
    payload: contracts.ItemPicturesPayload | contracts.ProductClassPayload | None

    @property
    def deleted(self) -> bool:
        return self.payload is None


def _picture(found: store.CatalogFile) -> contracts.Picture:
    return contracts.Picture(
        file=found.file_id,
        sha256=found.sha256,
        media_type=found.media_type,
        size_bytes=found.size_bytes,
        width=found.width,
        height=found.height,
    )


def item_pictures_payload(conn: Connection, tenant_id: str, item_id: str) -> contracts.ItemPicturesPayload:
    pictures = records.item_pictures(conn, tenant_id, item_id)
    files = store.get_files(conn, tenant_id, [p.file_id for p in pictures])
    main = next((_picture(files[p.file_id]) for p in pictures if p.slot == "main"), None)
    gallery = tuple(_picture(files[p.file_id]) for p in pictures if p.slot == "gallery")
    return contracts.ItemPicturesPayload(item=item_id, main=main, gallery=gallery)


def class_payload(conn: Connection, tenant_id: str, class_id: str) -> contracts.ProductClassPayload | None:
    """The class's full state, or None when it is deleted."""
    found = records.get_class(conn, tenant_id, class_id)
    if found is None:
        return None
    picture = None
    if found.picture_file_id:
        picture = _picture(store.get_files(conn, tenant_id, [found.picture_file_id])[found.picture_file_id])
    return contracts.ProductClassPayload(
        class_id=class_id,
        name=found.name,
        picture=picture,
        members=tuple(records.class_members(conn, tenant_id, class_id)),
    )


def current_fact(conn: Connection, tenant_id: str, aggregate: records.FileAggregate) -> FileFact:
    """The aggregate's state now (which is its state at its current revision: the revision is bumped in the
    transaction that changes the record, under the stream cursor lock)."""
    payload: contracts.ItemPicturesPayload | contracts.ProductClassPayload | None
    if aggregate.deleted:
        payload = None
    elif aggregate.aggregate_type == contracts.ITEM_PICTURES:
        payload = item_pictures_payload(conn, tenant_id, aggregate.aggregate_id)
    else:
        payload = class_payload(conn, tenant_id, aggregate.aggregate_id)
    return FileFact(
        aggregate.aggregate_type, aggregate.aggregate_id, aggregate.catalog_id, aggregate.revision, payload
    )
