"""Calibrating a catalog's generation on its reviewers' labels (``prw identity calibrate``).

Each labelled listing gives one row per candidate the reviewer chose (a match) or was shown and passed over (a
non-match), compared exactly as the rule compares at run time (against all the candidates offered, for the
"ahead of the others" features). The bands are estimated out of fold: the listings are dealt into ``FOLDS``
folds, each fold is scored by a model fitted on the others, and every listing's best candidate is judged against
its labels; the band of most coverage whose Clopper-Pearson lower bound meets the promise is chosen (else the one
whose measured precision does, which cannot be approved). The generation itself is then fitted on every label. Needs the ``fit`` extra.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prw_identity_scored.features import Title, compare
from prw_identity_scored.fitting import BandPoint, Outcome, band_curve, choose_band, fit_model, generation
from prw_identity_scored.generation import Generation
from prw_platform.plugins import BandEstimate, Calibration, LabelledListing, NotEnoughLabels

FOLDS = 5
#: The fewest labelled matches (listings a reviewer mapped to a shown candidate) a calibration accepts, and the
#: fewest passed-over candidates: below them the held-out estimate of a band says nothing.
MIN_MATCHES = 30
MIN_NON_MATCHES = 30
#: The band of a generation that no band meets the promise for: it never maps automatically.
NEVER = BandPoint(2.0, 1.0, 0, 0, 0, 1.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class _Listing:
    candidates: tuple[str, ...]
    rows: tuple[tuple[float, ...], ...]
    matches: frozenset[str]
    non_matches: frozenset[str]

    def labelled(self) -> list[tuple[tuple[float, ...], int]]:
        return [
            (row, 1 if item in self.matches else 0)
            for item, row in zip(self.candidates, self.rows, strict=True)
            if item in self.matches or item in self.non_matches
        ]


def _compared(labelled: LabelledListing) -> _Listing:
    evidence = labelled.evidence
    offered = [c for c in evidence.candidates if not c.matched_on]
    comparisons = compare(
        Title.of(evidence.title, evidence.brand), [Title.of(c.title, c.brand) for c in offered]
    )
    return _Listing(
        tuple(c.item_id for c in offered),
        tuple(c.values for c in comparisons),
        labelled.matches,
        labelled.non_matches,
    )


def _outcome(model: Generation, listing: _Listing) -> Outcome | None:
    if not listing.candidates:
        return None
    ranked = sorted(
        ((model.probability(row), item) for item, row in zip(listing.candidates, listing.rows, strict=True)),
        key=lambda pair: (-pair[0], pair[1]),
    )
    (best, item), runner_up = ranked[0], (ranked[1][0] if len(ranked) > 1 else 0.0)
    right = (
        True if item in listing.matches else False if item in listing.non_matches or listing.matches else None
    )
    return Outcome(best, best - runner_up, right)


def _fit(listings: Sequence[_Listing]) -> Generation:
    pairs = [pair for listing in listings for pair in listing.labelled()]
    baseline, trees = fit_model([row for row, _ in pairs], [label for _, label in pairs])
    return generation(0, baseline, trees, NEVER, {})


def _estimate(point: BandPoint) -> BandEstimate:
    return BandEstimate(
        point.probability,
        point.margin,
        point.mapped,
        point.right,
        point.wrong,
        point.precision,
        point.lower_bound,
        point.coverage,
    )


def calibrate(labelled: Sequence[LabelledListing], *, promise: float, number: int) -> Calibration:
    listings = [_compared(entry) for entry in labelled]
    matched = sum(1 for listing in listings if listing.matches & set(listing.candidates))
    passed_over = sum(len(listing.non_matches & set(listing.candidates)) for listing in listings)
    if matched < MIN_MATCHES or passed_over < MIN_NON_MATCHES:
        raise NotEnoughLabels(
            f"calibration needs at least {MIN_MATCHES} listings a reviewer mapped to a shown candidate and "
            f"{MIN_NON_MATCHES} candidates passed over; the labels have {matched} and {passed_over}",
            have=min(matched, passed_over),
            need=max(MIN_MATCHES, MIN_NON_MATCHES),
        )
    outcomes: list[Outcome] = []
    for fold in range(FOLDS):
        held_out = listings[fold::FOLDS]
        model = _fit([listing for index, listing in enumerate(listings) if index % FOLDS != fold])
        outcomes.extend(o for o in (_outcome(model, listing) for listing in held_out) if o is not None)
    curve = band_curve(outcomes, matched)
    chosen = choose_band(curve, promise)
    final = _fit(listings)
    fitted_on = {
        "labels": {"listings": len(listings), "matches": matched, "passed_over": passed_over},
        "band": f"out-of-fold ({FOLDS} folds) precision >= {promise}",
        "promise": promise,
    }
    document = generation(number, final.baseline, final.trees, chosen or NEVER, fitted_on).as_json()
    return Calibration(
        document=document,
        listings=len(listings),
        matches=matched,
        pairs=sum(len(listing.labelled()) for listing in listings),
        curve=tuple(_estimate(point) for point in curve),
        chosen=_estimate(chosen) if chosen else None,
    )
