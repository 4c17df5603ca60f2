"""The error types the edges render: each is a ``CodedError`` carrying the seed's code, its HTTP status and
retryability, so an edge maps any of them to a response in one handler without knowing the core's modules.

Part of the core's public surface (docs/architecture.md): the edges import errors from here, never from the
module that raises them.
"""

from prw_platform.auth.errors import (
    AuthError,
    ClientProvisioningError,
    CredentialRevoked,
    InvalidToken,
    MissingScope,
    OAuthError,
)
from prw_platform.auth.operators import SessionExpired
from prw_platform.coded_error import CodedError
from prw_platform.db.errors import AmbiguousCommit, DatabaseUnavailable, InvalidData
from prw_platform.product.errors import InvalidQuery, NotPublic, PictureLinkError
from prw_platform.resolver.decisions import DecisionError, InvalidReviewDecision, NothingToRelease
from prw_platform.resolver.files.errors import CatalogFileError
from prw_platform.resolver.improvements.errors import ImprovementError
from prw_platform.resolver.intake.errors import ArtifactTooLarge, IntakeError, ValidationFailed
from prw_platform.resolver.review import ReviewReadError
from prw_platform.resolver.stream.errors import StreamUnavailable

__all__ = [
    "AmbiguousCommit",
    "ArtifactTooLarge",
    "AuthError",
    "CatalogFileError",
    "ClientProvisioningError",
    "CodedError",
    "CredentialRevoked",
    "DatabaseUnavailable",
    "DecisionError",
    "ImprovementError",
    "IntakeError",
    "InvalidData",
    "InvalidQuery",
    "InvalidReviewDecision",
    "InvalidToken",
    "MissingScope",
    "NotPublic",
    "NothingToRelease",
    "OAuthError",
    "PictureLinkError",
    "ReviewReadError",
    "SessionExpired",
    "StreamUnavailable",
    "ValidationFailed",
]
