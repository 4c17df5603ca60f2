"""The review read's own refusals (if_review_read). An unknown case is the decision core's ``CaseNotFound``
(404 NOT_FOUND); the session's errors (401 SESSION_EXPIRED, 403 TENANT_SCOPE_DENIED) are the admin origin's."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class ReviewReadError(CodedError):
    code = "VALIDATION_FAILED"
    status = 422


class InvalidCursor(ReviewReadError):
    """422 INVALID_CURSOR: a cursor the server did not issue, or issued for other filters."""

    code = "INVALID_CURSOR"


class EvidenceLinkInvalid(ReviewReadError):
    """404 NOT_FOUND: a link the server did not sign (forged or altered) says nothing about what exists."""

    code = "NOT_FOUND"
    status = 404


class EvidenceLinkExpired(ReviewReadError):
    """403 LINK_EXPIRED: a genuine link past its expiry; reload the case for a fresh one."""

    code = "LINK_EXPIRED"
    status = 403


class EvidenceMissing(ReviewReadError):
    """404 NOT_FOUND: the signed object is not in the object store."""

    code = "NOT_FOUND"
    status = 404
