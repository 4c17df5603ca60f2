"""``prw dev``: the platform for a developer on one machine, on the configured database (embedded by default).

First it checks every TCP port it will listen on (the intake API, the product API, the Dagster webserver: the
code servers Dagster starts listen on Unix sockets): a port in use, or one port given twice, ends the command
before anything starts. Then, in this process: migrate, and serve the intake API and the product API with uvicorn
on loopback. As child processes: the Dagster webserver (the UI) and the Dagster daemon (sensors and schedules
launch the pipeline runs), both loading ``prw_orchestration.definitions`` with DAGSTER_HOME from
``prepare_instance`` and the same ``PRW_*`` environment, so every part works on the same databases, object store
and queues.

It provisions nothing: ``prw demo`` creates the demo catalog and plays a collector. Ctrl-C (or SIGTERM) stops
everything. Each Dagster process runs under ``prw_cli.supervisor``, the leader of a process group of its own that
holds every process Dagster starts in turn (code servers, the runs the daemon launches): on a stop request each
group gets SIGINT (Dagster's graceful shutdown), then SIGTERM and finally SIGKILL if it outlives its grace period.
When ``prw dev`` itself is killed, even with SIGKILL, the kernel's parent-death signal (Linux) makes each
supervisor stop its group the same way.

Heavy imports (uvicorn, FastAPI, the apps, Dagster) happen inside ``dev``, after the port check: ``prw dev --help``
and a ``prw dev`` that finds a port taken answer at once.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from prw_cli.demo_catalog import CATALOG, TENANT
from prw_cli.output import results_console
from prw_cli.supervisor import GRACE_SECONDS, PARENT_DEATH_SIGNAL, parent_death_signal, supervised

if TYPE_CHECKING:
    from fastapi import FastAPI

    from prw_api.server import BackgroundServer
    from prw_platform.bootstrap import Platform
    from prw_platform.config import Settings

console = results_console(highlight=False)
err_console = Console(stderr=True, highlight=False)

CODE_LOCATION = "prw_orchestration.definitions"
HOST = "127.0.0.1"


def port_problems(ports: Mapping[str, int], host: str = HOST) -> list[str]:
    """What keeps ``prw dev`` from listening on ``ports`` (what -> port), one message per port: given twice, or in
    use (bound as uvicorn binds, with SO_REUSEADDR, so a port in TIME_WAIT counts as free)."""
    problems: list[str] = []
    first_use: dict[int, str] = {}
    for what, port in ports.items():
        if port in first_use:
            problems.append(f"port {port} is given for both the {first_use[port]} and the {what}")
            continue
        first_use[port] = what
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as error:
                problems.append(f"cannot serve the {what} on {host}:{port}: {error.strerror}")
    return problems


@dataclass
class Child:
    """A supervised child process (``prw_cli.supervisor``), leader of its own process group."""

    name: str
    process: subprocess.Popen[bytes]

    def signal_group(self, signum: int) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signum)


def stop_all(children: list[Child]) -> list[int]:
    """Stop every child at once: SIGINT to each group, then SIGTERM to those still running after the first grace
    period, then SIGKILL; the exit codes in order. At once, not one after another: a Dagster process stopped while
    it is still starting up can use its whole grace period, and the waits would add up."""
    running = list(children)
    for signum, grace in zip((signal.SIGINT, signal.SIGTERM), GRACE_SECONDS, strict=True):
        for child in running:
            child.signal_group(signum)
        deadline = time.monotonic() + grace
        for child in running:
            with suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        running = [child for child in running if child.process.poll() is None]
        if not running:
            break
    codes = []
    for child in children:
        if child.process.poll() is None:
            child.signal_group(signal.SIGKILL)
        codes.append(child.process.wait())
        # The leader is gone; processes it started may still be finishing in its group.
        child.signal_group(signal.SIGKILL)
    return codes


def _executable(name: str) -> str:
    """The console script installed beside this interpreter (the locked environment), else from PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    raise typer.BadParameter(f"{name} is not installed beside {sys.executable}")


