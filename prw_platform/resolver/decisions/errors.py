"""Typed decision errors. Raising one inside the decision transaction rolls it back: nothing is committed and no
stream position is consumed (AW-01). ``code`` and ``status`` are the seed's where it has them (if_review_decision)."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class DecisionError(CodedError):
    code = "DECISION_REJECTED"
    status = 409


class StaleCaseRevision(DecisionError):
    """INV-04, if_review_decision: 409 STALE_CASE_REVISION, do not retry: reload and re-check."""

    code = "STALE_CASE_REVISION"

    def __init__(self, case_id: str, expected: int, actual: int) -> None:
        super().__init__(f"case {case_id} is at revision {actual}, the decision was made against {expected}")
        self.case_id = case_id
        self.expected = expected
        self.actual = actual


class CaseNotFound(DecisionError):
    code = "NOT_FOUND"
    status = 404


class InvariantViolation(DecisionError):
    """The decision would break an invariant (INV-nn, docs/spec.md)."""

    code = "INVARIANT_VIOLATION"

    def __init__(self, invariant: str, message: str) -> None:
        super().__init__(f"{invariant}: {message}")
        self.invariant = invariant


class IdentifierConflict(DecisionError):
    """A new item's strong identifier already names another item of the catalog. The caller should resolve
    identity again (a concurrent job may have created the item): retrying the job maps to it."""

    code = "IDENTIFIER_CONFLICT"
    retryable = True

    def __init__(self, scheme: str, value: str, item_id: str) -> None:
        super().__init__(f"{scheme} {value} already identifies {item_id}")
        self.scheme = scheme
        self.value = value
        self.item_id = item_id


class ItemExists(DecisionError):
    """A reviewer named a new item with an id that is already taken."""

    code = "ITEM_EXISTS"


class SourceNotInCatalog(DecisionError):
    """INV-06 / INV-07: a listing belongs to its source's catalog, which must be the decision's stream."""

    code = "SOURCE_NOT_IN_CATALOG"


class IdempotencyConflict(DecisionError):
    """The same idempotency key was used for a different command (the seed's IDEMPOTENCY_CONFLICT)."""

    code = "IDEMPOTENCY_CONFLICT"


class MerchantNotFound(DecisionError):
    """A binding or a shipping policy names a merchant the catalog does not have: provision it first."""

    code = "MERCHANT_NOT_FOUND"
    status = 404


class InvalidMerchantFact(DecisionError):
    """A merchant, binding or shipping policy the contract would refuse (an id, a destination that is not an ISO
    3166-1 alpha-2 code, a negative rate): nothing is accepted."""

    code = "INVALID_MERCHANT_FACT"
    status = 422


class CatalogNotFound(DecisionError):
    """The active tenant has no such catalog (an operator release or policy switch): 404 NOT_FOUND."""

    code = "NOT_FOUND"
    status = 404


class NothingToRelease(DecisionError):
    """``POST /v1/releases``: every accepted item and mapping of the catalog is already released. Nothing is
    written (no decision, no position): 409 NOTHING_TO_RELEASE, do not retry until something is accepted."""

    code = "NOTHING_TO_RELEASE"


class ItemNotFound(DecisionError):
    """The catalog has no such item (``prw items retire``): NOT_FOUND, nothing written."""

    code = "NOT_FOUND"
    status = 404


class ItemAlreadyRetired(DecisionError):
    """The item is retired already (INV-07: retirement is final): 409 ITEM_RETIRED, nothing written."""

    code = "ITEM_RETIRED"


class MergeIntoItself(DecisionError):
    """A merge names the same item as the merged item and the survivor: 422 MERGE_INTO_SELF, nothing written."""

    code = "MERGE_INTO_SELF"
    status = 422


class CrossCatalogItems(DecisionError):
    """A merge names an item of another catalog than the decision's: 409 CROSS_CATALOG, nothing written (INV-07:
    a listing only ever maps to an item of its own catalog)."""

    code = "CROSS_CATALOG"


class ListingNotOnItem(DecisionError):
    """A split names a listing that is not currently mapped to the item being split: 409 LISTING_NOT_ON_ITEM
    (reload the item: its listings may have moved), nothing written."""

    code = "LISTING_NOT_ON_ITEM"


class NothingToSplit(DecisionError):
    """A split that names no listing: 422 NOTHING_TO_SPLIT, nothing written."""

    code = "NOTHING_TO_SPLIT"
    status = 422
