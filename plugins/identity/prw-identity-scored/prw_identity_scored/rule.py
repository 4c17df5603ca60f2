"""Identity rule ``scored_match@1``: a match probability for every candidate, and an automatic mapping only in
the auto-map band.

Every candidate the platform offers is compared with the listing (``features.compare``) and the generation's
model turns the comparison into a probability. The listing maps automatically to the best candidate when its
probability is at or above the band's ``auto_probability`` and the runner-up is at least ``auto_margin`` behind;
otherwise a reviewer decides, with the candidates in probability order and each one's findings beside it.
Candidates that strong identifiers name (``matched_on``) are left to ``strong_identifier_match``: this rule
scores titles and decides only among ranked candidates.
"""

from __future__ import annotations

from prw_identity_scored.features import Title, compare
from prw_identity_scored.generation import Generation, default_generation
from prw_platform.plugins import CandidateScore, IdentityEvidence, IdentityVerdict


class ScoredMatch:
    name = "scored_match"
    version = "1"

    def __init__(self, generation: Generation | None = None) -> None:
        self.generation = generation or default_generation()

    def score(self, evidence: IdentityEvidence) -> tuple[CandidateScore, ...]:
        ranked = [c for c in evidence.candidates if not c.matched_on]
        if not ranked or not evidence.title:
            return ()
        listing = Title.of(evidence.title, evidence.brand)
        titles = [Title.of(c.title, c.brand) for c in ranked]
        return tuple(
            CandidateScore(
                candidate.item_id,
                round(self.generation.probability(comparison.values), 6),
                comparison.findings,
            )
            for candidate, comparison in zip(ranked, compare(listing, titles), strict=True)
        )

    def decide(self, evidence: IdentityEvidence) -> IdentityVerdict | None:
        scores = sorted(self.score(evidence), key=lambda s: (-s.probability, s.item_id))
        if not scores:
            return None
        best = scores[0]
        runner_up = scores[1].probability if len(scores) > 1 else 0.0
        bands = self.generation.bands
        if best.probability < bands.auto_probability or best.probability - runner_up < bands.auto_margin:
            return None
        rationale = (
            f"match probability {best.probability:.3f} (auto-map band ≥ {bands.auto_probability:.3f}, "
            f"runner-up {runner_up:.3f}; generation {self.generation.number}): {'; '.join(best.evidence)}"
        )
        return IdentityVerdict(best.item_id, rationale, probability=best.probability, evidence=best.evidence)