def dagster_commands(dagster_port: int) -> dict[str, list[str]]:
    """Each Dagster process under a supervisor (``prw_cli.supervisor``)."""
    return {
        "dagster-webserver": supervised(
            [_executable("dagster-webserver"), "-m", CODE_LOCATION, "-h", HOST, "-p", str(dagster_port)]
        ),
        "dagster-daemon": supervised([_executable("dagster-daemon"), "run", "-m", CODE_LOCATION]),
    }


def child_environment(settings: Settings, dagster_home: Path) -> dict[str, str]:
    """This process's environment (every PRW_* variable included) with the data dir made absolute, so that a
    child resolves the same embedded server, object store and Dagster home whatever its working directory."""
    return {**os.environ, "PRW_DATA_DIR": str(settings.data_dir.resolve()), "DAGSTER_HOME": str(dagster_home)}


def start_child(name: str, command: list[str], env: dict[str, str], log_dir: Path) -> Child:
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / f"{name}.log").open("ab") as log:
        # Called from the main thread, which lives as long as this process: PR_SET_DEATHSIG fires when the
        # thread that started the child ends.
        process = subprocess.Popen(
            command,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=parent_death_signal(PARENT_DEATH_SIGNAL),
        )
    return Child(name, process)


@contextmanager
def children(commands: dict[str, list[str]], env: dict[str, str], log_dir: Path) -> Iterator[list[Child]]:
    started: list[Child] = []
    try:
        for name, command in commands.items():
            started.append(start_child(name, command, env, log_dir))
        yield started
    finally:
        for child, code in zip(started, stop_all(started), strict=True):
            console.print(f"stopped {child.name} (exit {code})")


