"""``prw worker`` and ``prw dev`` on the deployment of tests/e2e/conftest.py (fresh databases, temporary data dir,
exported as the ``PRW_*`` environment that child processes inherit)."""

from __future__ import annotations

import os

import pytest

from prw_platform.config import Settings


@pytest.fixture
def cli_settings(deployment_settings: Settings) -> Settings:
    """The deployment of tests/e2e/conftest.py (fresh databases, temporary PRW_DATA_DIR)."""
    return deployment_settings


@pytest.fixture
def cli_env(cli_settings: Settings) -> dict[str, str]:
    """The environment of a ``prw`` child process: this one's, with the test's PRW_* variables."""
    return {**os.environ, "PYTHONUNBUFFERED": "1"}
