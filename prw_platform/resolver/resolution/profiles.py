"""Choose the class profile and normalize the claims (if_resolution_job, normalization stage).

The rule (deterministic for the same claims and the same installed plugins):

1. ``job_pin``: the job pins a profile (a replay). Binding: a pin that is not installed is UNKNOWN_PROFILE_VERSION.
2. ``class_definitions``: for each class profile of ``ProfilePolicy.class_profiles`` in order (default:
   ``np_storage``), its newest installed version normalizes the claims; the first one that produces a value for
   a definition of its own (one the base profile does not have, e.g. ``storage:capacity`` from a spec claim or
   from the title) is chosen.
3. ``base_profile``: otherwise the newest installed base profile (``np_core``). Not installed is
   UNKNOWN_PROFILE_VERSION.

INV-02: every value is checked against the chosen profile's definition before anything is stored. A value that
does not conform (a profile bug) is dropped and reported as the problem DEFINITION_NONCONFORMANCE, so the decision
path never sees it. A profile that raises gives the stage outcome ``normalization_failed`` (a review case).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from prw_platform.plugins import (
    Claim,
    Normalization,
    NormalizationProblem,
    NormalizationProfile,
    NormalizedAttribute,
    PluginRegistry,
    UnknownProfileVersion,
    conformance_problem,
)
from prw_platform.resolver.resolution.documents import clean_text
from prw_platform.resolver.resolution.extraction import ExtractionRun, StageError, StageOutcome

log = logging.getLogger(__name__)

ProfileRule = Literal["job_pin", "class_definitions", "base_profile"]
DEFINITION_NONCONFORMANCE = "DEFINITION_NONCONFORMANCE"
INVALID_CONFIDENCE = "INVALID_CONFIDENCE"


@dataclass(frozen=True, slots=True)
class ProfilePolicy:
    base_profile: str = "np_core"
    #: Class profiles tried in this order before the base profile.
    class_profiles: tuple[str, ...] = ("np_storage",)


@dataclass(frozen=True, slots=True)
class NormalizationRun:
    profile: NormalizationProfile
    pin: str
    rule: ProfileRule
    normalization: Normalization | None
    error: StageError | None = None


def stage_outcome(extraction: ExtractionRun, normalization: NormalizationRun | None) -> StageOutcome:
    """How far a job's extraction and normalization got."""
    if extraction.stage_outcome != "extracted":
        return extraction.stage_outcome
    return (
        "extracted" if normalization is not None and normalization.normalization else "normalization_failed"
    )


def normalize(
    registry: PluginRegistry, policy: ProfilePolicy, claims: Sequence[Claim], job_pin: str | None
) -> NormalizationRun:
    if job_pin is not None:
        return _run(registry.profile(job_pin), "job_pin", claims)
    base = registry.latest_profile(policy.base_profile)
    for name in policy.class_profiles:
        try:
            profile = registry.latest_profile(name)
        except UnknownProfileVersion:
            continue
        run = _run(profile, "class_definitions", claims)
        own = set(profile.definitions) - set(base.definitions)
        if run.normalization is not None and any(a.key in own for a in run.normalization.attributes):
            return run
    return _run(base, "base_profile", claims)


def _run(profile: NormalizationProfile, rule: ProfileRule, claims: Sequence[Claim]) -> NormalizationRun:
    pin = f"{profile.name}@{profile.version}"
    try:
        result = profile.normalize(claims)
    except Exception as error:
        # The contract says problems never raise; a profile that does is a bug, and deterministic.
        log.exception("profile %s raised while normalizing", pin)
        message = clean_text(f"{type(error).__name__}: {error}")
        return NormalizationRun(profile, pin, rule, None, StageError("PROFILE_ERROR", message))
    if not isinstance(result, Normalization):
        return NormalizationRun(
            profile, pin, rule, None, StageError("INVALID_PLUGIN_RESULT", f"{pin} returned no Normalization")
        )
    return NormalizationRun(profile, pin, rule, _conforming(profile, pin, result))


def _conforming(profile: NormalizationProfile, pin: str, result: Normalization) -> Normalization:
    """INV-02: keep the values that conform to their definition (once per key, published or withheld), report
    the others. A confidence outside [0, 1] is dropped and reported; the value stays."""
    problems = [_clean_problem(p) for p in result.problems if isinstance(p, NormalizationProblem)]
    seen: set[str] = set()
    kept: tuple[list[NormalizedAttribute], list[NormalizedAttribute]] = ([], [])
    for values, into in ((result.attributes, kept[0]), (result.withheld, kept[1])):
        for attribute in values:
            if not isinstance(attribute, NormalizedAttribute):
                problems.append(
                    NormalizationProblem("*", DEFINITION_NONCONFORMANCE, f"{pin} returned {attribute!r}")
                )
                continue
            attribute = _clean_attribute(attribute, problems)
            definition = profile.definitions.get(attribute.key)
            problem = (
                f"{attribute.key} is given twice"
                if attribute.key in seen
                else f"{attribute.key} has no definition in {pin}"
                if definition is None
                else conformance_problem(attribute, definition)
            )
            if problem is not None:
                problems.append(NormalizationProblem(attribute.key, DEFINITION_NONCONFORMANCE, problem))
                continue
            seen.add(attribute.key)
            into.append(attribute)
    return Normalization(pin, tuple(kept[0]), tuple(problems), tuple(kept[1]))


def _clean_attribute(
    attribute: NormalizedAttribute, problems: list[NormalizationProblem]
) -> NormalizedAttribute:
    value = clean_text(attribute.value) if isinstance(attribute.value, str) else attribute.value
    confidence = attribute.confidence
    if confidence is not None and not (
        isinstance(confidence, int | float)
        and not isinstance(confidence, bool)
        and math.isfinite(confidence)
        and 0 <= confidence <= 1
    ):
        problems.append(
            NormalizationProblem(
                attribute.key, INVALID_CONFIDENCE, f"confidence {confidence!r} is outside [0, 1]; dropped"
            )
        )
        confidence = None
    return NormalizedAttribute(
        attribute.key,
        value,
        attribute.definition_version,
        attribute.unit,
        tuple(clean_text(str(locator)) for locator in attribute.evidence_locators),
        None if confidence is None else float(confidence),
    )


def _clean_problem(problem: NormalizationProblem) -> NormalizationProblem:
    raw = problem.raw_value
    return NormalizationProblem(
        clean_text(problem.attribute),
        clean_text(problem.code),
        clean_text(problem.message),
        clean_text(raw) if isinstance(raw, str) else raw,
    )
