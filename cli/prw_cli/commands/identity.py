"""``prw identity``: a catalog's identity generations, fitted on its reviewers' labels, and how precise the
automatic mappings have been since.

``prw identity calibrate --catalog C`` fits the installed scoring rule (``scored_match``) on the catalog's labels
(each decided review case: the candidate the reviewer chose a match, the others shown a non-match), estimates
every auto-map band on held-out folds, and records the result as a *proposed* generation: nothing maps differently
until an improvement that pins it (``identity_generation``) is dry-run, approved by a second operator and applied.
It prints the label counts, the precision (with its lower bound) and coverage per band, and the band chosen for
``--promise``. Too few labels: exit 1 with NOT_ENOUGH_LABELS naming how many it needs; nothing is written.

``prw identity generations --catalog C`` lists the catalog's generations; ``prw identity precision --catalog C``
shows each scoring rule's automatic mappings and how many a person later mapped elsewhere.
"""

from __future__ import annotations

import getpass
import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from prw_cli.output import results_console

if TYPE_CHECKING:
    from prw_platform.plugins import BandEstimate

app = typer.Typer(
    help="Identity generations per catalog: calibrate on reviewers' labels, list, live precision."
)
console = results_console()
err_console = Console(stderr=True)

#: Bands printed from the curve: the chosen one and, per margin, these probability thresholds' neighbours.
_SHOWN_THRESHOLDS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99)

CatalogOption = Annotated[str, typer.Option("--catalog", help="The catalog (cat_...).", show_default=False)]
TenantOption = Annotated[
    str | None,
    typer.Option(help="The catalog's tenant (default: PRW_PRODUCT_TENANT_ID).", show_default=False),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]


def _tenant(tenant: str | None) -> str:
    from prw_cli.settings import load_settings

    return tenant or load_settings().product_tenant_id


def _band_row(band: BandEstimate, chosen: bool) -> list[str]:
    return [
        "→" if chosen else "",
        f"{band.probability:.4f}",
        f"{band.margin:.2f}",
        str(band.mapped),
        f"{band.right}/{band.right + band.wrong}",
        f"{band.precision:.4f}",
        f"{band.precision_lower_bound:.4f}",
        f"{band.coverage:.3f}",
    ]


def _shown(curve: tuple[BandEstimate, ...], chosen: BandEstimate | None) -> list[BandEstimate]:
    """The chosen band and, at margin 0, the band nearest each of a few thresholds (the curve's shape)."""
    picked: dict[tuple[float, float], BandEstimate] = {}
    flat = sorted((b for b in curve if b.margin == 0.0), key=lambda b: b.probability)
    for threshold in _SHOWN_THRESHOLDS:
        above = [b for b in flat if b.probability >= threshold]
        if above:
            picked[(above[0].probability, 0.0)] = above[0]
    if chosen is not None:
        picked[(chosen.probability, chosen.margin)] = chosen
    return sorted(picked.values(), key=lambda b: (-b.probability, b.margin))


