"""``prw release CATALOG [--tenant T]``: the platform's release service at the command line,
over an item real resolution accepted on a manual catalog."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prw_cli.main import app as prw
from prw_platform.db.database import Database
from prw_platform.resolver.catalogs import set_release_policy
from tests.integration.resolution.pipeline import (
    ANVIL_MICRODATA,
    CATALOG,
    TENANT,
    Collector,
    Resolution,
    page,
)


@pytest.fixture
def accepted(collector: Collector, resolution: Resolution, resolver_db: Database) -> Resolution:
    """An item accepted on the manual catalog: nothing released yet."""
    set_release_policy(resolver_db, TENANT, CATALOG, "manual")
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.run()
    assert resolution.count("resolver.released_item") == 0
    return resolution


def test_release_prints_the_release_and_publishes_the_accepted_state(
    runner: CliRunner, accepted: Resolution
) -> None:
    result = runner.invoke(prw, ["release", CATALOG, "--tenant", TENANT, "--json"])

    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["release_id"] == f"rel_{CATALOG}"
    assert (document["publication_revision"], document["items"], document["listings"]) == (1, 1, 1)
    decision = accepted.one(
        "SELECT action, actor FROM resolver.decision WHERE decision_id = %s", document["decision_id"]
    )
    assert decision["action"] == "authorize_release"
    assert decision["actor"].startswith("operator:cli:")
    assert accepted.count("resolver.released_item") == 1


def test_release_prints_a_table(runner: CliRunner, accepted: Resolution) -> None:
    result = runner.invoke(prw, ["release", CATALOG, "--tenant", TENANT])

    assert result.exit_code == 0, result.output
    assert f"release rel_{CATALOG} @ 1" in result.output


def test_nothing_to_release_exits_1_with_the_code(runner: CliRunner, accepted: Resolution) -> None:
    assert runner.invoke(prw, ["release", CATALOG, "--tenant", TENANT]).exit_code == 0

    result = runner.invoke(prw, ["release", CATALOG, "--tenant", TENANT])

    assert result.exit_code == 1
    assert "NOTHING_TO_RELEASE" in result.output


def test_an_unknown_catalog_exits_1_not_found(runner: CliRunner, accepted: Resolution) -> None:
    result = runner.invoke(prw, ["release", "cat_nowhere", "--tenant", TENANT])

    assert result.exit_code == 1
    assert "NOT_FOUND" in result.output
