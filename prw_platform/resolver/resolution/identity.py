"""Identity (if_resolution_job, identity stage): turn one capture's results into exactly one decision command.

- A strong identifier (GTIN, else brand + MPN) names an active item, or an identity rule plugin picks one of the
  ranked candidates → ``MapListing`` (actor ``rule:<rule pin>``; the built-in ``strong_identifier_match@1`` maps
  what the identifiers alone settle, ``prw_platform.plugins.builtin.strong_identifier``). The installed rules are
  asked in order (``PluginRegistry.identity_rules``); the first verdict naming one of the offered items wins.
- No item has them, and the profile's ``identity_keys`` are satisfied → ``CreateItemAndMap`` (rule
  ``create_on_identity_keys``).
- Otherwise → ``OpenReviewCase`` (status awaiting_human, rule ``review_required``) with the claims, the results
  and ranked candidates. The case ``kind`` says why: ``no_adapter``, ``extraction_failed``,
  ``normalization_failed``, ``conflicting_identifiers`` (the page states two values of an identifier),
  ``ambiguous_identity`` (the identifiers name different items), ``retired_item`` (INV-07: never mapped
  automatically), ``no_strong_identifier``.

Commands are built only from the stored capture, the job and the deterministic extraction and normalization of its
stored bytes, plus the catalog state read under the stream cursor lock; the idempotency key is derived from the
job id. The same key therefore always comes with the same command (a changed command would be
IDEMPOTENCY_CONFLICT), and a redelivered job is absorbed by the inbox before it gets here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any, cast, get_args

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection
from prw_platform.plugins import (
    Availability,
    CandidateScore,
    IdentityCandidate,
    IdentityEvidence,
    IdentityRule,
    IdentityVerdict,
    Normalization,
    ScoringIdentityRule,
)
from prw_platform.resolver.decisions import (
    AmbiguousIdentity,
    Candidate,
    CreateItemAndMap,
    ItemFacts,
    ItemMatch,
    ListingObservation,
    MapListing,
    OpenReviewCase,
    find_item_by_identifiers,
)
from prw_platform.resolver.intake.captures import CaptureRecord
from prw_platform.resolver.resolution.candidates import MAX_CANDIDATES, candidate_pool
from prw_platform.resolver.resolution.documents import (
    attribute_documents,
    claim_documents,
    json_value,
    problem_documents,
)
from prw_platform.resolver.resolution.extraction import ExtractionRun, StageError
from prw_platform.resolver.resolution.generations import generation_documents, rule_pin
from prw_platform.resolver.resolution.offers import offer_uncertain, with_reviewed_offer
from prw_platform.resolver.resolution.profiles import NormalizationRun, stage_outcome

RULE_MAP = "rule:strong_identifier_match@1"
RULE_CREATE = "rule:create_on_identity_keys@1"
RULE_REVIEW = "rule:review_required@1"

GTIN, BRAND, MPN, TITLE = "core:gtin", "core:brand", "core:mpn", "core:title"
PRICE, CURRENCY, AVAILABILITY = "core:price", "core:currency", "core:availability"
#: Item columns (title, brand, identifiers) and offer fields (they belong to the listing, not the item).
_NOT_ITEM_ATTRIBUTES = frozenset({GTIN, BRAND, MPN, TITLE, PRICE, CURRENCY, AVAILABILITY})
_IDENTIFIERS = (GTIN, BRAND, MPN)
_CONFLICTING_CLAIMS = "CONFLICTING_CLAIMS"
_AVAILABILITIES: frozenset[str] = frozenset(get_args(Availability))

Command = CreateItemAndMap | MapListing | OpenReviewCase
#: The rule that decided, its verdict, and the candidate it names.
RuledMatch = tuple[IdentityRule, IdentityVerdict, IdentityCandidate]


@dataclass(frozen=True, slots=True)
class IdentityDecision:
    command: Command
    #: How identity was resolved, stored with the results (``resolution_result.identity``).
    summary: dict[str, Any]


def idempotency_key(job_id: str) -> str:
    """if_resolution_job: a redelivered job must not decide twice; the key is derived from the job id."""
    return f"resolution:{job_id}"


def resolve_identity(
    conn: Connection,
    stream: StreamKey,
    job_id: str,
    capture: CaptureRecord,
    extraction: ExtractionRun,
    normalization: NormalizationRun | None,
    rules: Sequence[IdentityRule],
    provenance: tuple[str, ...] = (),
    generation: int | None = None,
) -> IdentityDecision:
    """Call with the stream cursor locked, so no other decision of the catalog changes identities meanwhile.
    ``provenance``: references recorded with the decision's evidence beside the capture (an apply replay's
    ``rpl_...`` and ``imp_...``); ``generation``: the identity generation a replay pins (None: the catalog's live
    generations)."""
    context = _Context(job_id, capture, extraction, normalization, tuple(rules), provenance, generation)
    result = context.result
    if normalization is None or result is None:
        reason = _failure_reason(extraction, normalization)
        return context.review(stage_outcome(extraction, normalization), reason, ())
    context = with_reviewed_offer(conn, stream, context)
    uncertain = offer_uncertain(conn, stream, context)
    if uncertain is not None:
        return uncertain
    ids = context.identifiers()
    try:
        match = find_item_by_identifiers(
            conn, stream.tenant_id, stream.catalog_id, gtin=ids[GTIN], brand=ids[BRAND], mpn=ids[MPN]
        )
    except AmbiguousIdentity as ambiguous:
        candidates = tuple(
            Candidate(m.item_id, 1.0, f"{' and '.join(m.matched_on)} name this item")
            for m in ambiguous.matches
        )
        return context.review("ambiguous_identity", str(ambiguous), candidates)
    conflicting = sorted(
        {
            p.attribute
            for p in result.problems
            if p.code == _CONFLICTING_CLAIMS and p.attribute in _IDENTIFIERS
        }
    )
    if conflicting:
        # A reviewer picks the value first: an automatic rule would act on the profile's tie-break alone.
        reason = f"the page states conflicting values of {', '.join(conflicting)}"
        chosen = (
            Candidate(match.item_id, 1.0, "the chosen identifier values name this item") if match else None
        )
        return context.review("conflicting_identifiers", reason, (chosen,) if chosen else ())
    if match is not None:
        return _named_item(context, match)
    return _create_or_review(conn, stream, context, normalization, result)


def _named_item(context: _Context, match: ItemMatch) -> IdentityDecision:
    if match.status != "active":
        reason = f"the identifiers name item {match.item_id}, which is {match.status} (INV-07)"
        return context.review("retired_item", reason, ())
    named = IdentityCandidate(
        match.item_id, 1.0, f"{' and '.join(match.matched_on)} name this item", matched_on=match.matched_on
    )
    ruled = context.ask_rules((named,))
    if ruled is not None:
        return _map(context, *ruled)
    # No installed rule maps it; creating another item with the same identifiers would break them.
    reason = (
        f"{' and '.join(match.matched_on)} name item {match.item_id} and no installed identity rule maps it"
    )
    return context.review("no_rule_decided", reason, (Candidate(named.item_id, named.score, named.reason),))


def ask_rules(
    rules: Sequence[IdentityRule],
    evidence: IdentityEvidence,
    generations: Mapping[str, Mapping[str, Any]] | None = None,
) -> RuledMatch | None:
    """The first rule's verdict that names one of the evidence's candidates (in rule order), with that candidate.
    Each rule is given the catalog's generation of itself (``generations``, by rule pin), if any."""
    offered = {c.item_id: c for c in evidence.candidates}
    for rule in rules:
        verdict = rule.decide(_for_rule(rule, evidence, generations))
        if verdict is not None and verdict.item_id in offered:
            return rule, verdict, offered[verdict.item_id]
    return None


