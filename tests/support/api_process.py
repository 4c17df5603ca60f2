"""``python -m tests.support.api_process``: the intake and product APIs served by ONE process, as ``prw dev`` serves
them (two uvicorn servers on loopback, same pools), over the deployment in the ``PRW_*`` environment.

Prints one JSON line ``{"intake": url, "product": url, "pid": pid}`` once both answer, then serves until its
stdin is closed. Tests read this process's memory from ``/proc/<pid>/status``, apart from their own.
"""

from __future__ import annotations

import json
import os
import sys

from prw_api import compose
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import bootstrap
from prw_platform.config import Settings

TENANT = "ten_primary"
CATALOG = "cat_primary"


def main() -> None:
    with (
        bootstrap(Settings()) as platform,
        BackgroundServer(compose.intake_app(platform)) as intake,
        BackgroundServer(compose.product_app(platform, TENANT, CATALOG)) as product,
    ):
        print(json.dumps({"intake": intake.url, "product": product.url, "pid": os.getpid()}), flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
