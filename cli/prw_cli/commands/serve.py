"""``prw serve intake|product``: one API origin with uvicorn worker processes, for production behind a load
balancer (docs/operators/running.md: "prw serve behind a load balancer").

This process locates the databases (it starts the embedded PostgreSQL when no ``PRW_DATABASE_URL`` is set, so the
workers only attach to it), binds the port and supervises ``--workers`` processes (uvicorn's multiprocess
manager: a worker that dies is replaced). Each worker calls the app factory (``prw_api.factory``), which builds its
own ``Platform`` from the ``PRW_*`` environment and closes it when the worker stops. SIGTERM or SIGINT: every
worker stops accepting, finishes its requests in flight (up to ``--graceful-timeout`` seconds), closes its pools
and exits; then this process exits with status 0. Every log line carries the pid of the process that wrote it,
and every response the worker's pid in ``X-Served-By``.

It does not migrate (run ``prw migrate`` once per deployment, before the servers) and provisions nothing.
Heavy imports (uvicorn, FastAPI, the apps) happen inside ``serve``: ``prw serve --help`` answers at once.
"""

from __future__ import annotations

import os
import signal
from enum import StrEnum
from typing import Annotated

import typer

from prw_cli.output import results_console
from prw_cli.settings import databases, load_settings

console = results_console(highlight=False)


class Origin(StrEnum):
    intake = "intake"
    product = "product"
    admin = "admin"


DEFAULT_PORTS = {Origin.intake: 8081, Origin.product: 8082, Origin.admin: 8083}


def serve(
    app: Annotated[
        Origin,
        typer.Argument(
            help="The origin to serve: intake (collectors), product (the public catalog of"
            " PRW_PRODUCT_TENANT_ID / PRW_PRODUCT_CATALOG_ID) or admin (operators; needs"
            " PRW_OPERATOR_OIDC__ISSUER).",
            show_choices=True,
        ),
    ],
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes; each opens its own pools of PRW_DB_POOL_MAX_SIZE.")
    ] = 1,
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0: every interface).")] = "127.0.0.1",
    port: Annotated[
        int | None,
        typer.Option(
            min=1, max=65535, help="Port to listen on (default: intake 8081, product 8082, admin 8083)."
        ),
    ] = None,
    graceful_timeout: Annotated[
        int,
        typer.Option(
            min=1, help="Seconds a stopping worker waits for its requests in flight before closing them."
        ),
    ] = 30,
    forwarded_allow_ips: Annotated[
        str,
        typer.Option(
            help="Addresses of the load balancers whose X-Forwarded-For/-Proto headers are trusted (comma"
            " separated; * trusts every peer)."
        ),
    ] = "127.0.0.1",
    access_log: Annotated[bool, typer.Option(help="Log one line per request.")] = True,
    log_level: Annotated[str, typer.Option(help="debug, info, warning or error.")] = "info",
) -> None:
    """Serve the intake or product API with uvicorn worker processes, for a load balancer. SIGTERM finishes the
    requests in flight.

    GET /healthz answers while the process runs (liveness); GET /readyz answers 200 when the origin's database
    answers, else 503 (readiness). Run `prw migrate` first: serve does not migrate.
    """
    import uvicorn

    from prw_api.factory import FACTORIES, log_config

    settings = load_settings()
    if app is Origin.admin and not settings.operator_oidc.issuer:
        console.print(
            "prw serve admin needs an OIDC issuer for operator login: set PRW_OPERATOR_OIDC__ISSUER"
            " (`prw dev` serves a development identity provider instead)",
            soft_wrap=True,
        )
        raise typer.Exit(2)
    # The workers inherit this environment: the same data dir (absolute, whatever their working directory), so
    # the same embedded server, object store and token signing key.
    os.environ["PRW_DATA_DIR"] = str(settings.data_dir.resolve())
    urls = databases(settings)
    bound = port or DEFAULT_PORTS[app]
    where = "embedded PostgreSQL" if urls.embedded else "PRW_DATABASE_URL"
    console.print(
        f"prw serve {app.value}: http://{host}:{bound} with {workers} worker process(es) on {where}"
        f" (pid {os.getpid()}); SIGTERM or Ctrl-C stops gracefully",
        soft_wrap=True,
    )
    # With one worker uvicorn serves in this process and, once it has shut down gracefully, re-raises the signal
    # to the handler it found: SIGTERM's default would end the process with -15 instead of status 0.
    signal.signal(signal.SIGTERM, lambda signum, frame: None)
    uvicorn.run(
        FACTORIES[app.value],
        factory=True,
        host=host,
        port=bound,
        workers=workers,
        timeout_graceful_shutdown=graceful_timeout,
        log_config=log_config(log_level.upper()),
        log_level=log_level,
        access_log=access_log,
        proxy_headers=True,
        forwarded_allow_ips=forwarded_allow_ips,
    )
    console.print(f"prw serve {app.value} stopped")
