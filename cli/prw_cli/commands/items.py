"""``prw items retire ITEM --rationale R``: retire a catalog item (INV-07), through the same platform service as
the other operator decisions (``Platform.decisions``, AW-01: the stream cursor lock, an immutable decision with the
operator as actor, the item at revision + 1 with status ``retired`` and its ``catalog_item.updated`` event in one
transaction). Nothing maps to a retired item from then on; the next release (at once on an automatic catalog)
removes it and the listings it owned from the public catalog. An unknown item exits 1 with NOT_FOUND, an item
retired already with ITEM_RETIRED; neither writes anything. The platform is imported when the command runs.
"""

from __future__ import annotations

import getpass
import json
from typing import Annotated

import typer

app = typer.Typer(help="Catalog items: retire one (an operator decision; the next release removes it).")


@app.command("retire")
def retire(
    item: Annotated[str, typer.Argument(help="The item to retire (itm_...).")],
    rationale: Annotated[str, typer.Option(help="Why: recorded on the decision.")],
    catalog: Annotated[
        str | None, typer.Option(help="The item's catalog (default: PRW_PRODUCT_CATALOG_ID).")
    ] = None,
    tenant: Annotated[
        str | None, typer.Option(help="The catalog's tenant (default: PRW_PRODUCT_TENANT_ID).")
    ] = None,
    idempotency_key: Annotated[
        str | None, typer.Option(help="A retry with the same key returns the first retirement.")
    ] = None,
) -> None:
    """Retire ITEM: final; the next release removes it from the public catalog. Prints one JSON document."""
    from prw_cli.settings import load_settings
    from prw_platform.bootstrap import bootstrap
    from prw_platform.errors import DecisionError, StreamUnavailable
    from prw_platform.services import RetireItem

    settings = load_settings()
    tenant_id = tenant or settings.product_tenant_id
    catalog_id = catalog or settings.product_catalog_id
    # The actor of an operator at the command line: the operating-system user (never a rule, never an LLM).
    command = RetireItem(catalog_id, item, f"operator:cli:{getpass.getuser()}", rationale, idempotency_key)
    with bootstrap(settings) as platform:
        try:
            retired = platform.decisions.retire_item(command, tenant_id)
        except (DecisionError, StreamUnavailable) as error:
            typer.echo(f"{error.code}: {error}", err=True)
            raise typer.Exit(1) from error
    document = {
        "tenant_id": tenant_id,
        "catalog_id": retired.catalog_id,
        "item_id": retired.item_id,
        "revision": retired.revision,
        "decision_id": retired.decision_id,
        "outbox": [event.event_id for event in retired.events],
        "replayed": retired.replayed,
    }
    typer.echo(json.dumps(document, indent=2))