def _for_rule(
    rule: IdentityRule, evidence: IdentityEvidence, generations: Mapping[str, Mapping[str, Any]] | None
) -> IdentityEvidence:
    document = (generations or {}).get(rule_pin(rule))
    return evidence if document is None else replace(evidence, generation=document)


def candidate_identity(
    conn: Connection,
    stream: StreamKey,
    rules: Sequence[IdentityRule],
    listing: IdentityEvidence,
    generation: int | None = None,
) -> tuple[tuple[Candidate, ...], RuledMatch | None]:
    """A listing no strong identifier settles: its ranked review-case candidates, and the first identity rule's
    verdict on them (None: a reviewer decides). ``prw eval matching`` measures exactly this path.

    The candidate pool is offered to the rules; when a scoring rule is installed (the first in rule order
    scores), the pool is re-ordered by its match probability and each review-case candidate carries the
    probability as its score and the rule's findings as its reason."""
    pool = candidate_pool(conn, stream.tenant_id, stream.catalog_id, brand=listing.brand, title=listing.title)
    offered = tuple(
        IdentityCandidate(
            p.candidate.item_id, p.candidate.score, p.candidate.reason, p.item.title, p.item.brand
        )
        for p in pool
    )
    evidence = replace(listing, candidates=offered)
    generations = generation_documents(conn, stream.tenant_id, stream.catalog_id, generation)
    scores = _scores(rules, evidence, generations)
    if scores is None:
        candidates = tuple(p.candidate for p in pool[:MAX_CANDIDATES])
        return candidates, ask_rules(rules, evidence, generations)
    ordered = tuple(sorted(offered, key=lambda c: (-scores[c.item_id].probability, c.item_id)))
    candidates = tuple(
        Candidate(c.item_id, scores[c.item_id].probability, _scored_reason(scores[c.item_id]))
        for c in ordered[:MAX_CANDIDATES]
    )
    return candidates, ask_rules(rules, replace(evidence, candidates=ordered), generations)


