"""Signed tokens (review cursors, evidence links, export object links, product cursors, picture links): what one
signer issued verifies, anything else does not, a token has one spelling, and a token of one purpose is not a
token of another."""

from __future__ import annotations

import pytest

from prw_platform.auth.signed import TokenSigner, b64url_decode, b64url_encode
from tests.support.token_spellings import SPELLINGS, respell, token_with_url_safe_mac

SECRET = b"0123456789abcdef0123456789abcdef"


def test_a_token_verifies_to_its_document() -> None:
    signer = TokenSigner(SECRET, "prw review cursor v1")

    assert signer.verify(signer.sign(["2026-11-30T23:00:00+00:00", "rc_a", "f1"])) == [
        "2026-11-30T23:00:00+00:00",
        "rc_a",
        "f1",
    ]


def test_an_altered_forged_or_malformed_token_verifies_to_none() -> None:
    signer = TokenSigner(SECRET, "prw review cursor v1")
    payload, _, mac = signer.sign({"a": 1}).partition(".")
    other = TokenSigner(b"another secret of sixteen bytes!", "prw review cursor v1").sign({"a": 1})

    for token in (
        f"{payload}x.{mac}",
        f"{payload}.{mac[:-2]}AA",
        other,
        "no-dot",
        ".",
        "é.é",
        f"{payload}.%%",
    ):
        assert signer.verify(token) is None, token


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_another_spelling_of_a_token_verifies_to_none(spelling: str) -> None:
    signer = TokenSigner(SECRET, "prw review cursor v1")
    token = token_with_url_safe_mac(lambda n: signer.sign({"n": n}))

    assert signer.verify(token) is not None
    assert signer.verify(respell(token, spelling)) is None


@pytest.mark.parametrize("text", ["QQ=", "QQ==", "QR", "Pz8/", "Pz8+", "QUJD\n", " QUJD", "Q", "QUJD.", "é"])
def test_only_canonical_unpadded_base64url_decodes(text: str) -> None:
    with pytest.raises(ValueError, match="base64url"):
        b64url_decode(text)


def test_base64url_round_trips_every_length() -> None:
    for data in (b"", b"\xff", b"\xff\xfe", b"\xfb\xef\xbe", bytes(range(256))):
        assert b64url_decode(b64url_encode(data)) == data


def test_a_token_of_one_purpose_does_not_verify_for_another() -> None:
    cursor = TokenSigner(SECRET, "prw review cursor v1").sign({"a": 1})

    assert TokenSigner(SECRET, "prw review evidence v1").verify(cursor) is None


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        TokenSigner(b"short", "purpose")
