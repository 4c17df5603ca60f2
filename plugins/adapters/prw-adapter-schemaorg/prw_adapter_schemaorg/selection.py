"""Which schema.org Product is the page's product, when it carries several (or one in several syntaxes).

Candidates are Product-typed entities that are not inside another product (a related product, an accessory
or a variant belongs to its product). The primary candidate is the greatest by, in order:

1. its name matches the page's title (``og:title``, ``twitter:title``, ``<title>`` or an ``<h1>``);
2. it has an offer with a positive price;
3. completeness: how many of name, brand, sku, mpn, gtin*, image, description, url, category, color, offers
   it has;
4. syntax: JSON-LD, then microdata, then RDFa;
5. document order: the earlier one.

A ProductGroup stands for the variant the page shows: the one whose ``url`` is the page's URL, else the first
with a price, else the first; the group fills in what the variant does not say.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urljoin

from prw_adapter_schemaorg.entities import Entity, ProductView, Syntax
from prw_adapter_schemaorg.offers import read_offer

PRODUCT_TYPES = frozenset(
    {
        "Product",
        "ProductGroup",
        "ProductModel",
        "IndividualProduct",
        "SomeProducts",
        "Vehicle",
        "Car",
        "Motorcycle",
    }
)
_COMPLETENESS = (
    "name",
    "brand",
    "sku",
    "mpn",
    ("gtin", "gtin8", "gtin12", "gtin13", "gtin14", "isbn"),
    "image",
    "description",
    "url",
    "category",
    "color",
    "offers",
)
_SYNTAX_RANK: dict[Syntax, int] = {"jsonld": 0, "microdata": 1, "rdfa": 2}
_MAX_WALK_DEPTH = 12


@dataclass(frozen=True, slots=True)
class Selection:
    primary: ProductView | None
    candidates: tuple[Entity, ...]
    notes: tuple[str, ...]


def product_candidates(roots: Sequence[Entity]) -> list[Entity]:
    found: dict[str, Entity] = {}

    def walk(entity: Entity, depth: int) -> None:
        if entity.is_a(PRODUCT_TYPES):
            # The same JSON-LD node reached twice (defined in @graph, referenced from mainEntity) counts once.
            found.setdefault(entity.locator, entity)
            return
        if depth >= _MAX_WALK_DEPTH:
            return
        for values in entity.properties.values():
            for value in values:
                if value.entity is not None:
                    walk(value.entity, depth + 1)

    for root in roots:
        walk(root, 0)
    return list(found.values())


def _folded(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold()).split())


def name_of(entity: Entity | ProductView) -> str | None:
    value = next((v.data for v in entity.values("name") if isinstance(v.data, str) and v.data.strip()), None)
    return " ".join(value.split()) if value else None


def _matches_title(name: str | None, titles: Sequence[str]) -> bool:
    """The name is a run of whole words of a title ("Blue Kettle" in "Blue Kettle | Shop"), or a title is a run
    of whole words of the name; "Shop" does not match "Shopping bag"."""
    folded = f" {_folded(name or '')} "
    if len(folded.strip()) < 3:
        return False
    for title in (f" {_folded(t)} " for t in titles):
        if folded in title or (len(title.strip()) >= 3 and title in folded):
            return True
    return False


def _has(view: ProductView, key: str | tuple[str, ...]) -> bool:
    keys = (key,) if isinstance(key, str) else key
    return any(view.values(k) for k in keys)


def _comparable_url(url: str, base: str | None) -> str:
    absolute = urljoin(base, url.strip()) if base else url.strip()
    return absolute.split("#")[0].rstrip("/")


def view_of(candidate: Entity, page_urls: Sequence[str]) -> tuple[ProductView, str | None]:
    """The view of a candidate, and a note when a ProductGroup was resolved to one of its variants."""
    if candidate.is_a(("ProductGroup",)):
        variants = [v for v in candidate.entities("hasVariant") if v.is_a(PRODUCT_TYPES)]
        if not variants:
            return ProductView(candidate), None
        base = page_urls[0] if page_urls else None
        wanted = {_comparable_url(url, base) for url in page_urls}
        by_url = next(
            (
                v
                for v in variants
                if any(
                    isinstance(u.data, str) and _comparable_url(u.data, base) in wanted
                    for u in v.values("url")
                )
            ),
            None,
        )
        by_price = next(
            (v for v in variants if read_offer(ProductView(v, candidate)).amount is not None), None
        )
        chosen, reason = (
            (by_url, "its url is the page's")
            if by_url
            else (by_price, "the first with a price")
            if by_price
            else (variants[0], "the first")
        )
        note = (
            f"{candidate.locator}: ProductGroup with {len(variants)} variants; {chosen.locator} is the listing "
            f"({reason}); the group fills in what the variant does not say"
        )
        return ProductView(chosen, candidate), note
    group = next((g for g in candidate.entities("isVariantOf") if g.is_a(("ProductGroup",))), None)
    return ProductView(candidate, group), None


def select_primary(roots: Sequence[Entity], titles: Sequence[str], page_urls: Sequence[str]) -> Selection:
    candidates = product_candidates(roots)
    if not candidates:
        return Selection(None, (), ())
    scored = []
    for order, candidate in enumerate(candidates):
        view, group_note = view_of(candidate, page_urls)
        score = (
            _matches_title(name_of(view), titles),
            read_offer(view).amount is not None,
            sum(_has(view, key) for key in _COMPLETENESS),
            -_SYNTAX_RANK[candidate.syntax],
            -order,
        )
        scored.append((score, candidate, view, group_note))
    best_score, best, view, group_note = max(scored, key=lambda item: item[0])
    notes = [group_note] if group_note else []
    if len(candidates) > 1:
        skipped = "; ".join(f"{c.locator} ({name_of(c)!r})" for c in candidates if c is not best)
        notes.append(
            f"{len(candidates)} Product entities; primary {best.locator} ({name_of(view)!r}) chosen by title match "
            f"{'yes' if best_score[0] else 'no'}, price {'yes' if best_score[1] else 'no'}, completeness "
            f"{best_score[2]}, then syntax and document order; skipped: {skipped}"
        )
    return Selection(view, tuple(candidates), tuple(notes))
