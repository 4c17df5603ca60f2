"""Ranked candidate items for a review case whose listing has no strong identifier match.

Titles are compared normalized (``title_key``: lower-cased, runs of non-word characters as one space, the same
expression as the ``catalog_item.title_key`` column of migration 0014_trgm). The score orders candidates for a
reviewer and decides nothing (only a human, or an identity rule plugin, maps a listing):

    score = 0.6 * trigram similarity of the titles      (pg_trgm's definition: padded word trigrams, Jaccard)
          + 0.3 if a model-number token is shared        (letters and digits, 7+ digits, "ps lx350h" joined)
          + 0.1 if the brands agree                      (the brand claim, else the title's first word)

ties broken by item id, so the ranking is deterministic; each candidate's ``reason`` names what contributed.
The first ``POOL_SIZE`` by that score are the pool offered to the identity rules; a scoring rule (``scored_match``)
re-orders them by match probability before the first ``MAX_CANDIDATES`` become the review case's candidates.
Items are read with ``pg_trgm`` where the server has it (nearest titles and model-number matches, through the
GiST index); without it (the embedded server) the catalog's active items are scanned, bounded. Only active items
are candidates (INV-07).

``resolver.catalog_item`` belongs to the decision path: the items come from ``decisions.facts``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from prw_platform.db.database import Connection
from prw_platform.resolver.decisions import Candidate
from prw_platform.resolver.decisions.facts import (
    ItemSummary,
    active_item_summaries,
    active_items_near_title,
    trigram_available,
)

MAX_CANDIDATES = 5
#: Candidates offered to the identity rules (the true item is among the first 20 for every labelled match of the
#: Abt-Buy and Amazon-Google validation splits).
POOL_SIZE = 20
#: Nearest titles read from the trigram index before ranking.
_NEAREST = 50
#: Items scanned when the server has no pg_trgm: bounded for a large catalog.
_SCAN_LIMIT = 5000
_MIN_MODEL_LENGTH = 4
_MIN_PART_NUMBER_LENGTH = 7
_MAX_PREFIX_LENGTH = 3
_MIN_JOINED_LENGTH = 5
_WORD = re.compile(r"\w+")

TITLE_WEIGHT = 0.6
MODEL_SCORE = 0.3
BRAND_SCORE = 0.1


def words(text: str | None) -> list[str]:
    return _WORD.findall(text.casefold()) if text else []


def title_key(text: str | None) -> str:
    return " ".join(words(text))


def trigrams(text: str | None) -> frozenset[str]:
    """pg_trgm's trigrams: each word padded with two spaces before and one after."""
    found: set[str] = set()
    for word in words(text):
        padded = f"  {word} "
        found.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return frozenset(found)


def trigram_similarity(left: frozenset[str], right: frozenset[str]) -> float:
    union = left | right
    return len(left & right) / len(union) if union else 0.0


def _is_model(token: str) -> bool:
    """Letters and digits ("pslx350h"), or a long run of digits (a part number "010 10613" joined)."""
    if token.isdigit():
        return len(token) >= _MIN_PART_NUMBER_LENGTH
    has_digit = any(c.isdigit() for c in token)
    has_letter = any(c.isalpha() for c in token)
    return has_digit and has_letter and len(token) >= _MIN_MODEL_LENGTH


def model_tokens(text: str | None) -> frozenset[str]:
    """Words mixing letters and digits ("pslx350h"), runs of 7+ digits, and a short word (up to 3 characters)
    joined to the next when that one has a digit ("ps lx350h", "010 10613"; at least 5 characters)."""
    split = words(text)
    joined = [
        a + b
        for a, b in itertools.pairwise(split)
        if len(a) <= _MAX_PREFIX_LENGTH and any(c.isdigit() for c in b) and len(a + b) >= _MIN_JOINED_LENGTH
    ]
    return frozenset(token for token in [*split, *joined] if _is_model(token))


def _brand_of(brand: str | None, title: str | None) -> str:
    split = words(brand) or words(title)[:1]
    return " ".join(split)


@dataclass(frozen=True, slots=True)
class ListingKey:
    """What a listing is compared on."""

    title: frozenset[str]
    models: frozenset[str]
    brand: str

    @classmethod
    def of(cls, brand: str | None, title: str | None) -> ListingKey:
        return cls(trigrams(title), model_tokens(title), _brand_of(brand, title))


def score_item(listing: ListingKey, item: ItemSummary) -> Candidate:
    similarity = trigram_similarity(listing.title, trigrams(item.title))
    compact = "".join(words(item.title))
    shared = sorted(m for m in listing.models if m in compact)
    same_brand = bool(listing.brand) and listing.brand == _brand_of(item.brand, item.title)
    score = (
        TITLE_WEIGHT * similarity + (MODEL_SCORE if shared else 0.0) + (BRAND_SCORE if same_brand else 0.0)
    )
    reasons = [f"title trigram similarity {similarity:.2f}"]
    if shared:
        reasons.append(f"model number {', '.join(shared)}")
    if same_brand:
        reasons.append(f"same brand {listing.brand}")
    return Candidate(item.item_id, round(score, 4), "; ".join(reasons))


@dataclass(frozen=True, slots=True)
class PooledItem:
    """A candidate item with what the rules compare: its title and brand."""

    item: ItemSummary
    candidate: Candidate


def candidate_pool(
    conn: Connection, tenant_id: str, catalog_id: str, *, brand: str | None, title: str | None
) -> tuple[PooledItem, ...]:
    """The first ``POOL_SIZE`` active items by candidate score (score above 0), best first."""
    listing = ListingKey.of(brand, title)
    if not listing.title:
        return ()
    if trigram_available(conn):
        models = sorted(listing.models)
        items = active_items_near_title(conn, tenant_id, catalog_id, title_key(title), models, limit=_NEAREST)
    else:
        items = active_item_summaries(conn, tenant_id, catalog_id, limit=_SCAN_LIMIT)
    ranked = sorted(
        (PooledItem(item, score_item(listing, item)) for item in items),
        key=lambda p: (-p.candidate.score, p.candidate.item_id),
    )
    return tuple(p for p in ranked[:POOL_SIZE] if p.candidate.score > 0)


def rank_candidates(
    conn: Connection, tenant_id: str, catalog_id: str, *, brand: str | None, title: str | None
) -> tuple[Candidate, ...]:
    """The review-case candidates by candidate score alone (no scoring rule)."""
    pool = candidate_pool(conn, tenant_id, catalog_id, brand=brand, title=title)
    return tuple(p.candidate for p in pool[:MAX_CANDIDATES])
