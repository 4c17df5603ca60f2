"""A rebuild's shadow catch-up has a cursor of its own (if_accepted_change: "Shadow catch-up has a separate cursor
and lease; it never advances the live cursor"): the default target names it, never the live consumer."""

from __future__ import annotations

from prw_platform.product import progress
from prw_platform.product.consumer.apply import ShadowTarget
from prw_platform.product.rebuild.client import full_jitter


def test_the_shadow_target_uses_the_rebuild_cursor_not_the_live_one() -> None:
    assert ShadowTarget(2).consumer == progress.REBUILD_CONSUMER != progress.LIVE_CONSUMER


def test_full_jitter_stays_within_the_seed_s_exponential_cap() -> None:
    # if_projection_bootstrap Retries: base 1 s, cap 5 min.
    for attempt in range(1, 12):
        wait = full_jitter(attempt)
        assert 0.0 <= wait <= min(300.0, 2 ** (attempt - 1))
