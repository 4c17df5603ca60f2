"""``python -m tests.support.idp_process``: the development identity provider served by a process of its own, as
``prw dev`` serves it (uvicorn on loopback), with the default settings.

Prints one JSON line ``{"url": url, "pid": pid}`` once it answers, then serves until its stdin is closed. Tests
read this process's memory from ``/proc/<pid>/status``, apart from their own.
"""

from __future__ import annotations

import json
import os
import sys

from prw_api.devidp import create_dev_idp
from prw_api.server import BackgroundServer
from prw_platform.config import DevIdpSettings


def main() -> None:
    with BackgroundServer(create_dev_idp(DevIdpSettings())) as idp:
        print(json.dumps({"url": idp.url, "pid": os.getpid()}), flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
