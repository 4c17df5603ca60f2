"""prw_platform.inputs: the domain rules for values from outside (hardened inputs)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from prw_platform.inputs import (
    InvalidInput,
    check_http_url,
    check_media_type,
    check_not_in_future,
    check_representable,
    find_unstorable_text,
    unstorable_character,
)

NOW = datetime(2026, 10, 10, 3, 32, 1, tzinfo=UTC)
TOLERANCE = timedelta(minutes=5)


@pytest.mark.parametrize("text", ["", "plain", "é ü 漢字 🙂", "\ufffd", "tab\tand\nnewline"])
def test_text_postgresql_can_store_is_accepted(text: str) -> None:
    assert unstorable_character(text) is None


@pytest.mark.parametrize(
    ("text", "words"), [("a\x00b", "NUL"), ("\ud800", "surrogate"), ("x\udfff", "surrogate")]
)
def test_a_nul_or_a_lone_surrogate_is_unstorable(text: str, words: str) -> None:
    reason = unstorable_character(text)

    assert reason is not None
    assert words in reason


def test_the_walk_finds_unstorable_text_at_any_depth_in_keys_and_values() -> None:
    nested: object = "fine"
    for _ in range(5_000):  # far deeper than any recursion limit
        nested = [nested]

    assert find_unstorable_text({"a": [1, {"b": ("ok", nested)}], "c": None}) is None
    found = find_unstorable_text({"artifacts": [{"ref": "ok"}, {"ref": "r2://\x00"}]})
    assert found is not None
    assert found.location == ("artifacts", 1, "ref")
    assert str(found).startswith("artifacts.1.ref: contains a NUL")
    key = find_unstorable_text({"ok": {"bad\x00key": 1}})
    assert key is not None
    assert "field name" in str(key)
    assert "\x00" not in str(key)


@pytest.mark.parametrize(
    "moment",
    [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(2026, 10, 10, 5, 31, 55, tzinfo=timezone(timedelta(hours=2))),
    ],
)
def test_moments_within_years_1_to_9999_in_utc_are_representable(moment: datetime) -> None:
    assert check_representable(moment) == moment


@pytest.mark.parametrize(
    "moment",
    [
        datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-1))),
        datetime(2026, 10, 10),
    ],
)
def test_moments_leaving_the_range_in_utc_or_without_a_zone_are_refused(moment: datetime) -> None:
    with pytest.raises(InvalidInput):
        check_representable(moment)


def test_the_future_is_accepted_within_the_clock_skew_tolerance_only() -> None:
    assert check_not_in_future(NOW + TOLERANCE, NOW, TOLERANCE) == NOW + TOLERANCE
    assert check_not_in_future(datetime(2001, 1, 1, tzinfo=UTC), NOW, TOLERANCE)
    for too_late in (NOW + TOLERANCE + timedelta(seconds=1), datetime(9999, 1, 1, tzinfo=UTC)):
        with pytest.raises(InvalidInput, match="in the future"):
            check_not_in_future(too_late, NOW, TOLERANCE)


@pytest.mark.parametrize(
    "url",
    [
        "https://lumen.example/p/p5-1t-hs",
        "http://lumen.example",
        "HTTPS://Lumen.Example:8443/p?q=1&r=a%20b#reviews",
        "https://[2001:db8::1]/p",
        "https://127.0.0.1:8080/",
        "https://shop.example/gr%C3%B6%C3%9Fe/it's(1)",
        "https://shop.example/a;b=c/@d:e?x=/y?z",
    ],
)
def test_absolute_http_urls_as_rfc_3986_parses_them_are_accepted(url: str) -> None:
    assert check_http_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "https://lumen.example/a b",
        "https://lumen.example/a\r\nSet-Cookie: x=1",
        "https://lumen.example/\x00",
        "https://lumen.example/\x7f",
        'https://lumen.example/"quoted"',
        "https://lumen.example/<script>",
        "https://lumen.example/a\\b",
        "https://lumen.example/größe",
        "https://lumen.example/%zz",
        " https://lumen.example/",
        "ftp://lumen.example/",
        "javascript:alert(1)",
        "//lumen.example/p",
        "/p/p5-1t-hs",
        "https:///p",
        "https://user:secret@lumen.example/",
        "https://[not-ipv6]/",
        "https://lumen.example:70000/",
        "https://lumen.example:80a/",
        "https://lumen.example/#a#b",
    ],
)
def test_anything_else_is_not_an_http_url(url: str) -> None:
    with pytest.raises(InvalidInput):
        check_http_url(url)


@pytest.mark.parametrize(
    "media_type",
    [
        "text/html",
        "application/ld+json",
        "text/html; charset=utf-8",
        "text/html;charset=UTF-8",
        'multipart/form-data; boundary="a b;c"',
        'text/plain; title="say \\"hi\\""',
        "text/html;",
        "application/vnd.api+json; ext=a; profile=b",
    ],
)
def test_rfc_9110_media_types_are_accepted(media_type: str) -> None:
    assert check_media_type(media_type) == media_type


@pytest.mark.parametrize(
    "media_type",
    [
        "",
        "html",
        "html page",
        "text/",
        "/html",
        "text/html/x",
        "text/htmlé",
        "text/html; charset=é",
        'text/html; title="é"',
        "text/html; a=\x01",
        "text/html\r\nx-evil: 1",
        "text/html;\tcharset=utf-8",
        "text/html; charset",
        "text/html; charset=a b",
        'text/html; charset="unterminated',
        "text/(html)",
        "text/" + "x" * 300,
    ],
)
def test_anything_else_is_not_a_media_type(media_type: str) -> None:
    with pytest.raises(InvalidInput):
        check_media_type(media_type)
