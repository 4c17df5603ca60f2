"""``prw worker resolution|normalize|identity|relay|apply|sweeper|all``: registered stages in a loop, for low latency, without
Dagster. The loop is the core's (``prw_platform.runtime.WorkerLoop``: one thread per stage, idle backoff,
in-process wake-ups, drain detection, graceful stop); this command parses options, starts it and prints.

``all`` runs the pipeline's stages (resolution = extract, normalize, identity, relay, apply, gaps); the sweeper keeps its own slow pace (it re-enqueues
jobs left pending for a minute, AW-02), so it runs alone (``prw worker sweeper``) or as Dagster's schedule.
SIGINT or SIGTERM lets each stage finish its batch, then the process exits. ``--max-idle-rounds K`` exits once
every stage has been idle for K rounds after the last batch that took something: the pipeline is drained.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from prw_cli.output import results_console
from prw_cli.settings import load_settings

if TYPE_CHECKING:
    from prw_platform.runtime import StageReport

console = results_console(highlight=False)

#: What ``all`` means: the registered pipeline stages.
ALL = "all"


def _print_batch(report: StageReport) -> None:
    console.print(
        f"[dim]{time.strftime('%H:%M:%S')}[/dim] [bold]{report.stage:<10}[/bold] {report.describe()}"
    )


def _print_error(stage: str, error: BaseException) -> None:
    console.print(f"[dim]{time.strftime('%H:%M:%S')}[/dim] [bold red]{stage:<10}[/bold red] {error!r}")


def _print_signal(name: str) -> None:
    console.print(f"[yellow]{name}[/yellow]: stopping after the current batches")


def worker(
    stage: Annotated[
        str,
        typer.Argument(
            help="The stage to run (resolution, normalize, identity, relay, apply, sweeper, ...); all = the pipeline"
            " stages."
        ),
    ],
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            min=1,
            help="Items per round: messages (resolution, apply) or outbox rows (relay). Default: the stage's.",
        ),
    ] = None,
    idle_sleep: Annotated[
        float | None,
        typer.Option(
            "--idle-sleep",
            min=0.001,
            help="Longest sleep in seconds after a round that found nothing. Default: the stage's (0.2; sweeper 30).",
        ),
    ] = None,
    max_idle_rounds: Annotated[
        int | None,
        typer.Option(
            "--max-idle-rounds", min=1, help="Exit once every stage found nothing K rounds in a row."
        ),
    ] = None,
) -> None:
    """Run registered stages in a loop without Dagster, for low latency. Ctrl-C finishes the current batch."""
    # The platform (database drivers, queues, plugins) loads when the command runs, not for --help.
    from prw_platform.bootstrap import bootstrap
    from prw_platform.pipeline import default_stages
    from prw_platform.runtime import WorkerLoop, stop_on_signals

    registry = default_stages()  # the platform's registry; checked before connecting to anything
    if stage != ALL and stage not in registry:
        known = ", ".join((*registry.names(), ALL))
        console.print(f"[red]no stage {stage!r}[/red]; stages: {known}")
        raise typer.Exit(2)
    stages = registry.names(pipeline_only=True) if stage == ALL else (stage,)
    settings = load_settings()
    with console.status("connecting", spinner="dots"):
        platform = bootstrap(settings)
    with platform:
        loop = WorkerLoop.for_platform(
            platform,
            stages,
            batch=batch,
            idle_sleep=idle_sleep,
            max_idle_rounds=max_idle_rounds,
            on_batch=_print_batch,
            on_error=_print_error,
        )
        where = "embedded PostgreSQL" if platform.urls.embedded else "PRW_DATABASE_URL"
        with stop_on_signals(loop.stop, _print_signal):
            # Printed once SIGINT/SIGTERM are ours: a supervisor that signals on this line stops the loop
            # gracefully instead of killing the process.
            console.print(
                f"[bold]prw worker[/bold] {', '.join(stages)} on {where}; Ctrl-C stops after the current batch"
            )
            report = loop.run()
    summary = ", ".join(f"{name} {report.taken[name]} in {report.batches[name]} batches" for name in stages)
    why = "drained" if report.drained else "stopped"
    console.print(f"[bold]prw worker[/bold] {why}: {summary}")