def _scores(
    rules: Sequence[IdentityRule], evidence: IdentityEvidence, generations: Mapping[str, Mapping[str, Any]]
) -> dict[str, CandidateScore] | None:
    """The first scoring rule's score of every offered candidate (a candidate it left out scores 0)."""
    scorer = next((rule for rule in rules if isinstance(rule, ScoringIdentityRule)), None)
    if scorer is None or not evidence.candidates:
        return None
    given = {s.item_id: s for s in scorer.score(_for_rule(scorer, evidence, generations))}
    return {c.item_id: given.get(c.item_id, CandidateScore(c.item_id, 0.0)) for c in evidence.candidates}


def _scored_reason(score: CandidateScore) -> str:
    return "; ".join((f"match probability {score.probability:.3f}", *score.evidence))


def rule_actor(rule: IdentityRule) -> str:
    return f"rule:{rule_pin(rule)}"


def _map(
    context: _Context, rule: IdentityRule, verdict: IdentityVerdict, candidate: IdentityCandidate
) -> IdentityDecision:
    command = MapListing(
        listing=context.observation(),
        item_id=verdict.item_id,
        actor=rule_actor(rule),
        rationale=verdict.rationale,
        idempotency_key=idempotency_key(context.job_id),
        evidence=(context.capture.capture_id, *context.provenance),
    )
    details: dict[str, Any] = {"matched_item": verdict.item_id, "matched_on": list(candidate.matched_on)}
    if not candidate.matched_on:
        details["candidate"] = {"score": candidate.score, "reason": candidate.reason}
    if verdict.probability is not None:
        details["probability"] = verdict.probability
        details["evidence"] = list(verdict.evidence)
    return context.decided(command, details)


def _create_or_review(
    conn: Connection,
    stream: StreamKey,
    context: _Context,
    normalization: NormalizationRun,
    result: Normalization,
) -> IdentityDecision:
    """No item has the listing's identifiers: create one only when the profile's identity keys are present."""
    ids = context.identifiers()
    profile = normalization.profile
    satisfied = [keys for keys in profile.identity_keys if all(result.get(k) for k in keys)]
    strong = bool(ids[GTIN]) or bool(ids[BRAND] and ids[MPN])
    if satisfied and strong:
        command = CreateItemAndMap(
            item=ItemFacts(
                profile=normalization.pin,
                title=_text(result, TITLE),
                brand=ids[BRAND],
                gtin=ids[GTIN],
                mpn=ids[MPN],
                attributes=tuple(a for a in result.attributes if a.key not in _NOT_ITEM_ATTRIBUTES),
            ),
            listing=context.observation(),
            actor=RULE_CREATE,
            rationale=f"no item has these identifiers; {normalization.pin} identity keys "
            f"{' + '.join(satisfied[0])} are present",
            idempotency_key=idempotency_key(context.job_id),
            evidence=(context.capture.capture_id, *context.provenance),
        )
        return context.decided(command, {"identity_keys_satisfied": [list(keys) for keys in satisfied]})
    needed = " | ".join(" + ".join(keys) for keys in profile.identity_keys)
    evidence = context.evidence(())
    candidates, ruled = candidate_identity(conn, stream, context.rules, evidence, context.generation)
    if ruled is not None:
        return _map(context, *ruled)
    reason = (
        f"no item has a strong identifier of this listing and {normalization.pin} identity keys "
        f"({needed}) are not all present"
    )
    return context.review("no_strong_identifier", reason, candidates)


