"""Signed, URL-safe tokens: ``<payload>.<mac>``, the payload a JSON document, the mac an HMAC-SHA256 under a
key of one purpose.

Every token the platform issues and later gets back is one of these: the review queue's cursors and the evidence
links of a review case (admin origin), snapshot export object links (intake origin), the public API's cursors
and released picture links (product origin); the mac proves the platform issued them. Each use derives its own
key from the deployment's secret and its purpose, so a token of one purpose never verifies as another's.

A token has one spelling: both parts are read as canonical unpadded base64url only (``b64url_decode``), so the
unused low bits of a last character, ``=`` padding or the standard alphabet's ``+`` and ``/`` make a token that
is refused like a forged one, not another spelling of the same token.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from typing import Any, Final

#: Bytes of the mac kept in a token: 128 bits, as the product API's cursors.
_MAC_BYTES = 16


class TokenSigner:
    def __init__(self, secret: bytes, purpose: str) -> None:
        if len(secret) < 16:
            raise ValueError("a signing secret has at least 16 bytes")
        self._key = hmac.digest(secret, purpose.encode(), "sha256")

    def sign(self, document: Any) -> str:
        payload = b64url_encode(json.dumps(document, separators=(",", ":"), sort_keys=True).encode())
        return f"{payload}.{b64url_encode(self._mac(payload))}"

    def verify(self, token: str) -> Any | None:
        """The document of a token this signer issued; None for anything else (forged, altered, malformed)."""
        payload, dot, mac = token.partition(".")
        if not dot:
            return None
        try:
            if not hmac.compare_digest(b64url_decode(mac), self._mac(payload)):
                return None
            return json.loads(b64url_decode(payload))
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None

    def _mac(self, payload: str) -> bytes:
        return hmac.digest(self._key, payload.encode(), "sha256")[:_MAC_BYTES]


def b64url_encode(data: bytes) -> str:
    """Unpadded base64url (RFC 4648 section 5), the one spelling ``b64url_decode`` reads."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes:
    """The bytes of canonical unpadded base64url; ``ValueError`` for any other text, including another
    spelling of the same bytes (padding, the standard alphabet, unused low bits set in the last character)."""
    if not _B64URL_ALPHABET.issuperset(text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if b64url_encode(data) != text:
        raise ValueError("not canonical base64url")
    return data


_B64URL_ALPHABET: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
