"""Signed tokens of the admin origin (review cursors, evidence links): what one signer issued verifies, anything
else does not, and a token of one purpose is not a token of another."""

from __future__ import annotations

import pytest

from prw_platform.auth.signed import TokenSigner

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


def test_a_token_of_one_purpose_does_not_verify_for_another() -> None:
    cursor = TokenSigner(SECRET, "prw review cursor v1").sign({"a": 1})

    assert TokenSigner(SECRET, "prw review evidence v1").verify(cursor) is None


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        TokenSigner(b"short", "purpose")
