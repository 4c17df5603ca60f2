"""``prw dlq list | show | redrive | discard``: the dead-letter queues of the platform's queues (the three
resolution stages' ``resolution-jobs``, ``resolution-normalize``, ``resolution-identity``, and
``accepted-changes``), through ``Platform.dead_letters`` (each queue with its consumer's role).

A message lands in a dead-letter queue when its consumer refused it for good (a terminal code such as
SCHEMA_INVALID or TENANT_MISMATCH) or after its last permitted delivery (MAX_RECEIVES_EXCEEDED). Re-driving puts it
back on its queue as a new message; its consumer dedupes, so re-driving something already processed changes
nothing. Accepted changes are never re-driven (the relay alone sends them; gap closure re-fetches a dead-lettered
position): such an entry is discarded once looked at. The platform is imported when a command runs, not for
``--help``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from prw_cli.output import results_console

if TYPE_CHECKING:
    from prw_platform.bootstrap import Platform
    from prw_platform.services import DeadLetter

app = typer.Typer(help="Dead-letter queues: list them, show an entry, re-drive entries to their queue.")
console = results_console()
err_console = Console(stderr=True)

#: How much of a body ``show`` prints as text (``--json`` prints all of it).
BODY_PREVIEW_CHARS = 2000


@app.callback()
def dlq() -> None:
    """The dead-letter queues of the platform's queues."""


