"""The parts of if_product_query that need no database: the per-client token bucket, signed cursors, and what
the installed profiles teach the queries (classes, values typed with units)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from prw_platform.plugins import ItemClass, PluginRegistry, get_plugin_manager
from prw_platform.plugins.query import CanonicalValue, QueryVocabulary, value_text
from prw_platform.product.errors import InvalidQuery
from prw_platform.product.public.items import CursorCodec, ItemFilters, resolve_search
from prw_platform.product.ratelimit import TokenBucketLimiter


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_token_bucket_allows_a_burst_then_one_request_per_interval_per_client() -> None:
    clock = _Clock()
    limiter = TokenBucketLimiter(2.0, 3, clock=clock)

    burst = [limiter.check("10.0.0.1") for _ in range(3)]
    refused = limiter.check("10.0.0.1")
    other = limiter.check("10.0.0.2")
    clock.now += 0.5
    after_wait = limiter.check("10.0.0.1")

    assert burst == [None, None, None]
    assert refused == pytest.approx(0.5)
    assert other is None  # per client
    assert after_wait is None
    assert limiter.check("10.0.0.1") == pytest.approx(0.5)


def test_a_refused_request_does_not_spend_a_token() -> None:
    clock = _Clock()
    limiter = TokenBucketLimiter(1.0, 1, clock=clock)
    assert limiter.check("c") is None
    for _ in range(5):
        assert limiter.check("c") == pytest.approx(1.0)
    clock.now += 1.0
    assert limiter.check("c") is None


def test_a_rate_limit_needs_a_positive_rate_and_burst() -> None:
    with pytest.raises(ValueError, match="positive rate"):
        TokenBucketLimiter(0, 1)
    with pytest.raises(ValueError, match="burst of at least 1"):
        TokenBucketLimiter(1, 0)


def test_a_cursor_decodes_only_with_its_key_and_its_filters() -> None:
    codec = CursorCodec(b"k" * 32)
    filters = ItemFilters(brand="Lumen")
    cursor = codec.encode("itm_ssd_p5_1t", filters)

    assert codec.decode(cursor, filters) == "itm_ssd_p5_1t"
    assert codec.encode("itm_ssd_p5_1t", filters) == cursor  # stable
    with pytest.raises(InvalidQuery):
        CursorCodec(b"x" * 32).decode(cursor, filters)
    with pytest.raises(InvalidQuery):
        codec.decode(cursor, ItemFilters(brand="Orbit"))
    with pytest.raises(ValueError, match="at least 16 bytes"):
        CursorCodec(b"short")


@pytest.fixture(scope="module")
def vocabulary() -> QueryVocabulary:
    return QueryVocabulary.from_registry(PluginRegistry.from_manager(get_plugin_manager()))


@pytest.mark.parametrize(
    ("key", "typed", "canonical"),
    [
        ("storage:capacity", "1 TB", CanonicalValue("1000", "GB")),
        ("storage:capacity", "1000GB", CanonicalValue("1000", "GB")),
        ("storage:capacity", "2 TiB", CanonicalValue("2199.023255552", "GB")),
        ("storage:read_speed", "7.45 GB/s", CanonicalValue("7450", "MB/s")),
        ("storage:interface", "NVMe", CanonicalValue("nvme", None)),
        ("storage:form_factor", '2.5"', CanonicalValue("2.5in", None)),
        ("storage:capacity", "large", None),
        ("storage:capacity", "0 GB", None),
        ("core:brand", "Lumen", None),  # no profile reads brands: the text is compared as typed
        ("vendor:unknown", "1 TB", None),
    ],
)
def test_the_installed_profiles_read_typed_values_into_canonical_form(
    vocabulary: QueryVocabulary, key: str, typed: str, canonical: CanonicalValue | None
) -> None:
    assert vocabulary.canonical(key, typed) == canonical


def test_the_storage_profile_declares_its_classes(vocabulary: QueryVocabulary) -> None:
    assert {"cls_storage", "cls_storage_ssd", "cls_storage_hdd"} <= set(vocabulary.classes)
    ssd = vocabulary.classes["cls_storage_ssd"]
    assert ssd.profile == "np_storage"
    assert {"storage:interface": ("nvme",)} in ssd.any_of


def test_an_unknown_class_is_an_invalid_query_naming_the_known_ones(vocabulary: QueryVocabulary) -> None:
    with pytest.raises(InvalidQuery, match="cls_storage_ssd"):
        resolve_search(ItemFilters(item_class="cls_tape"), vocabulary)


def test_a_profile_without_the_optional_members_teaches_nothing() -> None:
    class Bare:
        name, version, definitions, identity_keys = "np_bare", "1", {}, ()

        def normalize(self, claims: object) -> object:
            raise AssertionError("not called")

    registry = PluginRegistry({}, {"np_bare@1": Bare()}, {"np_bare@1": "bare"})  # type: ignore[dict-item]
    vocabulary = QueryVocabulary.from_registry(registry)
    assert (dict(vocabulary.classes), vocabulary.parsers) == ({}, ())


def test_a_class_takes_every_item_of_its_profile_by_default() -> None:
    assert ItemClass("cls_all", "all").any_of == ({},)


def test_canonical_value_text_is_the_json_spelling() -> None:
    assert [value_text(v) for v in (Decimal("1E+3"), Decimal("2.50"), True, 7, "nvme")] == [
        "1000",
        "2.5",
        "true",
        "7",
        "nvme",
    ]
