"""Property (seed 000 AW-03 "Prune"): whatever the interleaving of progress reports, lease
creation, renewal, advance, release, expiry and pruning, the pruner never removes an event at or above any live
consumer's acknowledged progress or any unexpired lease pin, and only ever removes a contiguous prefix of
published events whose retention age has elapsed.

Hypothesis draws the interleaving; every step runs against the real retention service and pruner on PostgreSQL
(one fresh catalog per example), and a plain Python model of the consumers and leases says what must survive."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from prw_platform.bootstrap import Platform, bootstrap
from prw_platform.config import Settings
from prw_platform.contracts import StreamKey
from prw_platform.db.database import Connection
from prw_platform.resolver.catalogs import CatalogSpec, SourceSpec
from prw_platform.resolver.intake.errors import ValidationFailed
from prw_platform.resolver.stream.retention import LIVE_CONSUMER, ExportExpired, advance_lease

EVENTS = 30
AGE = timedelta(hours=1)
TTL = timedelta(minutes=10)
CONSUMERS = (LIVE_CONSUMER, "audit_copy")


@dataclass
class MovableClock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now


@dataclass
class Harness:
    platform: Platform
    clock: MovableClock
    catalogs: Iterator[int] = field(default_factory=itertools.count)


@pytest.fixture
def harness(deployment_settings: Settings) -> Iterator[Harness]:
    clock = MovableClock(datetime(2026, 12, 1, tzinfo=UTC))
    configured = deployment_settings.model_copy(
        update={
            "retention_age_seconds": int(AGE.total_seconds()),
            "retention_lease_ttl_seconds": int(TTL.seconds),
        }
    )
    with bootstrap(configured, clock=clock) as platform:
        # A small chunk so that one prune is several transactions, each re-reading the bound under the lock.
        platform.pruner.chunk = 4
        yield Harness(platform, clock)


def seed_stream(harness: Harness, published: list[int | None]) -> StreamKey:
    """A fresh catalog whose stream holds EVENTS committed events; ``published[i]`` is how many minutes before
    the clock event i + 1 was published (None: not yet)."""
    catalog = f"cat_prop_{next(harness.catalogs)}"
    stream = harness.platform.catalogs.provision(
        CatalogSpec("ten_prop", catalog, catalog, "manual", (SourceSpec(f"src_{catalog}", "prop"),))
    ).stream
    now = harness.clock.now
    with psycopg.connect(harness.platform.urls.main) as conn:
        for position, minutes in enumerate(published, start=1):
            conn.execute(
                """INSERT INTO resolver.outbox (tenant_id, catalog_id, history_epoch, position, event_id, event_type,
                       aggregate_type, aggregate_id, aggregate_revision, body, accepted_at, published_at)
                   VALUES (%s, %s, %s, %s, %s, 'catalog_item.created', 'catalog_item', %s, 1, '{}', %s, %s)""",
                (
                    stream.tenant_id,
                    stream.catalog_id,
                    stream.history_epoch,
                    position,
                    f"evt_prop_{position}",
                    f"itm_prop_{position}",
                    now,
                    None if minutes is None else now - timedelta(minutes=minutes),
                ),
            )
        conn.execute(
            """UPDATE resolver.stream_cursor SET committed_position = %s
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s""",
            (len(published), stream.tenant_id, stream.catalog_id, stream.history_epoch),
        )
    return stream


def outbox(platform: Platform, stream: StreamKey) -> dict[int, datetime | None]:
    with psycopg.connect(platform.urls.main) as conn:
        rows = conn.execute(
            """SELECT position, published_at FROM resolver.outbox
               WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s""",
            (stream.tenant_id, stream.catalog_id, stream.history_epoch),
        ).fetchall()
    return dict(rows)


operations = st.lists(
    st.one_of(
        st.tuples(st.just("report"), st.sampled_from(CONSUMERS), st.integers(0, EVENTS + 2)),
        st.tuples(st.just("report"), st.just(LIVE_CONSUMER), st.integers(EVENTS // 2, EVENTS)),
        st.tuples(st.just("lease")),
        st.tuples(st.just("renew"), st.integers(0, 3)),
        st.tuples(st.just("advance"), st.integers(0, 3), st.integers(0, EVENTS)),
        st.tuples(st.just("release"), st.integers(0, 3)),
        st.tuples(st.just("tick"), st.integers(0, 40)),
        st.tuples(st.just("prune")),
    ),
    min_size=1,
    max_size=25,
)
# Minutes before the clock each event was published: old enough (>= 60), too young, or not published yet (None).
# A prefix of old, published events is drawn first so that most examples have something the pruner may remove.
publications = st.integers(0, EVENTS).flatmap(
    lambda old: st.tuples(
        st.lists(st.integers(60, 180), min_size=old, max_size=old),
        st.lists(st.one_of(st.none(), st.integers(0, 180)), min_size=EVENTS - old, max_size=EVENTS - old),
    ).map(lambda parts: [*parts[0], *parts[1]])
)


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(published=publications, steps=operations)
def test_the_pruner_never_removes_what_a_live_consumer_or_an_unexpired_lease_still_needs(
    harness: Harness, published: list[int | None], steps: list[tuple[object, ...]]
) -> None:
    platform, clock = harness.platform, harness.clock
    stream = seed_stream(harness, published)
    retention = platform.retention
    # The model: acknowledged progress per registered consumer, every lease, and the pruned-through cursor P.
    acknowledged = {LIVE_CONSUMER: 0}
    leases: list[LeaseModel] = []
    pruned_through = 0

    for step in steps:
        kind = step[0]
        if kind == "report":
            consumer, position = str(step[1]), int(str(step[2]))
            try:
                ack = retention.report_progress(stream, consumer, position)
            except ValidationFailed:
                assert position > EVENTS
                continue
            acknowledged[consumer] = max(acknowledged.get(consumer, 0), position)
            assert ack.acknowledged_position == acknowledged[consumer]
        elif kind == "lease":
            lease = retention.create_lease(stream, "property")
            assert lease.pinned_at == pruned_through  # pinned after P
            leases.append(LeaseModel(lease.lease_id, lease.pinned_at, lease.expires_at))
        elif kind in ("renew", "advance", "release") and leases:
            model = leases[int(str(step[1])) % len(leases)]
            alive = model.live(clock.now)
            try:
                if kind == "renew":
                    model.expires_at = retention.renew_lease(stream.tenant_id, model.lease_id).expires_at
                elif kind == "advance":
                    to = int(str(step[2]))

                    def advance(conn: Connection, lease_id: str = model.lease_id, to: int = to) -> int:
                        return advance_lease(conn, lease_id, to, clock.now).pinned_at

                    pinned = platform.resolver_db.run(advance, tenant_id=stream.tenant_id)
                    assert pinned == max(model.pin, to)
                    model.pin = pinned
                else:
                    released = retention.release_lease(stream.tenant_id, model.lease_id)
                    assert released == (not model.released)
                    model.released = True
                    continue
            except ExportExpired:
                assert not alive
                continue
            assert alive
        elif kind == "tick":
            clock.now += timedelta(minutes=int(str(step[1])))
        elif kind == "prune":
            before = outbox(platform, stream)
            bound = min([*acknowledged.values(), *(m.pin for m in leases if m.live(clock.now))])
            cutoff = clock.now - AGE
            platform.pruner.prune()
            after = outbox(platform, stream)
            removed = sorted(set(before) - set(after))
            # Never at or above a live consumer's progress or an unexpired pin.
            assert all(position < bound for position in removed), (removed, bound)
            if removed:
                # Only a contiguous prefix, of published events old enough.
                assert removed == list(range(pruned_through + 1, removed[-1] + 1))
                assert all(_eligible(before[p], cutoff) for p in removed)
                pruned_through = removed[-1]
                event("a prune removed events")
            # As far as it may: the next event is at the bound, or not published long enough ago.
            following = pruned_through + 1
            if following < bound and following in after:
                assert not _eligible(after[following], cutoff)
            status = next(s for s in platform.retention_status() if s.catalog_id == stream.catalog_id)
            assert status.pruned_through == pruned_through


@dataclass
class LeaseModel:
    lease_id: str
    pin: int
    expires_at: datetime
    released: bool = False

    def live(self, now: datetime) -> bool:
        return not self.released and now < self.expires_at


def _eligible(published_at: datetime | None, cutoff: datetime) -> bool:
    return published_at is not None and published_at <= cutoff


def test_a_lease_created_while_the_pruner_runs_keeps_every_event_after_its_pin(harness: Harness) -> None:
    """The retention-control lock in action: lease creation races a prune of several chunks (transactions). A lease
    is pinned at whatever P the lock lets it see, and no chunk after it removes anything above that pin."""
    platform = harness.platform
    for _ in range(8):
        stream = seed_stream(harness, [120] * EVENTS)
        platform.retention.report_progress(stream, LIVE_CONSUMER, EVENTS)
        with ThreadPoolExecutor(max_workers=2) as pool:
            pruning = pool.submit(platform.pruner.prune)
            lease = pool.submit(platform.retention.create_lease, stream, "race").result()
            pruning.result()
        left = outbox(platform, stream)
        assert set(range(lease.pinned_at + 1, EVENTS + 1)) <= set(left), (lease.pinned_at, sorted(left))
        status = next(s for s in platform.retention_status() if s.catalog_id == stream.catalog_id)
        assert status.pruned_through <= lease.pinned_at
