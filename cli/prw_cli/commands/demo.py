"""``prw demo``: the README's main command. One capture to one public item, end to end, on embedded defaults.

1. Start (or attach to) the embedded PostgreSQL when PRW_DATABASE_URL is unset; migrate; filesystem object store,
   PostgreSQL queue.
2. Provision the demo tenant, catalog (automatic release policy), sources and the product's projected scope, and
   one merchant per source with its shipping policy (operator decisions, released at once); create a collector
   client (rotating the previous demo client).
3. Serve the intake and product APIs on loopback ports.
4. Play a collector over HTTP: token, upload, capture for every bundled real page, and one page twice (the same
   Idempotency-Key and body: 200 with the existing receipt).
5. Drive the pipeline through Dagster (the pipeline sensors and jobs, on the real instance) until drained.
6. Play a reviewer over HTTP (if_review_read, if_review_decision): log in at the admin origin through the
   development identity provider, read the review queue and decide every case awaiting a human - map it to its
   top candidate when the resolver is confident (``MAP_SCORE``), else create an item from the page's facts -
   then drive Dagster again, so the reviewed pages become public items.
7. Print what happened and how to look at the same data in the Dagster UI and the APIs.

Running it again changes nothing public: every capture is an idempotent replay, so no job, decision or event, and
the review queue is empty.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.table import Table

from prw_cli.demo_catalog import CATALOG, INSTANCE, TENANT, WORKER
from prw_cli.demo_pages import DemoPage, demo_pages
from prw_cli.output import results_console
from prw_cli.settings import load_settings

# The APIs, Dagster and the platform load when the demo runs, not for `prw demo --help`.
if TYPE_CHECKING:
    from prw_cli.collector import Submitted
    from prw_cli.reviewer import Decided, Reviewer
    from prw_orchestration.driver import DriveReport
    from prw_platform.bootstrap import Platform

console = results_console()
DEMO_OPERATOR = "operator:prw_demo"

__all__ = ["CATALOG", "INSTANCE", "TENANT", "WORKER", "DemoRun", "demo", "provision_demo", "run_demo"]


#: The demo reviewer maps a case to its top candidate at this score or above; below it, the page is a product the
#: catalog does not have yet and the reviewer creates an item from it.
MAP_SCORE = 0.8
#: The development identity provider's reviewer (``DevIdpSettings`` default users).
REVIEWER = "rita"


@dataclass(frozen=True, slots=True)
class DemoRun:
    submissions: list[tuple[DemoPage, Submitted]]
    drive: DriveReport
    #: The reviewer's decisions over HTTP, and the Dagster runs that applied them.
    reviews: list[Decided]
    review_drive: DriveReport
    public_items: list[dict[str, Any]]
    intake_url: str
    product_url: str


def demo() -> None:
    """Run the end-to-end demo on embedded defaults and print a summary."""
    from prw_platform.bootstrap import bootstrap

    settings = load_settings()
    with console.status("starting and migrating the database", spinner="dots"):
        platform = bootstrap(settings, migrate=True)
    with platform:
        where = (
            f"embedded PostgreSQL in {settings.embedded_pg_dir}"
            if platform.urls.embedded
            else "PRW_DATABASE_URL"
        )
        console.print(
            f"[bold]database[/bold] {where}; object store {settings.object_store} in {settings.object_store_root}"
        )
        run = run_demo(platform)
        _summary(platform, run)


def provision_demo(platform: Platform, pages: list[DemoPage]) -> tuple[str, str]:
    """The demo tenant, catalog, sources and projected scope; a fresh collector client (client_id, secret)."""
    from prw_platform.services import COLLECTOR_SCOPES, CatalogSpec, ClientSpec, SourceSpec

    sources = tuple(
        SourceSpec(s, s.removeprefix("src_").replace("_", " ")) for s in sorted({p.source_id for p in pages})
    )
    platform.catalogs.provision(
        CatalogSpec(TENANT, CATALOG, "PRW demo catalog", release_policy="automatic", sources=sources)
    )
    for source in sources:
        provision_demo_merchant(platform, source.source_id, source.name)
    client = platform.clients.create(
        ClientSpec(TENANT, CATALOG, WORKER, INSTANCE, tuple(s.source_id for s in sources), COLLECTOR_SCOPES),
        supersede=True,
    )
    return client.client_id, client.client_secret


def provision_demo_merchant(platform: Platform, source_id: str, name: str) -> None:
    """The source's merchant, its binding and a shipping policy (EUR; DE, FR, US; free from 100). Decisions only
    the first time: provisioning the same state again decides nothing, so a second demo run adds no event."""
    from decimal import Decimal

    from prw_platform.services import MerchantSpec, ShippingPolicySpec

    merchant_id = f"mer_{source_id.removeprefix('src_')}"
    rates = {"DE": Decimal("4.90"), "FR": Decimal("6.90"), "US": Decimal("14.90")}
    merchants = platform.merchants
    merchants.provision(TENANT, CATALOG, MerchantSpec(merchant_id, name.title()), actor=DEMO_OPERATOR)
    merchants.bind_source(TENANT, CATALOG, source_id, merchant_id, actor=DEMO_OPERATOR)
    policy = ShippingPolicySpec(merchant_id, "EUR", rates, Decimal("100"))
    merchants.accept_shipping_policy(TENANT, CATALOG, policy, actor=DEMO_OPERATOR)


def run_demo(platform: Platform, *, drive: bool = True) -> DemoRun:
    import httpx

    from prw_api import compose
    from prw_api.server import BackgroundServer
    from prw_cli.collector import Collector
    from prw_orchestration.driver import DriveReport

    pages = demo_pages()
    client_id, secret = provision_demo(platform, pages)
    intake_app = compose.intake_app(platform)
    product_app = compose.product_app(platform, TENANT, CATALOG)
    with BackgroundServer(intake_app) as intake, BackgroundServer(product_app) as product:
        submissions: list[tuple[DemoPage, Submitted]] = []
        with (
            Collector(intake.url, client_id, secret, worker_id=WORKER) as collector,
            console.status("collector: uploading pages and submitting captures", spinner="dots") as status,
        ):
            # Every page, then the first one again: same key, same body -> 200 with the existing receipt.
            for page in [*pages, pages[0]]:
                status.update(f"collector: {page.path.name}")
                submitted = collector.submit(
                    source_id=page.source_id,
                    native_record_id=page.native_record_id,
                    observed_at=page.observed_at,
                    data=page.data,
                    url=page.url,
                )
                submissions.append((page, submitted))
        report = review_report = DriveReport()
        reviews: list[Decided] = []
        if drive:
            report = _drive(platform, "Dagster: sensors -> runs until the stream is drained")
            reviews = _review(platform)
            if reviews:
                review_report = _drive(platform, "Dagster: applying the reviewer's decisions")
        with httpx.Client(base_url=product.url, timeout=10) as public:
            page = public.get("/v1/items", params={"limit": 100}).json()
            items = [public.get(f"/v1/items/{i['item']}").json() for i in page["items"]]
        return DemoRun(submissions, report, reviews, review_report, items, intake.url, product.url)


def _drive(platform: Platform, what: str) -> DriveReport:
    from prw_orchestration.definitions import build_definitions
    from prw_orchestration.driver import drive_until_drained
    from prw_orchestration.instance import open_instance
    from prw_orchestration.resources import PlatformResource

    with console.status(what, spinner="dots") as status:
        instance = open_instance(platform.settings)
        defs = build_definitions(PlatformResource())
        return drive_until_drained(
            defs, instance, on_run=lambda job, key: status.update(f"Dagster: ran {job} ({key})")
        )


def _review(platform: Platform) -> list[Decided]:
    """Serve the development identity provider and the admin origin, and decide every awaiting case as the
    development reviewer would in the console."""
    from prw_api import compose
    from prw_api.devidp import create_dev_idp
    from prw_api.server import BackgroundServer
    from prw_cli.reviewer import Reviewer

    with (
        BackgroundServer(create_dev_idp(platform.settings.dev_idp)) as idp,
        BackgroundServer(compose.admin_app(platform, issuer=idp.url)) as admin,
        Reviewer(admin.url, REVIEWER) as reviewer,
        console.status("reviewer: deciding the review queue over HTTP", spinner="dots") as status,
    ):
        decided = []
        for summary in list(reviewer.queue()):
            status.update(f"reviewer: {summary['case_id']}")
            decided.append(_decide(reviewer, reviewer.case(summary["case_id"])))
        return decided


def _decide(reviewer: Reviewer, case: dict[str, Any]) -> Decided:
    candidates = sorted(case.get("candidates") or [], key=lambda c: c["rank"])
    if candidates and candidates[0]["score"] >= MAP_SCORE:
        top = candidates[0]
        return reviewer.decide(
            case,
            "map_to",
            f"demo reviewer: the page is {top['item_id']} (score {top['score']:.2f}: {top.get('reason')})",
            map_to=top["item_id"],
        )
    best = f"the best candidate scores {candidates[0]['score']:.2f}" if candidates else "no candidate"
    return reviewer.decide(
        case, "create_item", f"demo reviewer: a product the catalog does not have yet ({best})"
    )


def _table(title: str, columns: tuple[str, ...], rows: list[tuple[object, ...]]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    return table


def _listing(listing: dict[str, object]) -> str:
    price = " ".join(str(listing[k]) for k in ("price", "currency") if listing.get(k))
    return f"{listing.get('source_id')}: {price or 'no price'}"


def _summary(platform: Platform, run: DemoRun) -> None:
    reports = platform.reports
    console.print(
        _table(
            "Captures and receipts (POST /v1/captures)",
            ("page", "source", "HTTP", "receipt", "capture", "artifact"),
            [
                (p.path.name, p.source_id, s.status, s.receipt_id, s.capture_id, s.upload)
                for p, s in run.submissions
            ],
        )
    )
    console.print(
        _table(
            "Claims and normalized attributes (resolution)",
            ("capture", "adapter", "profile", "claims", "attributes", "problems", "outcome"),
            [
                (r.capture_id, r.adapter, r.profile, r.claims, r.attributes, r.problems, r.outcome)
                for r in reports.resolution_results(TENANT, CATALOG)
            ],
        )
    )
    console.print(
        _table(
            "Decisions (AW-01)",
            ("decision", "action", "actor", "events", "case"),
            [
                (d.decision_id, d.action, d.actor, d.events, d.case_id)
                for d in reports.decisions(TENANT, CATALOG)
            ],
        )
    )
    console.print(
        _table(
            f"The reviewer's decisions (POST /v1/decisions as {REVIEWER}, over HTTP)",
            ("case", "action", "decision", "case revision", "replayed"),
            [(d.case_id, d.action, d.decision_id, d.case_revision, d.replayed) for d in run.reviews],
        )
    )
    console.print(
        _table(
            "Review cases",
            ("case", "kind", "status", "revision", "capture", "candidates"),
            [
                (c.case_id, c.kind, c.status, c.revision, c.capture_id, c.candidates)
                for c in reports.review_cases(TENANT, CATALOG)
            ],
        )
    )
    console.print(
        _table(
            "Accepted-change events (outbox -> relay -> product)",
            ("position", "type", "aggregate", "revision", "published"),
            [
                (e.position, e.event_type, e.aggregate, e.revision, e.published)
                for e in reports.events(TENANT, CATALOG)
            ],
        )
    )
    console.print(
        _table(
            "Public items (GET /v1/items)",
            ("item", "title", "brand", "identifiers", "rev", "listings (source: price)"),
            [
                (
                    i["item"],
                    str(i.get("title") or "")[:48],
                    i.get("brand"),
                    json.dumps({k: v for k, v in dict(i.get("identifiers") or {}).items() if v}),
                    i.get("published_revision"),
                    "; ".join(_listing(listing) for listing in list(i.get("listings") or [])),
                )
                for i in run.public_items
            ],
        )
    )
    lag = reports.projection_lag()
    runs = run.drive.runs + run.review_drive.runs
    failed = run.drive.failed_runs + run.review_drive.failed_runs
    console.print(
        f"Dagster: {len(runs)} runs in {run.drive.ticks + run.review_drive.ticks} sensor ticks"
        f" ({len(failed)} failed); projection lag {lag}; state run {run.drive.state_run}."
    )
    console.print(
        "\n[bold]Look at the same data[/bold]\n"
        "  ./run prw dev            the Dagster UI (runs, assets, invariant checks) on http://127.0.0.1:3000,\n"
        "                           the intake API on :8081 and the product API on :8082\n"
        "  curl :8082/v1/items      the public catalog, released data only\n"
        "  curl :8082/v1/merchants  the merchants (one per source), their sources and shipping policies\n"
        "  ./run demo               again: every capture is an idempotent replay; the public catalog is unchanged\n"
    )
