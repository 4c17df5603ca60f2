"""INV-06: product_app acting for tenant A sees and changes nothing of tenant B (row-level security)."""

from __future__ import annotations

from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.product.consumer import Outcome, apply_delivery
from prw_platform.product.progress import stream_progress
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.items import NO_FILTERS
from prw_platform.product.scopes import list_scopes, project_catalog
from tests.unit.product.stream import CATALOG, OTHER_TENANT, TENANT, StreamBuilder

TABLES = (
    "projected_scope",
    "inbox",
    "applied_revision",
    "parked_event",
    "item_projection",
    "listing_projection",
    "listing_mapping_projection",
    "progress",
    "release_pointer",
    "public_item",
    "public_listing",
)


def _publish(db: Database, tenant_id: str, item_id: str) -> None:
    stream = StreamBuilder(tenant_id=tenant_id, history_epoch=f"hep_{tenant_id}_{CATALOG}_1")
    project_catalog(db, tenant_id, CATALOG, stream.history_epoch)
    messages = [stream.item(item_id), stream.listing(f"lst_{tenant_id}")]
    messages += [stream.mapping(f"lst_{tenant_id}", item_id), stream.release()]
    messages.append(stream.listing("lst_parked"))
    # A mapping waiting for an item that never arrives leaves a parked row in each tenant.
    stream.item("itm_never_delivered")
    messages.append(stream.mapping("lst_parked", "itm_never_delivered"))
    for message in messages:
        apply_delivery(db, message)


def test_inv06_tenant_a_sees_only_its_own_product_rows(product_db: Database) -> None:
    _publish(product_db, TENANT, "itm_of_a")
    _publish(product_db, OTHER_TENANT, "itm_of_b")

    with product_db.transaction(tenant_id=TENANT) as conn:
        for table in TABLES:
            tenants = conn.execute(f"SELECT DISTINCT tenant_id FROM product.{table}").fetchall()  # noqa: S608
            assert tenants == [{"tenant_id": TENANT}], table

    assert [item.item_id for item in PublicCatalog(product_db, TENANT, CATALOG).items(NO_FILTERS).items] == [
        "itm_of_a"
    ]
    assert PublicCatalog(product_db, TENANT, CATALOG).item("itm_of_b") is None
    assert [scope.tenant_id for scope in list_scopes(product_db, TENANT)] == [TENANT]
    assert [(p.tenant_id, p.parked_count) for p in stream_progress(product_db, TENANT)] == [(TENANT, 1)]


def test_inv06_public_reads_on_one_connection_see_the_tenant_each_asks_for(
    product_db: Database, db_url: str
) -> None:
    """The public reads run alone under the connection's session tenant (``Database.read_row``): one pooled
    connection serving both tenants in turn shows each only its own rows, and a transaction on it only its own."""
    _publish(product_db, TENANT, "itm_of_a")
    _publish(product_db, OTHER_TENANT, "itm_of_b")
    one = Database(db_url, role=roles.PRODUCT_APP, max_size=1).open()
    try:
        for _ in range(2):
            assert [i.item_id for i in PublicCatalog(one, TENANT, CATALOG).items(NO_FILTERS).items] == [
                "itm_of_a"
            ]
            assert PublicCatalog(one, OTHER_TENANT, CATALOG).item("itm_of_a") is None
            assert [i.item_id for i in PublicCatalog(one, OTHER_TENANT, CATALOG).items(NO_FILTERS).items] == [
                "itm_of_b"
            ]
            assert PublicCatalog(one, TENANT, CATALOG).item("itm_of_b") is None
            assert PublicCatalog(one, TENANT, CATALOG).item("itm_of_a") is not None
        # The session now says TENANT; a transaction for the other tenant, or for none, sees only its own.
        with one.transaction(tenant_id=OTHER_TENANT) as conn:
            rows = conn.execute("SELECT DISTINCT tenant_id FROM product.public_item").fetchall()
            assert rows == [{"tenant_id": OTHER_TENANT}]
        with one.transaction(tenant_id=None) as conn:
            assert conn.execute("SELECT count(*) AS n FROM product.public_item").fetchone() == {"n": 0}
    finally:
        one.close()


def test_inv06_same_event_ids_in_two_tenants_are_two_deliveries(product_db: Database) -> None:
    a = StreamBuilder(tenant_id=TENANT, history_epoch="ep_shared")
    b = StreamBuilder(tenant_id=OTHER_TENANT, history_epoch="ep_shared")
    project_catalog(product_db, TENANT, CATALOG, "ep_shared")
    project_catalog(product_db, OTHER_TENANT, CATALOG, "ep_shared")
    message_a = a.item("itm_same")
    message_b = b.item("itm_same")
    message_b["event_id"] = message_a["event_id"]

    assert apply_delivery(product_db, message_a).outcome is Outcome.APPLIED
    assert apply_delivery(product_db, message_b).outcome is Outcome.APPLIED


def test_inv06_a_catalog_projected_for_tenant_b_is_not_projected_for_tenant_a(product_db: Database) -> None:
    project_catalog(product_db, OTHER_TENANT, CATALOG, "ep_b")
    assert list_scopes(product_db, TENANT) == []
    assert PublicCatalog(product_db, TENANT, CATALOG).items(NO_FILTERS).items == ()
