"""The catalog the product API tests read: published to the accepted-change queue and applied by the product
queue driver, with internal references planted in every released snapshot (the public serializer must drop
them) and changes that were applied but never released (the API must not show them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from prw_platform.db.database import Database
from prw_platform.product.consumer.driver import BatchReport, process_accepted_changes
from prw_platform.product.scopes import project_catalog
from prw_platform.queues import PostgresQueue
from prw_platform.storage import ObjectStore
from prw_platform.storage.keys import ObjectKey
from prw_platform.storage.port import sha256_hex
from tests.unit.product.stream import StreamBuilder

TENANT: Final = "ten_primary"
CATALOG: Final = "cat_primary"
FOREIGN_TENANT: Final = "ten_synth_b"
OTHER_CATALOG: Final = "cat_other"

#: Internal references a snapshot may carry; if_product_query: "never emit private evidence,
#: capture/review/decision references or internal tags".
PRIVATE_FIELDS: Final[dict[str, Any]] = {
    "decision_id": "dec_0142",
    "evidence": ["cap_lum_0310"],
    "capture_id": "cap_lum_0310",
    "review_case_id": "rc_0007",
    "internal_tags": ["tag_hot"],
}
PRIVATE_MARKERS: Final = (
    "dec_0142",
    "cap_lum_0310",
    "rc_0007",
    "tag_hot",
    "evidence",
    "capture",
    "decision",
    "review",
    "internal",
    "status",
)


#: The managed asset store's bucket the product API reads released pictures from (Settings.catalog_files_bucket).
PICTURE_BUCKET: Final = "catalog-files"


def picture_bytes(tag: str) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + tag.encode()


def _picture(tag: str) -> dict[str, Any]:
    """A released picture as the resolver sends it, with the private fields planted next to it."""
    data = picture_bytes(tag)
    return {
        "file": f"fil_{tag}",
        "sha256": sha256_hex(data),
        "media_type": "image/png",
        "size_bytes": len(data),
        **PRIVATE_FIELDS,
    }


#: Picture tags of the module's catalog: stored in the picture store, released or only applied.
PICTURE_TAGS: Final = ("p5-front", "p5-back", "ssd-class", "p5-draft")


def store_pictures(store: ObjectStore, tenant_id: str = TENANT) -> None:
    for tag in PICTURE_TAGS:
        data = picture_bytes(tag)
        store.put_if_absent(
            ObjectKey(PICTURE_BUCKET, tenant_id, sha256_hex(data)), data, sha256_hex(data), "image/png"
        )


def _capacity(terabytes: int) -> dict[str, Any]:
    # Stored as np_storage stores it: decimal gigabytes, a decimal string. The attribute carries an evidence
    # reference too; only value, unit and definition_version are public.
    value = str(terabytes * 1000)
    return {"value": value, "unit": "GB", "definition_version": 1, "evidence": ["cap_lum_0310"]}


@dataclass(frozen=True)
class Catalog:
    #: Public item ids of (ten_primary, cat_primary), in API order.
    released: tuple[str, ...]
    #: Applied by the consumer, never released.
    unreleased: tuple[str, ...]
    #: Released in another tenant's catalog or another catalog of the tenant.
    foreign: tuple[str, ...]
    reports: tuple[BatchReport, ...]


def _item(
    stream: StreamBuilder, item_id: str, *, profile: str = "np_storage@1", **kwargs: Any
) -> dict[str, Any]:
    """``stream.item`` with a profile and the private fields in the payload, and so in the release snapshot."""
    message = stream.item(item_id, **kwargs)
    for payload in (message["payload"], stream.items[item_id]):
        payload.update(PRIVATE_FIELDS, profile=profile)
    return message


def _listing(stream: StreamBuilder, listing_id: str, **kwargs: Any) -> dict[str, Any]:
    message = stream.listing(listing_id, **kwargs)
    for payload in (message["payload"], stream.listings[listing_id]):
        payload.update(PRIVATE_FIELDS)
    return message


def _merchant(stream: StreamBuilder, merchant_id: str, **kwargs: Any) -> dict[str, Any]:
    """``stream.merchant`` with the private fields in the payload, and so in the release snapshot."""
    message = stream.merchant(merchant_id, **kwargs)
    for payload in (message["payload"], stream.merchant_facts["merchant"][merchant_id]):
        payload.update(PRIVATE_FIELDS)
    return message


def _merchants(stream: StreamBuilder) -> list[dict[str, Any]]:
    """src_shop_a is Shop A's (ships to DE and FR, free from 100 EUR); src_shop_b is Shop B's (no policy)."""
    return [
        _merchant(stream, "mer_shop_a", name="Shop A", url="https://shop-a.example"),
        _merchant(stream, "mer_shop_b", name="Shop B"),
        stream.bind_source("src_shop_a", "mer_shop_a"),
        stream.bind_source("src_shop_b", "mer_shop_b"),
        stream.shipping_policy("mer_shop_a", {"DE": "4.90", "FR": "6.50"}, free_shipping_threshold="100.00"),
    ]


def _primary_stream() -> list[dict[str, Any]]:
    stream = StreamBuilder(TENANT, CATALOG, f"hep_{TENANT}_{CATALOG}_1")
    first_release = [
        _item(
            stream,
            "itm_ssd_p5_1t",
            title="Lumen P5 1 TB SSD",
            gtin="04006381333931",
            mpn="P5-1T",
            attributes={
                "storage:capacity": _capacity(1),
                "storage:interface": {"value": "nvme", "definition_version": 1},
            },
        ),
        _item(
            stream,
            "itm_ssd_p5_2t",
            title="Lumen P5 2 TB SSD",
            gtin="04006381333948",
            mpn="P5-2T",
            attributes={
                "storage:capacity": _capacity(2),
                "storage:form_factor": {"value": "m.2_2280", "definition_version": 1},
            },
        ),
        _listing(stream, "lst_lum_p5_1t", title="Lumen P5 SSD 1TB (retail)", price="89.90"),
        _listing(stream, "lst_shop_p5_1t", title="P5 1TB NVMe", price="84.50", source_id="src_shop_b"),
        stream.mapping("lst_lum_p5_1t", "itm_ssd_p5_1t"),
        stream.mapping("lst_shop_p5_1t", "itm_ssd_p5_1t"),
        stream.release(),
    ]
    second_release = [
        _item(
            stream,
            "itm_ssd_orbit_x1_1t",
            title="Orbit X1 1 TB portable SSD",
            brand="Orbit",
            gtin="05012345678900",
            # A USB drive: np_storage@1 does not normalize the medium, so it is in no SSD class.
            attributes={
                "storage:capacity": _capacity(1),
                "storage:interface": {"value": "usb", "definition_version": 1},
            },
        ),
        _item(
            stream,
            "itm_hdd_halden_4t",
            title="Halden 4 TB desktop drive",
            brand="Halden",
            profile="np_hdd@1",
            attributes={"storage:capacity": _capacity(4)},
        ),
        *_merchants(stream),
        stream.item_pictures("itm_ssd_p5_1t", _picture("p5-front"), [_picture("p5-back")]),
        stream.product_class(
            "cls_ssd_drives", "SSD drives", _picture("ssd-class"), ["itm_ssd_p5_1t", "itm_unreleased_draft"]
        ),
        stream.product_class("cls_no_picture", "Drives", None, ["itm_hdd_halden_4t"]),
        stream.release(),
    ]
    applied_only = [
        _item(stream, "itm_ssd_p5_1t", title="Lumen P5 1 TB SSD (2026 refresh)", gtin="04006381333931"),
        _item(stream, "itm_unreleased_draft", title="Lumen P7 1 TB SSD", brand="Lumen"),
        _merchant(stream, "mer_unreleased", name="Draft merchant"),
        stream.shipping_policy("mer_shop_a", {"DE": "0.00"}),
        stream.item_pictures("itm_ssd_p5_1t", _picture("p5-draft")),
        stream.product_class("cls_unreleased", "Draft class", _picture("p5-draft"), []),
    ]
    return first_release + second_release + applied_only


def _foreign_streams() -> list[dict[str, Any]]:
    other_tenant = StreamBuilder(FOREIGN_TENANT, CATALOG, f"hep_{FOREIGN_TENANT}_{CATALOG}_1")
    other_catalog = StreamBuilder(TENANT, OTHER_CATALOG, f"hep_{TENANT}_{OTHER_CATALOG}_1")
    return [
        _item(other_tenant, "itm_foreign_ssd", title="Lumen P5 1 TB SSD", gtin="04006381333931"),
        other_tenant.release(),
        _item(other_catalog, "itm_other_catalog", title="Lumen P5 1 TB SSD"),
        other_catalog.release(),
    ]


def build_catalog(relay: PostgresQueue, consumer: PostgresQueue, product_db: Database) -> Catalog:
    for tenant, catalog in ((TENANT, CATALOG), (FOREIGN_TENANT, CATALOG), (TENANT, OTHER_CATALOG)):
        project_catalog(product_db, tenant, catalog, f"hep_{tenant}_{catalog}_1")
    for message in _primary_stream() + _foreign_streams():
        relay.send(message, message_id=message["event_id"])
    reports: list[BatchReport] = []
    while not (report := process_accepted_changes(consumer, product_db, max_messages=10)).drained:
        reports.append(report)
    assert consumer.dead_letters() == []
    assert sum(r.retried + r.ack_superseded for r in reports) == 0
    return Catalog(
        released=("itm_hdd_halden_4t", "itm_ssd_orbit_x1_1t", "itm_ssd_p5_1t", "itm_ssd_p5_2t"),
        unreleased=("itm_unreleased_draft",),
        foreign=("itm_foreign_ssd", "itm_other_catalog"),
        reports=tuple(reports),
    )
