"""Subcommands imported only when they run, so that ``prw --help`` and ``prw extract`` start in a fraction of a
second instead of importing Dagster, FastAPI and every app first.

A subcommand is declared by name, the import path of its typer function (or typer app, for a group such as
``prw clients``) and the one-line summary ``prw --help`` shows. Listing the commands (``prw --help``, shell
completion) uses only the declarations; resolving a command to run it, or to print its own ``--help``, imports its
module and builds the real click command, once. ``tests/unit/cli/test_lazy_commands.py`` keeps every declared
summary equal to the first paragraph of the command's own help.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
from typer.core import TyperCommand, TyperGroup


@dataclass(frozen=True, slots=True)
class LazyCommand:
    """``name``: the subcommand; ``target``: ``"package.module:attribute"``, a typer command function or a
    ``typer.Typer`` app; ``summary``: what ``prw --help`` shows, the first paragraph of the command's help."""

    name: str
    target: str
    summary: str

    def load(self) -> Any:
        module, _, attribute = self.target.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def build(self) -> TyperCommand | TyperGroup:
        """The real click command (its module imported now)."""
        loaded = self.load()
        if isinstance(loaded, typer.Typer):
            group = typer.main.get_group(loaded)
            group.name = self.name
            return group
        single = typer.Typer(add_completion=False)
        single.command(self.name)(loaded)
        command = typer.main.get_command(single)
        assert isinstance(command, TyperCommand)
        return command


def help_summary(help_text: str | None) -> str:
    """The first paragraph of a help text on one line, as a command list shows it."""
    first = inspect.cleandoc(help_text or "").split("\n\n")[0]
    return " ".join(first.split())


class _Unloaded(TyperCommand):
    """Stands in for a declared command until it is resolved: a name and a summary, for listings."""

    def __init__(self, declared: LazyCommand, rich_markup_mode: Any) -> None:
        super().__init__(declared.name, help=declared.summary, rich_markup_mode=rich_markup_mode)
        self.declared = declared


class LazyGroup(TyperGroup):
    """A typer group whose ``lazy_commands`` are imported on first use. Subclass it with the declarations:
    ``typer.Typer(cls=...)`` builds the group itself, so they cannot be constructor arguments.

    Until it is resolved, a declared command is a stand-in in ``self.commands``, so that listings, shell
    completion and typo suggestions ("Did you mean 'extract'?") see every command without importing any."""

    lazy_commands: ClassVar[tuple[LazyCommand, ...]] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for declared in self.lazy_commands:
            self.commands.setdefault(declared.name, _Unloaded(declared, self.rich_markup_mode))

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Import the command named by ``args[0]`` (to run it or print its own help), then resolve as usual."""
        stand_in = self.commands.get(args[0]) if args else None
        if isinstance(stand_in, _Unloaded):
            self.commands[stand_in.declared.name] = stand_in.declared.build()
        return super().resolve_command(ctx, args)
