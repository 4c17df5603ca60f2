"""The profile's price normalization matches >= 95% of price-parser's examples.

A row matches when the amount equals the expected amount (no amount when the row expects none) and, where the
row gives a currency, the currency text read equals it. Rows are read with their ``currency_hint``, which plays
the role a ``core:currency`` claim plays in the profile (the currency text comes from the price text first, else
from the hint). The extra ``decimal_separator`` argument of two rows is NOT passed: the profile never has one.
Ranges are reported as PRICE_RANGE by design, so the rows that expect a range's first amount count as misses.
"""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest
from prw_profiles_core.price import read_price

FIXTURE = Path(__file__).parent / "fixtures" / "price_examples.csv"
REQUIRED_RATE = 0.95


def _rows() -> list[dict[str, str]]:
    with FIXTURE.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _matches(row: dict[str, str]) -> bool:
    reading = read_price(row["price_text"], row["currency_hint"] or None)
    expected_amount = Decimal(row["expected_amount"]) if row["expected_amount"] else None
    if reading.amount != expected_amount:
        return False
    return not row["expected_currency"] or reading.currency_text == row["expected_currency"]


def test_price_normalization_matches_at_least_95_percent_of_price_parser_examples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = _rows()
    assert len(rows) == 1176
    misses = [row for row in rows if not _matches(row)]
    rate = (len(rows) - len(misses)) / len(rows)
    with capsys.disabled():
        print(
            f"\nprice match rate: {len(rows) - len(misses)}/{len(rows)} = {rate:.4f} (required {REQUIRED_RATE})"
        )
    assert rate >= REQUIRED_RATE, [row["price_text"] for row in misses]


def test_the_match_rate_counts_a_wrong_currency_as_a_miss() -> None:
    row = {"price_text": "45,00 zł", "currency_hint": "", "expected_amount": "45", "expected_currency": "€"}
    assert not _matches(row)
    assert _matches({**row, "expected_currency": "zł"})


def test_the_match_rate_counts_a_wrong_amount_as_a_miss() -> None:
    row = {
        "price_text": "$1,299.00",
        "currency_hint": "",
        "expected_amount": "1.299",
        "expected_currency": "$",
    }
    assert not _matches(row)
    assert _matches({**row, "expected_amount": "1299"})
