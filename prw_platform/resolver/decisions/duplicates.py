"""Likely duplicate items of one catalog: pairs of active items that are probably one product, for a reviewer to
merge (``item_merges``). Reads only; decides nothing.

A pair is scored with the review candidates' score (``resolution.candidates.score_item``: title trigram
similarity, a shared model number, the same brand), one item's title and brand read as a listing's against the
other, the higher of the two directions; the same manufacturer part number adds ``SAME_MPN_SCORE`` (capped at 1).
Items whose GTINs differ are never a pair: their strong identifiers say they are two products. Only pairs that
share a model number or a part number, or enough of their less common title trigrams, are scored at all, so a
catalog is not compared item by item with every other.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Final

from prw_platform.db.database import Connection
from prw_platform.resolver.decisions import facts
from prw_platform.resolver.decisions.facts import ItemState, ItemSummary
from prw_platform.resolver.decisions.identifiers import gtin_key
from prw_platform.resolver.resolution.candidates import ListingKey, model_tokens, score_item, trigrams

#: A pair scoring less is not listed (a shared model number and the same brand with titles half alike score 0.7).
MIN_SCORE: Final = 0.6
#: The same manufacturer part number on both items (brands written differently, a title without it).
SAME_MPN_SCORE: Final = 0.3
MAX_PAIRS: Final = 200
#: Title trigrams two items must share, among the less common ones, to be compared without a shared model number.
_SHARED_TRIGRAMS: Final = 4
#: A trigram found in more items than this fraction of the catalog (" s", "pro") does not bring two items together.
_COMMON_FRACTION: Final = 0.02
_MIN_COMMON: Final = 20
_PART_NUMBER: Final = re.compile(r"\W+")


@dataclass(frozen=True, slots=True)
class DuplicateItem:
    """One side of a pair, as a reviewer recognises it."""

    item_id: str
    title: str | None
    brand: str | None
    gtin: str | None
    mpn: str | None


@dataclass(frozen=True, slots=True)
class DuplicatePair:
    """Two active items of ``catalog_id`` that are likely the same product (``first`` has the smaller id)."""

    catalog_id: str
    first: DuplicateItem
    second: DuplicateItem
    score: float
    #: What made the score: title similarity, the shared model number or part number, the brand.
    evidence: tuple[str, ...]


def catalog_duplicates(
    conn: Connection,
    tenant_id: str,
    catalog_id: str,
    *,
    min_score: float = MIN_SCORE,
    limit: int = MAX_PAIRS,
) -> list[DuplicatePair]:
    """The catalog's likely duplicate pairs, best first (at most ``limit``)."""
    items = facts.active_items(conn, tenant_id, catalog_id)
    return likely_duplicates(catalog_id, items, min_score=min_score, limit=limit)


def likely_duplicates(
    catalog_id: str, items: Sequence[ItemState], *, min_score: float = MIN_SCORE, limit: int = MAX_PAIRS
) -> list[DuplicatePair]:
    """Pairs of ``items`` scoring at least ``min_score``, by score (highest first), then by item ids."""
    active = [item for item in items if item.status == facts.ACTIVE]
    pairs = []
    for first, second in _compared(active):
        pair = _pair(catalog_id, first, second)
        if pair is not None and pair.score >= min_score:
            pairs.append(pair)
    pairs.sort(key=lambda p: (-p.score, p.first.item_id, p.second.item_id))
    return pairs[:limit]


def _compared(items: Sequence[ItemState]) -> Iterable[tuple[ItemState, ItemState]]:
    """The pairs worth scoring: a shared model number or part number, or enough shared uncommon trigrams."""
    by_key: dict[str, list[int]] = defaultdict(list)
    by_trigram: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(items):
        for token in model_tokens(item.title):
            by_key[f"model:{token}"].append(index)
        if part := _part_number(item):
            by_key[f"mpn:{part}"].append(index)
        for trigram in trigrams(item.title):
            by_trigram[trigram].append(index)
    candidates: set[tuple[int, int]] = set()
    for indexes in by_key.values():
        candidates.update(combinations(sorted(set(indexes)), 2))
    common = max(_MIN_COMMON, int(len(items) * _COMMON_FRACTION))
    shared: dict[tuple[int, int], int] = defaultdict(int)
    for indexes in by_trigram.values():
        if len(indexes) <= common:
            for pair in combinations(indexes, 2):
                shared[pair] += 1
    candidates.update(pair for pair, count in shared.items() if count >= _SHARED_TRIGRAMS)
    for a, b in sorted(candidates):
        yield items[a], items[b]


def _pair(catalog_id: str, a: ItemState, b: ItemState) -> DuplicatePair | None:
    gtins = (_gtin(a), _gtin(b))
    if all(gtins) and gtins[0] != gtins[1]:
        return None  # strong identifiers of two products
    first, second = sorted((a, b), key=lambda item: item.item_id)
    candidate = max(
        (
            score_item(ListingKey.of(first.brand, first.title), _summary(second)),
            score_item(ListingKey.of(second.brand, second.title), _summary(first)),
        ),
        key=lambda c: c.score,
    )
    score, evidence = candidate.score, [candidate.reason]
    part = _part_number(first)
    if part and part == _part_number(second):
        score = min(1.0, score + SAME_MPN_SCORE)
        evidence.append(f"same MPN {first.identifiers.get('mpn')}")
    return DuplicatePair(catalog_id, _side(first), _side(second), round(score, 4), tuple(evidence))


def _summary(item: ItemState) -> ItemSummary:
    return ItemSummary(item.item_id, item.title, item.brand)


def _side(item: ItemState) -> DuplicateItem:
    return DuplicateItem(item.item_id, item.title, item.brand, _gtin(item), item.identifiers.get("mpn"))


def _gtin(item: ItemState) -> str | None:
    gtin = item.identifiers.get("gtin")
    return gtin_key(gtin) if gtin else None


def _part_number(item: ItemState) -> str | None:
    mpn = item.identifiers.get("mpn")
    part = _PART_NUMBER.sub("", mpn).upper() if mpn else ""
    return part or None
