"""Identity on a matching benchmark (``prw eval matching``): catalog records become items, each
listing record goes through the identity stage's candidate path (``identity.candidate_identity``: pg_trgm
candidates, then the installed identity rules), read-only.

The benchmark tables carry a title and no identifiers, so an item is created by the decision path (AW-01) with
the title's first word as brand and the record's own id as MPN (``CreateItemAndMap`` needs a strong identifier);
listings carry only their title, so no strong identifier ever settles one and every listing meets the rules as a
review case would. Each run provisions its own catalog (``MatchingBench.provision``) in the tenant given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from prw_platform.db.database import Database
from prw_platform.plugins import IdentityEvidence, PluginRegistry
from prw_platform.resolver.decisions import (
    CreateItemAndMap,
    DecisionService,
    ItemFacts,
    ListingObservation,
    StreamLocator,
)
from prw_platform.resolver.resolution.candidates import words
from prw_platform.resolver.resolution.identity import candidate_identity, rule_actor

_SOURCE_ID_LENGTH = 64
LOAD_RULE = "rule:eval_catalog_load@1"
CORE_PROFILE = "np_core"
#: A benchmark record has no observation time; a fixed one keeps a reload the same command (replayed by key).
RECORD_OBSERVED_AT = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class EvaluationSources:
    """The sources of a benchmark's two tables: a source belongs to one catalog, so each evaluation catalog
    has its own pair (two benchmarks can be evaluated in one tenant)."""

    catalog: str
    listings: str

    @classmethod
    def of(cls, catalog_id: str) -> EvaluationSources:
        stem = catalog_id.removeprefix("cat_")[: _SOURCE_ID_LENGTH - len("src__listings")]
        return cls(f"src_{stem}_records", f"src_{stem}_listings")


@dataclass(frozen=True, slots=True)
class Record:
    """One row of a benchmark table."""

    record_id: str
    title: str


@dataclass(frozen=True, slots=True)
class RankedRecord:
    """A review-case candidate, named by its catalog record."""

    record_id: str
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class AutomaticMapping:
    record_id: str
    rule: str
    rationale: str


@dataclass(frozen=True, slots=True)
class ListingIdentity:
    listing: Record
    automatic: AutomaticMapping | None
    candidates: tuple[RankedRecord, ...]


class MatchingBench:
    """One catalog of benchmark items, and listings identified against it."""

    def __init__(
        self,
        resolver_db: Database,
        decisions: DecisionService,
        streams: StreamLocator,
        registry: PluginRegistry,
        *,
        tenant_id: str,
        catalog_id: str,
    ) -> None:
        self._db = resolver_db
        self._decisions = decisions
        self._streams = streams
        self._registry = registry
        self.tenant_id = tenant_id
        self.catalog_id = catalog_id
        self._records: dict[str, str] = {}

    def load_catalog(self, records: Sequence[Record], progress: Callable[[Record], None]) -> None:
        """Each record becomes an item (one decision each; a repeated run replays by idempotency key)."""
        profile = self._registry.latest(CORE_PROFILE)
        for record in records:
            result = self._decisions.decide(self._create(record, profile), self.tenant_id, self.catalog_id)
            if result.item_id is not None:
                self._records[result.item_id] = record.record_id
            progress(record)

    def identify(self, listing: Record) -> ListingIdentity:
        stream = self._streams(self.tenant_id, self.catalog_id)
        evidence = IdentityEvidence(listing.title, None, None, None, ())
        candidates, ruled = self._db.run(
            lambda conn: candidate_identity(conn, stream, self._registry.identity_rules, evidence),
            tenant_id=self.tenant_id,
            read_only=True,
        )
        automatic = None
        if ruled is not None:
            rule, verdict, _ = ruled
            automatic = AutomaticMapping(self._records[verdict.item_id], rule_actor(rule), verdict.rationale)
        ranked = tuple(RankedRecord(self._records[c.item_id], c.score, c.reason) for c in candidates)
        return ListingIdentity(listing, automatic, ranked)

    def _create(self, record: Record, profile: str) -> CreateItemAndMap:
        brand = " ".join(words(record.title)[:1]) or "unknown"
        observation = ListingObservation(
            source_id=EvaluationSources.of(self.catalog_id).catalog,
            observed_at=RECORD_OBSERVED_AT,
            capture_id=f"cap_eval_{record.record_id}",
            url=None,
            native_record_id=record.record_id,
            title=record.title,
            price=None,
            currency=None,
            availability=None,
        )
        return CreateItemAndMap(
            item=ItemFacts(
                profile=profile, title=record.title, brand=brand, mpn=f"record-{record.record_id}"
            ),
            listing=observation,
            actor=LOAD_RULE,
            rationale=f"catalog record {record.record_id} of the evaluation table",
            idempotency_key=f"eval:{self.catalog_id}:{record.record_id}",
        )
