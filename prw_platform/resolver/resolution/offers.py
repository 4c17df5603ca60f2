"""An offer the profile does not trust enough goes to review instead of being published (``offer_uncertain``).

A profile that publishes by confidence (``np_core@2``: ``publication_thresholds``) withholds an offer value whose
weighed confidence is under its threshold (``Normalization.withheld``: price, currency or availability). Before
identity is decided, ``offer_uncertain`` opens an ``offer_uncertain`` review case for such a listing: the case's
evidence has every claim with its source and confidence (the competing values and where each is) and the
profile's problems (``UNCERTAIN_VALUE`` with the confidence and the threshold, ``CONFLICTING_CLAIMS`` with each
value's confidence). The listing is recorded without the withheld values, price and currency as a pair: they stay
claims until a reviewer confirms one. The candidates are the items the listing's identifiers name, else the ranked
ones, so the reviewer settles identity in the same decision.

A reviewer's choice of the offer values on such a case (``offer_choices``) is kept when the same listing is
resolved again (a new capture of it, or a replay): ``with_reviewed_offer`` puts the chosen values (none after
``not_an_offer``) in place of the withheld ones when the page's offer claims are exactly the values the reviewer
chose among, and identity goes on without a new case, the reviewer's decision among its evidence. Changed claims
(another value, one more or one less) open a new case.
"""

from __future__ import annotations

from dataclasses import Field, replace
from typing import Any, ClassVar, Protocol, TypeVar

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection
from prw_platform.plugins import ListingFields, Normalization, NormalizedAttribute
from prw_platform.resolver.decisions import (
    AmbiguousIdentity,
    Candidate,
    ListingObservation,
    find_item_by_identifiers,
)
from prw_platform.resolver.decisions.cases import case_ids_of_listing
from prw_platform.resolver.decisions.facts import listing_id_for
from prw_platform.resolver.decisions.offer_choices import OfferChoice, offer_claims, stored_offer_choice
from prw_platform.resolver.decisions.records import latest_human_detail
from prw_platform.resolver.resolution.candidates import rank_candidates
from prw_platform.resolver.resolution.documents import claim_documents
from prw_platform.resolver.resolution.extraction import ExtractionRun
from prw_platform.resolver.resolution.profiles import NormalizationRun

KIND = "offer_uncertain"
PRICE, CURRENCY, AVAILABILITY = "core:price", "core:currency", "core:availability"
GTIN, BRAND, MPN, TITLE = "core:gtin", "core:brand", "core:mpn", "core:title"
OFFER_KEYS = (PRICE, CURRENCY, AVAILABILITY)

Decision = TypeVar("Decision", covariant=True)
Context = TypeVar("Context", bound="IdentityContext[Any]")


