"""Database errors with the seed's codes (if_db)."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class DatabaseError(CodedError):
    code = "DB_ERROR"


class DatabaseUnavailable(DatabaseError):
    """if_accepted_change: retry DB_UNAVAILABLE. The server could not be reached or a retry budget ran out."""

    code = "DB_UNAVAILABLE"
    status = 503
    retryable = True


class AmbiguousCommit(DatabaseError):
    """The connection broke while COMMIT was in flight: the transaction may or may not have committed.

    if_db: "Never retry after an ambiguous commit without an idempotency check." The caller either passes a
    ``verify_commit`` check to ``Database.run`` or treats this as unknown and re-drives through its own
    idempotency key (an inbox row, an Idempotency-Key)."""

    code = "AMBIGUOUS_COMMIT"
    status = 503


class InsufficientPrivilege(DatabaseError):
    """if_db: 42501 insufficient_privilege, do not retry (role misconfiguration)."""

    code = "INSUFFICIENT_PRIVILEGE"


class InvalidData(DatabaseError):
    """The database refused a value (SQLSTATE class 22, data exception: a NUL in text, a numeric overflow, an
    invalid text representation, a datetime out of range). The value came from the caller, so retrying the same
    request fails the same way: an edge renders this as its validation error, never as a 500."""

    code = "INVALID_DATA"
    status = 422
