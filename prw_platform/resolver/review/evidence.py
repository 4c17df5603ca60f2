"""Short-lived signed links to a review case's evidence bytes (if_review_read: "Evidence artifact links are
short-lived signed reads").

A link names one stored object of one tenant and an expiry, signed by the deployment (``TokenSigner`` for the
purpose ``review evidence``): ``GET /v1/evidence/{token}`` needs nothing else, like a presigned object-store read,
and a link is only ever handed to an operator who may read the case. A token the server did not sign is 404
NOT_FOUND, a genuine one past its expiry 403 LINK_EXPIRED. The bytes are read with the store's verifying read
from the tenant's own prefix (INV-06), and their sha256 must be the one the link was signed for.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from prw_platform.auth.signed import TokenSigner
from prw_platform.clock import Clock, utc_now
from prw_platform.resolver.intake.artifacts import StoredArtifact
from prw_platform.resolver.review.errors import EvidenceLinkExpired, EvidenceLinkInvalid, EvidenceMissing
from prw_platform.resolver.review.excerpt import Excerpt, page_excerpt
from prw_platform.storage import ObjectNotFound, ObjectStore, StorageError, parse_tenant_ref

LINK_TTL: Final = timedelta(minutes=5)
PURPOSE: Final = "prw review evidence v1"


@dataclass(frozen=True, slots=True)
class EvidenceLink:
    artifact_id: str
    media_type: str
    size: int
    sha256: str
    token: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class EvidenceObject:
    artifact_id: str
    media_type: str
    sha256: str
    data: bytes


class EvidenceLinks:
    def __init__(
        self, store: ObjectStore, secret: bytes, *, ttl: timedelta = LINK_TTL, clock: Clock = utc_now
    ) -> None:
        self._store = store
        self._signer = TokenSigner(secret, PURPOSE)
        self._ttl = ttl
        self._clock = clock

    def issue(self, tenant_id: str, artifact: StoredArtifact) -> EvidenceLink:
        expires_at = (self._clock() + self._ttl).replace(microsecond=0)
        token = self._signer.sign(
            {
                "t": tenant_id,
                "a": artifact.artifact_id,
                "r": artifact.ref,
                "s": artifact.sha256,
                "m": artifact.media_type,
                "x": int(expires_at.timestamp()),
            }
        )
        return EvidenceLink(
            artifact.artifact_id, artifact.media_type, artifact.size, artifact.sha256, token, expires_at
        )

    def open(self, token: str) -> EvidenceObject:
        claims = self._signer.verify(token)
        if not isinstance(claims, dict) or not all(isinstance(claims.get(k), str) for k in "tarsm"):
            raise EvidenceLinkInvalid("no such evidence link")
        if not isinstance(claims.get("x"), int) or self._clock() >= datetime.fromtimestamp(claims["x"], UTC):
            raise EvidenceLinkExpired("the evidence link expired: reload the case for a fresh one")
        try:
            stored = self._store.get(parse_tenant_ref(claims["r"], claims["t"]), verify=True)
        except ObjectNotFound as error:
            raise EvidenceMissing(f"artifact {claims['a']} is not in the object store") from error
        except StorageError as error:
            if error.status >= 500:
                raise
            raise EvidenceMissing(f"artifact {claims['a']} cannot be read: {error.code}") from error
        if stored.sha256 != claims["s"]:
            raise EvidenceMissing(f"artifact {claims['a']} is not the object the link was signed for")
        return EvidenceObject(claims["a"], claims["m"], stored.sha256, stored.data)

    def excerpt(self, tenant_id: str, artifacts: tuple[StoredArtifact, ...]) -> Excerpt | None:
        """The page excerpt from the capture's first text artifact; None when there is none or the store cannot
        read it now (the case still reads; the links stay)."""
        page = next((a for a in artifacts if a.media_type.startswith(("text/", "application/xhtml"))), None)
        if page is None:
            return None
        try:
            stored = self._store.get(parse_tenant_ref(page.ref, tenant_id), verify=True)
        except StorageError:
            return None
        return page_excerpt(stored.data, page.media_type)
