"""Identity that learns from reviewers, end to end on real matching data (the bundled Abt-Buy training pairs):

reviewers decide review cases → ``IdentityGenerations.calibrate`` fits a proposed generation on their labels →
an improvement pinning it is dry-run (the diff shows listings that would now map) → a second operator approves
it → applying it makes the generation live → listings of the same kind map automatically, each decision naming
the rule, the generation and the findings → a wrong automatic mapping split off by a reviewer shows in the live
precision. Refusals write nothing: too few labels, a generation under its promise cannot be approved, an unknown
generation cannot be pinned.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from typer.testing import CliRunner

from prw_cli.main import app
from prw_orchestration.defs.state import identity_calibration, identity_live_precision
from prw_orchestration.resources import PlatformResource
from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.pipeline import IDENTITY, NORMALIZE, REPLAY, RESOLUTION
from prw_platform.resolver.decisions.item_merges import SplitItem
from prw_platform.resolver.improvements.errors import UnknownIdentityGeneration
from prw_platform.resolver.resolution.generations import (
    GenerationBelowPromise,
    LivePrecision,
    NotEnoughIdentityLabels,
)
from prw_platform.runtime import Budget, run_stage
from prw_platform.services import ImprovementDraft, ReviewDecision, Selection
from tests.integration.resolution.pipeline import CATALOG, TENANT, Collector
from tests.support import postgres

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "eval" / "abt_buy"
LISTING = "application/vnd.prw.listing+json"
#: Matched training pairs used: most become review cases a reviewer decides, the last ones are held out.
PAIRS = 170
HELD_OUT = 20
AUTHOR, SECOND = "operator:ada", "operator:grace"


@dataclass(frozen=True)
class Pair:
    catalog_id: str
    catalog_title: str
    listing_id: str
    listing_title: str


def _pairs() -> list[Pair]:
    def table(name: str) -> dict[str, str]:
        with (FIXTURE / name).open(encoding="utf-8", newline="") as handle:
            return {row["id"]: row["name"] for row in csv.DictReader(handle)}

    catalog, listings = table("tableA.csv"), table("tableB.csv")
    with (FIXTURE / "train.csv").open(encoding="utf-8", newline="") as handle:
        matched = [row for row in csv.DictReader(handle) if row["label"] == "1"]
    seen: set[str] = set()
    pairs = []
    for row in matched:
        if row["ltable_id"] in seen or row["rtable_id"] in seen:
            continue
        seen.update((row["ltable_id"], row["rtable_id"]))
        pairs.append(
            Pair(row["ltable_id"], catalog[row["ltable_id"]], row["rtable_id"], listings[row["rtable_id"]])
        )
    return pairs[:PAIRS]


@pytest.fixture
def platform(databases: postgres.TestDatabases, tmp_path: Path, catalogs: None) -> Iterator[Platform]:
    settings = Settings(
        database_url=databases.main, control_database_url=databases.control, data_dir=tmp_path
    )
    with bootstrap(settings) as opened:
        yield opened


class World:
    """The catalog's items (one per Abt record) and listings (Buy records), resolved by the platform's stages."""

    def __init__(self, platform: Platform, collector: Collector) -> None:
        self.platform = platform
        self.collector = collector

    def submit_item(self, pair: Pair) -> str:
        title = pair.catalog_title
        document = {"title": title, "brand": title.split()[0], "mpn": f"abt-{pair.catalog_id}"}
        return self.collector.submit(
            json.dumps(document).encode(), record=f"abt-{pair.catalog_id}", media_type=LISTING
        )

    def submit_listing(self, pair: Pair) -> str:
        document = {"title": pair.listing_title}
        return self.collector.submit(
            json.dumps(document).encode(), record=f"buy-{pair.listing_id}", media_type=LISTING
        )

    def resolve(self) -> None:
        for stage in (RESOLUTION, NORMALIZE, IDENTITY):
            report = run_stage(self.platform, stage, Budget(batches=100))
            assert report.drained, f"{stage} did not drain"

    def rows(self, sql: str, *params: object) -> list[dict[str, Any]]:
        return self.platform.resolver_db.run(
            lambda conn: conn.execute(sql, params).fetchall(), tenant_id=TENANT
        )

    def item_of(self, pair: Pair) -> str:
        (row,) = self.rows(
            """SELECT m.item_id FROM resolver.listing l
               JOIN resolver.listing_mapping m ON m.tenant_id = l.tenant_id AND m.listing_id = l.listing_id
               WHERE l.native_record_id = %s""",
            f"abt-{pair.catalog_id}",
        )
        return str(row["item_id"])

    def open_case(self, capture_id: str) -> dict[str, Any] | None:
        found = self.rows(
            "SELECT case_id, revision FROM resolver.review_case WHERE capture_id = %s AND status = 'awaiting_human'",
            capture_id,
        )
        return found[0] if found else None

    def identity_decision(self, capture_id: str) -> dict[str, Any]:
        (row,) = self.rows(
            """SELECT d.decision_id, d.action, d.actor, d.rationale, d.effects FROM resolver.decision d
               JOIN resolver.listing l ON l.tenant_id = d.tenant_id AND l.listing_id = d.effects->>'listing_id'
               WHERE l.capture_id = %s AND d.actor ~ '^rule:' ORDER BY d.created_at DESC LIMIT 1""",
            capture_id,
        )
        return row


@pytest.fixture
def world(platform: Platform, collector: Collector) -> World:
    return World(platform, collector)


def _decide_cases(world: World, pairs: list[Pair], captures: dict[str, str]) -> int:
    decided = 0
    for pair in pairs:
        case = world.open_case(captures[pair.listing_id])
        if case is None:
            continue
        world.platform.decisions.decide_review(
            ReviewDecision(
                case_id=case["case_id"],
                expected_revision=case["revision"],
                action="map_to",
                rationale="same product",
                actor="reviewer:lin",
                map_to=world.item_of(pair),
            ),
            TENANT,
        )
        decided += 1
    return decided


def test_reviewers_labels_become_a_generation_that_maps_after_approval(
    world: World, databases: postgres.TestDatabases, tmp_path: Path
) -> None:
    pairs = _pairs()
    labelled, held_out = pairs[:-HELD_OUT], pairs[-HELD_OUT:]
    for pair in pairs:
        world.submit_item(pair)
    world.resolve()
    captures = {pair.listing_id: world.submit_listing(pair) for pair in labelled}
    world.resolve()
    generations = world.platform.identity_generations

    with pytest.raises(NotEnoughIdentityLabels, match="at least 30") as refused:
        generations.calibrate(TENANT, CATALOG, promise=0.8, actor=AUTHOR)
    assert refused.value.code == "NOT_ENOUGH_LABELS"
    assert generations.generations(TENANT, CATALOG) == []

    assert _decide_cases(world, labelled, captures) >= 30
    calibrated = generations.calibrate(TENANT, CATALOG, promise=0.8, actor=AUTHOR)
    proposed = calibrated.generation
    assert (proposed.generation, proposed.status, proposed.rule) == (2, "proposed", "scored_match@1")
    assert calibrated.calibration.chosen is not None
    assert proposed.meets_promise
    assert proposed.labels["matches"] >= 30

    # Proposed is not live: held-out listings still resolve with the shipped generation.
    held = {pair.listing_id: world.submit_listing(pair) for pair in held_out}
    world.resolve()
    before = {lid: world.identity_decision(capture) for lid, capture in held.items()}
    in_review = [lid for lid, d in before.items() if d["action"] == "open_review_case"]
    assert in_review, "some held-out listings are review cases under the shipped generation"

    with pytest.raises(UnknownIdentityGeneration):
        world.platform.improvements.create(
            TENANT,
            ImprovementDraft(
                CATALOG, Selection(capture_ids=tuple(held.values())), "try", identity_generation=9
            ),
            AUTHOR,
        )
    improvement = world.platform.improvements.create(
        TENANT,
        ImprovementDraft(
            CATALOG,
            Selection(capture_ids=tuple(held[lid] for lid in in_review)),
            "identity generation 2 calibrated on the reviewers' labels",
            identity_generation=2,
        ),
        AUTHOR,
    ).improvement
    dry = world.platform.replays.request(TENANT, improvement.improvement_id, "dry_run", AUTHOR).replay
    run_stage(world.platform, REPLAY, Budget(batches=50))
    view = world.platform.replays.view(TENANT, dry.replay_id, sample=50)
    assert view.replay.pins["identity_generation"] == 2
    newly_mapped = [
        c for c in view.changed if c.diff and c.diff["identity"]["after"]["rule"] == "rule:scored_match@1"
    ]
    assert newly_mapped, f"the dry run maps no held-out listing with generation 2: {view.summary}"
    assert generations.generations(TENANT, CATALOG)[0].status == "proposed"  # a dry run changes nothing

    world.platform.improvements.approve(TENANT, improvement.improvement_id, SECOND, "the curve holds")
    world.platform.replays.request(TENANT, improvement.improvement_id, "apply", SECOND)
    assert [g.status for g in generations.generations(TENANT, CATALOG)] == ["live"]
    run_stage(world.platform, REPLAY, Budget(batches=50))
    world.resolve()
    mapped = [
        d
        for d in (world.identity_decision(held[lid]) for lid in in_review)
        if d["action"] == "map_listing" and "generation 2" in d["rationale"]
    ]
    assert len(mapped) >= len(newly_mapped)
    assert all(d["actor"] == "rule:scored_match@1" and "match probability" in d["rationale"] for d in mapped)

    # A reviewer splits one automatic mapping off as wrong: the live precision counts the correction.
    wrong = mapped[0]
    world.platform.decisions.split_item(
        SplitItem(
            catalog_id=CATALOG,
            item_id=wrong["effects"]["item_id"],
            listing_ids=(wrong["effects"]["listing_id"],),
            title="a different product",
            actor="reviewer:lin",
            rationale="not the same model",
        ),
        TENANT,
    )
    (live,) = generations.live_precision(TENANT, CATALOG)
    assert live.rule == "scored_match@1"
    assert live.corrected == 1
    assert live.automatic >= len(mapped)
    assert live.promise == 0.8

    # Operators see it in Dagster: the asset's metadata and its live-precision check.
    resource = PlatformResource(database_url=databases.main, data_dir=str(tmp_path))
    result = dg.materialize([identity_calibration, identity_live_precision], resources={"platform": resource})
    assert result.success
    (materialization,) = result.asset_materializations_for_node("identity_calibration")
    metadata = {key: value.value for key, value in materialization.metadata.items()}
    assert (metadata["generations"], metadata["corrected"]) == (1, 1)
    assert metadata["automatic_mappings"] == live.automatic
    assert "generation 2 (live, promise 0.8)" in metadata["latest_curve"]
    assert f"| {TENANT} | {CATALOG} | scored_match@1 | 2 | 2 (live) |" in metadata["per_catalog"]
    (check,) = result.get_asset_check_evaluations()
    assert check.check_name == "identity_live_precision"
    assert check.passed  # 1 correction among the automatic mappings: above the 0.8 promise


def test_a_generation_under_its_promise_cannot_be_approved(world: World) -> None:
    pairs = _pairs()[:150]
    for pair in pairs:
        world.submit_item(pair)
    world.resolve()
    captures = {pair.listing_id: world.submit_listing(pair) for pair in pairs}
    world.resolve()
    if _decide_cases(world, pairs, captures) < 30:
        pytest.fail("the fixture needs 30 decided cases")
    generations = world.platform.identity_generations
    # A promise no estimate on a few dozen labels can bound from below.
    proposed = generations.calibrate(TENANT, CATALOG, promise=0.9999, actor=AUTHOR).generation
    assert not proposed.meets_promise
    improvement = world.platform.improvements.create(
        TENANT,
        ImprovementDraft(
            CATALOG, Selection(capture_ids=tuple(captures.values())[:3]), "too bold", identity_generation=2
        ),
        AUTHOR,
    ).improvement

    with pytest.raises(GenerationBelowPromise):
        world.platform.improvements.approve(TENANT, improvement.improvement_id, SECOND, "looks fine")
    assert world.platform.improvements.get(TENANT, improvement.improvement_id).improvement.status == "draft"
    assert [g.status for g in generations.generations(TENANT, CATALOG)] == ["proposed"]


def test_prw_identity_calibrate_refuses_too_few_labels_and_writes_nothing(
    catalogs: None, runner: CliRunner
) -> None:
    args = ["identity", "calibrate", "--catalog", CATALOG, "--tenant", TENANT]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})

    assert result.exit_code == 1, result.output
    assert "NOT_ENOUGH_LABELS" in result.output
    assert "at least 30" in result.output
    listed = runner.invoke(
        app, ["identity", "generations", "--catalog", CATALOG, "--tenant", TENANT, "--json"]
    )
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout) == []
    precision = runner.invoke(
        app, ["identity", "precision", "--catalog", CATALOG, "--tenant", TENANT, "--json"]
    )
    assert precision.exit_code == 0, precision.output
    (rule,) = json.loads(precision.stdout)
    assert (rule["rule"], rule["automatic"], rule["corrected"], rule["precision"]) == (
        "scored_match@1",
        0,
        0,
        None,
    )


def test_live_precision_is_held_to_the_promise_only_with_enough_mappings() -> None:
    assert LivePrecision("scored_match@1", 40, 4, 0.95).below_promise(20)
    assert not LivePrecision("scored_match@1", 40, 1, 0.95).below_promise(20)
    assert not LivePrecision("scored_match@1", 10, 5, 0.95).below_promise(20)
    assert not LivePrecision("scored_match@1", 40, 4, None).below_promise(20)
    assert LivePrecision("scored_match@1", 0, 0, 0.95).precision is None
