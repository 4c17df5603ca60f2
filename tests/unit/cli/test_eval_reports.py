"""``prw eval extraction --rules`` and ``--confidence``, on results built by hand: what each rule fixed or broke,
and the precision and coverage of what would be published at each threshold."""

from __future__ import annotations

from pathlib import Path

from prw_cli.evaluation.extraction import FiredRule, Page, PageResult, Prediction
from prw_cli.evaluation.reports import confidence_report, rule_report

EMPTY = {"sku": (), "availability": (), "brand": (), "gtin": (), "mpn": (), "InStock": (), "OutOfStock": ()}


def result(
    page_id: str, truth: tuple[str, ...], prediction: Prediction | None, *rules: FiredRule
) -> PageResult:
    page = Page(page_id, None, Path(f"{page_id}.html"), {"price": truth, **EMPTY})
    return PageResult(page, "pa_test@1.0.0", None, {"price": prediction} if prediction else {}, rules)


def test_a_rule_is_counted_per_page_with_what_it_fixed_and_broke() -> None:
    results = [
        result("a", ("200",), Prediction("200"), FiredRule("price.auction", "price", "150", "200")),
        result("b", ("10",), Prediction("12"), FiredRule("price.auction", "price", "10", "12")),
        result("c", ("5",), Prediction("5"), FiredRule("price.sale", "price", None, "5")),
        result("d", (), None, FiredRule("price.auction", "price", "7", None)),
    ]
    rows = {row.rule: row for row in rule_report(results)}
    auction = rows["price.auction"]
    assert (auction.pages, auction.fixed, auction.broke, auction.neither) == (3, 1, 1, 1)
    sale = rows["price.sale"]
    assert (sale.pages, sale.fixed, sale.broke) == (1, 1, 0)
    assert [row.rule for row in rule_report(results)] == ["price.auction", "price.sale"]


def test_two_firings_of_one_rule_on_a_page_count_once_from_the_first_before_to_the_last_after() -> None:
    fired = (
        FiredRule("price.og_sale", "price", "1148", None),
        FiredRule("price.og_sale", "price", None, "997"),
    )
    (row,) = rule_report([result("a", ("997",), Prediction("997"), *fired)])
    assert (row.pages, row.fixed) == (1, 1)


def test_confidence_report_counts_what_reaches_each_threshold() -> None:
    results = [
        result("a", ("10",), Prediction("10", confidence=0.95, published=True)),
        result("b", ("20",), Prediction("21", confidence=0.7, published=False)),
        result("c", ("30",), Prediction("30", confidence=0.8, published=True)),
        result("d", ("40",), None),
        result("e", (), Prediction("5", "listing.price")),  # the adapter's listing field: no confidence
    ]
    rows = {row.threshold: row for row in confidence_report(results, "price")}
    assert (rows["0.00"].published, rows["0.00"].correct, rows["0.00"].support) == (4, 2, 4)
    assert (rows["0.75"].published, rows["0.75"].correct) == (2, 2)
    assert (rows["0.75"].precision, rows["0.75"].coverage) == (1.0, 0.5)
    assert (rows["0.90"].published, rows["0.90"].coverage) == (1, 0.25)
    assert (rows["profile"].published, rows["profile"].correct) == (2, 2)
    assert rows["0.60"].precision == 2 / 3
