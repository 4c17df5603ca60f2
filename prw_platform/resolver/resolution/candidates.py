"""Ranked candidate items for a review case whose listing has no strong identifier match.

A candidate shares the listing's brand: the brand claim's, or, when the page states no brand, an item brand the
listing's title names as a run of whole words ("ACME Furnace 3000" names ACME). The score orders candidates for
a reviewer and decides nothing (only a human maps a listing without a strong identifier):

    score = 0.5 (same brand) or 0.3 (brand named in the title)  +  0.5 * Jaccard(title words)

ties broken by item id, so the ranking is deterministic. Only active items are candidates (INV-07).

``resolver.catalog_item`` belongs to the decision path: the items come from ``decisions.identity``.
"""

from __future__ import annotations

import re

from prw_platform.db.database import Connection
from prw_platform.resolver.decisions import Candidate
from prw_platform.resolver.decisions.facts import active_items_by_brand

MAX_CANDIDATES = 5
#: Items read per brand before ranking: enough for a reviewer, bounded for a large catalog.
_SCAN_LIMIT = 200
_MAX_BRAND_WORDS = 4
_WORD = re.compile(r"\w+")

SAME_BRAND_SCORE = 0.5
TITLE_BRAND_SCORE = 0.3
TITLE_WEIGHT = 0.5


def words(text: str | None) -> list[str]:
    return _WORD.findall(text.casefold()) if text else []


def brand_key(brand: str) -> str:
    return " ".join(words(brand))


def rank_candidates(
    conn: Connection, tenant_id: str, catalog_id: str, *, brand: str | None, title: str | None
) -> tuple[Candidate, ...]:
    title_words = words(title)
    if brand and brand_key(brand):
        keys, base, why = [brand_key(brand)], SAME_BRAND_SCORE, "same brand"
    else:
        keys, base, why = _title_brand_keys(title_words), TITLE_BRAND_SCORE, "the title names brand"
    if not keys:
        return ()
    items = active_items_by_brand(conn, tenant_id, catalog_id, keys, limit=_SCAN_LIMIT)
    ranked: list[Candidate] = []
    for item in items:
        if brand_key(item.brand) not in keys:
            continue  # SQL's \W and lower() differ from Python's casefold on some scripts: Python decides
        overlap = _jaccard(title_words, words(item.title))
        score = round(base + TITLE_WEIGHT * overlap, 4)
        reason = f"{why} {item.brand}; title word overlap {overlap:.2f}"
        ranked.append(Candidate(item.item_id, score, reason))
    ranked.sort(key=lambda c: (-c.score, c.item_id))
    return tuple(ranked[:MAX_CANDIDATES])


def _title_brand_keys(title_words: list[str]) -> list[str]:
    """Every run of 1..4 whole words of the title: the brands it could name."""
    runs = {
        " ".join(title_words[start : start + size])
        for size in range(1, _MAX_BRAND_WORDS + 1)
        for start in range(len(title_words) - size + 1)
    }
    return sorted(runs)


def _jaccard(left: list[str], right: list[str]) -> float:
    a, b = set(left), set(right)
    return len(a & b) / len(a | b) if a | b else 0.0
