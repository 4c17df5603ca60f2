"""The identity of one accepted-change stream, the one both sides name it by."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StreamKey:
    """One accepted-change stream: a catalog's events in one history epoch. Positions are contiguous within it
    (INV-03); the resolver numbers them under the stream's cursor, the product service applies them."""

    tenant_id: str
    catalog_id: str
    history_epoch: str
