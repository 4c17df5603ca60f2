"""Typed errors of the product service, with the seed's codes (if_accepted_change, if_product_query).

``RejectedDelivery`` and its subclasses are terminal for one message: the caller dead-letters it and does not
retry. Database unavailability is not here: ``prw_platform.db.errors.DatabaseUnavailable`` (DB_UNAVAILABLE) is
retryable, so the caller leaves the message unacknowledged for redelivery.
"""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class RejectedDelivery(CodedError):
    """if_accepted_change: a delivery the product service will never apply; the caller sends it to the DLQ.
    A dead letter does not close a gap in the stream's contiguous progress."""

    code = "REJECTED"

    def __init__(self, message: str, *, event_id: str | None = None) -> None:
        super().__init__(message)
        self.event_id = event_id


class ScopeNotProjected(RejectedDelivery):
    """if_accepted_change: DLQ SCOPE_NOT_PROJECTED, an unknown (tenant_id, catalog_id) pair."""

    code = "SCOPE_NOT_PROJECTED"


class SchemaInvalid(RejectedDelivery):
    """The message breaks product.accepted-change.v1 or the payload its event type has in docs/events.md."""

    code = "SCHEMA_INVALID"


class UnsupportedEventType(RejectedDelivery):
    """A well-formed event of a type this consumer does not know: dead-lettered rather than skipped, so the gap
    it leaves stays visible until a consumer that understands it is deployed."""

    code = "UNSUPPORTED_EVENT_TYPE"


class PositionConflict(RejectedDelivery):
    """INV-03: another event already holds this committed position in the same stream."""

    code = "POSITION_CONFLICT"


class InvalidQuery(CodedError, ValueError):
    """if_product_query 422: a public query with a malformed cursor, limit or filter."""

    code = "INVALID_QUERY"
    status = 422


class InvalidDestination(InvalidQuery):
    """if_product_query 422 INVALID_DESTINATION: not an ISO 3166-1 alpha-2 code, or the merchant does not ship
    there."""

    code = "INVALID_DESTINATION"


class BasketSpansMerchants(InvalidQuery):
    """if_product_query 422 BASKET_SPANS_MERCHANTS: a shipping evaluation is one merchant's basket."""

    code = "BASKET_SPANS_MERCHANTS"


class CatalogPaused(CodedError):
    """if_product_query 503 UNAVAILABLE: public serving of the catalog is paused while its history epoch is fenced
    (if_projection_bootstrap "Fence restored history"); retry later."""

    code = "UNAVAILABLE"
    status = 503
    retryable = True

    def __init__(self, reason: str) -> None:
        super().__init__(f"the catalog is paused: {reason}; retry later")


class NotPublic(CodedError, LookupError):
    """if_product_query 404 NOT_FOUND: no applied release publishes it."""

    code = "NOT_FOUND"
    status = 404


class PictureLinkError(CodedError, LookupError):
    """A public picture link the product API refuses (seed 004)."""

    code = "NOT_FOUND"
    status = 404


class PictureLinkInvalid(PictureLinkError):
    """404 NOT_FOUND: a link this API did not sign (forged, altered, of another catalog) says nothing about
    what exists."""


class PictureLinkExpired(PictureLinkError):
    """403 LINK_EXPIRED: a genuine link past its expiry; GET the item or class again for a fresh one."""

    code = "LINK_EXPIRED"
    status = 403


class PictureGone(PictureLinkError):
    """404 NOT_FOUND: the signed picture's bytes are no longer in the managed store (a retired file past its
    thirty days, seed 004)."""
