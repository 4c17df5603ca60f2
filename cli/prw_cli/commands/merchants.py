"""``prw merchants``: merchants provisioned for sources by operators; the admin API has the same.

Each command is a decision (AW-01): the fact at revision + 1, an immutable decision row and its outbox event
(``merchant.created`` / ``merchant.updated``, ``merchant.source_bound``, ``shipping_policy.accepted``); a catalog
that releases automatically publishes it in the same transaction. Repeating a command with the state the fact
already has decides nothing and says so. The platform is imported when a command runs, not for ``--help``.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

if TYPE_CHECKING:
    from prw_platform.services import DecisionResult, MerchantService

app = typer.Typer(
    help="Merchants: add one, bind a source to it, accept its shipping policy (operator decisions)."
)
err_console = Console(stderr=True)

TenantOption = Annotated[str, typer.Option(help="Tenant of the catalog.")]
CatalogOption = Annotated[str, typer.Option(help="Catalog the merchant sells in.")]
OperatorOption = Annotated[
    str, typer.Option(help="Your operator id: the decision's actor is operator:<id>.", envvar="PRW_OPERATOR")
]


@app.command("add")
def add(
    merchant: Annotated[str, typer.Argument(help="Merchant id, mer_<a-z, 0-9, _>.")],
    name: Annotated[str, typer.Option(help="Display name.")],
    operator: OperatorOption,
    url: Annotated[str | None, typer.Option(help="The merchant's home page.")] = None,
    tenant: TenantOption = "ten_primary",
    catalog: CatalogOption = "cat_primary",
) -> None:
    """Provision a merchant, or accept its new name or URL."""
    from prw_platform.services import MerchantSpec

    _decide(
        lambda service: service.provision(
            tenant, catalog, MerchantSpec(merchant, name, url), actor=_actor(operator)
        )
    )


@app.command("bind")
def bind(
    source: Annotated[str, typer.Argument(help="A source of the catalog.")],
    merchant: Annotated[str, typer.Argument(help="The merchant its listings belong to.")],
    operator: OperatorOption,
    tenant: TenantOption = "ten_primary",
    catalog: CatalogOption = "cat_primary",
) -> None:
    """Bind a source to a merchant (one merchant per source: binding again moves it)."""
    _decide(lambda service: service.bind_source(tenant, catalog, source, merchant, actor=_actor(operator)))


@app.command("policy")
def policy(
    merchant: Annotated[str, typer.Argument(help="The merchant whose shipping policy this is.")],
    currency: Annotated[str, typer.Option(help="ISO 4217 currency of the rates and the threshold.")],
    rate: Annotated[
        list[str], typer.Option(help="DESTINATION=AMOUNT, e.g. DE=4.90 (ISO 3166-1 alpha-2); repeat.")
    ],
    operator: OperatorOption,
    free_from: Annotated[
        str | None, typer.Option(help="A basket worth at least this much ships free.")
    ] = None,
    tenant: TenantOption = "ten_primary",
    catalog: CatalogOption = "cat_primary",
) -> None:
    """Have a merchant's shipping policy accepted (it replaces the previous one)."""
    from prw_platform.services import ShippingPolicySpec

    spec = ShippingPolicySpec(
        merchant,
        currency,
        dict(_rate(text) for text in rate),
        None if free_from is None else _amount(free_from),
    )
    _decide(lambda service: service.accept_shipping_policy(tenant, catalog, spec, actor=_actor(operator)))


def _decide(decision: Callable[[MerchantService], DecisionResult | None]) -> None:
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap
    from prw_platform.errors import DecisionError, StreamUnavailable

    with bootstrap(load_settings()) as platform:
        try:
            result = decision(platform.merchants)
        except (DecisionError, StreamUnavailable, ValueError) as error:
            err_console.print(f"[red]{getattr(error, 'code', 'INVALID')}[/red]: {error}", highlight=False)
            raise typer.Exit(1) from error
    if result is None:
        typer.echo("unchanged: the fact already has this state (no decision)")
        return
    events = ", ".join(f"{e.type} @{e.position}" for e in result.events)
    typer.echo(f"{result.decision_id} {result.action}: {events}")


def _actor(operator: str) -> str:
    return operator if operator.startswith("operator:") else f"operator:{operator}"


def _rate(text: str) -> tuple[str, Decimal]:
    destination, separator, amount = text.partition("=")
    if not separator:
        raise typer.BadParameter(f"{text!r} is not DESTINATION=AMOUNT", param_hint="--rate")
    return destination.strip(), _amount(amount)


def _amount(text: str) -> Decimal:
    try:
        return Decimal(text.strip())
    except InvalidOperation:
        raise typer.BadParameter(f"{text!r} is not an amount") from None
