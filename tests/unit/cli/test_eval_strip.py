"""``prw eval extraction --strip-markup``: a page without its structured markup and meta tags, as a visitor
sees it (the visible text, classes and ids unchanged), re-encoded as UTF-8."""

from __future__ import annotations

import lxml.html

from prw_cli.evaluation.strip import strip_markup

PAGE = """<!DOCTYPE html><html lang="de"><head><meta charset="windows-1252">
<title>Kaffeemühle</title>
<meta property="og:title" content="Kaffeemühle">
<meta property="product:price:amount" content="49.90">
<meta name="description" content="Eine Mühle">
<link rel="canonical" href="https://shop.example/p/1">
<script type="application/ld+json">{"@type": "Product", "offers": {"price": "49.90"}}</script>
<script>var cart = 1;</script>
</head><body>
<div itemscope itemtype="https://schema.org/Product" class="product">
  <h1 itemprop="name">Kaffeemühle</h1>
  <div itemprop="offers" itemscope itemtype="https://schema.org/Offer">
    <span itemprop="price" content="49.90" class="price">49,90 €</span>
  </div>
  <div vocab="https://schema.org/" typeof="Offer"><span property="price" content="49.90">49,90 €</span></div>
  <a href="/p/2" rel="nofollow">Zubehör</a>
</div></body></html>"""


def _stripped() -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(strip_markup(PAGE.encode("windows-1252")))


def test_structured_markup_and_meta_tags_are_gone() -> None:
    html = strip_markup(PAGE.encode("windows-1252")).decode("utf-8")
    for gone in (
        "ld+json",
        "itemscope",
        "itemtype",
        "itemprop",
        "typeof",
        "vocab",
        'property="price"',
        "og:title",
    ):
        assert gone not in html
    document = _stripped()
    assert [m.attrib for m in document.iter("meta")] == [{"charset": "utf-8"}]
    assert not any("content" in e.attrib for e in document.iter() if isinstance(e.tag, str))


def test_what_a_visitor_sees_is_kept_and_decoded_from_the_page_s_own_charset() -> None:
    document = _stripped()
    assert document.findtext(".//h1") == "Kaffeemühle"
    assert [s.text for s in document.iter("span")] == ["49,90 €", "49,90 €"]
    assert document.find(".//span").get("class") == "price"
    assert document.find(".//a").attrib == {"href": "/p/2"}  # rel of a link is RDFa's too
    assert document.find(".//link").get("rel") == "canonical"  # a <link> keeps it
    assert [s.text for s in document.iter("script")] == ["var cart = 1;"]


def test_a_page_without_elements_is_returned_as_it_is() -> None:
    assert strip_markup(b"   ") == b"   "
