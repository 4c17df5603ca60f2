"""Database errors with the seed's codes (if_db)."""

from __future__ import annotations


class DatabaseError(Exception):
    code = "DB_ERROR"
    retryable = False


class DatabaseUnavailable(DatabaseError):
    """if_accepted_change: retry DB_UNAVAILABLE. The server could not be reached or a retry budget ran out."""

    code = "DB_UNAVAILABLE"
    retryable = True


class AmbiguousCommit(DatabaseError):
    """The connection broke while COMMIT was in flight: the transaction may or may not have committed.

    if_db: "Never retry after an ambiguous commit without an idempotency check." The caller either passes a
    ``verify_commit`` check to ``Database.run`` or treats this as unknown and re-drives through its own
    idempotency key (an inbox row, an Idempotency-Key)."""

    code = "AMBIGUOUS_COMMIT"
    retryable = False


class InsufficientPrivilege(DatabaseError):
    """if_db: 42501 insufficient_privilege, do not retry (role misconfiguration)."""

    code = "INSUFFICIENT_PRIVILEGE"
    retryable = False
