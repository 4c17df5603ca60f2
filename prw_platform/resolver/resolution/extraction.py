"""Choose the adapter and extract claims (if_resolution_job, extraction stage).

The rule, in order:

1. ``job_pin``: the job pins an adapter (a replay, if_replay_job). It is binding: a pin that is not installed is
   UNKNOWN_ADAPTER_VERSION (terminal); a pinned adapter whose ``supports`` says no still runs, with a diagnostic.
2. ``capture_hint``: the collector's ``adapter_hint`` (a name or a pin; never binding) is tried first when it is
   installed and supports the capture. An unknown hint is ignored with a diagnostic.
3. ``supports``: ``PluginRegistry.select_adapter`` (priority, then name, then newest version).

When no adapter supports the capture the stage outcome is ``no_adapter``; an adapter that raises gives
``extraction_failed``. Both lead to a review case, and both are where the LLM fallback (if_llm_extract: "when no
adapter supports the capture or the adapter failed"; its output is a proposal only) will plug in.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Literal, get_args

from prw_platform.plugins import (
    Artifact,
    Availability,
    CaptureView,
    Claim,
    Extraction,
    ExtractionError,
    ListingFields,
    PluginRegistry,
    SourceAdapter,
    UnknownAdapterVersion,
    confidence_problem,
    is_adapter_pin,
)
from prw_platform.resolver.intake.captures import CaptureRecord
from prw_platform.resolver.resolution.documents import clean_claim_value, clean_text

log = logging.getLogger(__name__)

StageOutcome = Literal["extracted", "no_adapter", "extraction_failed", "normalization_failed"]
AdapterRule = Literal["job_pin", "capture_hint", "supports"]

_AVAILABILITY = frozenset(get_args(Availability))
# resolver.listing.currency CHECK (currency ~ '^[A-Z]{3}$').
_ISO_4217 = re.compile(r"[A-Z]{3}")


@dataclass(frozen=True, slots=True)
class StageError:
    code: str
    message: str


@dataclass(frozen=True, slots=True)
class ExtractionRun:
    stage_outcome: StageOutcome
    capture_view: CaptureView
    adapter: str | None = None
    adapter_rule: AdapterRule | None = None
    extraction: Extraction | None = None
    #: The consumer's own notes (hint ignored, pinned adapter does not support the capture, ...).
    notes: tuple[str, ...] = ()
    error: StageError | None = None

    @property
    def claims(self) -> tuple[Claim, ...]:
        return self.extraction.claims if self.extraction else ()

    @property
    def diagnostics(self) -> tuple[str, ...]:
        return self.notes + (self.extraction.diagnostics if self.extraction else ())


def extract(
    registry: PluginRegistry,
    capture: CaptureRecord,
    artifacts: Sequence[Artifact],
    job_pin: str | None,
) -> ExtractionRun:
    """Run the chosen adapter. Raises UNKNOWN_ADAPTER_VERSION only for an unknown job pin."""
    hint, notes = _hint(registry, capture.adapter_hint)
    view = CaptureView(
        capture_id=capture.capture_id,
        source_id=capture.source_id,
        media_type=capture.media_type,
        url=capture.url,
        observed_at=capture.observed_at,
        adapter_hint=hint,
    )
    adapter, rule = _choose(registry, view, job_pin, notes)
    if adapter is None or rule is None:
        return ExtractionRun("no_adapter", view, notes=tuple(notes))
    pin = f"{adapter.name}@{adapter.version}"
    try:
        extraction = adapter.extract(view, artifacts)
    except ExtractionError as error:
        return _failed(view, pin, rule, notes, error.code, str(error))
    except Exception as error:
        # The adapter broke its contract (only ExtractionError is expected). It is deterministic for the same
        # bytes, so retrying would not help: record it for the adapter's author and a reviewer.
        log.exception("adapter %s raised while extracting capture %s", pin, capture.capture_id)
        return _failed(view, pin, rule, notes, "ADAPTER_ERROR", f"{type(error).__name__}: {error}")
    checked = _checked(extraction)
    if checked is None:
        return _failed(view, pin, rule, notes, "INVALID_PLUGIN_RESULT", f"{pin} returned no valid Extraction")
    return ExtractionRun("extracted", view, pin, rule, checked, tuple(notes))


def _failed(
    view: CaptureView, pin: str, rule: AdapterRule, notes: list[str], code: str, message: str
) -> ExtractionRun:
    return ExtractionRun(
        "extraction_failed", view, pin, rule, None, tuple(notes), StageError(code, clean_text(message))
    )


def _hint(registry: PluginRegistry, hint: str | None) -> tuple[str | None, list[str]]:
    """The installed pin the collector's hint names, or None with a note saying why it was ignored."""
    if hint is None:
        return None, []
    try:
        adapter = registry.adapter(hint) if is_adapter_pin(hint) else registry.latest_adapter(hint)
    except UnknownAdapterVersion:
        return None, [f"adapter hint {hint} is not installed; ignored (a hint is never binding)"]
    return f"{adapter.name}@{adapter.version}", []


