"""Operator reports over the resolver's tables (Dagster assets and asset checks read these).

They read across tenants, so they run as the read-only ``prw_operator`` role (``Platform.operator_db``), never on
``resolver_app``: an operator sees every stream, a service sees its tenant only (INV-06).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from psycopg.rows import class_row

from prw_platform.db.database import Connection, Database


@dataclass(frozen=True, slots=True)
class CaptureCounts:
    tenant_id: str
    captures: int
    receipts: int
    jobs_pending: int
    jobs_enqueued: int
    jobs_completed: int
    jobs_dead_lettered: int
    open_review_cases: int


@dataclass(frozen=True, slots=True)
class StreamStatus:
    """One accepted-change stream: committed (the cursor) and published (relayed) positions.

    ``outbox_rows``/``min_position``/``max_position`` let INV-03 be checked: committed positions are contiguous
    from 1, so rows = max = committed and min = 1. (Nothing prunes the outbox yet; the retention work (AW-03
    "Prune") will start the check after the pruned-through position.)"""

    tenant_id: str
    catalog_id: str
    history_epoch: str
    committed_position: int
    published_through: int
    unpublished: int
    outbox_rows: int
    min_position: int | None
    max_position: int | None

    @property
    def contiguous(self) -> bool:
        if self.outbox_rows == 0:
            return self.committed_position == 0
        return (
            self.min_position == 1
            and self.max_position == self.committed_position
            and self.outbox_rows == self.committed_position
        )


def capture_counts(owner: Database) -> list[CaptureCounts]:
    def work(conn: Connection) -> list[CaptureCounts]:
        rows = conn.execute(
            """SELECT t.tenant_id,
                      (SELECT count(*) FROM resolver.capture c WHERE c.tenant_id = t.tenant_id) AS captures,
                      (SELECT count(*) FROM resolver.receipt r WHERE r.tenant_id = t.tenant_id) AS receipts,
                      count(*) FILTER (WHERE j.status = 'pending') AS jobs_pending,
                      count(*) FILTER (WHERE j.status = 'enqueued') AS jobs_enqueued,
                      count(*) FILTER (WHERE j.status = 'completed') AS jobs_completed,
                      count(*) FILTER (WHERE j.status = 'dead_lettered') AS jobs_dead_lettered,
                      (SELECT count(*) FROM resolver.review_case rc
                        WHERE rc.tenant_id = t.tenant_id AND rc.status = 'awaiting_human') AS open_review_cases
                 FROM resolver.tenant t
                 LEFT JOIN resolver.resolution_job j ON j.tenant_id = t.tenant_id
                GROUP BY t.tenant_id ORDER BY t.tenant_id"""
        ).fetchall()
        return [
            CaptureCounts(
                tenant_id=str(r["tenant_id"]),
                captures=int(str(r["captures"])),
                receipts=int(str(r["receipts"])),
                jobs_pending=int(str(r["jobs_pending"])),
                jobs_enqueued=int(str(r["jobs_enqueued"])),
                jobs_completed=int(str(r["jobs_completed"])),
                jobs_dead_lettered=int(str(r["jobs_dead_lettered"])),
                open_review_cases=int(str(r["open_review_cases"])),
            )
            for r in rows
        ]

    return owner.run(work, read_only=True)


def stream_statuses(owner: Database) -> list[StreamStatus]:
    def work(conn: Connection) -> list[StreamStatus]:
        rows = conn.execute(
            """SELECT c.tenant_id, c.catalog_id, c.history_epoch, c.committed_position,
                      coalesce(o.published_through, 0) AS published_through,
                      coalesce(o.unpublished, 0) AS unpublished,
                      coalesce(o.outbox_rows, 0) AS outbox_rows, o.min_position, o.max_position
                 FROM resolver.stream_cursor c
                 LEFT JOIN LATERAL (
                     SELECT count(*) AS outbox_rows, min(position) AS min_position, max(position) AS max_position,
                            count(*) FILTER (WHERE published_at IS NULL) AS unpublished,
                            coalesce(min(position) FILTER (WHERE published_at IS NULL) - 1, max(position))
                                AS published_through
                       FROM resolver.outbox x
                      WHERE x.tenant_id = c.tenant_id AND x.catalog_id = c.catalog_id
                        AND x.history_epoch = c.history_epoch
                 ) o ON true
                ORDER BY c.tenant_id, c.catalog_id, c.history_epoch"""
        ).fetchall()
        return [
            StreamStatus(
                tenant_id=str(r["tenant_id"]),
                catalog_id=str(r["catalog_id"]),
                history_epoch=str(r["history_epoch"]),
                committed_position=int(str(r["committed_position"])),
                published_through=int(str(r["published_through"])),
                unpublished=int(str(r["unpublished"])),
                outbox_rows=int(str(r["outbox_rows"])),
                min_position=None if r["min_position"] is None else int(str(r["min_position"])),
                max_position=None if r["max_position"] is None else int(str(r["max_position"])),
            )
            for r in rows
        ]

    return owner.run(work, read_only=True)


def listings_with_several_current_mappings(owner: Database) -> int:
    """INV-01 on the resolver side: a listing has at most one current item mapping (0 when it holds)."""

    def work(conn: Connection) -> int:
        row = conn.execute(
            """SELECT count(*) AS n FROM (
                   SELECT tenant_id, catalog_id, listing_id FROM resolver.listing_mapping
                    GROUP BY tenant_id, catalog_id, listing_id HAVING count(*) > 1) x"""
        ).fetchone()
        return int(str(row["n"])) if row else 0

    return owner.run(work, read_only=True)


@dataclass(frozen=True, slots=True)
class ResolutionRow:
    capture_id: str
    adapter: str | None
    profile: str | None
    claims: int
    attributes: int
    problems: int
    outcome: str
    decision_id: str


@dataclass(frozen=True, slots=True)
class DecisionRow:
    decision_id: str
    action: str
    actor: str
    events: int
    case_id: str | None


@dataclass(frozen=True, slots=True)
class ReviewCaseRow:
    case_id: str
    kind: str
    status: str
    revision: int
    capture_id: str
    candidates: int


@dataclass(frozen=True, slots=True)
class EventRow:
    position: int
    event_type: str
    aggregate: str
    revision: int
    published: bool


def _rows(owner: Database, sql: str, params: tuple[object, ...]) -> list[dict[str, object]]:
    def work(conn: Connection) -> list[dict[str, object]]:
        return conn.execute(sql, params).fetchall()

    return owner.run(work, read_only=True)


def resolution_results(owner: Database, tenant_id: str, catalog_id: str) -> list[ResolutionRow]:
    rows = _rows(
        owner,
        # One row per decided job: the identity stage's row with the extract and normalize rows of the same
        # capture and attempt group (0016), or a single-job row from before the stages ('all').
        """WITH decided AS (
                SELECT r.*,
                       CASE WHEN r.stage = 'all' THEN r.job_id
                            ELSE split_part(r.job_id, ':', 1) || ':extract:' || split_part(r.job_id, ':', 3)
                       END AS extract_job,
                       CASE WHEN r.stage = 'all' THEN r.job_id
                            ELSE split_part(r.job_id, ':', 1) || ':normalize:' || split_part(r.job_id, ':', 3)
                       END AS normalize_job
                  FROM resolver.resolution_result r
                 WHERE r.tenant_id = %s AND r.catalog_id = %s AND r.stage IN ('identity', 'all'))
           SELECT d.capture_id, e.adapter, n.profile, d.stage_outcome, d.decision_id,
                  jsonb_array_length(n.problems) AS problems,
                  (SELECT count(*) FROM resolver.extracted_claim c
                    WHERE c.tenant_id = d.tenant_id AND c.job_id = d.extract_job) AS claims,
                  (SELECT count(*) FROM resolver.normalized_attribute a
                    WHERE a.tenant_id = d.tenant_id AND a.job_id = d.normalize_job) AS attributes
             FROM decided d
             JOIN resolver.resolution_result e ON e.tenant_id = d.tenant_id AND e.job_id = d.extract_job
             JOIN resolver.resolution_result n ON n.tenant_id = d.tenant_id AND n.job_id = d.normalize_job
            ORDER BY d.created_at, d.capture_id""",
        (tenant_id, catalog_id),
    )
    return [
        ResolutionRow(
            capture_id=str(r["capture_id"]),
            adapter=None if r["adapter"] is None else str(r["adapter"]),
            profile=None if r["profile"] is None else str(r["profile"]),
            claims=int(str(r["claims"])),
            attributes=int(str(r["attributes"])),
            problems=int(str(r["problems"])),
            outcome=str(r["stage_outcome"]),
            decision_id=str(r["decision_id"]),
        )
        for r in rows
    ]


def decisions(owner: Database, tenant_id: str, catalog_id: str) -> list[DecisionRow]:
    rows = _rows(
        owner,
        """SELECT d.decision_id, d.action, d.actor, d.case_id,
                  (SELECT count(*) FROM resolver.outbox o
                    WHERE o.tenant_id = d.tenant_id AND o.decision_id = d.decision_id) AS events
             FROM resolver.decision d
            WHERE d.tenant_id = %s AND d.catalog_id = %s ORDER BY d.created_at, d.decision_id""",
        (tenant_id, catalog_id),
    )
    return [
        DecisionRow(
            decision_id=str(r["decision_id"]),
            action=str(r["action"]),
            actor=str(r["actor"]),
            events=int(str(r["events"])),
            case_id=None if r["case_id"] is None else str(r["case_id"]),
        )
        for r in rows
    ]


def review_cases(owner: Database, tenant_id: str, catalog_id: str) -> list[ReviewCaseRow]:
    rows = _rows(
        owner,
        """SELECT case_id, kind, status, revision, capture_id, jsonb_array_length(candidates) AS candidates
             FROM resolver.review_case WHERE tenant_id = %s AND catalog_id = %s ORDER BY created_at, case_id""",
        (tenant_id, catalog_id),
    )
    return [
        ReviewCaseRow(
            case_id=str(r["case_id"]),
            kind=str(r["kind"]),
            status=str(r["status"]),
            revision=int(str(r["revision"])),
            capture_id=str(r["capture_id"]),
            candidates=int(str(r["candidates"])),
        )
        for r in rows
    ]


def events(owner: Database, tenant_id: str, catalog_id: str) -> list[EventRow]:
    rows = _rows(
        owner,
        """SELECT position, event_type, aggregate_type || ':' || aggregate_id AS aggregate, aggregate_revision,
                  published_at IS NOT NULL AS published
             FROM resolver.outbox WHERE tenant_id = %s AND catalog_id = %s ORDER BY history_epoch, position""",
        (tenant_id, catalog_id),
    )
    return [
        EventRow(
            position=int(str(r["position"])),
            event_type=str(r["event_type"]),
            aggregate=str(r["aggregate"]),
            revision=int(str(r["aggregate_revision"])),
            published=bool(r["published"]),
        )
        for r in rows
    ]


@dataclass(frozen=True, slots=True)
class CollectorRow:
    """One registered collector instance with its lease, counters and last run report (the fleet view)."""

    tenant_id: str
    catalog_id: str
    instance_id: str
    worker_id: str
    targets: list[str]
    capabilities: list[str]
    version: str | None
    runtime: str | None
    registered_at: datetime
    lease_expires_at: datetime
    last_heartbeat_at: datetime | None
    consecutive_failures: int
    last_success_at: datetime | None
    #: An unrevoked client still binds the instance (its source grants are live); False once every credential
    #: of the instance is revoked (the instance is decommissioned, its silence expected).
    has_grants: bool
    #: When the current failure streak went above ``failing_after`` (the heartbeat that crossed it), if it did.
    failing_since: datetime | None
    last_run_at: datetime | None
    last_run_outcome: str | None
    last_run_pages_fetched: int | None
    last_run_captures_submitted: int | None
    last_run_failures: dict[str, int] | None
    last_run_error_code: str | None


def collector_fleet(owner: Database, failing_after: int, tenant_id: str | None = None) -> list[CollectorRow]:
    """Every registered instance of every tenant (or of ``tenant_id``). ``failing_since`` is the receipt time of the heartbeat whose
    count first went above ``failing_after`` in the current streak: a failed run adds exactly one, so the latest
    heartbeat with ``failing_after + 1`` is the one that crossed it."""

    def work(conn: Connection) -> list[CollectorRow]:
        with conn.cursor(row_factory=class_row(CollectorRow)) as cur:
            return cur.execute(
                """SELECT i.tenant_id, i.catalog_id, i.instance_id, i.worker_id, i.targets, i.capabilities,
                          i.version, i.runtime, i.registered_at, i.lease_expires_at, i.last_heartbeat_at,
                          i.consecutive_failures, i.last_success_at,
                          EXISTS (SELECT 1 FROM resolver.collector_client c
                                   WHERE c.tenant_id = i.tenant_id AND c.instance_id = i.instance_id
                                     AND c.revoked_at IS NULL) AS has_grants,
                          (SELECT max(h.received_at) FROM resolver.collector_heartbeat h
                            WHERE h.tenant_id = i.tenant_id AND h.instance_id = i.instance_id
                              AND h.consecutive_failures = %s) AS failing_since,
                          last.at AS last_run_at, last.run_outcome AS last_run_outcome,
                          last.pages_fetched AS last_run_pages_fetched,
                          last.captures_submitted AS last_run_captures_submitted,
                          last.failures AS last_run_failures, last.error_code AS last_run_error_code
                     FROM resolver.collector_instance i
                     LEFT JOIN LATERAL (
                          SELECT h.at, h.run_outcome, h.pages_fetched, h.captures_submitted, h.failures,
                                 h.error_code
                            FROM resolver.collector_heartbeat h
                           WHERE h.tenant_id = i.tenant_id AND h.instance_id = i.instance_id
                             AND h.run_outcome IS NOT NULL
                           ORDER BY h.received_at DESC, h.at DESC LIMIT 1) last ON true
                    WHERE %s::text IS NULL OR i.tenant_id = %s
                    ORDER BY i.tenant_id, i.instance_id""",
                (failing_after + 1, tenant_id, tenant_id),
            ).fetchall()

    return owner.run(work, read_only=True)


@dataclass(frozen=True, slots=True)
class AssistItem:
    """One open review case the ``assist`` stage may ask a model about (``prw_platform.resolver.assist``)."""

    tenant_id: str
    catalog_id: str
    case_id: str
    revision: int
    kind: str
    capture_id: str
    top_score: float | None


def assist_backlog(
    owner: Database,
    *,
    day: date,
    default_budget: int,
    tenant_budgets: Mapping[str, int],
    extract_kinds: Sequence[str],
    extract_prompt: str,
    advice_kinds: Sequence[str],
    advice_prompt: str,
    advice_band: tuple[float, float],
    model_id: str,
    limit: int,
) -> list[AssistItem]:
    """Open cases without an answer for this prompt and model, of tenants whose budget for ``day`` is not spent,
    oldest change first: proposals for cases no adapter could read, advice for cases in the uncertain band (the
    best candidate's score within ``advice_band``) at their current revision."""

    def work(conn: Connection) -> list[AssistItem]:
        with conn.cursor(row_factory=class_row(AssistItem)) as cur:
            return cur.execute(
                """SELECT c.tenant_id, c.catalog_id, c.case_id, c.revision, c.kind, c.capture_id, s.top_score
                     FROM resolver.review_case c
                     CROSS JOIN LATERAL (
                         SELECT max((x ->> 'score')::float8) AS top_score FROM jsonb_array_elements(c.candidates) x
                     ) s
                     LEFT JOIN resolver.llm_usage u ON u.tenant_id = c.tenant_id AND u.day = %(day)s
                    WHERE c.status = 'awaiting_human'
                      AND coalesce(u.calls, 0)
                          < coalesce((%(budgets)s::jsonb ->> c.tenant_id)::int, %(default_budget)s)
                      AND ((c.kind = ANY(%(extract_kinds)s)
                            AND NOT EXISTS (
                                SELECT 1 FROM resolver.llm_extraction e
                                 WHERE e.tenant_id = c.tenant_id AND e.capture_id = c.capture_id
                                   AND e.prompt_version = %(extract_prompt)s AND e.model_id = %(model)s))
                        OR (c.kind = ANY(%(advice_kinds)s)
                            AND s.top_score BETWEEN %(band_low)s AND %(band_high)s
                            AND NOT EXISTS (
                                SELECT 1 FROM resolver.llm_advice a
                                 WHERE a.tenant_id = c.tenant_id AND a.case_id = c.case_id
                                   AND a.case_revision = c.revision
                                   AND a.prompt_version = %(advice_prompt)s AND a.model_id = %(model)s)))
                    ORDER BY c.updated_at, c.tenant_id, c.case_id
                    LIMIT %(limit)s""",
                {
                    "day": day,
                    "budgets": json.dumps(dict(tenant_budgets)),
                    "default_budget": default_budget,
                    "extract_kinds": list(extract_kinds),
                    "extract_prompt": extract_prompt,
                    "advice_kinds": list(advice_kinds),
                    "advice_prompt": advice_prompt,
                    "band_low": advice_band[0],
                    "band_high": advice_band[1],
                    "model": model_id,
                    "limit": limit,
                },
            ).fetchall()

    return owner.run(work, read_only=True)


@dataclass(frozen=True, slots=True)
class ReplaySummaryRow:
    """One improvement replay with its diff summary (the ``improvement_replays`` asset)."""

    tenant_id: str
    improvement_id: str
    replay_id: str
    mode: str
    status: str
    pins: dict[str, object]
    captures: int
    settled: int
    changed: int
    failed: int
    claims_changed: int
    attributes_changed: int
    identity_changed: int
    new_review_cases: int
    created_at: datetime
    #: Up to 5 changed captures: (capture id, what changed).
    sample: list[dict[str, object]]


def replay_summaries(owner: Database, limit: int = 20) -> list[ReplaySummaryRow]:
    """The newest replays of every tenant, with counts of what their diffs change and a sample."""

    def work(conn: Connection) -> list[ReplaySummaryRow]:
        with conn.cursor(row_factory=class_row(ReplaySummaryRow)) as cur:
            return cur.execute(
                """SELECT r.tenant_id, r.improvement_id, r.replay_id, r.mode, r.status, r.pins, r.captures,
                          r.settled, r.changed, r.failed,
                          coalesce(d.claims, 0) AS claims_changed, coalesce(d.attributes, 0) AS attributes_changed,
                          coalesce(d.identity, 0) AS identity_changed, coalesce(d.new_cases, 0) AS new_review_cases,
                          r.created_at, coalesce(s.sample, '[]'::jsonb) AS sample
                     FROM resolver.replay r
                     LEFT JOIN LATERAL (
                         SELECT count(*) FILTER (WHERE (c.diff -> 'claims' ->> 'changed')::boolean)::int AS claims,
                                count(*) FILTER (WHERE (c.diff -> 'attributes' ->> 'changed')::boolean)::int
                                    AS attributes,
                                count(*) FILTER (WHERE (c.diff -> 'identity' ->> 'changed')::boolean)::int AS identity,
                                count(*) FILTER (WHERE (c.diff -> 'identity' ->> 'new_review_case')::boolean)::int
                                    AS new_cases
                           FROM resolver.replay_capture c
                          WHERE c.tenant_id = r.tenant_id AND c.replay_id = r.replay_id
                     ) d ON true
                     LEFT JOIN LATERAL (
                         SELECT jsonb_agg(jsonb_build_object(
                                    'capture_id', c.capture_id,
                                    'claims_added', jsonb_array_length(coalesce(c.diff -> 'claims' -> 'added', '[]')),
                                    'claims_removed',
                                        jsonb_array_length(coalesce(c.diff -> 'claims' -> 'removed', '[]')),
                                    'identity', c.diff -> 'identity' -> 'after' ->> 'rule',
                                    'error', c.error ->> 'code')) AS sample
                           FROM (SELECT * FROM resolver.replay_capture c
                                  WHERE c.tenant_id = r.tenant_id AND c.replay_id = r.replay_id
                                    AND (c.outcome_changed OR c.status = 'failed')
                                  ORDER BY c.capture_id LIMIT 5) c
                     ) s ON true
                    ORDER BY r.created_at DESC, r.replay_id DESC
                    LIMIT %s""",
                (limit,),
            ).fetchall()

    return owner.run(work, read_only=True)


@dataclass(frozen=True, slots=True)
class CatalogFileCounts:
    """Seed 004 managed files across tenants: how many in each state, the oldest due cleanup instant, and the
    failed files with the instant the oldest of them failed."""

    per_state: dict[str, int]
    oldest_due_at: datetime | None
    failed: int
    oldest_failed_at: datetime | None


def catalog_file_counts(owner: Database) -> CatalogFileCounts:
    def work(conn: Connection) -> CatalogFileCounts:
        per_state = {
            str(r["state"]): int(str(r["n"]))
            for r in conn.execute(
                "SELECT state, count(*) AS n FROM resolver.catalog_file GROUP BY state ORDER BY state"
            ).fetchall()
        }
        extra = conn.execute(
            """SELECT min(cleanup_due_at) FILTER (WHERE state IN ('detached', 'abandoned')) AS oldest_due_at,
                      min(state_changed_at) FILTER (WHERE state = 'failed') AS oldest_failed_at
               FROM resolver.catalog_file"""
        ).fetchone()
        assert extra is not None
        oldest_due = extra["oldest_due_at"]
        oldest_failed = extra["oldest_failed_at"]
        return CatalogFileCounts(
            per_state=per_state,
            oldest_due_at=oldest_due if isinstance(oldest_due, datetime) else None,
            failed=per_state.get("failed", 0),
            oldest_failed_at=oldest_failed if isinstance(oldest_failed, datetime) else None,
        )

    return owner.run(work, read_only=True)