class IdentityContext(Protocol[Decision]):
    """What the identity stage knows of one capture (its ``_Context``): a dataclass, so a copy with the withheld
    values left out opens the case."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def extraction(self) -> ExtractionRun: ...

    @property
    def normalization(self) -> NormalizationRun | None: ...

    @property
    def result(self) -> Normalization | None: ...

    @property
    def provenance(self) -> tuple[str, ...]: ...

    def observation(self) -> ListingObservation: ...

    def identifiers(self) -> dict[str, str | None]: ...

    def review(self, kind: str, reason: str, candidates: tuple[Candidate, ...]) -> Decision: ...


def offer_uncertain(
    conn: Connection, stream: StreamKey, context: IdentityContext[Decision]
) -> Decision | None:
    """The ``offer_uncertain`` review decision when the profile withheld an offer value; None otherwise (identity
    goes on). Call with the stream cursor locked, like identity."""
    result, normalization = context.result, context.normalization
    withheld = [a for a in (result.withheld if result else ()) if a.key in OFFER_KEYS]
    if result is None or normalization is None or not withheld:
        return None
    left_out = {a.key for a in withheld}
    if left_out & {PRICE, CURRENCY}:
        left_out |= {PRICE, CURRENCY}  # a price never travels without its currency, nor a currency alone
    quiet = replace(
        context,
        extraction=_without_listing_values(context.extraction, left_out),
        normalization=replace(normalization, normalization=_without_values(result, left_out)),
    )
    return quiet.review(KIND, _reason(withheld), _candidates(conn, stream, context))


def with_reviewed_offer(conn: Connection, stream: StreamKey, context: Context) -> Context:
    """``context`` with the reviewer's latest offer choice for its listing in place of the withheld offer values,
    when the profile withheld one and the page's offer claims are the ones the reviewer chose among; ``context``
    itself otherwise. Call with the stream cursor locked, before ``offer_uncertain``."""
    result, normalization = context.result, context.normalization
    if result is None or normalization is None or not any(a.key in OFFER_KEYS for a in result.withheld):
        return context
    observation = context.observation()
    listing_id = listing_id_for(observation.source_id, observation.natural_key)
    choice = _latest_choice(conn, stream.tenant_id, listing_id)
    if choice is None or choice.claims != offer_claims(claim_documents(context.extraction.claims)):
        return context
    left_out = {a.key for a in result.withheld if a.key in OFFER_KEYS} | set(choice.keys)
    if left_out & {PRICE, CURRENCY}:
        left_out |= {PRICE, CURRENCY}
    settled = replace(result, attributes=tuple(a for a in result.attributes if a.key not in left_out))
    settled = replace(settled, withheld=tuple(a for a in result.withheld if a.key not in left_out))
    return replace(
        context,
        extraction=_with_listing_values(context.extraction, left_out, choice),
        normalization=replace(normalization, normalization=settled),
        provenance=(*context.provenance, *((choice.decision_id,) if choice.decision_id else ())),
    )


def _reason(withheld: list[NormalizedAttribute]) -> str:
    described = "; ".join(
        f"{a.key} {a.value} at confidence {a.confidence if a.confidence is not None else 'unknown'}"
        for a in withheld
    )
    return (
        f"the profile does not trust the offer enough to publish it ({described}): a reviewer confirms the "
        "listing's values from the claims and decides its item"
    )


def _without_values(result: Normalization, keys: set[str]) -> Normalization:
    """The normalization with ``keys`` withheld: a published price whose currency is withheld is withheld too."""
    moved = tuple(a for a in result.attributes if a.key in keys)
    return replace(
        result,
        attributes=tuple(a for a in result.attributes if a.key not in keys),
        withheld=(*result.withheld, *moved),
    )


def _without_listing_values(run: ExtractionRun, keys: set[str]) -> ExtractionRun:
    """The adapter's listing fields without the withheld values (identity falls back to them otherwise)."""
    extraction = run.extraction
    if extraction is None:
        return run
    listing = extraction.listing
    cleared = ListingFields(
        title=listing.title,
        url=listing.url,
        price=None if PRICE in keys else listing.price,
        currency=None if CURRENCY in keys else listing.currency,
        availability=None if AVAILABILITY in keys else listing.availability,
    )
    return replace(run, extraction=replace(extraction, listing=cleared))


def _with_listing_values(run: ExtractionRun, keys: set[str], choice: OfferChoice) -> ExtractionRun:
    """The adapter's listing fields with the reviewer's values for ``keys`` (None where the choice has none)."""
    extraction = run.extraction
    if extraction is None:
        return run
    listing, chosen = extraction.listing, choice.keys
    cleared = ListingFields(
        title=listing.title,
        url=listing.url,
        price=(choice.price if PRICE in chosen else None) if PRICE in keys else listing.price,
        currency=(choice.currency if CURRENCY in chosen else None) if CURRENCY in keys else listing.currency,
        availability=(choice.availability if AVAILABILITY in chosen else None)
        if AVAILABILITY in keys
        else listing.availability,
    )
    return replace(run, extraction=replace(extraction, listing=cleared))


def _candidates(conn: Connection, stream: StreamKey, context: IdentityContext[Any]) -> tuple[Candidate, ...]:
    """The items the listing's strong identifiers name (every one, when they name several), else the ranked
    candidates by brand and title."""
    ids = context.identifiers()
    try:
        match = find_item_by_identifiers(
            conn,
            stream.tenant_id,
            stream.catalog_id,
            gtin=ids.get(GTIN),
            brand=ids.get(BRAND),
            mpn=ids.get(MPN),
        )
    except AmbiguousIdentity as ambiguous:
        return tuple(
            Candidate(m.item_id, 1.0, f"{' and '.join(m.matched_on)} name this item")
            for m in ambiguous.matches
        )
    if match is not None and match.status == "active":
        return (Candidate(match.item_id, 1.0, f"{' and '.join(match.matched_on)} name this item"),)
    result = context.result
    title = result.get(TITLE) if result else None
    return rank_candidates(
        conn,
        stream.tenant_id,
        stream.catalog_id,
        brand=ids.get(BRAND),
        title=title.value if title is not None and isinstance(title.value, str) else None,
    )


def _latest_choice(conn: Connection, tenant_id: str, listing_id: str) -> OfferChoice | None:
    """The latest offer choice a person recorded on a review case of the listing; None when there is none."""
    found = latest_human_detail(conn, tenant_id, case_ids_of_listing(conn, tenant_id, listing_id), "offer")
    return None if found is None else stored_offer_choice(found[1], found[0])
