"""``prw eval extraction``: an annotated page set, the predictions read from what ``prw extract`` produces for
each page, and the benchmark's scores.

A dataset directory holds ``ground-truth.json`` (page id -> attribute -> list of true values, and the page's
``url``) and ``html/<page id>.html`` or ``html/<page id>.html.gz``: the layout of Zyte's product extraction
benchmark. Every page runs through the same ``DryRun`` as ``prw extract`` (plugins loaded once, one process);
with ``strip_markup`` each page first loses its structured markup and meta tags (``prw_cli.evaluation.strip``).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prw_cli.commands.extract import DryRun, FileFailed
from prw_cli.evaluation.metric import MATCHING, AttributeResult, evaluate
from prw_cli.evaluation.strip import strip_markup

#: The attributes a prediction is read for, in the order they are reported.
ATTRIBUTES = ("price", "sku", "availability", "brand", "gtin", "mpn", "InStock", "OutOfStock")
_IDENTIFIERS = {"sku": "core:sku", "brand": "core:brand", "gtin": "core:gtin", "mpn": "core:mpn"}
#: The benchmark attribute a claim attribute is scored as.
BENCHMARK_ATTRIBUTES = {
    "core:price": "price",
    "core:availability": "availability",
    **{v: k for k, v in _IDENTIFIERS.items()},
}
_STRIPPED_MEDIA_TYPE = "text/html; charset=utf-8"
# The benchmark's availability has two values; the platform's vocabulary is finer.
_OUT_OF_STOCK = frozenset({"out_of_stock", "discontinued"})
_IN_STOCK = frozenset({"in_stock", "limited", "preorder", "backorder"})


class DatasetError(Exception):
    """The directory is not an annotated page set."""


@dataclass(frozen=True, slots=True)
class Page:
    page_id: str
    url: str | None
    path: Path
    truth: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Prediction:
    value: str | None = None
    evidence: str | None = None
    #: The profile's weighed confidence in the value (None: the value is the adapter's listing field).
    confidence: float | None = None
    #: The profile published the value (False: withheld under its threshold for review, or not the profile's: the
    #: adapter's listing field).
    published: bool = False


@dataclass(frozen=True, slots=True)
class FiredRule:
    """An adapter rule that changed a benchmark attribute's value on a page: the value without and with it."""

    rule: str
    attribute: str
    before: str | None
    after: str | None


@dataclass(frozen=True, slots=True)
class PageResult:
    page: Page
    adapter: str | None
    error: str | None
    predictions: Mapping[str, Prediction] = field(default_factory=dict)
    rules: tuple[FiredRule, ...] = ()

    def predicted(self, attribute: str) -> str | None:
        return self.predictions.get(attribute, Prediction()).value


