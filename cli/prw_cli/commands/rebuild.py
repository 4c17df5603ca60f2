"""``prw product rebuild`` and ``prw epoch fence``: the operations the Dagster
``product_rebuild`` and ``epoch_fence`` jobs run, from the command line, through the same platform services
(``Platform.product_rebuild``, ``Platform.epoch_fencing``). Progress shows while they run (rich); the result prints
as a table.

The platform is imported when a command runs, not for ``--help``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from prw_cli.output import results_console

if TYPE_CHECKING:
    from prw_platform.bootstrap import Platform
    from prw_platform.services import RebuildResult

product_app = typer.Typer(
    help="The product projection: rebuild a catalog into an isolated generation and cut over (if_projection_bootstrap)."
)
epoch_app = typer.Typer(
    help="History epochs: fence a restored resolver database (a NEW epoch, old workers fenced, product rebuilt)."
)
console = results_console()
err_console = Console(stderr=True)


@product_app.callback()
def product() -> None:
    """The product projection of a catalog."""


@epoch_app.callback()
def epoch() -> None:
    """History epochs of a catalog's accepted-change stream."""


def _platform() -> Platform:
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap

    return bootstrap(load_settings())


class _Phases:
    """One progress bar per phase of a rebuild (export, load, catch up, cutover)."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._tasks: dict[str, TaskID] = {}

    def __call__(self, phase: str, done: int, total: int | None) -> None:
        if phase not in self._tasks:
            self._tasks[phase] = self._progress.add_task(phase, total=total)
        self._progress.update(self._tasks[phase], completed=done, total=total)


@contextmanager
def _progress() -> Iterator[_Phases]:
    with Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
    ) as progress:
        yield _Phases(progress)


def _rebuild_table(result: RebuildResult, title: str) -> Table:
    table = Table(title=title)
    table.add_column("field")
    table.add_column("value", overflow="fold")
    rows = (
        ("rebuild", result.rebuild_id),
        ("tenant / catalog", f"{result.tenant_id} / {result.catalog_id}"),
        ("history epoch", result.history_epoch),
        ("export", result.export_id),
        ("generation", f"{result.previous_generation} -> {result.generation}"),
        ("W (snapshot)", str(result.start_position)),
        ("H (live cursor now)", str(result.target_position)),
        ("rows loaded", str(result.loaded_rows)),
        ("tail events applied", str(result.caught_up)),
        ("seconds", f"{result.seconds:.1f}"),
    )
    for row in rows:
        table.add_row(*row)
    return table


@product_app.command("rebuild")
def rebuild(
    tenant: Annotated[str, typer.Option(help="The tenant.")],
    catalog: Annotated[str, typer.Option(help="The catalog.")],
    target: Annotated[
        int | None,
        typer.Option(help="The committed position H to cut over at (default: the head when caught up)."),
    ] = None,
    abandon: Annotated[
        bool,
        typer.Option(
            "--abandon",
            help="Do not rebuild: abandon the catalog's running rebuild whose process died (its heartbeat is "
            "older than PRW_REBUILD_STALE_AFTER_SECONDS), release its export lease, leave its generation to the "
            "cleanup. Then rebuild again.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="With --abandon: abandon the rebuild even though its heartbeat is fresh."
        ),
    ] = False,
) -> None:
    """Export the catalog's accepted state, load it into a new generation, catch up the retained tail through
    H, then swap the serving generation and the live cursor in one transaction. Exit 1 when the rebuild failed
    (nothing was swapped). With --abandon: recover from a rebuild whose process died (REBUILD_RUNNING)."""
    from prw_platform.services import RebuildFailed

    if force and not abandon:
        err_console.print("[red]refused[/red]: --force only goes with --abandon")
        raise typer.Exit(2)
    if abandon:
        with _platform() as platform:
            try:
                abandoned = platform.product_rebuild.abandon(tenant, catalog, force=force)
            except RebuildFailed as failed:
                err_console.print(f"[red]{failed.code}[/red]: {failed}")
                raise typer.Exit(1) from failed
        table = Table(title=f"Abandoned rebuild {abandoned.rebuild_id} of {tenant}/{catalog}")
        table.add_column("field")
        table.add_column("value", overflow="fold")
        table.add_row("status before", abandoned.status_before)
        table.add_row(
            "heartbeat", f"{abandoned.heartbeat_at.isoformat()} ({abandoned.heartbeat_age_seconds:.0f} s ago)"
        )
        table.add_row(
            "export lease", "released" if abandoned.lease_released else "not released: it expires on its own"
        )
        table.add_row("generation", f"{abandoned.generation} (dropped by the rebuild-cleanup stage)")
        console.print(table)
        return
    with _platform() as platform, _progress() as phases:
        try:
            result = platform.product_rebuild.run(tenant, catalog, target=target, on_progress=phases)
        except RebuildFailed as failed:
            err_console.print(f"[red]{failed.code}[/red]: {failed}")
            raise typer.Exit(1) from failed
    console.print(_rebuild_table(result, f"Rebuilt {tenant}/{catalog}: cut over at {result.target_position}"))


@epoch_app.command("fence")
def fence(
    tenant: Annotated[str, typer.Option(help="The tenant.")],
    catalog: Annotated[str, typer.Option(help="The catalog.")],
    reason: Annotated[
        str, typer.Option(help="Why (recorded with the new epoch).")
    ] = "resolver database restored",
    yes: Annotated[
        bool, typer.Option("--yes", help="Confirm: writers of the old epoch are fenced for good.")
    ] = False,
) -> None:
    """After a restore of the resolver database: pause public serving of the catalog, fence the old epoch's writers,
    issue a NEW epoch in the control database, rebuild the product from the restored state, resume. Old-epoch
    deliveries are audited and ignored from then on. Refuses without --yes."""
    if not yes:
        err_console.print(
            "[red]refused[/red]: fencing abandons the current history epoch; pass --yes to confirm"
        )
        raise typer.Exit(2)
    from prw_platform.services import FenceRefused, RebuildFailed

    with _platform() as platform, _progress() as phases:
        try:
            result = platform.epoch_fencing.fence(
                tenant, catalog, reason, on_progress=phases, on_step=lambda step: err_console.print(step)
            )
        except (RebuildFailed, FenceRefused) as failed:
            err_console.print(
                f"[red]{failed.code}[/red]: {failed} (the stream stays fenced and paused: run the fence again)"
            )
            raise typer.Exit(1) from failed
    table = _rebuild_table(
        result.rebuild, f"Fenced {tenant}/{catalog}: {result.previous_epoch} -> {result.new_epoch}"
    )
    table.add_row("fenced epochs", ", ".join(result.fenced_epochs) or "none")
    console.print(table)
