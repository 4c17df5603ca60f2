"""What the scored rule compares: a listing and each candidate item, as numbers and as findings a reviewer reads.

Titles are compared normalized (case-folded words). The comparison of one candidate has three kinds of signals:

- **model numbers** (the strongest on product data): words mixing letters and digits ("sx110is", "lmv1680ss"), or
  long digit runs (part numbers); shared in full, one a variant of the other (a colour or region suffix,
  "sx110is" / "sx110isb"), or different (a conflict when both titles state one and none is shared);
- **title similarity**: character trigrams (pg_trgm's definition), rapidfuzz's token-set, token-sort and partial
  ratios, and the overlap of the listing's words weighted by how rare each word is among the candidates offered
  (a word every candidate shares tells nothing);
- **conflicts**: numbers stated by one title and not the other ("80 hour" / "180 hour"), a quantity with a unit
  that differs ("500gb" / "1tb"), a colour that differs, another brand.

The candidates are compared with each other too: for the strongest signals, how far this candidate is ahead of
the best other one. A listing whose two best candidates are near twins (two colours of one model) is then
uncertain even when both look like it.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_QUANTITY = re.compile(
    r"^(\d+(?:\.\d+)?)(gb|tb|mb|mp|in|inch|hz|khz|mhz|ghz|w|watt|watts|mm|cm|ft|oz|lb|lbs|v|mah|ch|p|x|pk|pack)$"
)
_COLOURS = frozenset(
    [
        "black",
        "white",
        "silver",
        "red",
        "blue",
        "pink",
        "green",
        "gray",
        "grey",
        "brown",
        "gold",
        "purple",
        "orange",
        "yellow",
        "titanium",
        "stainless",
        "graphite",
        "bronze",
        "beige",
        "ivory",
        "charcoal",
    ]
)
_MIN_MODEL_LENGTH = 4
_MIN_PART_NUMBER_LENGTH = 7
_MAX_PREFIX_LENGTH = 3
_MIN_JOINED_LENGTH = 5
#: A model number one or two characters longer than another that starts it is a variant (colour, region).
_VARIANT_SUFFIX = 2
_CAP_COUNT = 3
_CAP_MODEL_LENGTH = 12


def words(text: str | None) -> list[str]:
    return _WORD.findall(text.casefold()) if text else []


def trigrams(split: Sequence[str]) -> frozenset[str]:
    """pg_trgm's trigrams: each word padded with two spaces before and one after."""
    found: set[str] = set()
    for word in split:
        padded = f"  {word} "
        found.update(padded[i : i + 3] for i in range(len(padded) - 2))
    return frozenset(found)


def _is_model(token: str) -> bool:
    if token.isdigit():
        return len(token) >= _MIN_PART_NUMBER_LENGTH
    has_digit = any(c.isdigit() for c in token)
    has_letter = any(c.isalpha() for c in token)
    return has_digit and has_letter and len(token) >= _MIN_MODEL_LENGTH


def model_tokens(split: Sequence[str]) -> frozenset[str]:
    """Words mixing letters and digits, runs of 7+ digits, and a short word joined to the next when that one
    has a digit ("ps lx350h" → "pslx350h"), as the platform's candidate search reads them."""
    joined = [
        a + b
        for a, b in itertools.pairwise(split)
        if len(a) <= _MAX_PREFIX_LENGTH and any(c.isdigit() for c in b) and len(a + b) >= _MIN_JOINED_LENGTH
    ]
    return frozenset(token for token in [*split, *joined] if _is_model(token))


def _quantities(split: Sequence[str]) -> set[tuple[str, str]]:
    """(unit, amount) pairs: "500gb", or "500 gb" as two words."""
    found: set[tuple[str, str]] = set()
    for word, following in itertools.zip_longest(split, split[1:], fillvalue=""):
        if match := _QUANTITY.match(word):
            found.add((match.group(2), match.group(1)))
        elif _NUMBER.match(word) and following and (unit := _QUANTITY.match("1" + following)):
            found.add((unit.group(2), word))
    return found