def load_dataset(directory: Path) -> list[Page]:
    truth_file = directory / "ground-truth.json"
    try:
        annotations = json.loads(truth_file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise DatasetError(f"{truth_file} does not exist: not an annotated page set") from exc
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{truth_file} cannot be read as JSON: {exc}") from exc
    if not isinstance(annotations, dict):
        raise DatasetError(f"{truth_file} is not an object of page id -> annotations")
    pages = []
    for page_id, annotation in sorted(annotations.items()):
        path = _page_file(directory / "html", page_id)
        truth = {
            attribute: tuple(str(value) for value in annotation.get(attribute, ())) for attribute in MATCHING
        }
        url = annotation.get("url")
        pages.append(Page(page_id, url if isinstance(url, str) else None, path, truth))
    return pages


def _page_file(html: Path, page_id: str) -> Path:
    for name in (f"{page_id}.html.gz", f"{page_id}.html"):
        if (html / name).is_file():
            return html / name
    return html / f"{page_id}.html.gz"  # missing: its row says so


def read_page(page: Page) -> bytes:
    data = page.path.read_bytes()
    return gzip.decompress(data) if page.path.name.endswith(".gz") else data


def run_page(dry_run: DryRun, page: Page, strip: bool = False) -> PageResult:
    """The page through the adapter and the profile; a failure (even an adapter bug) is the page's row.
    ``strip``: without its structured markup and meta tags, re-encoded as UTF-8."""
    try:
        data = read_page(page)
        media_type = "text/html"
        if strip:
            data, media_type = strip_markup(data), _STRIPPED_MEDIA_TYPE
        document = dry_run.run_bytes(data, page.path, media_type, page.url)
    except FileFailed as failed:
        return PageResult(page, None, f"{failed.code}: {failed.message}")
    except OSError as exc:
        return PageResult(page, None, f"FILE_UNREADABLE: {page.path}: {exc}")
    except Exception as exc:  # an adapter bug: counted as no prediction, reported
        return PageResult(page, None, f"ADAPTER_BUG: {type(exc).__name__}: {exc}")
    return PageResult(page, document["adapter"], None, predictions(document), fired_rules(document))


def fired_rules(document: Mapping[str, Any]) -> tuple[FiredRule, ...]:
    """The adapter's rules that changed a scored attribute, values as text."""
    return tuple(
        FiredRule(
            row["rule"],
            BENCHMARK_ATTRIBUTES[row["attribute"]],
            None if row["before"] is None else str(row["before"]),
            None if row["after"] is None else str(row["after"]),
        )
        for row in document.get("rules_fired", [])
        if row["attribute"] in BENCHMARK_ATTRIBUTES
    )


def run_all(
    dry_run: DryRun,
    pages: Sequence[Page],
    progress: Callable[[Page], None] | None = None,
    strip: bool = False,
) -> Iterator[PageResult]:
    for page in pages:
        result = run_page(dry_run, page, strip)
        if progress is not None:
            progress(page)
        yield result


def predictions(document: Mapping[str, Any]) -> dict[str, Prediction]:
    """One predicted value per attribute from a ``prw extract`` document: price and availability as the
    profile normalized them (else the listing's), identifiers as the first claim."""
    published = {row["key"]: (row, True) for row in document["normalized"]}
    withheld = {row["key"]: (row, False) for row in document.get("withheld", [])}
    normalized = withheld | published
    listing = document["listing"]
    found: dict[str, Prediction] = {}
    price = normalized.get("core:price")
    if price is not None:
        row, is_published = price
        found["price"] = Prediction(
            str(row["value"]), ", ".join(row["evidence_locators"]), row.get("confidence"), is_published
        )
    elif listing["price"] is not None:
        found["price"] = Prediction(str(listing["price"]), "listing.price")
    availability = normalized.get("core:availability")
    value, evidence, confidence, is_published = (
        (
            availability[0]["value"],
            ", ".join(availability[0]["evidence_locators"]),
            availability[0].get("confidence"),
            availability[1],
        )
        if availability is not None
        else (listing["availability"], "listing.availability", None, False)
    )
    stock = "OutOfStock" if value in _OUT_OF_STOCK else "InStock" if value in _IN_STOCK else None
    if stock is not None:
        found["availability"] = Prediction(stock, evidence, confidence, is_published)
        found[stock] = Prediction(stock, evidence, confidence, is_published)
    for attribute, claim_attribute in _IDENTIFIERS.items():
        claim = next((c for c in document["claims"] if c["attribute"] == claim_attribute), None)
        if claim is not None:
            found[attribute] = Prediction(
                str(claim["value"]), claim["evidence_locator"], claim.get("confidence")
            )
    return found


def score(results: Sequence[PageResult], n_bootstrap: int = 1000) -> list[AttributeResult]:
    return [
        evaluate(attribute, [(r.page.truth[attribute], r.predicted(attribute)) for r in results], n_bootstrap)
        for attribute in ATTRIBUTES
    ]


def outcome(result: PageResult, attribute: str) -> str:
    """``tp``, ``fp``, ``fn``, ``fp+fn`` (a wrong value where one is expected) or ``-`` (nothing either way)."""
    tp, fp, fn = MATCHING[attribute](result.page.truth[attribute], result.predicted(attribute))
    return "tp" if tp else "fp+fn" if fp and fn else "fp" if fp else "fn" if fn else "-"


#: The attributes whose confidence and publication the CSV also shows (the offer's, which a profile withholds).
RATED = ("price", "availability")


def csv_header() -> list[str]:
    header = ["page_id", "url", "adapter", "error"]
    for attribute in ATTRIBUTES[:6]:
        header += [
            f"{attribute}_predicted",
            f"{attribute}_expected",
            f"{attribute}_outcome",
            f"{attribute}_evidence",
        ]
    for attribute in RATED:
        header += [f"{attribute}_confidence", f"{attribute}_published"]
    return header


def csv_row(result: PageResult) -> list[str]:
    row = [result.page.page_id, result.page.url or "", result.adapter or "", result.error or ""]
    for attribute in ATTRIBUTES[:6]:
        prediction = result.predictions.get(attribute, Prediction())
        row += [
            prediction.value or "",
            " | ".join(result.page.truth[attribute]),
            outcome(result, attribute),
            prediction.evidence or "",
        ]
    for attribute in RATED:
        prediction = result.predictions.get(attribute, Prediction())
        confidence = "" if prediction.confidence is None else f"{prediction.confidence:.4f}"
        row += [confidence, "yes" if prediction.published else "no"]
    return row
