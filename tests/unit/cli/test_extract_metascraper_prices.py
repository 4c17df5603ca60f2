"""`prw extract --adapter auto` on the ten metascraper shopping pages gives the price of
expected_price.json for at least 8 of them. Run through the CLI (the adapter author's dry run), page by page."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prw_cli.main import app

FIXTURES = (
    Path(__file__).resolve().parents[3]
    / "plugins/adapters/prw-adapter-schemaorg/tests/fixtures/metascraper_shopping"
)
EXPECTED: dict[str, dict[str, object]] = {
    name.removesuffix(".html"): case
    for name, case in json.loads((FIXTURES / "expected_price.json").read_text()).items()
    if name.endswith(".html")
}
runner = CliRunner()

#: A page we knowingly do not get right, with the reason (the adapter's own tests carry the same strict xfail).
KNOWN_MISSES = {
    "etsy": "two structured prices: schema.org 43.90 EUR (kept) vs product:price:amount 48,00 USD (upstream's pick)",
    "wayfair": "upstream has no price test for this page (null); we return its JSON-LD price 111.99 USD",
}


def _cli_price(page: str) -> Decimal | None:
    result = runner.invoke(
        app, ["extract", "--adapter", "auto", str(FIXTURES / "html" / f"{page}.html"), "--json"]
    )
    assert result.exit_code == 0, result.output
    price = json.loads(result.stdout)["listing"]["price"]
    return None if price is None else Decimal(price)


def _expected(page: str) -> Decimal | None:
    value = EXPECTED[page]["price"]
    return None if value is None else Decimal(str(value))


@pytest.mark.parametrize(
    "page",
    [
        pytest.param(page, marks=pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[page]))
        if page in KNOWN_MISSES
        else page
        for page in sorted(EXPECTED)
    ],
)
def test_cli_price_matches_expected_price(page: str) -> None:
    assert _cli_price(page) == _expected(page)


def test_at_least_eight_of_ten_pages_match() -> None:
    matched = sum(_cli_price(page) == _expected(page) for page in EXPECTED)
    print(f"prw extract --adapter auto: {matched}/{len(EXPECTED)} metascraper prices match")
    assert len(EXPECTED) == 10
    assert matched >= 8
