"""The one error of ``prw_platform.inputs``."""

from __future__ import annotations


class InvalidInput(ValueError):
    """A value from outside that the platform cannot store or publish as given. Never retryable: the sender must
    change the value."""