@dataclass(frozen=True, slots=True)
class Title:
    """A title as the rule compares it."""

    words: tuple[str, ...]
    text: str
    compact: str
    trigrams: frozenset[str]
    models: frozenset[str]
    numbers: frozenset[str]
    quantities: frozenset[tuple[str, str]]
    colours: frozenset[str]
    brand: str

    @classmethod
    def of(cls, title: str | None, brand: str | None = None) -> Title:
        split = tuple(words(title))
        stated_brand = words(brand)
        return cls(
            words=split,
            text=" ".join(split),
            compact="".join(split),
            trigrams=trigrams(split),
            models=model_tokens(split),
            numbers=frozenset(w for w in split if _NUMBER.match(w)),
            quantities=frozenset(_quantities(split)),
            colours=frozenset(split) & _COLOURS,
            brand=" ".join(stated_brand[:1] or split[:1]),
        )


def _model_similarity(left: frozenset[str], right: frozenset[str]) -> float:
    """1 for a shared model number, 0.9 for a variant (one starts the other, 1 or 2 characters more), else the
    best normalized Levenshtein similarity of two model numbers (0 when a title states none)."""
    best = 0.0
    for a, b in itertools.product(left, right):
        if a == b:
            return 1.0
        if a.startswith(b) or b.startswith(a):
            similarity = 0.9 if abs(len(a) - len(b)) <= _VARIANT_SUFFIX else 0.7
        else:
            similarity = Levenshtein.normalized_similarity(a, b)
        best = max(best, similarity)
    return best


def _quantity_conflict(left: frozenset[tuple[str, str]], right: frozenset[tuple[str, str]]) -> bool:
    """Both titles state an amount of one unit, and no amount agrees ("500gb" / "1tb" is not a conflict)."""
    for unit in {u for u, _ in left} & {u for u, _ in right}:
        if {a for u, a in left if u == unit}.isdisjoint({a for u, a in right if u == unit}):
            return True
    return False


#: The feature vector, in order (the model's input; a generation names the features it was fitted on).
BASE_FEATURES = (
    "title_trigram",
    "title_token_set",
    "title_token_sort",
    "title_partial",
    "model_in_other_title",
    "model_shared_length",
    "model_similarity",
    "both_state_models",
    "same_brand",
    "quantity_conflict",
    "rare_words_of_listing_shared",
    "rare_words_of_candidate_shared",
    "numbers_jaccard",
    "listing_numbers_missing",
    "candidate_numbers_missing",
    "model_equal",
    "colour_conflict",
)
#: Base features also given as "ahead of the best other candidate" (this one's value minus the best other's).
RELATIVE_TO_OTHERS = (
    "title_trigram",
    "title_token_set",
    "model_similarity",
    "rare_words_of_listing_shared",
    "rare_words_of_candidate_shared",
    "model_in_other_title",
)
FEATURES = BASE_FEATURES + tuple(f"{name}_ahead" for name in RELATIVE_TO_OTHERS)
_RELATIVE_INDEX = tuple(BASE_FEATURES.index(name) for name in RELATIVE_TO_OTHERS)


@dataclass(frozen=True, slots=True)
class Comparison:
    """One candidate against the listing: the feature values (``FEATURES`` order) and the findings."""

    values: tuple[float, ...]
    findings: tuple[str, ...]


class _Rarity:
    """How rare each word is among the candidates offered (inverse document frequency over the pool)."""

    def __init__(self, candidates: Sequence[Title]) -> None:
        self._count = Counter(word for title in candidates for word in set(title.words))
        self._size = len(candidates)

    def weight(self, word: str) -> float:
        return math.log((self._size + 1) / (self._count[word] + 1)) + 1.0

    def shared(self, own: Sequence[str], other: Sequence[str]) -> float:
        mine = set(own)
        total = sum(self.weight(w) for w in mine)
        return sum(self.weight(w) for w in mine & set(other)) / total if total else 0.0


