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
from prw_platform.auth.operators import CsrfRejected, Forbidden, SessionExpired
from prw_platform.auth.operators import TenantScopeDenied as OperatorTenantScopeDenied
from prw_platform.coded_error import CodedError
from prw_platform.db.errors import (
    AmbiguousCommit,
    DatabaseError,
    DatabaseUnavailable,
    InsufficientPrivilege,
    InvalidData,
)
from prw_platform.plugins import PluginError
from prw_platform.product.errors import CatalogPaused, InvalidQuery, NotPublic, PictureLinkError
from prw_platform.resolver.catalogs import SourceCatalogConflict, StreamNotProvisioned
from prw_platform.resolver.decisions import (
    CaseNotFound,
    DecisionError,
    InvalidReviewDecision,
    InvariantViolation,
    MerchantNotFound,
    NothingToRelease,
    StaleCaseRevision,
)
from prw_platform.resolver.files.errors import CatalogFileError, InvalidFileTransition
from prw_platform.resolver.improvements.errors import ImprovementError
from prw_platform.resolver.intake.errors import (
    ArtifactTooLarge,
    IntakeError,
    IntakeUnavailable,
    ValidationFailed,
)
from prw_platform.resolver.review import ReviewReadError
from prw_platform.runtime.stages import UnknownStage
from prw_platform.storage.errors import StorageError, StorageUnavailable

__all__ = [
    "AmbiguousCommit",
    "ArtifactTooLarge",
    "AuthError",
    "CaseNotFound",
    "CatalogFileError",
    "CatalogPaused",
    "ClientProvisioningError",
    "CodedError",
    "CredentialRevoked",
    "CsrfRejected",
    "DatabaseError",
    "DatabaseUnavailable",
    "DecisionError",
    "Forbidden",
    "ImprovementError",
    "InsufficientPrivilege",
    "IntakeError",
    "IntakeUnavailable",
    "InvalidData",
    "InvalidFileTransition",
    "InvalidQuery",
    "InvalidReviewDecision",
    "InvalidToken",
    "InvariantViolation",
    "MerchantNotFound",
    "MissingScope",
    "NotPublic",
    "NothingToRelease",
    "OAuthError",
    "OperatorTenantScopeDenied",
    "PictureLinkError",
    "PluginError",
    "ReviewReadError",
    "SessionExpired",
    "SourceCatalogConflict",
    "StaleCaseRevision",
    "StorageError",
    "StorageUnavailable",
    "StreamNotProvisioned",
    "UnknownStage",
    "ValidationFailed",
]
