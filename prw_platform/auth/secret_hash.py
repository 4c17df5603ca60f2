"""Client secrets are stored as scrypt hashes only (never the secret): ``scrypt$n$r$p$salt$hash`` in base64."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import secrets

# OWASP's scrypt minimum (N=2^17, r=8, p=1) costs 128 MiB per check; N=2^14 keeps a token request cheap
# (bench/README.md) at 16 MiB, proportionate for 256-bit random secrets that no dictionary contains.
_N = 2**14
_R = 8
_P = 1
_LENGTH = 32
_SALT_BYTES = 16
_SCHEME = "scrypt"


def new_client_secret() -> str:
    """A 256-bit random secret, shown to the operator once."""
    return secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    salt = secrets.token_bytes(_SALT_BYTES)
    digest = _scrypt(secret, salt, _N, _R, _P)
    return "$".join((_SCHEME, str(_N), str(_R), str(_P), _b64(salt), _b64(digest)))


def verify_secret(secret: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != _SCHEME:
            return False
        expected = base64.b64decode(digest)
        actual = _scrypt(secret, base64.b64decode(salt), int(n), int(r), int(p))
    except ValueError:
        return False
    return hmac.compare_digest(actual, expected)


@functools.cache
def decoy_hash() -> str:
    """Verified against when a client_id is unknown, so that an unknown id costs as much as a wrong secret."""
    return hash_secret(new_client_secret())


def _scrypt(secret: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(secret.encode(), salt=salt, n=n, r=r, p=p, maxmem=64 * 1024 * 1024, dklen=_LENGTH)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
