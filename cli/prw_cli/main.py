"""Entry point of the `prw` command."""

import typer

from prw_cli.commands import clients, db, demo, dev, extract, plugins, worker

app = typer.Typer(help="PRW platform command line.", no_args_is_help=True)
app.command("demo")(demo.demo)
app.command("dev")(dev.dev)
app.command("worker")(worker.worker)
app.command("migrate")(db.migrate)
app.command("plugins")(plugins.plugins)
app.command("extract")(extract.extract)
app.add_typer(clients.app, name="clients")