@dataclass(frozen=True, slots=True)
class _Context:
    job_id: str
    capture: CaptureRecord
    extraction: ExtractionRun
    normalization: NormalizationRun | None
    rules: tuple[IdentityRule, ...]
    provenance: tuple[str, ...] = ()
    generation: int | None = None

    @property
    def result(self) -> Normalization | None:
        return self.normalization.normalization if self.normalization else None

    def identifiers(self) -> dict[str, str | None]:
        return {key: _text(self.result, key) for key in _IDENTIFIERS}

    def evidence(self, candidates: tuple[IdentityCandidate, ...]) -> IdentityEvidence:
        ids = self.identifiers()
        return IdentityEvidence(_text(self.result, TITLE), ids[BRAND], ids[GTIN], ids[MPN], candidates)

    def ask_rules(self, candidates: tuple[IdentityCandidate, ...]) -> RuledMatch | None:
        return ask_rules(self.rules, self.evidence(candidates))

    def observation(self) -> ListingObservation:
        """The listing as this capture shows it. Natural key and URL come from the capture row (the truth);
        offer fields from the profile's values (INV-02), else from the adapter's listing fields. Price and
        currency travel as a pair, so a price never gets a currency the profile refused to guess."""
        capture, result = self.capture, self.result
        listing = self.extraction.extraction.listing if self.extraction.extraction else None
        price: Decimal | None = None
        currency: str | None = None
        if result is not None and result.get(PRICE) is not None:
            price, currency = _decimal(result, PRICE), _text(result, CURRENCY)
        elif listing is not None:
            price, currency = listing.price, listing.currency
        url = capture.url or (listing.url if listing else None)
        return ListingObservation(
            source_id=capture.source_id,
            observed_at=capture.observed_at,
            capture_id=capture.capture_id,
            url=url,
            # Intake requires a native record id; a capture without one and without a URL (not written by
            # intake) is its own listing.
            native_record_id=capture.native_record_id or (None if url else capture.capture_id),
            title=_text(result, TITLE) or (listing.title if listing else None),
            price=price,
            currency=currency,
            availability=_availability(result) or (listing.availability if listing else None),
        )

    def decided(self, command: MapListing | CreateItemAndMap, details: dict[str, Any]) -> IdentityDecision:
        summary = {"rule": command.actor, "rationale": command.rationale, "identifiers": self.identifiers()}
        return IdentityDecision(command, summary | details)

    def review(self, kind: str, reason: str, candidates: tuple[Candidate, ...]) -> IdentityDecision:
        extraction, result = self.extraction, self.result
        error = extraction.error or (self.normalization.error if self.normalization else None)
        evidence = {
            "job_id": self.job_id,
            "capture_id": self.capture.capture_id,
            "reason": reason,
            "stage_outcome": stage_outcome(self.extraction, self.normalization),
            "adapter": extraction.adapter,
            "profile": self.normalization.pin if self.normalization else None,
            "identifiers": self.identifiers(),
            "claims": claim_documents(extraction.claims),
            "attributes": attribute_documents(result.attributes) if result else [],
            "problems": problem_documents(result.problems) if result else [],
            "diagnostics": json_value(list(extraction.diagnostics)),
            "error": _error(error),
        }
        command = OpenReviewCase(
            listing=self.observation(),
            kind=kind,
            actor=RULE_REVIEW,
            rationale=reason,
            idempotency_key=idempotency_key(self.job_id),
            candidates=candidates,
            case_evidence=evidence,
            evidence=(self.capture.capture_id, *self.provenance),
        )
        summary = {
            "rule": RULE_REVIEW,
            "kind": kind,
            "rationale": reason,
            "identifiers": self.identifiers(),
            "candidates": [{"item_id": c.item_id, "score": c.score, "reason": c.reason} for c in candidates],
        }
        return IdentityDecision(command, summary)


def _failure_reason(extraction: ExtractionRun, normalization: NormalizationRun | None) -> str:
    if extraction.stage_outcome == "no_adapter":
        return f"no installed adapter supports media type {extraction.capture_view.media_type}"
    if extraction.error is not None:
        return f"{extraction.adapter} failed: {extraction.error.code}: {extraction.error.message}"
    if normalization is not None and normalization.error is not None:
        return f"{normalization.pin} failed: {normalization.error.code}: {normalization.error.message}"
    return "the claims could not be normalized"


def _error(error: StageError | None) -> dict[str, str] | None:
    return None if error is None else {"code": error.code, "message": error.message}


def _text(result: Normalization | None, key: str) -> str | None:
    attribute = result.get(key) if result else None
    return attribute.value if attribute is not None and isinstance(attribute.value, str) else None


def _decimal(result: Normalization, key: str) -> Decimal | None:
    attribute = result.get(key)
    return attribute.value if attribute is not None and isinstance(attribute.value, Decimal) else None


def _availability(result: Normalization | None) -> Availability | None:
    value = _text(result, AVAILABILITY)
    return cast(Availability, value) if value in _AVAILABILITIES else None