def _choose(
    registry: PluginRegistry, view: CaptureView, job_pin: str | None, notes: list[str]
) -> tuple[SourceAdapter | None, AdapterRule | None]:
    if job_pin is not None:
        pinned = registry.adapter(job_pin)
        if not _supports(pinned, view):
            notes.append(
                f"{job_pin} does not support this capture (supports() is not True); extracted as pinned"
            )
        return pinned, "job_pin"
    selected = registry.select_adapter(view)
    if selected is None:
        return None, None
    rule: AdapterRule = (
        "capture_hint" if f"{selected.name}@{selected.version}" == view.adapter_hint else "supports"
    )
    return selected, rule


def _supports(adapter: SourceAdapter, view: CaptureView) -> bool:
    try:
        return adapter.supports(view) is True
    except Exception:
        return False


def _checked(extraction: object) -> Extraction | None:
    """The extraction with every string made storable, or None when it is not what the hook promises."""
    if not isinstance(extraction, Extraction) or not isinstance(extraction.listing, ListingFields):
        return None
    claims: list[Claim] = []
    notes: list[str] = []
    for claim in extraction.claims:
        if not (
            isinstance(claim, Claim)
            and isinstance(claim.attribute, str)
            and isinstance(claim.evidence_locator, str)
            and isinstance(claim.value, str | int | float | bool)
        ):
            return None
        claims.append(_rated(claim, notes))
    return Extraction(
        adapter=clean_text(str(extraction.adapter)),
        claims=tuple(claims),
        listing=_listing(extraction.listing),
        diagnostics=tuple(clean_text(str(d)) for d in (*extraction.diagnostics, *notes)),
    )


def _rated(claim: Claim, notes: list[str]) -> Claim:
    """The claim, storable; a rating the plugin API refuses (a confidence outside [0, 1] or without an evidence
    source, an unknown source) is dropped with a diagnostic naming the claim, and the default confidence applies:
    the value itself is kept, and the stage goes on."""
    cleaned = Claim(
        clean_text(claim.attribute), clean_claim_value(claim.value), clean_text(claim.evidence_locator)
    )
    problem = confidence_problem(claim)
    if problem is not None:
        notes.append(f"claim rating refused: {problem}; the claim counts at the default confidence")
        source_problem = confidence_problem(replace(claim, confidence=None))
        source = None if source_problem is not None else claim.source
        return replace(cleaned, source=source)
    confidence = None if claim.confidence is None else float(claim.confidence)
    return replace(cleaned, source=claim.source, confidence=confidence)


def _listing(listing: ListingFields) -> ListingFields:
    price = listing.price if isinstance(listing.price, Decimal) and listing.price.is_finite() else None
    currency = listing.currency if isinstance(listing.currency, str) else None
    return ListingFields(
        title=clean_text(listing.title) if isinstance(listing.title, str) else None,
        url=clean_text(listing.url) if isinstance(listing.url, str) else None,
        price=price if price is not None and price >= 0 else None,
        currency=currency if currency is not None and _ISO_4217.fullmatch(currency) else None,
        availability=listing.availability if listing.availability in _AVAILABILITY else None,
    )
