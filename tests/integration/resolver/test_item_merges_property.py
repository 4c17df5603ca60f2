"""INV-01, INV-02 and INV-07 over random sequences of maps, merges and splits (hypothesis): whatever a reviewer
does, and whatever the decision path refuses, after every step each listing has one current mapping and one public
owner, every mapping targets an active item of the listing's catalog, and every item's attributes conform to their
definitions. A refused step changes nothing."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from prw_platform.plugins.types import AttributeDefinition, NormalizedAttribute
from prw_platform.resolver.catalogs import SourceSpec
from prw_platform.resolver.decisions import DecisionError, DecisionService, MergeItems, SplitItem, invariants
from prw_platform.resolver.decisions import facts as item_facts
from tests.integration.resolver.decision_builders import Catalog
from tests.integration.resolver.test_item_merges import table_snapshot

REVIEWER = "reviewer:op_rita"
#: The test profile's definitions (the builder's items carry these two attributes at version 1).
DEFINITIONS = {
    "storage:capacity": AttributeDefinition("storage:capacity", 1, "quantity", "capacity", unit="GB"),
    "storage:heatsink": AttributeDefinition("storage:heatsink", 1, "boolean", "heatsink"),
}

_item = st.integers(min_value=0, max_value=5)
_op = st.one_of(
    st.tuples(st.just("create"), st.integers(min_value=4, max_value=6)),
    st.tuples(st.just("map"), st.integers(min_value=1, max_value=8), _item),
    st.tuples(st.just("merge"), _item, _item),
    # The listings to move (by their rank on the item), and the new item's capacity and its unit (GB conforms).
    st.tuples(
        st.just("split"),
        _item,
        st.lists(st.integers(min_value=0, max_value=3), max_size=3),
        st.integers(min_value=1, max_value=8),
        st.sampled_from(["GB", "GB", "TB"]),
    ),
)


class World:
    """One catalog of its own per example (the examples share the test's database)."""

    def __init__(self, catalog: Catalog, service: DecisionService, source_id: str) -> None:
        self.catalog = catalog
        self.service = service
        self.source_id = source_id
        self.created: list[str] = []

    def step(self, op: tuple[Any, ...]) -> None:
        before = table_snapshot(self.catalog.owner_db)
        try:
            applied = self._apply(op)
        except DecisionError as refused:
            event(f"{op[0]} refused: {refused.code}")
            assert table_snapshot(self.catalog.owner_db) == before, op
            return
        event(f"{op[0]} {'decided' if applied else 'skipped (no item yet)'}")

    def _apply(self, op: tuple[Any, ...]) -> bool:
        catalog, tenant = self.catalog, self.catalog.tenant_id
        kind = op[0]
        if kind == "create":
            result = catalog.decide(catalog.create(op[1], f"rec_c{op[1]}", source_id=self.source_id))
            self.created.append(str(result.item_id))
        elif kind == "map" and self.created:
            catalog.decide(catalog.map(f"rec_m{op[1]}", self._pick(op[2]), source_id=self.source_id))
        elif kind == "merge" and self.created:
            merge = MergeItems(
                catalog.stream.catalog_id, self._pick(op[1]), self._pick(op[2]), REVIEWER, "dup"
            )
            self.service.merge_items(merge, tenant)
        elif kind == "split" and self.created:
            item_id = self._pick(op[1])
            on_item = self._listings_of(item_id)
            chosen = tuple(dict.fromkeys(on_item[rank] for rank in op[2] if rank < len(on_item)))
            capacity = NormalizedAttribute("storage:capacity", Decimal(op[3] * 1000), 1, unit=op[4])
            split = SplitItem(
                catalog.stream.catalog_id,
                item_id,
                chosen,
                f"Split of {item_id}",
                REVIEWER,
                "two products",
                attributes=(capacity,),
            )
            self.service.split_item(split, tenant)
        else:
            return False
        return True

    def _pick(self, index: int) -> str:
        return self.created[index % len(self.created)]

    def _listings_of(self, item_id: str) -> list[str]:
        with self.catalog.resolver_db.transaction(tenant_id=self.catalog.tenant_id) as conn:
            return [
                listing.listing_id
                for listing, _ in item_facts.listings_of_item(conn, self.catalog.tenant_id, item_id)
            ]

    def check_invariants(self) -> None:
        tenant, catalog_id = self.catalog.tenant_id, self.catalog.stream.catalog_id
        with self.catalog.resolver_db.transaction(tenant_id=tenant) as conn:
            items = {
                item.item_id: item
                for status in (item_facts.ACTIVE, item_facts.RETIRED)
                for item in item_facts.items_with_status(conn, tenant, catalog_id, status)
            }
            mapped = item_facts.mapped_listings(conn, tenant, catalog_id)
        # INV-07 (and, through the listing-keyed table, INV-01): each current mapping targets an active item of
        # the listing's catalog.
        for listing, mapping in mapped:
            invariants.check_mapping_target(items.get(mapping.item_id), mapping.item_id, listing)
        assert len({listing.listing_id for listing, _ in mapped}) == len(mapped)
        # INV-02: every item's stored attributes conform to their definitions at the pinned version.
        for item in items.values():
            invariants.check_attributes(_stored_attributes(item.attributes), DEFINITIONS)
        # INV-01: one public owner per listing, the item that owns it now, and that item is public (the catalog
        # releases automatically).
        with self.catalog.owner_db.transaction() as conn:
            public = conn.execute(
                """SELECT l.listing_id, l.item_id, i.fields IS NOT NULL AS item_public
                   FROM resolver.released_listing l
                   LEFT JOIN resolver.released_item i ON i.tenant_id = l.tenant_id AND i.item_id = l.item_id
                   WHERE l.catalog_id = %s""",
                (catalog_id,),
            ).fetchall()
        owners = {mapping.listing_id: mapping.item_id for _, mapping in mapped}
        assert {row["listing_id"]: row["item_id"] for row in public} == owners
        assert all(row["item_public"] for row in public)


def _stored_attributes(documents: dict[str, dict[str, Any]]) -> tuple[NormalizedAttribute, ...]:
    """The item's attribute documents as normalized values (a quantity is stored as a decimal string)."""
    found = []
    for key, document in documents.items():
        value = document["value"]
        definition = DEFINITIONS.get(key)
        if definition is not None and definition.value_type == "quantity" and isinstance(value, str):
            value = Decimal(value)
        found.append(
            NormalizedAttribute(key, value, document["definition_version"], unit=document.get("unit"))
        )
    return tuple(found)


@pytest.fixture
def worlds(provision_catalog_for: Callable[..., Catalog]) -> Callable[[], World]:
    numbers = itertools.count(1)

    def make() -> World:
        n = next(numbers)
        source_id = f"src_prop_{n}"
        catalog = provision_catalog_for(catalog_id=f"cat_prop_{n}", sources=(SourceSpec(source_id, "Prop"),))
        service = DecisionService(
            catalog.resolver_db,
            lambda tenant, catalog_id: catalog.stream,
            lambda pin: DEFINITIONS,
            clock=catalog.clock,
        )
        world = World(catalog, service, source_id)
        # Three items to start from, so that every step has something to act on.
        for number in (1, 2, 3):
            world.step(("create", number))
        return world

    return make


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(_op, min_size=1, max_size=10))
def test_maps_merges_and_splits_keep_inv01_inv02_and_inv07(
    worlds: Callable[[], World], ops: list[tuple[Any, ...]]
) -> None:
    world = worlds()
    for op in ops:
        world.step(op)
        world.check_invariants()
