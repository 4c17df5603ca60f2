"""``prw eval extraction --rules`` and ``--confidence``: what each adapter rule does to the scores, and what would
be published automatically at each confidence.

- **Rules.** For every rule an adapter reports (``Extraction.rules_fired``), the pages where it changed a scored
  attribute, and on those pages whether the change *fixed* the value (wrong or missing before, right after),
  *broke* it (right before, wrong or missing after) or neither. A rule that changes one page only stands out: a
  rule should be general, and one page is not evidence that it is.
- **Confidence.** For price and availability, at each threshold, the values whose weighed confidence reaches it
  (those a profile with that threshold would publish automatically): how many, how many of those are right
  (precision), and the share of the pages with a true value that they get right (coverage). The ``profile`` row
  is what the profile itself published (its own thresholds: ``Normalization.withheld`` is the rest).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prw_cli.evaluation.extraction import PageResult
from prw_cli.evaluation.metric import MATCHING

#: The thresholds a confidence report shows (the profile's own is added as its own row).
THRESHOLDS = (0.0, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
CONFIDENCE_ATTRIBUTES = ("price", "availability")


@dataclass(frozen=True, slots=True)
class RuleRow:
    rule: str
    attribute: str
    pages: int
    fixed: int
    broke: int

    @property
    def neither(self) -> int:
        return self.pages - self.fixed - self.broke


@dataclass(frozen=True, slots=True)
class ThresholdRow:
    attribute: str
    #: ``"0.75"``, or ``"profile"`` for what the profile published.
    threshold: str
    published: int
    correct: int
    support: int

    @property
    def precision(self) -> float:
        return self.correct / self.published if self.published else 1.0

    @property
    def coverage(self) -> float:
        return self.correct / self.support if self.support else 0.0


def _right(result: PageResult, attribute: str, value: str | None) -> bool:
    tp, _, _ = MATCHING[attribute](result.page.truth[attribute], value)
    return tp == 1


def rule_report(results: Sequence[PageResult]) -> list[RuleRow]:
    """One row per (rule, attribute), most pages first; a page counts once per rule."""
    changes: dict[tuple[str, str], dict[str, tuple[str | None, str | None]]] = {}
    for result in results:
        for fired in result.rules:
            pages = changes.setdefault((fired.rule, fired.attribute), {})
            first_before = pages.get(result.page.page_id, (fired.before, fired.after))[0]
            pages[result.page.page_id] = (first_before, fired.after)
    by_page = {result.page.page_id: result for result in results}
    rows = []
    for (rule, attribute), pages in changes.items():
        fixed = broke = 0
        for page_id, (before, after) in pages.items():
            was, now = _right(by_page[page_id], attribute, before), _right(by_page[page_id], attribute, after)
            fixed += now and not was
            broke += was and not now
        rows.append(RuleRow(rule, attribute, len(pages), fixed, broke))
    return sorted(rows, key=lambda row: (-row.pages, row.rule, row.attribute))


def confidence_report(results: Sequence[PageResult], attribute: str) -> list[ThresholdRow]:
    """Published values, right ones and support at each threshold, then the profile's own row."""
    support = sum(1 for result in results if result.page.truth[attribute])
    scored = [
        (prediction, _right(result, attribute, prediction.value))
        for result in results
        if (prediction := result.predictions.get(attribute)) is not None
    ]
    rows = []
    for threshold in THRESHOLDS:
        kept = [right for prediction, right in scored if (prediction.confidence or 0.0) >= threshold]
        rows.append(ThresholdRow(attribute, f"{threshold:.2f}", len(kept), sum(kept), support))
    published = [right for prediction, right in scored if prediction.published]
    rows.append(ThresholdRow(attribute, "profile", len(published), sum(published), support))
    return rows
