"""Moments the platform can represent and believe.

Python (and therefore the platform) represents years 1 to 9999. A moment near either end with an offset
(``0001-01-01T00:00:00+01:00``, ``9999-12-31T23:59:59-01:00``) leaves that range when converted to UTC, which
every comparison and every stored ``timestamptz`` does. A moment in the future beyond the clock-skew tolerance
cannot have been observed yet: accepted, it would also outrank every later real observation of the same listing
(observations are ordered by ``observed_at``), freezing it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prw_platform.inputs.errors import InvalidInput


def check_representable(moment: datetime) -> datetime:
    """``moment`` if it has a time zone and stays within years 1 to 9999 in UTC."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise InvalidInput(f"{moment.isoformat()} has no time zone")
    try:
        moment.astimezone(UTC)
    except OverflowError as error:
        raise InvalidInput(
            f"{moment.isoformat()} is outside years 1 to 9999 once converted to UTC"
        ) from error
    return moment


def check_not_in_future(moment: datetime, now: datetime, tolerance: timedelta) -> datetime:
    """``moment`` unless it is later than ``now`` by more than ``tolerance`` (the senders' clock skew)."""
    check_representable(moment)
    if moment - now > tolerance:
        raise InvalidInput(
            f"{moment.isoformat()} is in the future: more than {int(tolerance.total_seconds())} s after the "
            f"server's clock ({now.astimezone(UTC).isoformat()})"
        )
    return moment
