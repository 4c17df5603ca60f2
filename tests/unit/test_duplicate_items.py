"""The likely-duplicate detector (``decisions.duplicates``) on items in memory: which pairs it lists, with what
score and evidence, and which it never lists."""

from __future__ import annotations

from typing import Any

from prw_platform.resolver.decisions.duplicates import MIN_SCORE, likely_duplicates
from prw_platform.resolver.decisions.facts import ItemState


def _item(item_id: str, title: str, brand: str | None = None, **identifiers: Any) -> ItemState:
    status = identifiers.pop("status", "active")
    ids = {"gtin": identifiers.get("gtin"), "mpn": identifiers.get("mpn")}
    return ItemState(item_id, "cat_a", 1, status, "np_core@1", title, brand, ids, {})


def _pairs(*items: ItemState) -> list[tuple[str, str]]:
    return [(p.first.item_id, p.second.item_id) for p in likely_duplicates("cat_a", items)]


def test_two_items_sharing_a_model_number_and_brand_are_a_pair_with_its_evidence() -> None:
    items = (
        _item("itm_b", "Sony PS-LX350H belt drive turntable", "Sony"),
        _item("itm_a", "Sony turntable PSLX350H", "Sony"),
        _item("itm_c", "Bose Acoustimass 5 series III speaker system", "Bose"),
    )

    (pair,) = likely_duplicates("cat_a", items)

    assert (pair.first.item_id, pair.second.item_id, pair.catalog_id) == ("itm_a", "itm_b", "cat_a")
    assert pair.score >= MIN_SCORE
    (reason,) = pair.evidence
    assert "model number pslx350h" in reason
    assert "same brand sony" in reason


def test_the_same_part_number_under_two_brand_spellings_is_a_pair() -> None:
    items = (
        _item("itm_a", "Strata P5 1 TB", "Corvana", mpn="CVN-SP5-1T0"),
        _item("itm_b", "Strata P5 1 TB SSD", "Corvana Storage", mpn="cvn sp5 1t0"),
    )

    (pair,) = likely_duplicates("cat_a", items)

    assert pair.evidence[-1] == "same MPN CVN-SP5-1T0"
    assert pair.score >= 0.3 + MIN_SCORE / 2


def test_items_whose_gtins_differ_are_never_a_pair() -> None:
    items = (
        _item("itm_a", "Sony turntable PSLX350H", "Sony", gtin="4905524328097"),
        _item("itm_b", "Sony PS-LX350H turntable", "Sony", gtin="04905524328103"),
    )

    assert _pairs(*items) == []
    # A GTIN-13 and its GTIN-14 spelling are one GTIN: still a pair.
    same = (items[0], _item("itm_b", "Sony PS-LX350H turntable", "Sony", gtin="04905524328097"))
    assert _pairs(*same) == [("itm_a", "itm_b")]


def test_retired_items_and_unrelated_titles_are_not_listed() -> None:
    items = (
        _item("itm_a", "Sony turntable PSLX350H", "Sony"),
        _item("itm_b", "Sony PS-LX350H turntable", "Sony", status="retired"),
        _item("itm_c", "Linksys EtherFast EZXS88W ethernet switch", "Linksys"),
    )

    assert _pairs(*items) == []


def test_pairs_come_best_first_and_at_most_the_limit() -> None:
    items = (
        _item("itm_a", "Sony turntable PSLX350H", "Sony"),
        _item("itm_b", "Sony turntable PSLX350H", "Sony"),
        _item("itm_c", "Sony PS-LX350H belt drive turntable with moving magnet cartridge", "Sony"),
    )

    pairs = likely_duplicates("cat_a", items)

    assert [p.score for p in pairs] == sorted((p.score for p in pairs), reverse=True)
    assert (pairs[0].first.item_id, pairs[0].second.item_id) == ("itm_a", "itm_b")
    assert len(likely_duplicates("cat_a", items, limit=1)) == 1
