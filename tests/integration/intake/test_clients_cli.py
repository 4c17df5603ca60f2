"""``prw clients create|revoke`` against a real database (the command module, before main.py mounts it)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prw_cli.commands import clients
from prw_platform.auth import authenticate_client
from prw_platform.db.database import Database
from tests.integration.intake.helpers import CATALOG, INSTANCE, SOURCE, UNGRANTED_SOURCE, WORKER, World
from tests.support import postgres


@pytest.fixture
def runner(databases: postgres.TestDatabases, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("PRW_DATABASE_URL", databases.main)
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", databases.control)
    return CliRunner()


def create_args(world: World, *extra: str) -> list[str]:
    return [
        "create",
        "--tenant",
        world.tenant,
        "--catalog",
        CATALOG,
        "--worker",
        WORKER,
        "--instance",
        INSTANCE,
        "--source",
        SOURCE,
        *extra,
    ]


def test_create_prints_a_client_id_and_a_secret_that_authenticate(
    world: World, runner: CliRunner, resolver_db: Database
) -> None:
    result = runner.invoke(clients.app, [*create_args(world), "--json"])

    assert result.exit_code == 0, result.output
    created = json.loads(result.output)
    client = authenticate_client(resolver_db, created["client_id"], created["client_secret"])
    assert client is not None
    assert (client.binding.tenant_id, client.binding.instance_id, client.binding.sources) == (
        world.tenant,
        INSTANCE,
        (SOURCE,),
    )


def test_create_refuses_a_source_outside_the_catalog(world: World, runner: CliRunner) -> None:
    result = runner.invoke(clients.app, create_args(world, "--source", "src_nowhere"))

    assert result.exit_code == 1
    assert "src_nowhere" in result.output


def test_revoke_stops_the_client_from_getting_tokens(
    world: World, runner: CliRunner, resolver_db: Database
) -> None:
    created = json.loads(
        runner.invoke(clients.app, [*create_args(world, "--source", UNGRANTED_SOURCE), "--json"]).output
    )

    result = runner.invoke(clients.app, ["revoke", "--tenant", world.tenant, created["client_id"]])

    assert result.exit_code == 0, result.output
    client = authenticate_client(resolver_db, created["client_id"], created["client_secret"])
    assert client is not None
    assert client.revoked_at is not None
    assert (
        runner.invoke(clients.app, ["revoke", "--tenant", world.tenant, created["client_id"]]).exit_code == 1
    )