@app.command("calibrate")
def calibrate(
    catalog: CatalogOption,
    tenant: TenantOption = None,
    promise: Annotated[
        float,
        typer.Option(
            min=0.5, max=1.0, help="The precision the auto-map band promises (measured out of fold)."
        ),
    ] = 0.995,
    as_json: JsonOption = False,
) -> None:
    """Fit a proposed identity generation on the catalog's reviewer labels and print its bands."""
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap
    from prw_platform.errors import CodedError

    tenant_id = _tenant(tenant)
    actor = f"operator:cli:{getpass.getuser()}"
    with (
        bootstrap(load_settings(), migrate=True) as platform,
        err_console.status(f"fitting and cross-validating on the labels of {catalog} ..."),
    ):
        try:
            calibrated = platform.identity_generations.calibrate(
                tenant_id, catalog, promise=promise, actor=actor
            )
        except CodedError as refused:
            err_console.print(Text.assemble((refused.code, "red"), f": {refused}"))
            raise typer.Exit(1) from refused
    generation, calibration = calibrated.generation, calibrated.calibration
    if as_json:
        document: dict[str, Any] = {
            "catalog_id": catalog,
            "generation": generation.generation,
            "rule": generation.rule,
            "status": generation.status,
            "promise": promise,
            "labels": generation.labels,
            "chosen": _band_json(calibration.chosen) if calibration.chosen else None,
            "curve": [_band_json(b) for b in calibration.curve],
        }
        console.print_json(json.dumps(document))
        return
    console.print(
        f"{catalog}: {calibration.listings} labelled listings, {calibration.matches} matched to a shown "
        f"candidate, {calibration.pairs} labelled pairs",
        highlight=False,
    )
    table = Table("", "p ≥", "margin", "mapped", "right/judged", "precision", "lower bound", "coverage")
    for band in _shown(calibration.curve, calibration.chosen):
        table.add_row(*_band_row(band, band == calibration.chosen))
    console.print(table)
    if calibration.chosen is None:
        console.print(f"no band reaches precision {promise} on these labels: the generation maps nothing")
    status = "meets" if generation.meets_promise else "is under"
    console.print(
        f"proposed generation {generation.generation} of {generation.rule}: its lower bound {status} the promise"
        f" {promise}. To put it live, create an improvement with identity_generation {generation.generation},"
        " dry-run it, have a second operator approve it, then apply it.",
        highlight=False,
    )


def _band_json(band: BandEstimate) -> dict[str, Any]:
    return {
        "probability": band.probability,
        "margin": band.margin,
        "mapped": band.mapped,
        "right": band.right,
        "wrong": band.wrong,
        "precision": band.precision,
        "precision_lower_bound": band.precision_lower_bound,
        "coverage": band.coverage,
    }


@app.command("generations")
def generations(catalog: CatalogOption, tenant: TenantOption = None, as_json: JsonOption = False) -> None:
    """List the catalog's identity generations (1, the shipped rules, is implicit)."""
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap

    with bootstrap(load_settings(), migrate=True) as platform:
        found = platform.identity_generations.generations(_tenant(tenant), catalog)
    rows = [
        {
            "generation": g.generation,
            "rule": g.rule,
            "status": g.status,
            "promise": float(g.promise),
            "estimated_precision": None if g.estimated_precision is None else float(g.estimated_precision),
            "precision_lower_bound": None
            if g.precision_lower_bound is None
            else float(g.precision_lower_bound),
            "coverage": None if g.coverage is None else float(g.coverage),
            "labels": g.labels,
            "proposed_by": g.proposed_by,
            "proposed_at": g.proposed_at.isoformat(),
            "live_by": g.live_by,
        }
        for g in found
    ]
    if as_json:
        console.print_json(json.dumps(rows))
        return
    table = Table("generation", "rule", "status", "promise", "precision", "lower bound", "coverage", "labels")
    for row in rows:
        table.add_row(
            str(row["generation"]),
            row["rule"],
            row["status"],
            f"{row['promise']:.3f}",
            _optional(row["estimated_precision"]),
            _optional(row["precision_lower_bound"]),
            _optional(row["coverage"]),
            str(row["labels"].get("matches", "")),
        )
    console.print(table)


def _optional(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


@app.command("precision")
def precision(catalog: CatalogOption, tenant: TenantOption = None, as_json: JsonOption = False) -> None:
    """Each scoring rule's automatic mappings in the catalog and how many a person later mapped elsewhere."""
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap

    with bootstrap(load_settings(), migrate=True) as platform:
        found = platform.identity_generations.live_precision(_tenant(tenant), catalog)
    if as_json:
        console.print_json(
            json.dumps(
                [
                    {
                        "rule": p.rule,
                        "automatic": p.automatic,
                        "corrected": p.corrected,
                        "precision": p.precision,
                        "promise": p.promise,
                    }
                    for p in found
                ]
            )
        )
        return
    table = Table("rule", "automatic", "corrected", "precision", "promise")
    for p in found:
        table.add_row(
            p.rule, str(p.automatic), str(p.corrected), _optional(p.precision), _optional(p.promise)
        )
    console.print(table)
