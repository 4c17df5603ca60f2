"""`prw` imports a subcommand only when it runs: `prw --help` lists every command from its declaration, and each
declaration's summary is the first paragraph of the command's own help."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from prw_cli.lazy import LazyCommand, help_summary
from prw_cli.main import PrwCommands, app

runner = CliRunner()
DECLARED = PrwCommands.lazy_commands


@pytest.mark.parametrize("declared", DECLARED, ids=[c.name for c in DECLARED])
def test_the_declared_summary_is_the_first_paragraph_of_the_commands_help(declared: LazyCommand) -> None:
    command = declared.build()
    assert declared.summary == help_summary(command.help)
    assert command.name == declared.name


def test_help_lists_every_declared_command_in_order() -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    positions = [result.stdout.index(f"│ {c.name} ") for c in DECLARED]
    assert positions == sorted(positions)
    for declared in DECLARED:
        assert declared.summary in result.stdout


def test_a_command_prints_its_own_options_in_its_help() -> None:
    result = runner.invoke(app, ["extract", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--adapter" in result.stdout
    assert "--profile" in result.stdout


def test_a_subgroup_resolves_its_own_commands() -> None:
    result = runner.invoke(app, ["clients", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "create" in result.stdout
    assert "revoke" in result.stdout


def test_a_typo_suggests_the_declared_command() -> None:
    result = runner.invoke(app, ["extarct"], env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "Did you mean 'extract'" in result.output


def test_help_summary_joins_the_first_paragraph_on_one_line() -> None:
    assert help_summary("One line\n    and its rest.\n\n    Details.") == "One line and its rest."
    assert help_summary(None) == ""
