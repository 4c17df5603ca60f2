"""``prw items retire ITEM --rationale R`` (INV-07): an operator's decision that retires an item
real resolution accepted. The item moves to revision + 1 with status ``retired`` (``catalog_item.updated``); the
next release removes it (``retired_items``), once; exit 1 with NOT_FOUND or ITEM_RETIRED writes nothing."""

from __future__ import annotations

import json
from typing import Any

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
def released(collector: Collector, resolution: Resolution) -> str:
    """An item accepted and released automatically; returns its id."""
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.run()
    assert resolution.count("resolver.released_item") == 1
    return str(resolution.one("SELECT item_id FROM resolver.catalog_item")["item_id"])


def _retire(runner: CliRunner, item_id: str) -> Any:
    return runner.invoke(
        prw,
        ["items", "retire", item_id, "--rationale", "discontinued", "--tenant", TENANT, "--catalog", CATALOG],
    )


def _payloads(resolution: Resolution, decision_id: str) -> list[tuple[str, dict[str, Any]]]:
    rows = resolution.rows(
        "SELECT event_type, body FROM resolver.outbox WHERE decision_id = %s ORDER BY position", decision_id
    )
    return [(row["event_type"], row["body"]["payload"]) for row in rows]


def test_retiring_on_a_manual_catalog_is_a_decision_and_the_next_release_removes_the_item(
    runner: CliRunner, released: str, resolution: Resolution, resolver_db: Database
) -> None:
    set_release_policy(resolver_db, TENANT, CATALOG, "manual")

    result = _retire(runner, released)

    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert (document["item_id"], document["revision"], document["replayed"]) == (released, 2, False)
    decision = resolution.one(
        "SELECT action, actor, rationale, effects->>'item_id' AS item_id FROM resolver.decision WHERE decision_id = %s",
        document["decision_id"],
    )
    assert decision["action"] == "retire_item"
    assert decision["actor"].startswith("operator:cli:")
    assert (decision["rationale"], decision["item_id"]) == ("discontinued", released)
    ((event_type, payload),) = _payloads(resolution, document["decision_id"])
    assert (event_type, payload["item"], payload["status"]) == ("catalog_item.updated", released, "retired")
    item = resolution.one("SELECT revision, status FROM resolver.catalog_item WHERE item_id = %s", released)
    assert item == {"revision": 2, "status": "retired"}

    release = runner.invoke(prw, ["release", CATALOG, "--tenant", TENANT, "--json"])

    assert release.exit_code == 0, release.output
    ((_, authorized),) = _payloads(resolution, json.loads(release.output)["decision_id"])
    assert authorized["retired_items"] == [{"item": released, "revision": 2}]
    assert (authorized["items"], authorized["listings"]) == ([], [])
    again = runner.invoke(prw, ["release", CATALOG, "--tenant", TENANT])
    assert again.exit_code == 1
    assert "NOTHING_TO_RELEASE" in again.output


def test_retiring_on_an_automatic_catalog_releases_the_removal_in_the_same_decision(
    runner: CliRunner, released: str, resolution: Resolution
) -> None:
    result = _retire(runner, released)

    assert result.exit_code == 0, result.output
    events = _payloads(resolution, json.loads(result.output)["decision_id"])
    assert [event_type for event_type, _ in events] == ["catalog_item.updated", "release.authorized"]
    assert events[1][1]["retired_items"] == [{"item": released, "revision": 2}]
    assert resolution.one("SELECT revision FROM resolver.released_item WHERE item_id = %s", released) == {
        "revision": 2
    }


def test_retiring_a_retired_item_exits_1_item_retired_and_writes_nothing(
    runner: CliRunner, released: str, resolution: Resolution
) -> None:
    assert _retire(runner, released).exit_code == 0
    decisions = resolution.count("resolver.decision")

    result = _retire(runner, released)

    assert result.exit_code == 1
    assert "ITEM_RETIRED" in result.output
    assert resolution.count("resolver.decision") == decisions


def test_retiring_an_unknown_item_exits_1_not_found(
    runner: CliRunner, released: str, resolution: Resolution
) -> None:
    decisions = resolution.count("resolver.decision")

    result = _retire(runner, "itm_nowhere")

    assert result.exit_code == 1
    assert "NOT_FOUND" in result.output
    assert resolution.count("resolver.decision") == decisions