@app.command("list")
def list_(
    queue: Annotated[
        str | None,
        typer.Argument(
            help="One queue's entries (resolution-jobs, resolution-normalize, resolution-identity, accepted-changes);"
            " none: a summary."
        ),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="Entries to list at most.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
) -> None:
    """Without QUEUE: every dead-letter queue with its size, reasons and oldest entry. With QUEUE: its entries."""
    with _platform() as platform:
        if queue is None:
            _print_summaries(platform, as_json)
            return
        entries = _or_exit(lambda: platform.dead_letters.entries(queue, limit))
    if as_json:
        typer.echo(json.dumps([_document(e, body=False) for e in entries], indent=2))
        return
    table = Table(title=f"{queue}: dead letters ({len(entries)} shown)")
    table.add_column("id", no_wrap=True)
    table.add_column("message", overflow="fold")
    table.add_column("reason", overflow="fold")
    table.add_column("detail", overflow="fold")
    table.add_column("deliveries", justify="right")
    table.add_column("dead-lettered (UTC)", no_wrap=True)
    for e in entries:
        table.add_row(
            e.dead_letter_id,
            e.message_id,
            e.reason,
            (e.detail or "")[:80],
            "" if e.receive_count is None else str(e.receive_count),
            f"{e.dead_lettered_at:%Y-%m-%d %H:%M}" if e.dead_lettered_at else "",
        )
    console.print(table)


@app.command("show")
def show(
    queue: Annotated[
        str,
        typer.Argument(
            help="The queue (resolution-jobs, resolution-normalize, resolution-identity, accepted-changes)."
        ),
    ],
    dead_letter_id: Annotated[str, typer.Argument(help="The entry's id (from `prw dlq list QUEUE`).")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON document, the whole body included.")
    ] = False,
) -> None:
    """One entry: why it was dead-lettered, after how many deliveries, and its message body."""
    with _platform() as platform:
        entry = _or_exit(lambda: platform.dead_letters.entry(queue, dead_letter_id))
    document = _document(entry, body=True)
    if as_json:
        typer.echo(json.dumps(document, indent=2))
        return
    table = Table(title=f"{queue}: dead letter {dead_letter_id}", show_header=False)
    for key, value in document.items():
        text = value if isinstance(value, str) else json.dumps(value)
        table.add_row(key, (text or "")[:BODY_PREVIEW_CHARS])
    console.print(table)


@app.command("redrive")
def redrive(
    queue: Annotated[
        str,
        typer.Argument(
            help="The queue (resolution-jobs, resolution-normalize, resolution-identity, accepted-changes)."
        ),
    ],
    dead_letter_ids: Annotated[list[str] | None, typer.Argument(help="Entries to re-drive.")] = None,
    everything: Annotated[bool, typer.Option("--all", help="Re-drive every entry of the queue.")] = False,
) -> None:
    """Put entries back on their queue as new messages (the consumer dedupes what it already processed)."""
    _take(queue, dead_letter_ids, everything, "re-drove", lambda ops: (ops.redrive_all, ops.redrive))


@app.command("discard")
def discard(
    queue: Annotated[
        str,
        typer.Argument(
            help="The queue (resolution-jobs, resolution-normalize, resolution-identity, accepted-changes)."
        ),
    ],
    dead_letter_ids: Annotated[list[str] | None, typer.Argument(help="Entries to delete.")] = None,
    everything: Annotated[bool, typer.Option("--all", help="Delete every entry of the queue.")] = False,
) -> None:
    """Delete entries that were looked at and need nothing re-done (the way to clear accepted-changes)."""
    _take(queue, dead_letter_ids, everything, "discarded", lambda ops: (ops.discard_all, ops.discard))


def _take(
    queue: str, ids: list[str] | None, everything: bool, verb: str, actions: Callable[[Any], tuple[Any, Any]]
) -> None:
    if everything == bool(ids):
        err_console.print("name the entries, or --all (not both)")
        raise typer.Exit(2)
    with _platform() as platform:
        on_all, on_some = actions(platform.dead_letters)
        moved = _or_exit(lambda: on_all(queue) if everything else on_some(queue, ids or []))
    asked = "every entry" if everything else f"{len(ids or [])} entries"
    console.print(f"{queue}: {verb} {moved} of {asked}")
    if not everything and moved < len(ids or []):
        err_console.print("some entries were not in the dead-letter queue (already taken, or unknown ids)")
        raise typer.Exit(1)


def _print_summaries(platform: Platform, as_json: bool) -> None:
    summaries = platform.dead_letters.summaries()
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "queue": s.queue,
                        "dead": s.dead,
                        "visible": s.visible,
                        "in_flight": s.in_flight,
                        "reasons": dict(s.reasons),
                        "oldest_dead_lettered_at": s.oldest_dead_lettered_at.isoformat()
                        if s.oldest_dead_lettered_at
                        else None,
                    }
                    for s in summaries
                ],
                indent=2,
            )
        )
        return
    table = Table(title="Dead-letter queues")
    table.add_column("queue", no_wrap=True)
    table.add_column("dead", justify="right")
    table.add_column("reasons", overflow="fold")
    table.add_column("oldest (UTC)", no_wrap=True)
    table.add_column("visible", justify="right")
    table.add_column("in flight", justify="right")
    for s in summaries:
        table.add_row(
            s.queue,
            str(s.dead),
            ", ".join(f"{reason} {n}" for reason, n in s.reasons.items()),
            f"{s.oldest_dead_lettered_at:%Y-%m-%d %H:%M}" if s.oldest_dead_lettered_at else "",
            str(s.visible),
            str(s.in_flight),
        )
    console.print(table)


def _document(entry: DeadLetter, *, body: bool) -> dict[str, Any]:
    document: dict[str, Any] = {
        "dead_letter_id": entry.dead_letter_id,
        "queue": entry.queue,
        "message_id": entry.message_id,
        "reason": entry.reason,
        "detail": entry.detail,
        "receive_count": entry.receive_count,
        "enqueued_at": entry.enqueued_at.isoformat() if entry.enqueued_at else None,
        "dead_lettered_at": entry.dead_lettered_at.isoformat() if entry.dead_lettered_at else None,
    }
    if body:
        document["body"] = entry.body.hex() if isinstance(entry.body, bytes) else entry.body
    return document


def _platform() -> Platform:
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap

    return bootstrap(load_settings())


def _or_exit(action: Any) -> Any:
    from prw_platform.services import RedriveRefused, UnknownDeadLetter, UnknownQueue

    try:
        return action()
    except (UnknownQueue, UnknownDeadLetter) as error:
        err_console.print(f"[red]NOT_FOUND[/red]: {error}", highlight=False)
        raise typer.Exit(1) from error
    except RedriveRefused as error:
        err_console.print(f"[red]REDRIVE_REFUSED[/red]: {error}", highlight=False)
        raise typer.Exit(1) from error
