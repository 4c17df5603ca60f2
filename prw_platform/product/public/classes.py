"""Public product class queries (served as categories: ``GET /v1/categories``, ``GET /v1/categories/{id}``; seed
004, issue 13 item 5) and their serializer.

Like ``queries``, everything read here is the released snapshot of the serving generation (``public_store``): a
class saved, changed or deleted since the last applied release keeps its released state until the next one. A
class's ``item_count`` counts its members that the current release publishes. Absent values (a class without a
picture) are left out, not null; the member ids are never listed (the items are found by their own routes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from prw_platform.db.database import Database
from prw_platform.product.errors import InvalidQuery
from prw_platform.product.public import store as public_store
from prw_platform.product.public.fields import public_class_fields
from prw_platform.product.public.items import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    PROCESS_CURSORS,
    CursorCodec,
    PictureRender,
)
from prw_platform.product.public.rows import ClassRows, PublicClass, Release

#: The cursor fingerprint of the class collection: an item or merchant cursor is not one of these.
CLASS_CURSORS: Final = "classes"


@dataclass(frozen=True, slots=True)
class ClassPage:
    classes: tuple[PublicClass, ...]
    next_cursor: str | None
    release: Release


@dataclass(frozen=True, slots=True)
class ClassDetail:
    release: Release
    product_class: PublicClass | None


def list_public_classes(
    db: Database,
    tenant_id: str,
    catalog_id: str,
    *,
    limit: int = DEFAULT_PAGE_SIZE,
    cursor: str | None = None,
    cursors: CursorCodec = PROCESS_CURSORS,
) -> ClassPage:
    """Released classes by id, ``limit`` per page; ``cursor`` is the previous page's ``next_cursor``."""
    if not 1 <= limit <= MAX_PAGE_SIZE:
        raise InvalidQuery(f"limit must be between 1 and {MAX_PAGE_SIZE}")
    after = cursors.decode_keyed(cursor, CLASS_CURSORS) if cursor else None
    rows: ClassRows | None = db.run(
        # One more than a page tells whether a next page exists.
        lambda conn: public_store.find_classes(conn, tenant_id, catalog_id, after=after, limit=limit + 1),
        tenant_id=tenant_id,
        read_only=True,
        pipeline=True,
    )
    if rows is None:
        return ClassPage((), None, Release(0, None))
    classes = tuple(rows.classes[:limit])
    more = len(rows.classes) > limit
    next_cursor = cursors.encode_keyed(classes[-1].class_id, CLASS_CURSORS) if more else None
    return ClassPage(classes, next_cursor, rows.release)


def get_public_class(db: Database, tenant_id: str, catalog_id: str, class_id: str) -> ClassDetail:
    rows: ClassRows | None = db.run(
        lambda conn: public_store.find_classes(conn, tenant_id, catalog_id, limit=1, class_id=class_id),
        tenant_id=tenant_id,
        read_only=True,
        pipeline=True,
    )
    if rows is None:
        return ClassDetail(Release(0, None), None)
    return ClassDetail(rows.release, rows.classes[0] if rows.classes else None)


def serialize_class(product_class: PublicClass, render: PictureRender | None = None) -> dict[str, Any]:
    fields = public_class_fields(product_class.fields)
    document: dict[str, Any] = {"category": product_class.class_id, "name": fields["name"]}
    picture = render(fields["picture"]) if render is not None and fields["picture"] is not None else None
    if picture is not None:
        document["picture"] = picture
    document["item_count"] = product_class.item_count
    document["published_revision"] = product_class.published_revision
    document["publication_revision"] = product_class.publication_revision
    return document


def serialize_class_page(page: ClassPage, render: PictureRender | None = None) -> dict[str, Any]:
    return {
        "categories": [serialize_class(c, render) for c in page.classes],
        "next_cursor": page.next_cursor,
        "publication_revision": page.release.publication_revision,
    }
