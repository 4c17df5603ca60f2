"""Collector scopes (``resource:action``), checked on every request (if_capture_submit: "required
resource:action scope checked on every request")."""

from __future__ import annotations

from typing import Final

ARTIFACTS_WRITE: Final = "artifacts:write"
CAPTURES_WRITE: Final = "captures:write"
RECEIPTS_READ: Final = "receipts:read"
WORKERS_REGISTER: Final = "workers:register"
WORKERS_HEARTBEAT: Final = "workers:heartbeat"

#: if_projection_bootstrap: the product service principal reads the resolver's export stream.
EXPORTS_READ: Final = "exports:read"
#: What a product service client is granted (no source: it reads a catalog's stream, it never submits).
PRODUCT_SCOPES: Final = (EXPORTS_READ,)

#: Everything a collector instance does; an operator may provision a client with fewer.
COLLECTOR_SCOPES: Final = (
    ARTIFACTS_WRITE,
    CAPTURES_WRITE,
    RECEIPTS_READ,
    WORKERS_REGISTER,
    WORKERS_HEARTBEAT,
)


def parse_scope(value: str) -> tuple[str, ...]:
    """RFC 6749 3.3: a space-delimited list; order does not matter, duplicates collapse."""
    return tuple(sorted(set(value.split())))


def format_scope(scopes: tuple[str, ...] | frozenset[str]) -> str:
    return " ".join(sorted(scopes))
