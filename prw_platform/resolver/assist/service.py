"""What the platform asks a model, when, and where the answer goes (if_llm_extract, if_llm_review, DEC-02).

The ``assist`` stage works through a backlog the operator read model computes (``reports.assist_backlog``): open
review cases (``awaiting_human``) that

* no adapter could read (kinds ``no_adapter``, ``extraction_failed``: if_llm_extract "when no adapter supports
  the capture or the adapter failed") and have no proposal yet for the capture's page, prompt and model; or
* sit in the uncertain band (a candidate whose best score is within ``advice_min_score``..``advice_max_score``)
  and have no advice yet for their current revision (if_llm_review);

of tenants whose daily budget is not spent. For each one it takes a call from the tenant's budget, sends ONE
request built from that case's own capture and evidence (page text delimited as untrusted, no tools, no
credentials), validates the answer against ``claims/1`` or ``review-advice/1`` with one repair attempt, and stores
it keyed as the seed says, so a redelivery or a second worker reuses it. OUTPUT_SCHEMA_INVALID is stored too
(terminal: the case stays ``awaiting_human`` for a human). 429/5xx are retried by the provider, then the stage
backs off (``retry_after``) and leaves the item in the backlog.

The answers only *annotate* the case: they are rows of ``resolver.llm_extraction`` / ``llm_advice`` that the review
read shows beside the claims, marked ``advisory``. Nothing here opens a decision, changes a case's revision or
writes a fact: an identity that depends on LLM output is never created automatically (DEC-02); a reviewer who
agrees decides through ``POST /v1/decisions`` like any other decision.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Connection, Database
from prw_platform.llm import (
    LlmError,
    LlmOutputSchemaInvalid,
    LlmProvider,
    LlmRateLimited,
    LlmRequest,
    Message,
)
from prw_platform.llm.prompts import (
    ADVICE_SCHEMA,
    ADVICE_SCHEMA_NAME,
    CLAIMS_SCHEMA,
    CLAIMS_SCHEMA_NAME,
    EXTRACT_PROMPT,
    REVIEW_PROMPT,
    plain,
    prompt_text,
)
from prw_platform.llm.structured import Structured, ask
from prw_platform.llm.text import MAX_EXCERPT_CHARS, delimited
from prw_platform.resolver import reports
from prw_platform.resolver.assist import store
from prw_platform.resolver.decisions.cases import case_row
from prw_platform.resolver.intake.artifacts import StoredArtifact
from prw_platform.resolver.intake.captures import load_capture
from prw_platform.resolver.review.excerpt import page_excerpt
from prw_platform.storage import ObjectStore, StorageError, parse_tenant_ref

log = logging.getLogger(__name__)

#: How long the stage leaves the provider alone after a 429 without Retry-After or a 5xx that outlived its retries.
PROVIDER_BACKOFF_SECONDS = 30.0
#: Review case kinds whose capture no adapter could read: a model may propose claims.
EXTRACT_KINDS = ("no_adapter", "extraction_failed")
#: Review case kinds with ranked candidates a model may advise on.
ADVICE_KINDS = ("no_strong_identifier", "ambiguous_identity", "no_rule_decided", "conflicting_identifiers")


@dataclass(frozen=True, slots=True)
class AssistPolicy:
    """When to ask (``Settings.llm``)."""

    calls_per_tenant_per_day: int = 200
    tenant_budgets: Mapping[str, int] = field(default_factory=dict)
    advice_min_score: float = 0.3
    advice_max_score: float = 0.95

    def budget(self, tenant_id: str) -> int:
        return self.tenant_budgets.get(tenant_id, self.calls_per_tenant_per_day)


@dataclass(frozen=True, slots=True)
class AssistReport:
    considered: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def answered(self) -> int:
        """Items settled this batch (an answer or a terminal OUTPUT_SCHEMA_INVALID stored): the stage's progress."""
        return sum(self.counts.get(k, 0) for k in ("proposed", "advised", "output_schema_invalid", "cached"))


