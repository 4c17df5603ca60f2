"""Signed, URL-safe tokens: ``<payload>.<mac>``, the payload a JSON document, the mac an HMAC-SHA256 under a
key of one purpose.

The review queue's cursors and the evidence links of a review case are tokens the admin origin issues and later
gets back from a browser; the mac proves it issued them. Each use derives its own key from the deployment's
secret and its purpose, so a token of one purpose never verifies as another's.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
from typing import Any

#: Bytes of the mac kept in a token: 128 bits, as the product API's cursors.
_MAC_BYTES = 16


class TokenSigner:
    def __init__(self, secret: bytes, purpose: str) -> None:
        if len(secret) < 16:
            raise ValueError("a signing secret has at least 16 bytes")
        self._key = hmac.digest(secret, purpose.encode(), "sha256")

    def sign(self, document: Any) -> str:
        payload = _b64(json.dumps(document, separators=(",", ":"), sort_keys=True).encode())
        return f"{payload}.{_b64(self._mac(payload))}"

    def verify(self, token: str) -> Any | None:
        """The document of a token this signer issued; None for anything else (forged, altered, malformed)."""
        payload, dot, mac = token.partition(".")
        if not dot:
            return None
        try:
            if not hmac.compare_digest(_unb64(mac), self._mac(payload)):
                return None
            return json.loads(_unb64(payload))
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None

    def _mac(self, payload: str) -> bytes:
        return hmac.digest(self._key, payload.encode(), "sha256")[:_MAC_BYTES]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    if not text.isascii():
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
