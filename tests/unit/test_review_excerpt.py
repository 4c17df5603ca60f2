"""The page excerpt of a review case (if_review_read): visible text and JSON-LD, bounded, never markup."""

from __future__ import annotations

from prw_platform.resolver.review.excerpt import MAX_EXCERPT_CHARS, page_excerpt


def test_visible_text_and_json_ld_without_scripts_styles_or_markup() -> None:
    page = b"""<html><head><title>ACME Anvil</title><style>p{color:red}</style>
    <script>alert('x')</script><script type="application/ld+json">{"name": "Anvil 3000"}</script></head>
    <body><h1>Anvil&nbsp;3000</h1><p>Forged   steel,
    <b>50 kg</b></p><noscript>enable js</noscript></body></html>"""

    excerpt = page_excerpt(page, "text/html")

    assert excerpt.text.splitlines() == [
        "ACME Anvil",
        '{"name": "Anvil 3000"}',
        "Anvil 3000",
        "Forged steel, 50 kg",
    ]
    assert not excerpt.truncated


def test_a_long_page_is_cut_at_the_bound_and_says_so() -> None:
    excerpt = page_excerpt(b"<p>" + b"word " * 5000 + b"</p>", "text/html")

    assert len(excerpt.text) == MAX_EXCERPT_CHARS
    assert excerpt.truncated


def test_plain_text_and_bytes_that_are_not_utf8_read_as_text() -> None:
    excerpt = page_excerpt(b"price:\xff 10\x00 EUR", "text/plain")

    assert excerpt.text == "price:\ufffd 10\ufffd EUR"