class AssistService:
    def __init__(
        self,
        resolver: Database,
        operator: Database,
        store_: ObjectStore,
        provider: LlmProvider,
        policy: AssistPolicy,
        clock: Clock = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = resolver
        self._operator = operator
        self._store = store_
        self._provider = provider
        self._policy = policy
        self._clock = clock
        self._monotonic = monotonic
        #: monotonic time before which the provider is not asked again (its last 429/5xx).
        self._not_before = 0.0

    @property
    def enabled(self) -> bool:
        return self._provider.enabled

    def _backlog(self, limit: int) -> list[reports.AssistItem]:
        return reports.assist_backlog(
            self._operator,
            day=self._clock().date(),
            default_budget=self._policy.calls_per_tenant_per_day,
            tenant_budgets=self._policy.tenant_budgets,
            extract_kinds=EXTRACT_KINDS,
            extract_prompt=EXTRACT_PROMPT,
            advice_kinds=ADVICE_KINDS,
            advice_prompt=REVIEW_PROMPT,
            advice_band=(self._policy.advice_min_score, self._policy.advice_max_score),
            model_id=self._provider.model_id,
            limit=limit,
        )

    def has_work(self) -> bool:
        if not self.enabled or self._monotonic() < self._not_before:
            return False
        return bool(self._backlog(1))

    def run_batch(self, limit: int) -> AssistReport:
        if not self.enabled or self._monotonic() < self._not_before:
            return AssistReport()
        counts: Counter[str] = Counter()
        items = self._backlog(limit)
        for item in items:
            try:
                outcome = self._advise(item) if item.kind in ADVICE_KINDS else self._propose(item)
            except LlmError as error:  # retryable: 429/5xx after the provider's own retries
                wait = (
                    error.retry_after
                    if isinstance(error, LlmRateLimited) and error.retry_after is not None
                    else PROVIDER_BACKOFF_SECONDS
                )
                self._not_before = self._monotonic() + wait
                counts[error.code] += 1
                log.warning(
                    "LLM %s for case %s (%s): backing off %.0f s", error.code, item.case_id, error, wait
                )
                break
            counts[outcome] += 1
        return AssistReport(len(items), dict(counts))

    # -- if_llm_extract -----------------------------------------------------------------------------------
    def _propose(self, item: reports.AssistItem) -> str:
        page = self._db.run(
            lambda conn: _page_artifact(conn, item.tenant_id, item.capture_id), tenant_id=item.tenant_id
        )
        if page is None:
            return "no_text_artifact"
        key = store.ExtractionKey(
            item.tenant_id, item.capture_id, page.sha256, EXTRACT_PROMPT, self._provider.model_id
        )
        if self._db.run(
            lambda conn: store.cached_proposal(conn, key), tenant_id=item.tenant_id, read_only=True
        ):
            return "cached"
        try:
            stored = self._store.get(parse_tenant_ref(page.ref, item.tenant_id), verify=True)
        except StorageError:
            return "storage_unavailable"
        if stored.sha256 != page.sha256:
            return "digest_mismatch"  # the capture's evidence is not readable as captured; its case says so
        excerpt = page_excerpt(stored.data, page.media_type, limit=MAX_EXCERPT_CHARS)
        request = LlmRequest(
            prompt_version=EXTRACT_PROMPT,
            schema_name=CLAIMS_SCHEMA_NAME,
            schema=plain(CLAIMS_SCHEMA),
            messages=(
                Message("system", prompt_text(EXTRACT_PROMPT)),
                Message(
                    "user",
                    f"capture_id: {item.capture_id}\nartifact_sha256: {page.sha256}\nmedia_type: {page.media_type}\n"
                    + delimited(excerpt.text),
                ),
            ),
        )
        if not self._spend(item.tenant_id):
            return "budget_exhausted"
        answer = self._ask(request)

        def save(conn: Connection) -> store.Proposal:
            if isinstance(answer, LlmOutputSchemaInvalid):
                return store.record_proposal(
                    conn,
                    key,
                    item.catalog_id,
                    item.case_id,
                    status=store.SCHEMA_INVALID,
                    claims=[],
                    diagnostics=[],
                    answered_by=None,
                    repaired=True,
                    error=str(answer),
                    now=self._clock(),
                )
            return store.record_proposal(
                conn,
                key,
                item.catalog_id,
                item.case_id,
                status=store.PROPOSED,
                claims=list(answer.content["claims"]),
                diagnostics=list(answer.content["diagnostics"]),
                answered_by=answer.answer.model_id,
                repaired=answer.repaired,
                error=None,
                now=self._clock(),
            )

        return self._db.run(save, tenant_id=item.tenant_id).status

    # -- if_llm_review ------------------------------------------------------------------------------------
    def _advise(self, item: reports.AssistItem) -> str:
        key = store.AdviceKey(
            item.tenant_id, item.case_id, item.revision, REVIEW_PROMPT, self._provider.model_id
        )

        def read(conn: Connection) -> tuple[Any, store.Advice | None, StoredArtifact | None]:
            return (
                case_row(conn, item.tenant_id, item.case_id),
                store.cached_advice(conn, key),
                _page_artifact(conn, item.tenant_id, item.capture_id),
            )

        case, cached, page = self._db.run(read, tenant_id=item.tenant_id, read_only=True)
        if cached is not None:
            return "cached"
        if case is None or case.status != "awaiting_human" or case.revision != item.revision:
            return "case_moved_on"  # decided or revised since the backlog was read: the next batch sees it
        text = ""
        if page is not None:
            try:
                stored = self._store.get(parse_tenant_ref(page.ref, item.tenant_id), verify=True)
                text = page_excerpt(stored.data, page.media_type, limit=MAX_EXCERPT_CHARS // 2).text
            except StorageError:
                text = ""
        evidence = case.evidence if isinstance(case.evidence, dict) else {}
        untrusted = json.dumps(
            {
                "claims": evidence.get("claims", []),
                "attributes": evidence.get("attributes", []),
                "identifiers": evidence.get("identifiers", {}),
                "candidates": case.candidates,
                "page_text": text,
            },
            ensure_ascii=False,
            default=str,
        )
        request = LlmRequest(
            prompt_version=REVIEW_PROMPT,
            schema_name=ADVICE_SCHEMA_NAME,
            schema=plain(ADVICE_SCHEMA),
            messages=(
                Message("system", prompt_text(REVIEW_PROMPT)),
                Message(
                    "user",
                    f"case_id: {case.case_id}\nrevision: {case.revision}\nkind: {case.kind}\n"
                    f"capture_id: {case.capture_id}\n" + delimited(untrusted),
                ),
            ),
        )
        if not self._spend(item.tenant_id):
            return "budget_exhausted"
        answer = self._ask(request)

        def save(conn: Connection) -> store.Advice:
            if isinstance(answer, LlmOutputSchemaInvalid):
                return store.record_advice(
                    conn,
                    key,
                    item.catalog_id,
                    status=store.SCHEMA_INVALID,
                    recommendation=None,
                    answered_by=None,
                    repaired=True,
                    error=str(answer),
                    now=self._clock(),
                )
            return store.record_advice(
                conn,
                key,
                item.catalog_id,
                status=store.ADVISED,
                recommendation=dict(answer.content["recommendation"]),
                answered_by=answer.answer.model_id,
                repaired=answer.repaired,
                error=None,
                now=self._clock(),
            )

        return self._db.run(save, tenant_id=item.tenant_id).status

    def _spend(self, tenant_id: str) -> bool:
        budget = self._policy.budget(tenant_id)
        return self._db.run(
            lambda conn: store.spend_call(conn, tenant_id, self._clock().date(), budget), tenant_id=tenant_id
        )

    def _ask(self, request: LlmRequest) -> Structured | LlmOutputSchemaInvalid:
        """The validated answer, or the terminal OUTPUT_SCHEMA_INVALID to record; retryable errors raise."""
        try:
            return ask(self._provider, request)
        except LlmOutputSchemaInvalid as invalid:
            return invalid


def _page_artifact(conn: Connection, tenant_id: str, capture_id: str) -> StoredArtifact | None:
    """The capture's first text artifact (the page), as the review excerpt picks it."""
    capture = load_capture(conn, tenant_id, capture_id)
    if capture is None:
        return None
    return next(
        (
            a
            for a in capture.artifacts
            if a.media_type.startswith(("text/", "application/xhtml", "application/json"))
        ),
        None,
    )