def _base(listing: Title, candidate: Title, rarity: _Rarity) -> tuple[list[float], list[str]]:
    union = listing.trigrams | candidate.trigrams
    trigram = len(listing.trigrams & candidate.trigrams) / len(union) if union else 0.0
    token_set = fuzz.token_set_ratio(listing.text, candidate.text) / 100
    in_other = sorted(
        {m for m in listing.models if m in candidate.compact}
        | {m for m in candidate.models if m in listing.compact}
    )
    model_similarity = _model_similarity(listing.models, candidate.models)
    both_models = bool(listing.models and candidate.models)
    same_brand = bool(listing.brand) and listing.brand == candidate.brand
    quantity_conflict = _quantity_conflict(listing.quantities, candidate.quantities)
    number_union = listing.numbers | candidate.numbers
    numbers_jaccard = len(listing.numbers & candidate.numbers) / len(number_union) if number_union else 0.5
    listing_missing = sorted(listing.numbers - candidate.numbers)
    candidate_missing = sorted(candidate.numbers - listing.numbers)
    equal_models = sorted(listing.models & candidate.models)
    colour_conflict = bool(listing.colours and candidate.colours and not listing.colours & candidate.colours)
    values = [
        trigram,
        token_set,
        fuzz.token_sort_ratio(listing.text, candidate.text) / 100,
        fuzz.partial_ratio(listing.text, candidate.text) / 100,
        1.0 if in_other else 0.0,
        min(max((len(m) for m in in_other), default=0), _CAP_MODEL_LENGTH) / _CAP_MODEL_LENGTH,
        model_similarity,
        1.0 if both_models else 0.0,
        1.0 if same_brand else 0.0,
        1.0 if quantity_conflict else 0.0,
        rarity.shared(listing.words, candidate.words),
        rarity.shared(candidate.words, listing.words),
        numbers_jaccard,
        float(min(len(listing_missing), _CAP_COUNT)),
        float(min(len(candidate_missing), _CAP_COUNT)),
        1.0 if equal_models else 0.0,
        1.0 if colour_conflict else 0.0,
    ]
    findings = [f"title similarity {token_set:.2f} (trigrams {trigram:.2f})"]
    if in_other:
        findings.append(f"model number {', '.join(in_other)} in both titles")
    elif both_models:
        findings.append(
            f"different model numbers: {', '.join(sorted(listing.models))} / {', '.join(sorted(candidate.models))}"
            f" (closest similarity {model_similarity:.2f})"
        )
    if same_brand:
        findings.append(f"same brand {listing.brand}")
    elif listing.brand and candidate.brand:
        findings.append(f"brand differs: {listing.brand} / {candidate.brand}")
    if quantity_conflict:
        findings.append("a quantity differs (capacity, size or pack)")
    if listing_missing or candidate_missing:
        findings.append(
            f"numbers in one title only: {' '.join(listing_missing) or '-'} / {' '.join(candidate_missing) or '-'}"
        )
    if colour_conflict:
        findings.append(
            f"colour differs: {' '.join(sorted(listing.colours))} / {' '.join(sorted(candidate.colours))}"
        )
    return values, findings


def compare(listing: Title, candidates: Sequence[Title]) -> list[Comparison]:
    """Each candidate against the listing, in the order given, with its lead over the best other candidate."""
    rarity = _Rarity(candidates)
    base = [_base(listing, candidate, rarity) for candidate in candidates]
    comparisons = []
    for index, (values, findings) in enumerate(base):
        others = [other for position, (other, _) in enumerate(base) if position != index]
        ahead = [values[i] - max((other[i] for other in others), default=0.0) for i in _RELATIVE_INDEX]
        comparisons.append(Comparison(tuple(values + ahead), tuple(findings)))
    return comparisons