@contextmanager
def stop_requested() -> Iterator[threading.Event]:
    stop = threading.Event()

    def request(signum: int, frame: FrameType | None) -> None:
        if not stop.is_set():
            console.print(f"\n[yellow]{signal.Signals(signum).name}[/yellow]: stopping")
        stop.set()

    previous = {sig: signal.signal(sig, request) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _serve(stack: ExitStack, app: FastAPI, port: int, what: str) -> BackgroundServer:
    from prw_api.server import BackgroundServer

    try:
        server = BackgroundServer(app, host=HOST, port=port)
    except OSError as error:
        raise typer.BadParameter(f"cannot serve the {what} on {HOST}:{port}: {error.strerror}") from error
    return stack.enter_context(server)


def _has_catalog(platform: Platform, tenant: str, catalog: str) -> bool:
    return any(s.tenant_id == tenant and s.catalog_id == catalog for s in platform.reports.stream_statuses())


def _urls_table(
    intake: str, product: str, dagster: str, tenant: str, catalog: str, admin: str, idp: str | None
) -> Table:
    table = Table(title="prw dev", title_justify="left")
    table.add_column("what")
    table.add_column("URL")
    table.add_row("intake API (collectors)", f"{intake}/docs")
    table.add_row(f"product API ({tenant}/{catalog})", f"{product}/v1/items")
    table.add_row("Dagster UI (runs, sensors, assets, checks)", dagster)
    table.add_row("admin API (operators: log in here)", f"{admin}/auth/login")
    table.add_row("review console (docs/operators/review.md)", f"{admin}/console/review")
    if idp is not None:
        table.add_row("development identity provider (users from PRW_DEV_IDP__USERS)", idp)
    return table


def dev(
    intake_port: Annotated[int, typer.Option(min=1, max=65535, help="Port of the intake API.")] = 8081,
    product_port: Annotated[int, typer.Option(min=1, max=65535, help="Port of the product API.")] = 8082,
    dagster_port: Annotated[
        int, typer.Option(min=1, max=65535, help="Port of the Dagster webserver.")
    ] = 3000,
    tenant: Annotated[str, typer.Option(help="Tenant the product API serves.")] = TENANT,
    catalog: Annotated[str, typer.Option(help="Catalog the product API serves.")] = CATALOG,
    admin_port: Annotated[int, typer.Option(min=1, max=65535, help="Port of the admin API.")] = 8083,
    idp_port: Annotated[
        int,
        typer.Option(
            min=1,
            max=65535,
            help="Port of the development identity provider (only without PRW_OPERATOR_OIDC__ISSUER).",
        ),
    ] = 8084,
) -> None:
    """Serve the intake, product and admin APIs and run the Dagster webserver and daemon on the same database.

    Operators log in to the admin API at a development identity provider served on loopback, unless
    PRW_OPERATOR_OIDC__ISSUER names an issuer."""
    from prw_cli.settings import load_settings

    settings = load_settings()
    dev_idp = settings.operator_oidc.issuer is None
    wanted = {
        "intake API": intake_port,
        "product API": product_port,
        "Dagster webserver": dagster_port,
        "admin API": admin_port,
    }
    if dev_idp:
        wanted["development identity provider"] = idp_port
    problems = port_problems(wanted)
    if problems:
        for problem in problems:
            err_console.print(f"[red]{problem}[/red]", soft_wrap=True)
        err_console.print(
            "prw dev started nothing: free the port, or choose another with --intake-port, --product-port,"
            " --dagster-port, --admin-port or --idp-port",
            soft_wrap=True,
        )
        raise typer.Exit(1)

    from prw_api import compose
    from prw_api.devidp import create_dev_idp
    from prw_orchestration.instance import prepare_instance
    from prw_platform.bootstrap import bootstrap

    idp_url = f"http://{HOST}:{idp_port}" if dev_idp else None
    if idp_url is not None:
        # The admin origin logs operators in at the development identity provider served below.
        oidc = settings.operator_oidc.model_copy(update={"issuer": idp_url})
        settings = settings.model_copy(update={"operator_oidc": oidc})
    with console.status("starting and migrating the database", spinner="dots"):
        platform = bootstrap(settings, migrate=True)
    with platform, ExitStack() as stack:
        if not _has_catalog(platform, tenant, catalog):
            console.print(
                f"[yellow]no catalog {tenant}/{catalog} yet[/yellow]: `prw dev` provisions nothing. Run `prw demo`"
                " first (./run demo): it creates the demo catalog and plays a collector; then run `prw dev` again."
            )
        intake_app = compose.intake_app(platform)
        product_app = compose.product_app(platform, tenant, catalog)
        intake = _serve(stack, intake_app, intake_port, "intake API")
        product = _serve(stack, product_app, product_port, "product API")
        if dev_idp:
            _serve(stack, create_dev_idp(settings.dev_idp), idp_port, "development identity provider")
        admin = _serve(stack, compose.admin_app(platform), admin_port, "admin API")
        home = prepare_instance(settings)
        # Not $DAGSTER_HOME/logs: Dagster's telemetry owns that folder and empties it.
        log_dir = settings.data_dir.resolve() / "logs"
        stop = stack.enter_context(stop_requested())
        started = stack.enter_context(
            children(dagster_commands(dagster_port), child_environment(settings, home), log_dir)
        )
        dagster_url = f"http://{HOST}:{dagster_port}"
        console.print(_urls_table(intake.url, product.url, dagster_url, tenant, catalog, admin.url, idp_url))
        console.print(
            f"DAGSTER_HOME={home} (webserver and daemon logs in {log_dir}); Ctrl-C stops everything",
            soft_wrap=True,
        )
        while not stop.wait(0.5):
            exited = [c for c in started if c.process.poll() is not None]
            if exited:
                for child in exited:
                    console.print(
                        f"[red]{child.name} exited with {child.process.returncode}[/red]; see {log_dir}/{child.name}.log"
                    )
                raise typer.Exit(1)
    console.print("prw dev stopped")
