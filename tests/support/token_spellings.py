"""Other spellings of a signed token (``<payload>.<mac>``, both unpadded base64url): each decodes, by a lenient
base64 decoder, to the same mac bytes, so only a decoder that reads the one canonical spelling refuses them."""

from __future__ import annotations

import base64
from collections.abc import Callable

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

#: The names of the spellings ``respell`` makes, for ``pytest.mark.parametrize``.
SPELLINGS = ("low bits flipped", "one = appended", "two = appended", "standard alphabet")


def respell(token: str, spelling: str) -> str:
    """``token`` spelled another way that a lenient decoder reads as the same mac."""
    payload, dot, mac = token.rpartition(".")
    assert dot, f"not a signed token: {token!r}"
    if spelling == "low bits flipped":
        # A 16-byte mac is 22 characters: the last one carries 2 bits of the mac and 4 unused ones.
        assert 6 * len(mac) > 8 * len(_lenient(mac)), "a mac whose length leaves no unused bits"
        other = _ALPHABET[_ALPHABET.index(mac[-1]) ^ 1]
        respelled = mac[:-1] + other
    elif spelling == "one = appended":
        respelled = mac + "="
    elif spelling == "two = appended":
        respelled = mac + "=="
    elif spelling == "standard alphabet":
        # Only - as +: a / (for _) would change the path of a link rather than its token.
        assert has_url_safe_character(token), "a mac without - has no standard-alphabet spelling here"
        respelled = mac.replace("-", "+")
    else:
        raise ValueError(spelling)
    assert respelled != mac
    assert _lenient(respelled) == _lenient(mac), "the same mac, spelled another way"
    return f"{payload}.{respelled}"


def has_url_safe_character(token: str) -> bool:
    """True when the token's mac has ``-``, which the standard alphabet spells ``+``."""
    return "-" in token.rpartition(".")[2]


def token_with_url_safe_mac(issue: Callable[[int], str], attempts: int = 200) -> str:
    """The first token ``issue(0)``, ``issue(1)``, ... whose mac has ``-`` (about three in ten have: the bound
    makes a miss far less likely than any other failure)."""
    for n in range(attempts):
        token = issue(n)
        if has_url_safe_character(token):
            return token
    raise AssertionError(f"no token of {attempts} had - in its mac")


def _lenient(text: str) -> bytes:
    """What a decoder that pads and ignores unused bits reads (the one the probe found accepting respellings)."""
    return base64.b64decode(text.replace("-", "+").replace("_", "/").rstrip("=") + "==", validate=False)
