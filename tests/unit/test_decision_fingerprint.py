"""The idempotency fingerprint of a decision command (resolver.decisions.records) does not change with how it is
computed: ``plain`` (no deep copies) gives the document ``dataclasses.asdict`` gave, so a retry that spans a
deploy still matches its first attempt instead of being an IDEMPOTENCY_CONFLICT."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from prw_platform.plugins.types import NormalizedAttribute
from prw_platform.resolver.decisions import records
from prw_platform.resolver.decisions.commands import DecideCase, ItemFacts


def asdict_fingerprint(command: object) -> str:
    document = {"command": type(command).__name__, **dataclasses.asdict(command)}  # type: ignore[call-overload]
    canonical = json.dumps(document, sort_keys=True, default=records._canonical, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


COMMANDS = [
    DecideCase("rc_1", 2, "dismiss", "reviewer:rita", "not a product"),
    DecideCase(
        "rc_2",
        3,
        "create_item",
        "reviewer:rita",
        "spec grid and title agree",
        item=ItemFacts(
            profile="np_storage@4",
            title="Strata P5 1 TB",
            brand="Corvina",
            mpn="CVN-SP5-1T0-HS",
            attributes=(
                NormalizedAttribute("storage:capacity", Decimal("1000"), unit="GB", definition_version=4),
            ),
        ),
        evidence=("cap_1", "cap_2"),
        review_action="correct",
        family="fam_strata_p5",
        corrections={
            "core:mpn": "CVN-SP5-1T0-HS",
            "storage:heatsink": True,
            "when": datetime(2026, 1, 1, tzinfo=UTC),
        },
    ),
]


@pytest.mark.parametrize("command", COMMANDS, ids=["dismiss", "create_item"])
def test_the_fingerprint_is_the_one_asdict_gave(command: DecideCase) -> None:
    assert records.request_fingerprint(command) == asdict_fingerprint(command)


def test_instants_are_compared_in_utc() -> None:
    at = datetime(2026, 1, 1, 12, tzinfo=UTC)
    here = DecideCase("rc_3", 1, "dismiss", "reviewer:rita", "x", corrections={"at": at})
    there = DecideCase(
        "rc_3", 1, "dismiss", "reviewer:rita", "x", corrections={"at": at.astimezone(UTC).astimezone()}
    )
    elsewhere = DecideCase(
        "rc_3", 1, "dismiss", "reviewer:rita", "x", corrections={"at": at + timedelta(seconds=1)}
    )

    assert records.request_fingerprint(here) == records.request_fingerprint(there)
    assert records.request_fingerprint(here) != records.request_fingerprint(elsewhere)
