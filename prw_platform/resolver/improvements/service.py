"""Operators create, approve and abandon improvements (if_replay_job's "improvement loop").

An improvement proposes new pinned versions — an adapter (``pa_schemaorg@1.1.0``), a profile (``np_core@1``)
and attribute definitions — for a **selection** of the catalog's stored captures: by source, by the adapter that
extracted them, by observation time, by the kind of review case they opened, or by id. Its life:

    draft ──approve (a reviewer, not its author)──▶ reviewer_approved ──apply replay──▶ applied
      └──────────────abandon──────────────┴──────────────────────────▶ abandoned

Every move is one transaction that locks the row, checks the move, updates the status and records a transition
(who, why, when); the table's trigger (migration 0017) refuses any other move whatever the code path. Creating is
idempotent by ``Idempotency-Key`` (the same key and body → the same improvement; another body → 409). Pins are
checked against the installed plugins (422 UNKNOWN_ADAPTER_VERSION / UNKNOWN_PROFILE_VERSION) and the selection
must match at least one capture, so a replay never starts from a typo.

The selection is resolved by the owners of each table (captures, results, review cases), never by a join here.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Final

from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Connection, Database
from prw_platform.plugins import PluginRegistry
from prw_platform.resolver import catalogs
from prw_platform.resolver.decisions.cases import captures_with_case_kind
from prw_platform.resolver.improvements import store
from prw_platform.resolver.improvements.errors import (
    EmptySelection,
    ImprovementIdempotencyConflict,
    ImprovementNotFound,
    InvalidImprovementTransition,
    SelfApproval,
    UnknownCatalog,
    UnknownDefinitionVersion,
    UnknownIdentityGeneration,
)
from prw_platform.resolver.improvements.pins import check_pins, definition_versions
from prw_platform.resolver.intake.captures import select_capture_ids
from prw_platform.resolver.resolution.generations import (
    GenerationNotFound,
    check_approvable,
    check_generation,
)
from prw_platform.resolver.resolution.results import captures_extracted_by

#: An improvement re-resolves at most this many captures (a replay sends one message per capture).
MAX_SELECTED: Final = 10_000


@dataclass(frozen=True, slots=True)
class Selection:
    """Which stored captures an improvement re-resolves; every given criterion must hold."""

    source_id: str | None = None
    #: The adapter pin that extracted them (``pa_schemaorg@1.0.0``).
    adapter: str | None = None
    observed_from: datetime | None = None
    #: Exclusive.
    observed_to: datetime | None = None
    review_case_kind: str | None = None
    capture_ids: tuple[str, ...] | None = None

    def document(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in asdict(self).items():
            if value is None:
                continue
            out[name] = (
                value.isoformat()
                if isinstance(value, datetime)
                else list(value)
                if isinstance(value, tuple)
                else value
            )
        return out

    @classmethod
    def of(cls, document: dict[str, Any]) -> Selection:
        def when(key: str) -> datetime | None:
            value = document.get(key)
            return datetime.fromisoformat(value) if isinstance(value, str) else None

        ids = document.get("capture_ids")
        return cls(
            source_id=document.get("source_id"),
            adapter=document.get("adapter"),
            observed_from=when("observed_from"),
            observed_to=when("observed_to"),
            review_case_kind=document.get("review_case_kind"),
            capture_ids=tuple(ids) if isinstance(ids, list) else None,
        )


@dataclass(frozen=True, slots=True)
class ImprovementDraft:
    catalog_id: str
    selection: Selection
    rationale: str
    adapter_version: str | None = None
    profile_version: str | None = None
    definition_version: str | None = None
    #: An identity generation of the catalog to propose (``prw identity calibrate`` wrote it).
    identity_generation: int | None = None


@dataclass(frozen=True, slots=True)
class ImprovementView:
    improvement: store.Improvement
    transitions: tuple[store.Transition, ...]
    #: How many stored captures the selection matches now (at most ``MAX_SELECTED``).
    captures: int
    replayed: bool = False
    sample: tuple[str, ...] = field(default_factory=tuple)


def selected_captures(conn: Connection, tenant_id: str, catalog_id: str, selection: Selection) -> list[str]:
    """The capture ids the selection matches, oldest observation first, at most ``MAX_SELECTED``."""
    ids = select_capture_ids(
        conn,
        tenant_id,
        catalog_id,
        source_id=selection.source_id,
        observed_from=selection.observed_from,
        observed_to=selection.observed_to,
        capture_ids=selection.capture_ids,
        limit=MAX_SELECTED,
    )
    if selection.adapter is not None and ids:
        by_adapter = captures_extracted_by(conn, tenant_id, selection.adapter, ids)
        ids = [i for i in ids if i in by_adapter]
    if selection.review_case_kind is not None and ids:
        with_kind = captures_with_case_kind(conn, tenant_id, selection.review_case_kind, ids)
        ids = [i for i in ids if i in with_kind]
    return ids


class ImprovementService:
    def __init__(self, db: Database, registry: PluginRegistry, clock: Clock = utc_now) -> None:
        self._db = db
        self._registry = registry
        self._clock = clock

    def create(
        self, tenant_id: str, draft: ImprovementDraft, actor: str, idempotency_key: str | None = None
    ) -> ImprovementView:
        self._check_pins(draft)
        now = self._clock()
        improvement_id = (
            "imp_" + hashlib.sha256(f"{tenant_id}\x1f{idempotency_key}".encode()).hexdigest()[:24]
            if idempotency_key
            else "imp_" + secrets.token_hex(12)
        )
        wanted = store.Improvement(
            tenant_id=tenant_id,
            catalog_id=draft.catalog_id,
            improvement_id=improvement_id,
            adapter_version=draft.adapter_version,
            profile_version=draft.profile_version,
            definition_version=draft.definition_version,
            selection=draft.selection.document(),
            status="draft",
            created_by=actor,
            created_at=now,
            rationale=draft.rationale,
            idempotency_key=idempotency_key,
            identity_generation=draft.identity_generation,
        )

        def work(conn: Connection) -> ImprovementView:
            if idempotency_key is not None:
                existing = store.improvement_by_key(conn, tenant_id, idempotency_key)
                if existing is not None:
                    if _body(existing) != _body(wanted):
                        raise ImprovementIdempotencyConflict(
                            f"Idempotency-Key {idempotency_key!r} created {existing.improvement_id} with another body"
                        )
                    return self._view(conn, existing, replayed=True)
            if not any(c.catalog_id == draft.catalog_id for c in catalogs.catalog_policies(conn, tenant_id)):
                raise UnknownCatalog(f"no catalog {draft.catalog_id} in tenant {tenant_id}")
            try:
                check_generation(conn, tenant_id, draft.catalog_id, draft.identity_generation)
            except GenerationNotFound as missing:
                raise UnknownIdentityGeneration(str(missing)) from missing
            if not selected_captures(conn, tenant_id, draft.catalog_id, draft.selection):
                raise EmptySelection("the selection matches no stored capture of the catalog")
            store.insert_improvement(conn, wanted)
            return self._view(conn, wanted)

        return self._db.run(work, tenant_id=tenant_id)

    def installed_pins(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The adapter and profile pins an improvement may name (the console offers them)."""
        return self._registry.adapter_pins, self._registry.profile_pins

    def get(self, tenant_id: str, improvement_id: str) -> ImprovementView:
        def work(conn: Connection) -> ImprovementView:
            return self._view(conn, self._find(conn, tenant_id, improvement_id))

        return self._db.run(work, tenant_id=tenant_id, read_only=True)

    def approve(self, tenant_id: str, improvement_id: str, actor: str, rationale: str) -> ImprovementView:
        return self._move(tenant_id, improvement_id, "reviewer_approved", actor, rationale)

    def abandon(self, tenant_id: str, improvement_id: str, actor: str, rationale: str) -> ImprovementView:
        return self._move(tenant_id, improvement_id, "abandoned", actor, rationale)

    def mark_applied(
        self, tenant_id: str, improvement_id: str, actor: str, rationale: str
    ) -> ImprovementView:
        """An apply replay finished."""
        return self._move(tenant_id, improvement_id, "applied", actor, rationale)

    def _move(
        self, tenant_id: str, improvement_id: str, to: store.ImprovementStatus, actor: str, rationale: str
    ) -> ImprovementView:
        def work(conn: Connection) -> ImprovementView:
            current = self._find(conn, tenant_id, improvement_id, lock=True)
            if to not in _NEXT[current.status]:
                raise InvalidImprovementTransition(
                    f"improvement {improvement_id} is {current.status}; it cannot become {to}"
                )
            if to == "reviewer_approved" and _subject(current.created_by) == _subject(actor):
                raise SelfApproval(
                    f"{actor} wrote improvement {improvement_id}: another reviewer approves it"
                )
            if to == "reviewer_approved":
                check_approvable(conn, tenant_id, current.catalog_id, current.identity_generation)
            moved = store.set_status(conn, current, to, actor, rationale, self._clock())
            return self._view(conn, moved)

        return self._db.run(work, tenant_id=tenant_id)

    def _find(
        self, conn: Connection, tenant_id: str, improvement_id: str, *, lock: bool = False
    ) -> store.Improvement:
        found = store.get_improvement(conn, tenant_id, improvement_id, lock=lock)
        if found is None:
            raise ImprovementNotFound(f"no improvement {improvement_id}")
        return found

    def _view(
        self, conn: Connection, improvement: store.Improvement, *, replayed: bool = False
    ) -> ImprovementView:
        ids = selected_captures(
            conn, improvement.tenant_id, improvement.catalog_id, Selection.of(improvement.selection)
        )
        return ImprovementView(
            improvement=improvement,
            transitions=tuple(store.transitions(conn, improvement.tenant_id, improvement.improvement_id)),
            captures=len(ids),
            replayed=replayed,
            sample=tuple(ids[:10]),
        )

    def _check_pins(self, draft: ImprovementDraft) -> None:
        definitions = definition_versions(draft.definition_version)
        if draft.definition_version and definitions is None:
            raise UnknownDefinitionVersion(
                f"definition_version {draft.definition_version!r} is not KEY@VERSION[,KEY@VERSION...]"
            )
        check_pins(self._registry, draft.adapter_version, draft.profile_version, definitions)


_NEXT: Final[dict[str, Sequence[str]]] = {
    "draft": ("reviewer_approved", "abandoned"),
    "reviewer_approved": ("applied", "abandoned"),
    "applied": (),
    "abandoned": (),
}


def _body(improvement: store.Improvement) -> str:
    """What an Idempotency-Key promises stays the same."""
    return json.dumps(
        [
            improvement.catalog_id,
            improvement.adapter_version,
            improvement.profile_version,
            improvement.definition_version,
            improvement.selection,
            improvement.rationale,
            improvement.identity_generation,
        ],
        sort_keys=True,
    )


def _subject(actor: str) -> str:
    """``operator:ada`` and ``reviewer:ada`` are the same person."""
    return actor.split(":", 1)[-1]
