"""Recorded cases for the contract tests: a capture with the claims it must yield, claims with the attributes
they must normalize to. Plain values (no pytest), re-exported by ``prw_platform.plugins.testing``."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prw_platform.plugins.types import Artifact, AttributeValue, CaptureView, Claim, ClaimValue


@dataclass(frozen=True, slots=True)
class AdapterCase:
    """One recorded capture and what the adapter must read from it.

    ``expected_claims`` is a subset: a ``Claim`` must be present exactly (locator included); an
    ``(attribute, value)`` pair needs some claim with that attribute and value. ``expected_listing`` maps
    ListingFields names to values (``{"price": Decimal("89.90")}``); fields not named are not checked."""

    case_id: str
    capture: CaptureView
    artifacts: tuple[Artifact, ...]
    expected_claims: tuple[Claim | tuple[str, ClaimValue], ...] = ()
    expected_listing: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def from_bytes(
        cls,
        case_id: str,
        data: bytes,
        *,
        media_type: str,
        url: str | None = None,
        source_id: str = "src_contract",
        expected_claims: Sequence[Claim | tuple[str, ClaimValue]] = (),
        expected_listing: Mapping[str, object] | None = None,
    ) -> AdapterCase:
        sha256 = hashlib.sha256(data).hexdigest()
        capture = CaptureView(
            capture_id=f"cap_{case_id}", source_id=source_id, media_type=media_type, url=url
        )
        artifact = Artifact(artifact_id=f"art_{sha256[:12]}", sha256=sha256, media_type=media_type, data=data)
        return cls(case_id, capture, (artifact,), tuple(expected_claims), dict(expected_listing or {}))

    @classmethod
    def from_file(
        cls,
        path: Path,
        *,
        media_type: str,
        url: str | None = None,
        case_id: str | None = None,
        expected_claims: Sequence[Claim | tuple[str, ClaimValue]] = (),
        expected_listing: Mapping[str, object] | None = None,
    ) -> AdapterCase:
        return cls.from_bytes(
            case_id or path.stem,
            path.read_bytes(),
            media_type=media_type,
            url=url,
            expected_claims=expected_claims,
            expected_listing=expected_listing,
        )


@dataclass(frozen=True, slots=True)
class ProfileCase:
    """Claims and what the profile must make of them: ``expected_attributes`` (key -> canonical value, a
    subset), ``expected_problems`` ((attribute, code) pairs, a subset) and ``absent_attributes``."""

    case_id: str
    claims: tuple[Claim, ...]
    expected_attributes: Mapping[str, AttributeValue] = field(default_factory=dict)
    expected_problems: tuple[tuple[str, str], ...] = ()
    absent_attributes: tuple[str, ...] = ()
