"""Identity rule generations per catalog: a scoring rule's fitted model and auto-map band as versioned data
(owner of ``resolver.identity_generation``).

Generation 1 of every catalog is what the installed rule plugins ship. ``calibrate`` fits a new generation on the
catalog's reviewer labels and records it as ``proposed``: nothing maps differently yet. An improvement that pins
the generation (``identity_generation``) replays captures with it, read-only (the dry run shows which listings
would change); a second operator approves it, which is refused while the generation's estimated precision
(lower bound) is under its band's promise; applying it makes the generation ``live``, and from then on the identity
stage passes it to the rule (``IdentityEvidence.generation``). Nothing moves a generation silently.

Labels come from decided review cases that showed candidates: the candidate the reviewer mapped the listing to is
a match, every other candidate shown and passed over a non-match (a case settled by creating an item or
dismissing it passes over them all). The candidates offered for each labelled listing are those the platform
offers today, plus any shown then that is still active.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, Final, cast

from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from prw_platform.clock import Clock, utc_now
from prw_platform.coded_error import CodedError
from prw_platform.db.database import Connection, Database
from prw_platform.plugins import (
    CalibratingIdentityRule,
    Calibration,
    IdentityCandidate,
    IdentityEvidence,
    IdentityRule,
    LabelledListing,
    NotEnoughLabels,
    PluginRegistry,
)
from prw_platform.resolver.decisions.cases import decided_cases_with_candidates
from prw_platform.resolver.decisions.facts import get_item, get_listing
from prw_platform.resolver.decisions.records import automatic_mappings, human_case_outcomes
from prw_platform.resolver.resolution.candidates import candidate_pool

#: The generation every catalog starts with: the one the installed rule plugins ship.
SHIPPED: Final = 1
PROPOSED, LIVE, SUPERSEDED = "proposed", "live", "superseded"
#: Generation documents kept in memory (a generation is written once, so a cached one never goes stale).
_CACHE_LIMIT = 256


class GenerationError(CodedError):
    code = "VALIDATION_FAILED"
    status = 422


class GenerationNotFound(GenerationError):
    """404: no such generation in the catalog (another tenant's is unknown, INV-06)."""

    code = "NOT_FOUND"
    status = 404


class NotEnoughIdentityLabels(GenerationError):
    """422 NOT_ENOUGH_LABELS: too few reviewer labels to fit and check a generation; nothing is written."""

    code = "NOT_ENOUGH_LABELS"

    def __init__(self, message: str, *, have: int, need: int) -> None:
        super().__init__(message)
        self.have = have
        self.need = need


class NoCalibratingRule(GenerationError):
    """409: no installed identity rule can be calibrated."""

    code = "NO_CALIBRATING_RULE"
    status = 409


class GenerationBelowPromise(GenerationError):
    """409 GENERATION_BELOW_PROMISE: the generation's estimated precision (its lower bound) is under the precision
    its band promises, so it cannot be approved."""

    code = "GENERATION_BELOW_PROMISE"
    status = 409


@dataclass(frozen=True, slots=True)
class IdentityGeneration:
    catalog_id: str
    generation: int
    rule: str
    status: str
    promise: Decimal
    estimated_precision: Decimal | None
    precision_lower_bound: Decimal | None
    coverage: Decimal | None
    labels: dict[str, Any]
    curve: list[dict[str, Any]]
    proposed_by: str
    proposed_at: datetime
    live_at: datetime | None
    live_by: str | None

    @property
    def meets_promise(self) -> bool:
        return self.precision_lower_bound is not None and self.precision_lower_bound >= self.promise


@dataclass(frozen=True, slots=True)
class _RuleGeneration:
    rule: str
    generation: int


def list_generations(conn: Connection, tenant_id: str, catalog_id: str) -> list[IdentityGeneration]:
    with conn.cursor(row_factory=class_row(IdentityGeneration)) as cur:
        return cur.execute(
            """SELECT catalog_id, generation, rule, status, promise, estimated_precision, precision_lower_bound, coverage,
                      labels, curve, proposed_by, proposed_at, live_at, live_by
               FROM resolver.identity_generation WHERE tenant_id = %s AND catalog_id = %s ORDER BY generation""",
            (tenant_id, catalog_id),
        ).fetchall()


def get_generation(conn: Connection, tenant_id: str, catalog_id: str, number: int) -> IdentityGeneration:
    with conn.cursor(row_factory=class_row(IdentityGeneration)) as cur:
        found = cur.execute(
            """SELECT catalog_id, generation, rule, status, promise, estimated_precision, precision_lower_bound, coverage,
                      labels, curve, proposed_by, proposed_at, live_at, live_by
               FROM resolver.identity_generation WHERE tenant_id = %s AND catalog_id = %s AND generation = %s""",
            (tenant_id, catalog_id, number),
        ).fetchone()
    if found is None:
        raise GenerationNotFound(f"catalog {catalog_id} has no identity generation {number}")
    return found


def check_generation(conn: Connection, tenant_id: str, catalog_id: str, number: int | None) -> None:
    """A pinned generation exists in the catalog (1, the shipped one, always does)."""
    if number is not None and number != SHIPPED:
        get_generation(conn, tenant_id, catalog_id, number)


def check_approvable(conn: Connection, tenant_id: str, catalog_id: str, number: int | None) -> None:
    """A generation may be approved only when its estimated precision's lower bound meets its band's promise."""
    if number is None or number == SHIPPED:
        return
    generation = get_generation(conn, tenant_id, catalog_id, number)
    if not generation.meets_promise:
        raise GenerationBelowPromise(
            f"identity generation {number} promises precision {generation.promise} but its estimate's lower "
            f"bound is {generation.precision_lower_bound}: calibrate on more labels"
        )


def make_live(conn: Connection, tenant_id: str, catalog_id: str, number: int, by: str, now: datetime) -> None:
    """Generation ``number`` becomes the catalog's live one for its rule (the previous live one is superseded);
    the shipped generation goes live by superseding every catalog generation."""
    if number == SHIPPED:
        conn.execute(
            "UPDATE resolver.identity_generation SET status = %s"
            " WHERE tenant_id = %s AND catalog_id = %s AND status = %s",
            (SUPERSEDED, tenant_id, catalog_id, LIVE),
        )
        return
    generation = get_generation(conn, tenant_id, catalog_id, number)
    conn.execute(
        "UPDATE resolver.identity_generation SET status = %s"
        " WHERE tenant_id = %s AND catalog_id = %s AND rule = %s AND status = %s AND generation <> %s",
        (SUPERSEDED, tenant_id, catalog_id, generation.rule, LIVE, number),
    )
    conn.execute(
        "UPDATE resolver.identity_generation SET status = %s, live_at = %s, live_by = %s"
        " WHERE tenant_id = %s AND catalog_id = %s AND generation = %s",
        (LIVE, now, by, tenant_id, catalog_id, number),
    )


_documents: dict[tuple[str, str, int], Mapping[str, Any]] = {}


def generation_documents(
    conn: Connection, tenant_id: str, catalog_id: str, pinned: int | None = None
) -> dict[str, Mapping[str, Any]]:
    """Rule pin (``scored_match@1``) -> the generation document the identity stage passes that rule: the pinned
    generation (a replay), else the catalog's live ones; empty for the shipped generation."""
    if pinned == SHIPPED:
        return {}
    with conn.cursor(row_factory=class_row(_RuleGeneration)) as cur:
        if pinned is not None:
            rows = cur.execute(
                "SELECT rule, generation FROM resolver.identity_generation"
                " WHERE tenant_id = %s AND catalog_id = %s AND generation = %s",
                (tenant_id, catalog_id, pinned),
            ).fetchall()
        else:
            rows = cur.execute(
                "SELECT rule, generation FROM resolver.identity_generation"
                " WHERE tenant_id = %s AND catalog_id = %s AND status = %s",
                (tenant_id, catalog_id, LIVE),
            ).fetchall()
    return {row.rule: _document(conn, tenant_id, catalog_id, row.generation) for row in rows}


def _document(conn: Connection, tenant_id: str, catalog_id: str, number: int) -> Mapping[str, Any]:
    key = (tenant_id, catalog_id, number)
    cached = _documents.get(key)
    if cached is None:
        row = conn.execute(
            "SELECT document FROM resolver.identity_generation"
            " WHERE tenant_id = %s AND catalog_id = %s AND generation = %s",
            key,
        ).fetchone()
        if row is None:
            raise GenerationNotFound(f"catalog {catalog_id} has no identity generation {number}")
        cached = cast(Mapping[str, Any], row["document"])
        if len(_documents) >= _CACHE_LIMIT:
            _documents.clear()
        _documents[key] = cached
    return cached


def rule_pin(rule: IdentityRule) -> str:
    return f"{rule.name}@{rule.version}"


@dataclass(frozen=True, slots=True)
class Calibrated:
    generation: IdentityGeneration
    calibration: Calibration


@dataclass(frozen=True, slots=True)
class CatalogIdentity:
    """One catalog's identity generations and the live precision of its scoring rules (the Dagster asset
    ``identity_calibration``)."""

    tenant_id: str
    catalog_id: str
    generations: tuple[IdentityGeneration, ...]
    live: tuple[LivePrecision, ...]

    @property
    def latest(self) -> IdentityGeneration | None:
        return self.generations[-1] if self.generations else None

    @property
    def live_generation(self) -> IdentityGeneration | None:
        return next((g for g in self.generations if g.status == LIVE), None)


@dataclass(frozen=True, slots=True)
class LivePrecision:
    """Automatic mappings of a rule in a catalog, and how many a person later mapped elsewhere."""

    rule: str
    automatic: int
    corrected: int
    #: The promise of the catalog's live generation of the rule (the shipped band's estimate when none is live).
    promise: float | None

    @property
    def precision(self) -> float | None:
        return (self.automatic - self.corrected) / self.automatic if self.automatic else None

    def below_promise(self, minimum: int) -> bool:
        """At least ``minimum`` automatic mappings, and a live precision under the promise."""
        precision = self.precision
        return (
            self.automatic >= minimum
            and precision is not None
            and self.promise is not None
            and precision < self.promise
        )


class IdentityGenerations:
    """Calibrate generations on reviewers' labels and measure live precision (``prw identity ...``)."""

    def __init__(self, db: Database, registry: PluginRegistry, clock: Clock = utc_now) -> None:
        self._db = db
        self._registry = registry
        self._clock = clock

    def calibrating_rule(self) -> CalibratingIdentityRule:
        for rule in self._registry.identity_rules:
            if isinstance(rule, CalibratingIdentityRule):
                return rule
        raise NoCalibratingRule("no installed identity rule can be calibrated (scored_match is one that can)")

    def labels(self, tenant_id: str, catalog_id: str) -> list[LabelledListing]:
        return self._db.run(
            lambda conn: _labels(conn, tenant_id, catalog_id), tenant_id=tenant_id, read_only=True
        )

    def calibrate(self, tenant_id: str, catalog_id: str, *, promise: float, actor: str) -> Calibrated:
        """Fit a generation on the catalog's labels and record it as proposed; refuses (writing nothing) when the
        labels are too few."""
        rule = self.calibrating_rule()
        labelled = self.labels(tenant_id, catalog_id)

        def propose(conn: Connection) -> Calibrated:
            number = _next_number(conn, tenant_id, catalog_id)
            try:
                calibration = rule.calibrate(labelled, promise=promise, number=number)
            except NotEnoughLabels as refused:
                raise NotEnoughIdentityLabels(str(refused), have=refused.have, need=refused.need) from refused
            chosen = calibration.chosen
            conn.execute(
                """INSERT INTO resolver.identity_generation (tenant_id, catalog_id, generation, rule, status,
                       document, promise, estimated_precision, precision_lower_bound, coverage, labels, curve,
                       proposed_by, proposed_at)
                   VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                (
                    tenant_id,
                    catalog_id,
                    number,
                    rule_pin(rule),
                    PROPOSED,
                    Jsonb(dict(calibration.document)),
                    promise,
                    chosen.precision if chosen else None,
                    chosen.precision_lower_bound if chosen else None,
                    chosen.coverage if chosen else None,
                    Jsonb(
                        {
                            "listings": calibration.listings,
                            "matches": calibration.matches,
                            "pairs": calibration.pairs,
                        }
                    ),
                    Jsonb([_point(p) for p in calibration.curve]),
                    actor,
                    self._clock(),
                ),
            )
            return Calibrated(get_generation(conn, tenant_id, catalog_id, number), calibration)

        return self._db.run(propose, tenant_id=tenant_id)

    def generations(self, tenant_id: str, catalog_id: str) -> list[IdentityGeneration]:
        return self._db.run(
            lambda conn: list_generations(conn, tenant_id, catalog_id), tenant_id=tenant_id, read_only=True
        )

    def catalog_report(self, catalogs: Sequence[tuple[str, str]]) -> list[CatalogIdentity]:
        """For each (tenant, catalog): its generations and the live precision of its scoring rules."""
        return [
            CatalogIdentity(
                tenant_id,
                catalog_id,
                tuple(self.generations(tenant_id, catalog_id)),
                tuple(self.live_precision(tenant_id, catalog_id)),
            )
            for tenant_id, catalog_id in catalogs
        ]

    def live_precision(self, tenant_id: str, catalog_id: str) -> list[LivePrecision]:
        """Per scoring rule: its automatic mappings in the catalog and the share a person later corrected."""
        rules = [rule for rule in self._registry.identity_rules if isinstance(rule, CalibratingIdentityRule)]

        def read(conn: Connection) -> list[LivePrecision]:
            live = {g.rule: g for g in list_generations(conn, tenant_id, catalog_id) if g.status == LIVE}
            found = []
            for rule in rules:
                mappings = automatic_mappings(conn, tenant_id, catalog_id, [f"rule:{rule_pin(rule)}"])
                generation = live.get(rule_pin(rule))
                promise = float(generation.promise) if generation else _shipped_promise(rule)
                corrected = sum(m.corrected for m in mappings)
                found.append(LivePrecision(rule_pin(rule), len(mappings), corrected, promise))
            return found

        return self._db.run(read, tenant_id=tenant_id, read_only=True)


def _shipped_promise(rule: IdentityRule) -> float | None:
    """The precision the rule's own band was chosen for, when it says (``generation.bands``)."""
    generation = getattr(rule, "generation", None)
    bands = getattr(generation, "bands", None)
    estimate = getattr(bands, "estimated_precision", None)
    return float(estimate) if isinstance(estimate, int | float) else None


def _point(point: Any) -> dict[str, float | int]:
    return {
        "probability": point.probability,
        "margin": point.margin,
        "mapped": point.mapped,
        "right": point.right,
        "wrong": point.wrong,
        "precision": point.precision,
        "precision_lower_bound": point.precision_lower_bound,
        "coverage": point.coverage,
    }


def _next_number(conn: Connection, tenant_id: str, catalog_id: str) -> int:
    row = conn.execute(
        "SELECT coalesce(max(generation), %s) + 1 AS next FROM resolver.identity_generation"
        " WHERE tenant_id = %s AND catalog_id = %s",
        (SHIPPED, tenant_id, catalog_id),
    ).fetchone()
    assert row is not None
    return int(cast(int, row["next"]))


def _labels(conn: Connection, tenant_id: str, catalog_id: str) -> list[LabelledListing]:
    outcomes = {o.case_id: o for o in human_case_outcomes(conn, tenant_id, catalog_id)}
    labelled = []
    for case in decided_cases_with_candidates(conn, tenant_id, catalog_id):
        outcome = outcomes.get(case.case_id)
        listing = get_listing(conn, tenant_id, case.listing_id)
        if outcome is None or listing is None or not listing.title:
            continue
        pool = candidate_pool(conn, tenant_id, catalog_id, brand=None, title=listing.title)
        offered = {
            p.item.item_id: IdentityCandidate(
                p.item.item_id, p.candidate.score, p.candidate.reason, p.item.title, p.item.brand
            )
            for p in pool
        }
        for item_id in case.candidates:
            item = get_item(conn, tenant_id, item_id) if item_id not in offered else None
            if item is not None and item.status == "active":
                offered[item_id] = IdentityCandidate(
                    item_id, 0.0, "shown to the reviewer", item.title, item.brand
                )
        chosen = outcome.item_id if outcome.action == "map_listing" else None
        shown = set(case.candidates)
        matches = frozenset({chosen} & shown & set(offered)) if chosen else frozenset()
        non_matches = frozenset((shown - {chosen}) & set(offered))
        evidence = IdentityEvidence(listing.title, None, None, None, tuple(offered.values()))
        labelled.append(LabelledListing(evidence, matches, non_matches))
    return labelled


__all__: Sequence[str] = (
    "Calibrated",
    "CatalogIdentity",
    "GenerationBelowPromise",
    "GenerationNotFound",
    "IdentityGeneration",
    "IdentityGenerations",
    "LivePrecision",
    "NoCalibratingRule",
    "NotEnoughIdentityLabels",
    "check_approvable",
    "check_generation",
    "generation_documents",
    "make_live",
)
