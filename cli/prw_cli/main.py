"""Entry point of the `prw` command.

Subcommands are imported only when they run (``prw_cli.lazy``): ``prw --help`` imports none of them, ``prw extract``
imports the plugin API and not Dagster, FastAPI or the apps. Add a command here, with the summary of its help.
"""

import typer

from prw_cli.lazy import LazyCommand, LazyGroup


class PrwCommands(LazyGroup):
    lazy_commands = (
        LazyCommand(
            "demo",
            "prw_cli.commands.demo:demo",
            "Run the end-to-end demo on embedded defaults and print a summary.",
        ),
        LazyCommand(
            "dev",
            "prw_cli.commands.dev:dev",
            "Serve the intake, product and admin APIs and run the Dagster webserver and daemon on the same database.",
        ),
        LazyCommand(
            "serve",
            "prw_cli.commands.serve:serve",
            "Serve the intake or product API with uvicorn worker processes, for a load balancer. SIGTERM finishes"
            " the requests in flight.",
        ),
        LazyCommand(
            "worker",
            "prw_cli.commands.worker:worker",
            "Run registered stages in a loop without Dagster, for low latency. Ctrl-C finishes the current batch.",
        ),
        LazyCommand(
            "migrate",
            "prw_cli.commands.db:migrate",
            "Apply Alembic migrations to the main database (schemas resolver, product, queue) and the control"
            " database (history epochs). Starts the embedded PostgreSQL when no PRW_DATABASE_URL is set.",
        ),
        LazyCommand(
            "plugins",
            "prw_cli.commands.plugins:plugins",
            "One row per registered plugin: name, distribution and version, kind, name@version pins, hooks.",
        ),
        LazyCommand(
            "extract",
            "prw_cli.commands.extract:extract",
            "Dry-run an adapter (and a profile) on local files.",
        ),
        LazyCommand(
            "eval",
            "prw_cli.commands.eval:app",
            "Measure the installed plugins on annotated data, in a benchmark's own metric.",
        ),
        LazyCommand(
            "identity",
            "prw_cli.commands.identity:app",
            "Identity generations per catalog: calibrate on reviewers' labels, list, live precision.",
        ),
        LazyCommand(
            "collect",
            "prw_cli.commands.collect:collect",
            "Send local pages to intake as a collector: upload, capture (idempotent), receipt; retried with backoff.",
        ),
        LazyCommand(
            "clients",
            "prw_cli.commands.clients:app",
            "Collector OAuth clients: create (client_id + secret, shown once) and revoke.",
        ),
        LazyCommand(
            "dlq",
            "prw_cli.commands.dlq:app",
            "Dead-letter queues: list them, show an entry, re-drive entries to their queue.",
        ),
        LazyCommand(
            "retention",
            "prw_cli.commands.retention:app",
            "Outbox retention (AW-03 Prune): status of every stream (consumers, leases, blocked retention), prune now.",
        ),
        LazyCommand(
            "export",
            "prw_cli.commands.retention:export_app",
            "Snapshot exports of a catalog (if_projection_bootstrap): build one now and print its manifest.",
        ),
        LazyCommand(
            "product",
            "prw_cli.commands.rebuild:product_app",
            "The product projection: rebuild a catalog into an isolated generation and cut over (if_projection_bootstrap).",
        ),
        LazyCommand(
            "epoch",
            "prw_cli.commands.rebuild:epoch_app",
            "History epochs: fence a restored resolver database (a NEW epoch, old workers fenced, product rebuilt).",
        ),
        LazyCommand(
            "items",
            "prw_cli.commands.items:app",
            "Catalog items: retire one (an operator decision; the next release removes it).",
        ),
        LazyCommand(
            "merchants",
            "prw_cli.commands.merchants:app",
            "Merchants: add one, bind a source to it, accept its shipping policy (operator decisions).",
        ),
        LazyCommand(
            "receipts",
            "prw_cli.commands.receipts:app",
            "Capture receipts: show any receipt's status (stored, accepted, in_review, failed).",
        ),
        LazyCommand(
            "release",
            "prw_cli.commands.release:release",
            "Release a catalog's accepted state now (a release authorization, recorded as a decision).",
        ),
        LazyCommand(
            "workers",
            "prw_cli.commands.workers:workers",
            "One row per registered collector instance: worker, sources, lease state (active/silent/failing), last"
            " heartbeat, consecutive failures and last run report.",
        ),
    )


app = typer.Typer(cls=PrwCommands, help="PRW platform command line.", no_args_is_help=True)


@app.callback()
def _prw() -> None:
    """PRW platform command line."""


if __name__ == "__main__":
    app()
