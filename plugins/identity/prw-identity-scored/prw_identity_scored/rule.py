"""Identity rule ``scored_match@1``: a match probability for every candidate, and an automatic mapping only in
the auto-map band.

Every candidate the platform offers is compared with the listing (``features.compare``) and the generation's
model turns the comparison into a probability. The listing maps automatically to the best candidate when its
probability is at or above the band's ``auto_probability`` and the runner-up is at least ``auto_margin`` behind;
otherwise a reviewer decides, with the candidates in probability order and each one's findings beside it.
Candidates that strong identifiers name (``matched_on``) are left to ``strong_identifier_match``: this rule
scores titles and decides only among ranked candidates.

The model and band are the catalog's generation when the platform passes one (``IdentityEvidence.generation``,
written by ``calibrate`` and made live through an improvement), else the generation this version ships.
"""

from __future__ import annotations

from collections.abc import Sequence

from prw_identity_scored.calibration import calibrate
from prw_identity_scored.features import Title, compare
from prw_identity_scored.generation import Generation, default_generation
from prw_platform.plugins import (
    Calibration,
    CandidateScore,
    IdentityEvidence,
    IdentityVerdict,
    LabelledListing,
)

#: Parsed catalog generations kept per rule instance (a generation is immutable: its fingerprint names it).
_PARSED_LIMIT = 64


class ScoredMatch:
    name = "scored_match"
    version = "1"

    def __init__(self, generation: Generation | None = None) -> None:
        self.generation = generation or default_generation()
        self._parsed: dict[str, Generation] = {}
        self._last: tuple[object, tuple[CandidateScore, ...]] | None = None

    def generation_for(self, evidence: IdentityEvidence) -> Generation:
        """The catalog's generation when the platform passes one, else this rule's own."""
        document = evidence.generation
        if document is None:
            return self.generation
        key = str(document.get("fingerprint"))
        parsed = self._parsed.get(key)
        if parsed is None:
            parsed = Generation.from_json(document)
            if len(self._parsed) >= _PARSED_LIMIT:
                self._parsed.clear()
            self._parsed[key] = parsed
        return parsed

    def score(self, evidence: IdentityEvidence) -> tuple[CandidateScore, ...]:
        return self._score(evidence, self.generation_for(evidence))

    def calibrate(self, labelled: Sequence[LabelledListing], *, promise: float, number: int) -> Calibration:
        return calibrate(labelled, promise=promise, number=number)

    def decide(self, evidence: IdentityEvidence) -> IdentityVerdict | None:
        generation = self.generation_for(evidence)
        scores = sorted(self._score(evidence, generation), key=lambda s: (-s.probability, s.item_id))
        if not scores:
            return None
        best = scores[0]
        runner_up = scores[1].probability if len(scores) > 1 else 0.0
        bands = generation.bands
        if best.probability < bands.auto_probability or best.probability - runner_up < bands.auto_margin:
            return None
        rationale = (
            f"match probability {best.probability:.3f} (auto-map band ≥ {bands.auto_probability:.3f}, "
            f"runner-up {runner_up:.3f}; generation {generation.number}): {'; '.join(best.evidence)}"
        )
        return IdentityVerdict(best.item_id, rationale, probability=best.probability, evidence=best.evidence)

    def _score(self, evidence: IdentityEvidence, generation: Generation) -> tuple[CandidateScore, ...]:
        ranked = [c for c in evidence.candidates if not c.matched_on]
        if not ranked or not evidence.title:
            return ()
        key = (
            evidence.title,
            evidence.brand,
            generation.fingerprint,
            frozenset((c.item_id, c.title) for c in ranked),
        )
        if self._last is not None and self._last[0] == key:
            # decide() right after score() on the same listing and candidates (the platform orders them first)
            return self._last[1]
        listing = Title.of(evidence.title, evidence.brand)
        comparisons = compare(listing, [Title.of(c.title, c.brand) for c in ranked])
        probabilities = generation.probabilities([c.values for c in comparisons])
        scores = tuple(
            CandidateScore(candidate.item_id, round(p, 6), c.findings)
            for candidate, c, p in zip(ranked, comparisons, probabilities, strict=True)
        )
        self._last = (key, scores)
        return scores
