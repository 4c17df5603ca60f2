"""The review queue (if_review_read): ``GET /v1/review`` and ``GET /v1/review/{case_id}``.

Only the active tenant's cases are read (the request's tenant, under row-level security as well: INV-06). The
queue is ordered oldest first by (created_at, case_id) and paged by that key; a cursor carries the last key of
its page and a fingerprint of the filters, signed by the deployment (``TokenSigner``, purpose ``review cursor``),
so a cursor the server did not issue, or issued for other filters, is 422 INVALID_CURSOR. Counts per status and
kind are over the whole filtered set, not the page.

A case reads as the reviewer needs it: its claims (with the adapter@version that extracted them and their
evidence locators), normalized attributes and problems as the rule recorded them when it opened the case, the
ranked candidates with their scores and what the catalog says of each item now, a bounded excerpt of the page,
short-lived signed links to the evidence bytes, the decision history, and the revision a decision must name.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from prw_platform.auth.signed import TokenSigner
from prw_platform.db.database import Connection, Database
from prw_platform.resolver import assist
from prw_platform.resolver.decisions import cases, facts, records
from prw_platform.resolver.decisions.catalog_decisions import current_policy
from prw_platform.resolver.decisions.duplicates import MAX_PAIRS, DuplicatePair, catalog_duplicates
from prw_platform.resolver.decisions.errors import CaseNotFound
from prw_platform.resolver.intake.artifacts import StoredArtifact
from prw_platform.resolver.intake.captures import load_capture
from prw_platform.resolver.review.case_view import CaseView, case_view
from prw_platform.resolver.review.errors import InvalidCursor
from prw_platform.resolver.review.evidence import EvidenceLinks
from prw_platform.resolver.review.items import ItemView, item_view

DEFAULT_LIMIT: Final = 50
MAX_LIMIT: Final = 200
CURSOR_PURPOSE: Final = "prw review cursor v1"

ReviewFilters = cases.CaseFilters
CaseSummary = cases.CaseSummary


@dataclass(frozen=True, slots=True)
class ReviewCounts:
    total: int
    status: dict[str, int]
    kind: dict[str, int]


@dataclass(frozen=True, slots=True)
class ReviewPage:
    cases: tuple[CaseSummary, ...]
    next_cursor: str | None
    counts: ReviewCounts


class ReviewQueue:
    def __init__(self, db: Database, evidence: EvidenceLinks, secret: bytes) -> None:
        self._db = db
        self.evidence = evidence
        self._cursors = TokenSigner(secret, CURSOR_PURPOSE)

    def page(
        self, tenant_id: str, filters: ReviewFilters, *, cursor: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> ReviewPage:
        after = self._decode(cursor, filters) if cursor else None
        limit = max(1, min(limit, MAX_LIMIT))

        def read(conn: Connection) -> tuple[list[CaseSummary], list[tuple[str, str, int]]]:
            return (
                cases.queue_page(conn, tenant_id, filters, after, limit + 1),
                cases.queue_counts(conn, tenant_id, filters),
            )

        found, counted = self._db.run(read, tenant_id=tenant_id, read_only=True)
        page = tuple(found[:limit])
        more = len(found) > limit
        return ReviewPage(page, self._encode(page[-1].key, filters) if more else None, _counts(counted))

    def next_case(self, tenant_id: str, filters: ReviewFilters, after_case_id: str) -> str | None:
        """The case after ``after_case_id`` in the queue's order under ``filters`` (the console's "next")."""

        def read(conn: Connection) -> str | None:
            current = cases.case_row(conn, tenant_id, after_case_id)
            after = cases.QueueKey(current.created_at, current.case_id) if current else None
            found = cases.queue_page(conn, tenant_id, filters, after, 2)
            following = [case.case_id for case in found if case.case_id != after_case_id]
            return following[0] if following else None

        return self._db.run(read, tenant_id=tenant_id, read_only=True)

    def case(self, tenant_id: str, case_id: str) -> CaseView:
        """The case in the active tenant, or CaseNotFound (404 NOT_FOUND; another tenant's case is unknown)."""

        def read(conn: Connection) -> CaseView:
            row = cases.case_row(conn, tenant_id, case_id)
            if row is None:
                raise CaseNotFound(f"no review case {case_id}")
            candidates = [str(c.get("item_id")) for c in row.candidates]
            return case_view(
                row,
                facts.item_cards(conn, tenant_id, candidates),
                records.case_decisions(conn, tenant_id, case_id),
                capture_artifacts(conn, tenant_id, row.capture_id),
                tuple(assist.proposals_for_capture(conn, tenant_id, row.capture_id)),
                tuple(assist.advice_for_case(conn, tenant_id, case_id)),
            )

        view = self._db.run(read, tenant_id=tenant_id, read_only=True)
        return view.with_evidence(tenant_id, self.evidence)

    def item(self, tenant_id: str, item_id: str) -> ItemView:
        """An item of the active tenant with the listings mapped to it now (before a merge or a split); another
        tenant's item is unknown (``ItemNotFound``, 404 NOT_FOUND)."""
        return self._db.run(
            lambda conn: item_view(conn, tenant_id, item_id), tenant_id=tenant_id, read_only=True
        )

    def duplicates(self, tenant_id: str, catalog_id: str, *, limit: int = MAX_PAIRS) -> list[DuplicatePair]:
        """The catalog's likely duplicate item pairs, best first; a catalog the tenant does not have is
        ``CatalogNotFound`` (404 NOT_FOUND)."""

        def read(conn: Connection) -> list[DuplicatePair]:
            current_policy(conn, tenant_id, catalog_id)
            return catalog_duplicates(conn, tenant_id, catalog_id, limit=limit)

        return self._db.run(read, tenant_id=tenant_id, read_only=True)

    # -- cursors --------------------------------------------------------------------------------------------
    def _encode(self, key: cases.QueueKey, filters: ReviewFilters) -> str:
        return self._cursors.sign([key.created_at.isoformat(), key.case_id, _fingerprint(filters)])

    def _decode(self, cursor: str, filters: ReviewFilters) -> cases.QueueKey:
        document = self._cursors.verify(cursor)
        if not (
            isinstance(document, list) and len(document) == 3 and all(isinstance(v, str) for v in document)
        ):
            raise InvalidCursor("cursor is not one this API issued")
        created_at, case_id, fingerprint = document
        if fingerprint != _fingerprint(filters):
            raise InvalidCursor("cursor was issued for other filters: repeat the query that returned it")
        try:
            return cases.QueueKey(datetime.fromisoformat(created_at), case_id)
        except ValueError as error:
            raise InvalidCursor("cursor is not one this API issued") from error


def capture_artifacts(conn: Connection, tenant_id: str, capture_id: str) -> tuple[StoredArtifact, ...]:
    capture = load_capture(conn, tenant_id, capture_id)
    return capture.artifacts if capture else ()


def _fingerprint(filters: ReviewFilters) -> str:
    canonical = "\x1f".join(v or "" for v in (filters.status, filters.kind, filters.source_id))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _counts(rows: list[tuple[str, str, int]]) -> ReviewCounts:
    status: dict[str, int] = {}
    kind: dict[str, int] = {}
    for state, case_kind, n in rows:
        status[state] = status.get(state, 0) + n
        kind[case_kind] = kind.get(case_kind, 0) + n
    return ReviewCounts(sum(status.values()), status, kind)
