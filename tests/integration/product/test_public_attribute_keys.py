"""if_product_query attribute filters through ``public_item.attribute_keys`` (migration 0023): the keys are
written with every released row, and a filter matches exactly what the per-row comparison matched before them —
the text as typed (value, or value and unit), or the canonical unit and value a profile reads the text as, two
numbers comparing as numbers (1 TB matches an item stored as 1000 GB, however the 1000 is spelt)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prw_platform.db.database import Database
from prw_platform.plugins import PluginRegistry, get_plugin_manager
from prw_platform.plugins.query import QueryVocabulary
from prw_platform.product.consumer import apply_delivery
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.filters import attribute_filter_keys
from prw_platform.product.public.items import ItemFilters
from prw_platform.product.scopes import ProjectedScope
from tests.unit.product.stream import CATALOG, TENANT, StreamBuilder


@pytest.fixture(scope="module")
def vocabulary() -> QueryVocabulary:
    return QueryVocabulary.from_registry(PluginRegistry.from_manager(get_plugin_manager()))


def _release(db: Database, stream: StreamBuilder, attributes: dict[str, dict[str, dict[str, Any]]]) -> None:
    for item_id, attribute in attributes.items():
        apply_delivery(db, stream.item(item_id, attributes=attribute))
    apply_delivery(db, stream.release())


def _matching(db: Database, vocabulary: QueryVocabulary, *attributes: tuple[str, str]) -> list[str]:
    page = PublicCatalog(db, TENANT, CATALOG, vocabulary).items(ItemFilters(attributes=attributes), limit=100)
    return [item.item_id for item in page.items]


def _capacity(value: object, unit: str | None = "GB") -> dict[str, dict[str, Any]]:
    attribute: dict[str, Any] = {"value": value, "definition_version": 1}
    if unit is not None:
        attribute["unit"] = unit
    return {"storage:capacity": attribute}


def test_1_tb_matches_every_spelling_of_1000_gb_and_the_typed_text_and_nothing_else(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, vocabulary: QueryVocabulary
) -> None:
    _release(
        product_db,
        stream,
        {
            "itm_gb_text": _capacity("1000"),
            "itm_gb_decimal": _capacity("1000.00"),
            "itm_gb_number": _capacity(1000),
            "itm_gb_float": _capacity(1000.0),
            "itm_gb_leading_zero": _capacity("01000"),
            "itm_tb_as_typed": _capacity("1", "TB"),
            "itm_typed_without_unit": _capacity("1 TB", None),
            "itm_mb": _capacity("1000", "MB"),
            "itm_gb_other": _capacity("1000.5"),
            "itm_no_unit": _capacity("1000", None),
            "itm_words": _capacity("one thousand"),
            # Without the lengths in its keys, "storage:capacity1" + " TB" would read as "storage:capacity" + "1 TB".
            "itm_longer_name": {"storage:capacity1": {"value": " TB", "definition_version": 1}},
        },
    )

    assert _matching(product_db, vocabulary, ("storage:capacity", "1 TB")) == [
        "itm_gb_decimal",
        "itm_gb_float",
        "itm_gb_leading_zero",
        "itm_gb_number",
        "itm_gb_text",
        "itm_tb_as_typed",
        "itm_typed_without_unit",
    ]
    # No profile reads "1000" without a unit: it matches the value as stored (a JSON number too), whatever the unit.
    assert _matching(product_db, vocabulary, ("storage:capacity", "1000")) == [
        "itm_gb_number",
        "itm_gb_text",
        "itm_mb",
        "itm_no_unit",
    ]
    assert _matching(product_db, vocabulary, ("storage:capacity", "1000 MB")) == ["itm_mb"]
    assert _matching(product_db, vocabulary, ("storage:capacity", "one thousand")) == ["itm_words"]


def test_a_text_canonical_value_matches_as_read_and_as_typed_and_filters_combine(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, vocabulary: QueryVocabulary
) -> None:
    nvme = {"storage:interface": {"value": "nvme", "definition_version": 1}}
    _release(
        product_db,
        stream,
        {
            "itm_nvme": nvme,
            "itm_nvme_typed": {"storage:interface": {"value": "NVMe", "definition_version": 1}},
            "itm_sata": {"storage:interface": {"value": "sata", "definition_version": 1}},
            "itm_nvme_1tb": {**nvme, **_capacity(1000)},
            "itm_sata_1tb": {
                "storage:interface": {"value": "sata", "definition_version": 1},
                **_capacity(1000),
            },
        },
    )

    assert _matching(product_db, vocabulary, ("storage:interface", "NVMe")) == [
        "itm_nvme",
        "itm_nvme_1tb",
        "itm_nvme_typed",
    ]
    both = (("storage:capacity", "1 TB"), ("storage:interface", "NVMe"))
    assert _matching(product_db, vocabulary, *both) == ["itm_nvme_1tb"]


def test_a_republished_item_is_found_by_its_new_attribute_value_only(
    scope: ProjectedScope, stream: StreamBuilder, product_db: Database, vocabulary: QueryVocabulary
) -> None:
    _release(product_db, stream, {"itm_a": _capacity(1000)})
    _release(product_db, stream, {"itm_a": _capacity(2000)})

    assert _matching(product_db, vocabulary, ("storage:capacity", "1 TB")) == []
    assert _matching(product_db, vocabulary, ("storage:capacity", "2 TB")) == ["itm_a"]


_NAMES = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=12)
_TEXTS = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
_DECIMALS = st.from_regex(r"-?[0-9]{1,6}(\.[0-9]{1,4})?", fullmatch=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=_NAMES,
    text=_TEXTS,
    canonical=st.none() | _DECIMALS | _TEXTS,
    unit=st.none() | st.sampled_from(["", "GB", "TB", "mm", "W"]) | _TEXTS,
)
def test_the_filter_keys_built_in_python_are_the_keys_migration_0023_spells_in_sql(
    owner_db: Database, name: str, text: str, canonical: str | None, unit: str | None
) -> None:
    """``attribute_filter_keys`` (sent as one array parameter) is the twin of the SQL the list statement used to
    build the keys with: ``product.attribute_key`` for the text as typed, the canonical value and unit, and the
    number through ``trim_scale(...::numeric)::text``, which is what ``public_item.attribute_keys`` holds."""
    in_sql = owner_db.read_row(
        """SELECT ARRAY[product.attribute_key('v', %(name)s, NULL, %(text)s),
                        product.attribute_key('u', %(name)s, NULL, %(text)s)]
                  || CASE WHEN %(canonical)s::text IS NULL THEN ARRAY[]::text[]
                          ELSE ARRAY[product.attribute_key('c', %(name)s, %(unit)s, %(canonical)s)] END
                  || CASE WHEN %(canonical)s::text ~ '^-?[0-9]+(\\.[0-9]+)?$'
                          THEN ARRAY[product.attribute_key('n', %(name)s, %(unit)s,
                                                           trim_scale(%(canonical)s::numeric)::text)]
                          ELSE ARRAY[]::text[] END AS keys""",
        {"name": name, "text": text, "canonical": canonical, "unit": unit},
        tenant_id=None,
    )
    assert in_sql == {"keys": attribute_filter_keys(name, text, canonical, unit)}
