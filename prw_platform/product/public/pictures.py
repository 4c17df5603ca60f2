"""Signed read links of released pictures (seed 004): the product API serves a picture's bytes
from the managed asset store, never from the resolver's tables.

A released picture's snapshot carries its content address (``sha256``: the object key ``<bucket>/<tenant>/<sha256>``
the resolver's save copied the bytes to), its media type, size and dimensions. The public serializer turns it into
``{"url": "/v1/files/<token>", "content_type", "size_bytes", "width", "height"}``: the token is signed with a key of
the deployment (``TokenSigner``, purpose ``prw product pictures v1``) over the tenant, catalog, content address,
media type and an expiry, so the link is the authorization, like a presigned object-store read. The token is
signed, not encrypted: it carries the picture's digest, which is no secret (anyone who GETs the public bytes can
compute it); it carries no managed file id, decision or capture reference.

Expiries are aligned to windows of ``ttl``: every document served within one window carries the same links (a
cacheable document), and a link stays valid for at least ``ttl`` after it was served and at most twice that. The
links of a document change with the window, so its validator does too (``LinkWindow``; the product API's ETag and
Cache-Control follow it, prw_api.product.caching).
``GET /v1/files/{token}``: a token this API did not sign is 404 NOT_FOUND, an expired one 403 LINK_EXPIRED, bytes
no longer in the store (a retired file past its thirty days) 404 NOT_FOUND.

Why signed links rather than public URLs or the store's own presigned GETs: the filesystem store (the embedded
default) cannot presign, the buckets are private (if_object_storage: "no public bucket access"), and a route of
the product API serves the same way on every backend, behind the same rate limit and origin as the documents that
link to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from prw_platform.auth.signed import TokenSigner
from prw_platform.clock import Clock, utc_now
from prw_platform.product.errors import PictureGone, PictureLinkExpired, PictureLinkInvalid
from prw_platform.storage import ObjectStore
from prw_platform.storage.errors import ObjectNotFound
from prw_platform.storage.keys import ObjectKey

PURPOSE: Final = "prw product pictures v1"
DEFAULT_LINK_TTL: Final = timedelta(hours=1)
#: The route's path: the public documents carry ``FILES_PATH + token``.
FILES_PATH: Final = "/v1/files/"


@dataclass(frozen=True, slots=True)
class LinkWindow:
    """The signing window of links issued now: each expires at ``expires`` (Unix seconds), and documents served
    ``renews_in`` seconds from now on carry the next window's links (other bytes)."""

    expires: int
    renews_in: int


@dataclass(frozen=True, slots=True)
class PictureBytes:
    data: bytes
    media_type: str
    sha256: str


class PictureLinks:
    """Issues and opens the signed links of one (tenant, catalog)'s released pictures."""

    def __init__(
        self,
        store: ObjectStore,
        bucket: str,
        secret: bytes,
        *,
        ttl: timedelta = DEFAULT_LINK_TTL,
        clock: Clock = utc_now,
    ) -> None:
        if ttl <= timedelta(0):
            raise ValueError("a picture link lives for a positive time")
        self._store = store
        self._bucket = bucket
        self._signer = TokenSigner(secret, PURPOSE)
        self._ttl = int(ttl.total_seconds()) or 1
        self._clock = clock

    def expiry(self) -> int:
        """The expiry (Unix seconds) of links issued now: the end of the window after the current one."""
        return self.window().expires

    def window(self) -> LinkWindow:
        """The window links issued now are signed for (one clock read)."""
        now = int(self._clock().timestamp())
        renews_at = (now // self._ttl + 1) * self._ttl
        return LinkWindow(expires=renews_at + self._ttl, renews_in=renews_at - now)

    def public_picture(
        self, tenant_id: str, catalog_id: str, picture: dict[str, Any], expires: int
    ) -> dict[str, Any] | None:
        """The public document of a released picture (public_fields), or None when it has no content address.
        A dimension the snapshot does not know is left out, not null."""
        sha256, media_type = picture.get("sha256"), picture.get("media_type")
        if not isinstance(sha256, str) or not isinstance(media_type, str):
            return None
        token = self._signer.sign(
            {"t": tenant_id, "c": catalog_id, "s": sha256, "m": media_type, "x": expires}
        )
        document: dict[str, Any] = {"url": FILES_PATH + token, "content_type": media_type}
        for key in ("size_bytes", "width", "height"):
            if isinstance(picture.get(key), int):
                document[key] = picture[key]
        return document

    def open(self, tenant_id: str, catalog_id: str, token: str) -> PictureBytes:
        """The bytes behind a link this API signed for this catalog; ``PictureLinkError`` otherwise."""
        claims = self._signer.verify(token)
        if (
            not isinstance(claims, dict)
            # Only the spelling this API issued: base64 leaves unused bits in a token's last character.
            or self._signer.sign(claims) != token
            or claims.get("t") != tenant_id
            or claims.get("c") != catalog_id
            or not isinstance(claims.get("s"), str)
            or not isinstance(claims.get("m"), str)
            or not isinstance(claims.get("x"), int)
        ):
            raise PictureLinkInvalid("no such picture")
        if self._clock() >= datetime.fromtimestamp(claims["x"], UTC):
            raise PictureLinkExpired("the picture link expired: GET the item or class again for a fresh one")
        try:
            # INV-06: the tenant's own prefix; the verifying read checks the bytes hash to the signed address.
            stored = self._store.get(ObjectKey(self._bucket, tenant_id, claims["s"]), verify=True)
        except ObjectNotFound as missing:
            raise PictureGone("the picture is no longer stored") from missing
        return PictureBytes(stored.data, claims["m"], stored.sha256)


class SignedPictures:
    """Signs the released pictures of one response (a ``PictureRender``): every link for the same ``window``, read
    once. ``signed`` tells whether the document carries any link, so that its ETag and freshness follow the window
    (a revalidated document never keeps links that expired)."""

    __slots__ = ("_catalog_id", "_links", "_tenant_id", "signed", "window")

    def __init__(self, links: PictureLinks, tenant_id: str, catalog_id: str) -> None:
        self._links, self._tenant_id, self._catalog_id = links, tenant_id, catalog_id
        self.window = links.window()
        self.signed = False

    def __call__(self, picture: dict[str, Any]) -> dict[str, Any] | None:
        document = self._links.public_picture(self._tenant_id, self._catalog_id, picture, self.window.expires)
        if document is not None:
            self.signed = True
        return document
