"""The public class documents (served as categories: ``GET /v1/categories``, ``GET /v1/categories/{id}``; seed 004).

Read from the released snapshot of the serving generation (``store.CLASSES``): a class saved, changed or deleted
since the last applied release keeps its released state until the next one. A class's ``item_count`` counts its
members that the current release publishes. Absent values (a class without a picture) are left out, not null; the
member ids are never listed (the items are found by their own routes).
"""

from __future__ import annotations

from typing import Any

from prw_platform.product.public.fields import public_class_fields
from prw_platform.product.public.items import PictureRender
from prw_platform.product.public.rows import Detail, Page, PublicClass

ClassPage = Page[PublicClass]
ClassDetail = Detail[PublicClass]


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
        "categories": [serialize_class(c, render) for c in page.entries],
        "next_cursor": page.next_cursor,
        "publication_revision": page.release.publication_revision,
    }
