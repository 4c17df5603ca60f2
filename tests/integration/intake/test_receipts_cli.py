"""``prw receipts show``: an operator reads any receipt (if_receipt_get), through ``Platform.reports``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prw_cli.commands import receipts
from prw_platform.resolver.intake import IntakeService
from tests.integration.intake.helpers import INSTANCE, World
from tests.integration.intake.test_captures import stored_page, submit
from tests.support import postgres


@pytest.fixture
def runner(databases: postgres.TestDatabases, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("PRW_DATABASE_URL", databases.main)
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", databases.control)
    return CliRunner()


def test_show_prints_the_receipt_with_its_tenant_and_status_as_json(
    world: World, intake: IntakeService, runner: CliRunner
) -> None:
    stored_page(intake, world)
    receipt = submit(intake, world).receipt

    result = runner.invoke(receipts.app, ["show", receipt.receipt_id, "--json"])

    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "receipt_id": receipt.receipt_id,
        "tenant_id": world.tenant,
        "capture_id": receipt.capture_id,
        "instance_id": INSTANCE,
        "status": "stored",
        "reason": None,
        "received_at": receipt.received_at.isoformat(),
        "status_changed_at": None,
    }


def test_show_with_the_receipts_tenant_prints_a_table(
    world: World, intake: IntakeService, runner: CliRunner
) -> None:
    stored_page(intake, world)
    receipt = submit(intake, world).receipt

    result = runner.invoke(receipts.app, ["show", receipt.receipt_id, "--tenant", world.tenant])

    assert result.exit_code == 0, result.output
    assert receipt.capture_id in result.output
    assert "stored" in result.output


def test_show_with_another_tenant_is_tenant_scope_denied(
    world: World, intake: IntakeService, runner: CliRunner
) -> None:
    stored_page(intake, world)
    receipt = submit(intake, world).receipt

    result = runner.invoke(receipts.app, ["show", receipt.receipt_id, "--tenant", world.other_tenant])

    assert result.exit_code == 1
    assert "TENANT_SCOPE_DENIED" in result.output


def test_show_an_unknown_receipt_is_not_found(world: World, runner: CliRunner) -> None:
    result = runner.invoke(receipts.app, ["show", "rcpt_unknown"])

    assert result.exit_code == 1
    assert "NOT_FOUND" in result.output
