"""Builders for the decision path (AW-01) and relay (AW-03) tests: a provisioned catalog with an open stream, a
deterministic clock, and commands with valid identifiers."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from psycopg.types.json import Jsonb

from prw_platform.contracts import StreamKey
from prw_platform.db.database import Database
from prw_platform.plugins.types import NormalizedAttribute
from prw_platform.resolver.catalogs import CatalogSpec, ProvisionedCatalog, SourceSpec, provision_catalog
from prw_platform.resolver.decisions import (
    CreateItemAndMap,
    DecisionResult,
    ItemFacts,
    ListingObservation,
    MapListing,
    OpenReviewCase,
    decide,
)

TENANT = "ten_primary"
CATALOG = "cat_primary"
SOURCES = (SourceSpec("src_lumen", "Lumen"), SourceSpec("src_bazaar", "Bazaarline"))
T0 = datetime(2026, 10, 11, 9, 0, tzinfo=UTC)


class TickingClock:
    """Deterministic and strictly increasing, one second per reading; safe to share between threads."""

    def __init__(self, start: datetime = T0) -> None:
        self._ticks = itertools.count()
        self._start = start

    def __call__(self) -> datetime:
        return self._start + timedelta(seconds=next(self._ticks))


def gtin_for(n: int) -> str:
    """A valid GTIN-14 (GS1 mod-10 check digit) for test item ``n``."""
    body = f"0{400638133393 + n:012d}"
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(body)))
    return body + str((10 - total % 10) % 10)


@dataclass
class Catalog:
    """A provisioned catalog and builders for decisions in its stream."""

    resolver_db: Database
    owner_db: Database
    provisioned: ProvisionedCatalog
    clock: TickingClock
    _captures: Iterator[int]
    _keys: Iterator[int]

    @property
    def stream(self) -> StreamKey:
        return self.provisioned.stream

    @property
    def tenant_id(self) -> str:
        return self.stream.tenant_id

    def key(self) -> str:
        return f"job:{self.stream.catalog_id}:cap_{next(self._keys):04d}:identity:1"

    def capture(self, source_id: str = "src_lumen") -> str:
        """A stored capture (review cases reference one)."""
        capture_id = f"cap_{next(self._captures):04d}"
        with self.owner_db.transaction() as conn:
            conn.execute(
                """INSERT INTO resolver.capture (tenant_id, capture_id, catalog_id, source_id, worker_id,
                       instance_id, url, schema_version, observed_at, body)
                   VALUES (%s, %s, %s, %s, 'wrk_test', 'ins_test', 'https://example.test', 'capture/1', %s, %s)""",
                (self.tenant_id, capture_id, self.stream.catalog_id, source_id, T0, Jsonb({})),
            )
        return capture_id

    def observation(
        self,
        record: str,
        *,
        source_id: str = "src_lumen",
        price: str = "129.00",
        observed_at: datetime = T0,
        capture_id: str | None = None,
        title: str | None = None,
    ) -> ListingObservation:
        return ListingObservation(
            source_id=source_id,
            observed_at=observed_at,
            capture_id=capture_id or f"cap_obs_{record}",
            url=f"https://{source_id}.example/p/{record}",
            native_record_id=record,
            title=title or f"Strata P5 SSD {record}",
            price=Decimal(price),
            currency="EUR",
            availability="in_stock",
        )

    def item(self, n: int, **overrides: Any) -> ItemFacts:
        facts: dict[str, Any] = {
            "profile": "np_storage@2",
            "title": f"Strata P5 {n} TB",
            "brand": "Corvana",
            "gtin": gtin_for(n),
            "mpn": f"CVN-SP5-{n}T0",
            "attributes": (
                NormalizedAttribute("storage:capacity", Decimal(n * 1000), 1, unit="GB"),
                NormalizedAttribute("storage:heatsink", False, 1),
            ),
        }
        facts.update(overrides)
        return ItemFacts(**facts)

    def create(self, n: int, record: str | None = None, **observation: Any) -> CreateItemAndMap:
        return CreateItemAndMap(
            item=self.item(n),
            listing=self.observation(record or f"rec_{n}", **observation),
            actor="rule:create_on_required_identifiers@1",
            rationale="no item has these identifiers; GTIN and brand + MPN present",
            idempotency_key=self.key(),
        )

    def map(self, record: str, item_id: str, **observation: Any) -> MapListing:
        return MapListing(
            listing=self.observation(record, **observation),
            item_id=item_id,
            actor="rule:strong_identifier@1",
            rationale="GTIN matches the item",
            idempotency_key=self.key(),
        )

    def review(self, record: str, **observation: Any) -> OpenReviewCase:
        capture_id = self.capture(observation.get("source_id", "src_lumen"))
        return OpenReviewCase(
            listing=self.observation(record, capture_id=capture_id, **observation),
            kind="identity",
            actor="rule:no_strong_identifier@1",
            rationale="no GTIN and no brand + MPN",
            idempotency_key=self.key(),
            case_evidence={"problems": ["core:gtin missing"]},
        )

    def decide(self, cmd: Any) -> DecisionResult:
        return decide(cmd, self.resolver_db, self.stream, clock=self.clock)

    def outbox(self) -> list[dict[str, Any]]:
        with self.owner_db.transaction() as conn:
            return conn.execute(
                """SELECT position, event_id, event_type, aggregate_type, aggregate_id, aggregate_revision,
                       decision_id, body, published_at
                   FROM resolver.outbox WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s
                   ORDER BY position""",
                (self.stream.tenant_id, self.stream.catalog_id, self.stream.history_epoch),
            ).fetchall()

    def committed_position(self) -> int:
        with self.owner_db.transaction() as conn:
            row = conn.execute(
                """SELECT committed_position FROM resolver.stream_cursor
                   WHERE tenant_id = %s AND catalog_id = %s AND history_epoch = %s""",
                (self.stream.tenant_id, self.stream.catalog_id, self.stream.history_epoch),
            ).fetchone()
        assert row is not None
        return int(str(row["committed_position"]))

    def count(self, table: str) -> int:
        with self.owner_db.transaction() as conn:
            row = conn.execute(f"SELECT count(*) AS n FROM resolver.{table}").fetchone()  # noqa: S608
        assert row is not None
        return int(str(row["n"]))


def provision(
    resolver_db: Database,
    control_db: Database,
    owner_db: Database,
    *,
    tenant_id: str = TENANT,
    catalog_id: str = CATALOG,
    release_policy: str = "automatic",
    sources: tuple[SourceSpec, ...] = SOURCES,
) -> Catalog:
    spec = CatalogSpec(tenant_id, catalog_id, "Primary catalog", release_policy, sources)  # type: ignore[arg-type]
    provisioned = provision_catalog(resolver_db, control_db, spec)
    return Catalog(resolver_db, owner_db, provisioned, TickingClock(), itertools.count(1), itertools.count(1))


def wait_until(condition: Callable[[], bool], what: str, deadline_s: float = 30.0) -> None:
    """Poll ``condition`` until it holds or the deadline passes (no sleeps standing in for synchronization)."""
    end = time.monotonic() + deadline_s
    event = threading.Event()
    while time.monotonic() < end:
        if condition():
            return
        event.wait(0.02)
    raise AssertionError(f"timed out waiting for {what}")
