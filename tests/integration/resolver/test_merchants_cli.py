"""``prw merchants add|bind|policy`` against a real database: each is an operator decision (AW-01) with its
outbox events; repeating one decides nothing; a refused fact exits 1 with the decision error's code."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from prw_cli.commands import merchants
from tests.integration.resolver.decision_builders import Catalog
from tests.support import postgres

OPERATOR = ["--operator", "ops_anna"]


@pytest.fixture
def runner(databases: postgres.TestDatabases, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setenv("PRW_DATABASE_URL", databases.main)
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", databases.control)
    return CliRunner()


def test_add_bind_and_policy_are_decisions_with_their_events(runner: CliRunner, catalog: Catalog) -> None:
    commands = [
        ["add", "mer_lumen", "--name", "Lumen Store", "--url", "https://lumen.example", *OPERATOR],
        ["bind", "src_lumen", "mer_lumen", *OPERATOR],
        [
            "policy",
            "mer_lumen",
            "--currency",
            "EUR",
            "--rate",
            "DE=4.90",
            "--rate",
            "FR=6.50",
            "--free-from",
            "50",
            *OPERATOR,
        ],
    ]
    outputs = []
    for args in commands:
        result = runner.invoke(merchants.app, args)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)

    assert "merchant.created @1" in outputs[0]
    assert "merchant.source_bound @3" in outputs[1]
    assert "shipping_policy.accepted @5" in outputs[2]
    assert [r["event_type"] for r in catalog.outbox()][::2] == [
        "merchant.created",
        "merchant.source_bound",
        "shipping_policy.accepted",
    ]
    rows = catalog.outbox()
    assert rows[4]["body"]["payload"]["free_shipping_threshold"] == "50"
    again = runner.invoke(merchants.app, commands[0])
    assert again.exit_code == 0
    assert "unchanged" in again.output
    assert catalog.count("decision") == 3


def test_a_refused_fact_exits_1_with_its_code_and_decides_nothing(
    runner: CliRunner, catalog: Catalog
) -> None:
    unknown = runner.invoke(merchants.app, ["bind", "src_lumen", "mer_nobody", *OPERATOR])
    assert runner.invoke(merchants.app, ["add", "mer_lumen", "--name", "Lumen", *OPERATOR]).exit_code == 0
    not_iso = runner.invoke(
        merchants.app, ["policy", "mer_lumen", "--currency", "EUR", "--rate", "XX=1", *OPERATOR]
    )

    assert unknown.exit_code == 1
    assert "MERCHANT_NOT_FOUND" in unknown.output
    assert not_iso.exit_code == 1
    assert "INVALID_MERCHANT_FACT" in not_iso.output
    assert catalog.count("shipping_policy") == 0
