"""What the page says outside schema.org entities: OpenGraph and other ``<meta>`` tags, ``<title>``, ``<h1>``,
and the price a visitor sees, read with selectolax (CSS selectors) and extruct (OpenGraph)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from extruct.opengraph import OpenGraphExtractor
from lxml.html import HtmlElement
from selectolax.lexbor import LexborHTMLParser, LexborNode

from prw_adapter_schemaorg.money import currency_symbol_in, parse_amount


@dataclass(frozen=True, slots=True)
class Located:
    value: str
    locator: str


@dataclass(frozen=True, slots=True)
class PagePrice:
    amount: Decimal
    #: The text the amount was read from (``"$29.99"``), for the currency symbol and the diagnostics.
    text: str
    locator: str


@dataclass(frozen=True, slots=True)
class PagePriceReading:
    price: PagePrice | None = None
    #: Set when the matched elements disagree and no price was taken: what each gave, for a diagnostic.
    conflict: str | None = None


# Amazon's buy-box price ids (a site-aware rule: Amazon publishes no structured price, and these ids hold the
# price of the offer being bought, unlike the many ``.a-price`` elements of carousels on the same page).
_BUY_BOX_SELECTORS = (
    "#priceblock_ourprice",
    "#priceblock_dealprice",
    "#priceblock_saleprice",
    "#price_inside_buybox",
    "#corePrice_feature_div .a-offscreen",
)
# Common price containers. A page-wide class like ``.price`` also marks accessories and recommendations, so a
# tier is trusted only when every element it matches gives the same amount.
_GENERIC_SELECTORS = (
    "#product-price",
    "#productPrice",
    "#price",
    ".product-price",
    ".product_price",
    ".productPrice",
    ".price-current",
    ".current-price",
    ".sale-price",
    ".our-price",
    ".final-price",
    ".offer-price",
    ".price",
)
_PRICE_TEXT_LIMIT = 40  # longer texts are containers (price + shipping + returns), not a price
_MAX_MATCHES = 50
_HIDDEN_CLASSES = frozenset({"hide", "hidden", "aok-hidden", "d-none", "is-hidden"})
_STRUCK_TAGS = frozenset({"s", "del", "strike"})


@dataclass(frozen=True, slots=True)
class PageSignals:
    #: ``og:title``, ``product:price:amount``, ``twitter:title``, ``description``, ... first non-empty value.
    meta: Mapping[str, Located]
    title: Located | None
    headings: tuple[Located, ...]
    canonical: Located | None
    lang: str | None
    #: ``[itemprop=price]`` outside any microdata item (microdata items are read by extruct).
    itemprop_price: PagePriceReading
    #: The price shown to the visitor: Amazon's buy box, else common price containers.
    visible_price: PagePriceReading
    #: The currency symbol printed in an ``[itemprop=price]`` element (``<span itemprop=price content=59.00>59
    #: Kč</span>``): the currency of a markup price whose offer names none.
    printed_currency: Located | None = None

    def first_meta(self, *names: str) -> Located | None:
        return next((self.meta[name] for name in names if name in self.meta), None)

    def title_texts(self) -> tuple[str, ...]:
        """Every text that names the page: OpenGraph and Twitter titles, ``<title>``, ``<h1>``s."""
        texts = [
            located.value for located in (self.first_meta("og:title", "twitter:title"), self.title) if located
        ]
        return (*texts, *(heading.value for heading in self.headings))


def _clean(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def read_page(tree: HtmlElement, html: str) -> PageSignals:
    document = LexborHTMLParser(html)
    meta = _opengraph(tree)
    for node in document.css("meta[content]"):
        content = _clean(node.attributes.get("content"))
        for attribute in ("property", "name"):
            key = (node.attributes.get(attribute) or "").strip().lower()
            if key and content and key not in meta:
                meta[key] = Located(content, f"meta[{attribute}={key}]")
    title_node = document.css_first("title")
    title_text = _clean(title_node.text()) if title_node is not None else ""
    headings = tuple(
        Located(text, _locator("h1", i))
        for i, node in enumerate(document.css("h1"))
        if (text := _clean(node.text()))
    )
    canonical_node = document.css_first("link[rel=canonical][href]")
    canonical_href = _clean(canonical_node.attributes.get("href")) if canonical_node is not None else ""
    html_node = document.css_first("html")
    return PageSignals(
        meta=meta,
        title=Located(title_text, "css:title") if title_text else None,
        headings=headings,
        canonical=Located(canonical_href, "link[rel=canonical]") if canonical_href else None,
        lang=html_node.attributes.get("lang") if html_node is not None else None,
        itemprop_price=_itemprop_price(document),
        visible_price=_visible_price(document),
        printed_currency=_printed_currency(document),
    )


def _printed_currency(document: LexborHTMLParser) -> Located | None:
    for index, node in enumerate(document.css("[itemprop=price]")[:_MAX_MATCHES]):
        text = _clean(node.text(separator=" "))
        symbol = currency_symbol_in(text) if text and len(text) <= _PRICE_TEXT_LIMIT else None
        if symbol:
            return Located(symbol, _locator("[itemprop=price]", index))
    return None


def _locator(selector: str, index: int) -> str:
    """``css:<selector>`` for the first match, ``css:<selector>[n]`` for the n-th (0-based, document order)."""
    return f"css:{selector}" if index == 0 else f"css:{selector}[{index}]"


def _opengraph(tree: HtmlElement) -> dict[str, Located]:
    meta: dict[str, Located] = {}
    for item in OpenGraphExtractor().extract_items(tree):
        for name, raw in item.get("properties", []):
            value, key = _clean(raw), name.strip().lower()
            if value and key not in meta:
                meta[key] = Located(value, f"meta[property={key}]")
    return meta


def _itemprop_price(document: LexborHTMLParser) -> PagePriceReading:
    nodes = [node for node in document.css("[itemprop=price]") if not _inside_item(node)]
    return _agreeing_price(("[itemprop=price]",), {"[itemprop=price]": nodes})


def _visible_price(document: LexborHTMLParser) -> PagePriceReading:
    for tier in (_BUY_BOX_SELECTORS, _GENERIC_SELECTORS):
        matches = {selector: document.css(selector)[:_MAX_MATCHES] for selector in tier}
        reading = _agreeing_price(tier, matches)
        if reading.price is not None or reading.conflict is not None:
            return reading
    return PagePriceReading()


def _agreeing_price(selectors: Sequence[str], matches: Mapping[str, list[LexborNode]]) -> PagePriceReading:
    """The one amount every shown element of a tier gives; a conflict note when they disagree."""
    found: list[PagePrice] = []
    for selector in selectors:
        for index, node in enumerate(matches[selector]):
            if _hidden_or_struck(node):
                continue
            text = _clean(node.attributes.get("content") or node.text(separator=" "))
            if not text or len(text) > _PRICE_TEXT_LIMIT or not any(ch.isdigit() for ch in text):
                continue
            amount = parse_amount(text)
            if amount is not None and amount > 0:
                found.append(PagePrice(amount, text, _locator(selector, index)))
    amounts = sorted({price.amount for price in found})
    if len(amounts) == 1:
        return PagePriceReading(found[0])
    if len(amounts) > 1:
        seen = ", ".join(f"{p.text!r} at {p.locator}" for p in _first_per_amount(found))
        return PagePriceReading(conflict=seen)
    return PagePriceReading()


def _first_per_amount(prices: list[PagePrice]) -> list[PagePrice]:
    firsts: dict[Decimal, PagePrice] = {}
    for price in prices:
        firsts.setdefault(price.amount, price)
    return list(firsts.values())


def _inside_item(node: LexborNode) -> bool:
    current: LexborNode | None = node
    while current is not None:
        if "itemscope" in current.attributes:
            return True
        current = current.parent
    return False


def _hidden_or_struck(node: LexborNode) -> bool:
    current: LexborNode | None = node
    while current is not None and current.tag not in ("body", "html"):
        attributes = current.attributes
        classes = set((attributes.get("class") or "").split())
        style = (attributes.get("style") or "").replace(" ", "").lower()
        if (
            current.tag in _STRUCK_TAGS
            or "hidden" in attributes
            or classes & _HIDDEN_CLASSES
            or "display:none" in style
        ):
            return True
        current = current.parent
    return False
