"""The token signing key: an Ed25519 key pair, given by settings or generated into the data dir on first use.

Generation is race-safe: the PEM is written to a private temp file, fsynced, and linked to its final name with
``os.link`` (exclusive), so two processes starting at once end up with the same key, never half a file.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

#: RFC 8037: Ed25519 signatures in JWS use the "EdDSA" algorithm.
ALGORITHM = "EdDSA"


@dataclass(frozen=True)
class SigningKey:
    private_key: Ed25519PrivateKey
    #: RFC 7638-style thumbprint of the public key; the ``kid`` header of every token.
    key_id: str

    @classmethod
    def of(cls, private_key: Ed25519PrivateKey) -> SigningKey:
        return cls(private_key, _key_id(private_key.public_key()))

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self.private_key.public_key()


def signing_key_from_pem(pem: bytes) -> SigningKey:
    key = serialization.load_pem_private_key(pem, password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError("the token signing key must be an Ed25519 private key (PEM, PKCS#8)")
    return SigningKey.of(key)


def derived_secret(key: SigningKey, purpose: str) -> bytes:
    """A 32-byte secret for ``purpose`` derived from the private key (HMAC-SHA256 keyed by its raw bytes): every
    process holding the key derives the same one, and it reveals nothing of the key."""
    raw = key.private_key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    return hmac.digest(raw, purpose.encode(), "sha256")


def load_or_create_signing_key(path: Path) -> SigningKey:
    """The key stored at ``path``, generating and storing a new one (mode 0600) when there is none."""
    if not path.exists():
        _create(path)
    return signing_key_from_pem(path.read_bytes())


def _create(path: Path) -> None:
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.parent / f".{path.name}.{secrets.token_hex(8)}.tmp"
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):  # another process won the race: use its key
            os.link(temp, path)
    finally:
        os.unlink(temp)


def _key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    # RFC 7638 thumbprint of the OKP JWK {"crv","kty","x"} (members in lexicographic order, no whitespace).
    x = base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
    canonical = f'{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}'.encode()
    return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode("ascii")
