"""``pa_schemaorg@1.1.0`` and ``@2.0.0``: what a visitor reads on the page when the markup says nothing — the buy
action, stock statements, labelled identifiers and the buy box's price — read with selectolax. Every rule is
general (words in several languages, page structure), never a site's selectors.

A version's reading is its ``Rules`` (``V1_1``, ``V2``): a pinned version keeps reading a page exactly as it
did, so ``@2.0.0``'s rules are switched on by its own ``Rules`` value, never by changing ``V1_1``'s."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from prw_adapter_schemaorg.money import parse_amount

_TEXT_LIMIT = 80  # a statement, a button or a label is short; longer texts are containers or prose
_SKIP_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "head", "title", "option"})
_HIDDEN_CLASSES = frozenset({"hide", "hidden", "aok-hidden", "d-none", "is-hidden", "sr-only"})

# "Add to cart" and its siblings, in the languages shops print them.
_BUY_WORDS = re.compile(
    r"\b(add to (cart|basket|bag|trolley)|buy( it)? now|add to shopping (cart|bag)|"
    r"in den (warenkorb|einkaufswagen)|jetzt kaufen|ajouter au (panier|caddie)|acheter|"
    r"aggiungi al carrello|acquista( ora)?|añadir al (carrito|carro|cesta)|comprar|agregar al carrito|"
    r"adicionar ao carrinho|in winkelwagen|toevoegen aan winkelwagen|dodaj do koszyka|kup teraz|"
    r"do košíka|do košíku|vložiť do košíka|koupit|kúpiť|u košaricu|dodaj u košaricu|v košarico|"
    r"naroči|naruči|kupi|objednať|objednat|zamów|zamawiam|bestellen|order now|compralo subito|acquista subito|"
    r"sofort-kaufen|achat immédiat|pievienot grozam|į krepšelį|lisää ostoskoriin|lägg i varukorg|læg i kurv|legg i handlekurv|"
    r"в корзину|купить|добавить в корзину|sepete ekle|kosárba|"
    r"加入購物車|加入购物车|立即購買|立即购买|カートに入れる|購入)\b|"
    r"(加入購物車|加入购物车|放入購物車|立即購買|立即购买|我要購買|我要购买|カートに入れる|직접구매|장바구니 담기)",
    re.IGNORECASE,
)
_OUT_OF_STOCK_WORDS = re.compile(
    r"^\W*(currently unavailable|out of stock|sold out|no longer available|temporarily out of stock|"
    r"ausverkauft|nicht (auf lager|verfügbar|lieferbar)|derzeit nicht verfügbar|"
    r"épuisé|en rupture de stock|rupture de stock|indisponible|actuellement indisponible|"
    r"esaurito|non disponibile|agotado|no disponible|sin stock|esgotado|indisponível|"
    r"niet op voorraad|uitverkocht|brak w magazynie|niedostępny|wyprzedany|"
    r"vypredané|nie je skladom|není skladem|vyprodáno|nedostupné|nije dostupno|nema na (zalihi|stanju)|"
    r"nav pieejams|išparduota|нет в наличии|распродано|отсутствует|缺貨|售完|已售完|在庫切れ|品切れ)\W*$",
    re.IGNORECASE,
)
_IN_STOCK_WORDS = re.compile(
    r"^\W*(in stock|available|available now|in stock online|auf lager|sofort lieferbar|lieferbar|verfügbar|"
    r"en stock|disponible|disponibile|in magazzino|disponível|em estoque|op voorraad|"
    r"dostępny|w magazynie|na skladě|skladem|na sklade|skladom|na stanju|dostupno|na zalogi|"
    r"noliktavā|yra sandėlyje|в наличии|есть в наличии|有現貨|有货|現貨|在庫あり)"
    r"(\W.{0,30})?$",
    re.IGNORECASE,
)
# Labels of a shop's own identifier (SKU) and of the manufacturer's part number (MPN), in several languages;
# the value follows on the same line or in the next element.
_SKU_LABELS = (
    r"sku|item\s*(#|no\.?|number)|product\s*(code|id|no\.?|number)|article\s*(no\.?|number)|"
    r"art\.?\s*-?\s*nr\.?|artikel\s*-?\s*(nr\.?|nummer)|artikelnummer|bestellnummer|"
    r"réf\.?|référence|ref\.?|code\s*(produit|article)|codice(\s*(articolo|prodotto))?|cod\.?\s*art\.?|"
    r"código(\s*(de\s*)?(producto|artículo|produto))?|referencia|"
    r"kód(\s*produktu|\s*tovaru)?|katalógové číslo|katalogové číslo|šifra(\s*proizvoda)?|kataloški broj|"
    r"numer katalogowy|kod produktu|indeks|preces kods|kods|"
    r"артикул|код( товара)?|商品編號|商品编号|商品番号|品番"
)
_MPN_LABELS = r"mpn|model(\s*(no\.?|number|#))?|modell(nummer)?|modèle|modello|modelo|model\s*č\.?|manufacturer part number|herstellernummer|part\s*(no\.?|number|#)"
_VALUE = r"(?P<value>[A-Za-z0-9][A-Za-z0-9\-./_]{2,39})"
_LABELLED_SKU = re.compile(rf"^\W*(?:{_SKU_LABELS})\s*[:#.]?\s*[:#]?\s*{_VALUE}\s*$", re.IGNORECASE)
_LABELLED_MPN = re.compile(rf"^\W*(?:{_MPN_LABELS})\s*[:#.]?\s*[:#]?\s*{_VALUE}\s*$", re.IGNORECASE)
_SKU_LABEL_ONLY = re.compile(rf"^\W*(?:{_SKU_LABELS})\s*[:#.]?\s*$", re.IGNORECASE)
_MPN_LABEL_ONLY = re.compile(rf"^\W*(?:{_MPN_LABELS})\s*[:#.]?\s*$", re.IGNORECASE)
_REFERENCE_PRICE_CLASSES = re.compile(
    r"old|was|list|regular|strike|barred|compare|before|original|rrp|msrp|uvp|crossed|previous|save|saving|"
    r"discount|per-unit|unit-price|installment|monthly|tax|vat|excl|netto|dph|mwst",
    re.IGNORECASE,
)
_PRICE_CLASS = re.compile(r"price|preis|prix|prezzo|precio|cena|cijena|cena|цена|kaina|hinta", re.IGNORECASE)
# An amount printed with its currency, before or after it: "$9.49", "44 890 тг.", "270,00 Kn", "4386,00 €".
_CURRENCY = (
    r"(?:[$€£¥₽₹₺₩₪₴₸₫฿]|US\$|NT\$|R\$|A\$|C\$|zł|kr\.?|Kč|kn|Ft|lei|лв\.?|тг\.?|руб\.?|р\.|грн\.?|"  # noqa: RUF001 (Cyrillic currency words)
    r"(?:EUR|USD|GBP|CHF|PLN|CZK|HUF|RON|SEK|NOK|DKK|RUB|UAH|KZT|TRY|JPY|CNY|TWD|INR|BRL|ARS|CLP|MXN|CAD|AUD|HRK|BGN)\b)"
)
_AMOUNT = r"\d[\d\s.,'\u00a0\u202f]*(?:,-|\.-)?"
_PRINTED_PRICE = re.compile(
    rf"^\W{{0,3}}(?:{_CURRENCY}\s?{_AMOUNT}|{_AMOUNT}\s?{_CURRENCY})\W{{0,3}}$", re.IGNORECASE
)
_MAX_NODES = 20000

# @2.0.0's vocabulary (each a superset of @1.1.0's, or a narrower exclusion, as the comments say).
# Bidding is a buy action too (an auction sells the item to the best bid), and Latvian's "put in the cart".
_BUY_WORDS_2 = re.compile(
    _BUY_WORDS.pattern
    + r"|\b(place (a )?bid|bid now|make (an )?offer|gebot abgeben|jetzt bieten|enchérir|faire une offre|"
    r"fai un'offerta|fai una proposta|pujar|licytuj|přihodit|ielikt grozā)\b",
    re.IGNORECASE,
)
# Prices with and without VAT are not reference prices: they are a pair (see ``_vat_pair``).
# A discount amount ("reduction", "Rabatt") or a shipping cost ("shipping-price", "Versand") is not the price either.
_REFERENCE_PRICE_CLASSES_2 = re.compile(
    r"old|was|list|regular|strike|barred|compare|before|original|rrp|msrp|uvp|crossed|previous|save|saving|"
    r"discount|per-unit|unit-price|installment|monthly|reduction|rabatt|sconto|remise|descuento|korting|sleva|"
    r"shipping|delivery|postage|freight|versand|livraison|spedizione|envio|doprava|doruc|frete|verzend",
    re.IGNORECASE,
)
# A price labelled as one with or without VAT (sales tax), by its class / id or the words printed beside it.
_VAT_LABEL = re.compile(
    r"tax|vat|dph|ddv|pdv|mwst|ust\b|tva|iva|btw|áfa|moms|alv\b|kdv|ндс|netto|brutto|excl|incl|\bht\b|ttc|"
    r"hors taxe",
    re.IGNORECASE,
)
# A price per period or per unit printed beside its label: an instalment ("每期 $ 98", "$25/mo", "12 x 9,90 €",
# "3 cuotas de"), a unit price by measure ("12,50 € / 1 kg", "1 kg = 9,98 €"; a price per piece is the price).
# Not the price of the product.
_PER_PERIOD = re.compile(
    r"每期|分期|每月|月付|/\s*(mo|mth|month|mes|mois|monat|měs|mies)\b|per month|a month|monthly|mensual|mensuel|"
    r"monatlich|měsíčně|mesačne|miesięcznie|mjesečno|installments?|instalments?|cuotas?|\braten\b|"
    r"\b\d+\s*[x×]\s|[x×]\s*\d+\s*(months|meses|mois|monate|rat)|"  # noqa: RUF001 (the signs shops print)
    r"/\s*(1|10|100|1000)?\s*(kg|g|l|ml|m|m2|m²)(\W|$)|\b1\s*(kg|l|m|m2|m²)\s*=|"
    r"per (kg|litre|liter|100\s*(g|ml))\b",
    re.IGNORECASE,
)
# An ISO code glued to its amount ("EUR110.00") is printed currency too; so is 元 / 円 (yuan, yen).
_CURRENCY_2 = (
    r"(?:[$€£¥₽₹₺₩₪₴₸₫฿元円]|US\$|NT\$|R\$|A\$|C\$|zł|kr\.?|Kč|kn|Ft|lei|лв\.?|тг\.?|руб\.?|р\.|грн\.?|"  # noqa: RUF001 (Cyrillic currency words)
    r"(?:EUR|USD|GBP|CHF|PLN|CZK|HUF|RON|SEK|NOK|DKK|RUB|UAH|KZT|TRY|JPY|CNY|TWD|INR|BRL|ARS|CLP|MXN|CAD|AUD|HRK|BGN)"
    r"(?![A-Za-z]))"
)
_PRINTED_PRICE_2 = re.compile(
    rf"^\W{{0,3}}(?:{_CURRENCY_2}\s?{_AMOUNT}|{_AMOUNT}\s?{_CURRENCY_2})\W{{0,3}}$", re.IGNORECASE
)
_CURRENCY_ONLY_2 = re.compile(rf"^\W{{0,2}}{_CURRENCY_2}\W{{0,2}}$", re.IGNORECASE)
# "Price: $<b>99</b>", "<b>294</b> 元 / pack": a label ending with the currency, a suffix starting with it.
_ENDS_WITH_CURRENCY_2 = re.compile(rf"(?:^|[^A-Za-z]){_CURRENCY_2}\s*$", re.IGNORECASE)
_STARTS_WITH_CURRENCY_2 = re.compile(rf"^\s*{_CURRENCY_2}", re.IGNORECASE)
# An amount converted into the visitor's currency is an estimate, not the price ("Circa EUR 14,43", "approx.").
_CONVERTED = re.compile(
    r"\b(circa|approx\.?|approximately|environ|ungefähr|etwa|ca\.|aprox\.?|aproximadamente|približno|"
    r"přibližně|približne|około|приблизительно|約|约)(\W|$)",
    re.IGNORECASE,
)
_TITLE_SEPARATORS = re.compile(r"\s+[-|–—:·»]\s+|\s*[|｜]\s*")  # noqa: RUF001 (the signs shops print)
_BARE_AMOUNT = re.compile(rf"\W{{0,3}}{_AMOUNT}\W{{0,3}}")
_BUY_ATTRIBUTES_2 = re.compile(
    r"add[-_]?to[-_]?(cart|basket|bag|trolley)|addtocart|addtobasket|buy[-_]?(now|button|btn|box)|btn[-_]?buy|"
    r"add[-_]?cart|cart[-_]?add|purchase[-_]?button",
    re.IGNORECASE,
)
_LABEL_LIMIT_2 = 80


@dataclass(frozen=True, slots=True)
class Rules:
    """How one adapter version reads the visible page."""

    buy_words: re.Pattern[str]
    buy_attributes: re.Pattern[str]
    reference_classes: re.Pattern[str]
    printed_price: re.Pattern[str]
    max_nodes: int
    #: A bare amount beside an element that holds only a currency ("<b>294</b><span>元</span>") is printed
    #: with that currency.
    split_currency: bool = False
    #: A price inside a link (``<a href>``) is another page's: a recommendation, an accessory, a variant card.
    links_are_elsewhere: bool = False
    #: A price whose label says per month / per unit / instalment is not the product's price.
    per_period_labels: bool = False
    #: Prices labelled with and without VAT side by side are one price shown twice: the first printed is taken.
    vat_pairs: bool = False
    #: The product's heading is the first ``<h1>`` a visitor sees (not a hidden one of a dialog), else the first
    #: element whose text is the page's title (``<title>`` / ``og:title``, a part between separators).
    visible_heading: bool = False
    #: A price converted into another currency ("Circa EUR 14,43") is an estimate, not the price.
    converted_labels: bool = False
    #: A link's buy action may be named by its parent's class or id (``<div class=buyBtn><a href=…>``); an
    #: Offer in microdata / RDFa of any vocabulary is read as a markup offer.
    wider_buy_signals: bool = False
    #: The buy action's label as evidence is cut to this many characters (a form's whole text otherwise).
    label_limit: int | None = None


V1_1 = Rules(
    buy_words=_BUY_WORDS,
    buy_attributes=re.compile(
        r"add[-_]?to[-_]?(cart|basket|bag|trolley)|addtocart|addtobasket|buy[-_]?(now|button|box)|"
        r"add[-_]?cart|cart[-_]?add|purchase[-_]?button",
        re.IGNORECASE,
    ),
    reference_classes=_REFERENCE_PRICE_CLASSES,
    printed_price=_PRINTED_PRICE,
    max_nodes=_MAX_NODES,
)
# The whole page is read, up to 400,000 nodes (a cookie dialog listing hundreds of ad vendors comes before the
# product on some pages).
V2 = Rules(
    buy_words=_BUY_WORDS_2,
    buy_attributes=_BUY_ATTRIBUTES_2,
    reference_classes=_REFERENCE_PRICE_CLASSES_2,
    printed_price=_PRINTED_PRICE_2,
    max_nodes=400_000,
    split_currency=True,
    links_are_elsewhere=True,
    per_period_labels=True,
    vat_pairs=True,
    visible_heading=True,
    converted_labels=True,
    wider_buy_signals=True,
    label_limit=_LABEL_LIMIT_2,
)


@dataclass(frozen=True, slots=True)
class Seen:
    value: str
    locator: str


@dataclass(frozen=True, slots=True)
class VisiblePage:
    buy_action: Seen | None
    #: The buy action is a button that says so (not a link, a form or a class name).
    buy_button: bool
    in_stock: Seen | None
    out_of_stock: Seen | None
    sku: Seen | None
    mpn: Seen | None
    buy_box_price: Seen | None
    buy_box_amount: Decimal | None
    #: Other amounts shown near it (a diagnostic: which prices the page also shows).
    buy_box_others: str | None
    #: Reference (was, list, struck) amounts printed in the buy box price's block.
    reference_amounts: frozenset[Decimal]
    #: The buy box price is labelled with or without VAT (``@2.0.0``): a tax variant, never a sale price.
    buy_box_vat_labelled: bool = False
    #: An Offer declared in microdata or RDFa, in any vocabulary (schema.org, data-vocabulary.org), even one
    #: without a price (``@2.0.0``): the merchant's statement that the product is offered.
    markup_offer: Seen | None = None


def _path(node: LexborNode) -> str:
    """A CSS path a reviewer can follow: tag#id or tag.class, up to three ancestors."""
    parts: list[str] = []
    current: LexborNode | None = node
    while current is not None and current.tag not in ("body", "html", None) and len(parts) < 4:
        attributes = current.attributes
        if attributes.get("id"):
            parts.append(f"{current.tag}#{attributes['id']}")
            break
        classes = (attributes.get("class") or "").split()
        parts.append(f"{current.tag}.{classes[0]}" if classes else str(current.tag))
        current = current.parent
    return "css:" + " > ".join(reversed(parts))


def _hidden(node: LexborNode) -> bool:
    current: LexborNode | None = node
    while current is not None and current.tag not in ("body", "html"):
        attributes = current.attributes
        style = (attributes.get("style") or "").replace(" ", "").lower()
        if (
            current.tag in _SKIP_TAGS
            or "hidden" in attributes
            or set((attributes.get("class") or "").split()) & _HIDDEN_CLASSES
            or "display:none" in style
        ):
            return True
        current = current.parent
    return False


def _short_texts(document: LexborHTMLParser, rules: Rules) -> list[tuple[LexborNode, str]]:
    """The elements holding a text directly whose whole text is short (a statement, a label, a value), in
    document order, each once."""
    body = document.body
    if body is None:
        return []
    found: list[tuple[LexborNode, str]] = []
    seen: set[int] = set()
    for index, node in enumerate(body.traverse(include_text=True)):
        if index > rules.max_nodes:
            break
        if node.tag != "-text" or not (node.text_content or "").strip():
            continue
        element = node.parent
        if element is None or element.mem_id in seen or element.tag in _SKIP_TAGS:
            continue
        seen.add(element.mem_id)
        text = " ".join((element.text(separator=" ") or "").split())
        if text and len(text) <= _TEXT_LIMIT:
            found.append((element, text))
    return found


def _disabled(node: LexborNode) -> bool:
    attributes = node.attributes
    return "disabled" in attributes or attributes.get("aria-disabled") == "true"


def _buy_action(
    document: LexborHTMLParser, texts: list[tuple[LexborNode, str]], rules: Rules
) -> tuple[LexborNode | None, bool]:
    """The control that puts the product in a cart, and whether it is a button that says so (strong) rather
    than another element whose words, id, class, name or form action say so (weak); never a disabled or hidden
    one."""
    candidates = document.css(
        "button, input[type=submit], input[type=button], input[type=image], a[role=button], [role=button]"
    )
    for node in candidates[:2000]:
        attributes = node.attributes
        text = " ".join(
            (node.text(separator=" ") or attributes.get("value") or attributes.get("title") or "").split()
        )
        if (
            text
            and len(text) <= _TEXT_LIMIT
            and rules.buy_words.search(text)
            and not _disabled(node)
            and not _hidden(node)
        ):
            return node, True
    for node, text in texts:
        if (
            (
                len(text) <= 40
                and rules.buy_words.search(text)
                and node.tag in ("a", "span", "div", "button", "label")
            )
            and not _disabled(node)
            and not _hidden(node)
        ):
            return node, False
    for node in document.css("form[action], button, input, a")[:4000]:
        attributes = node.attributes
        names = " ".join(
            attributes.get(name) or "" for name in ("id", "class", "name", "action", "data-action")
        )
        if rules.wider_buy_signals and node.tag == "a" and node.parent is not None:
            names += f" {node.parent.attributes.get('class') or ''} {node.parent.attributes.get('id') or ''}"
        if rules.buy_attributes.search(names) and not _disabled(node) and not _hidden(node):
            return node, False
    return None, False


def _label_value(
    texts: list[tuple[LexborNode, str]], labelled: re.Pattern[str], label_only: re.Pattern[str]
) -> Seen | None:
    for position, (node, text) in enumerate(texts):
        match = labelled.match(text)
        if match and any(ch.isdigit() for ch in match.group("value")) and not _hidden(node):
            return Seen(match.group("value"), _path(node))
        if label_only.match(text) and not _hidden(node):
            value = _next_value(node, texts, position)
            if value is not None:
                return value
    return None


def _next_value(label: LexborNode, texts: list[tuple[LexborNode, str]], position: int) -> Seen | None:
    """The label's next sibling element (``<dt>SKU</dt><dd>123</dd>``, ``<th>`` / ``<td>``) when it is a lone
    identifier."""
    sibling = label.next
    while sibling is not None and sibling.tag == "-text" and not (sibling.text() or "").strip():
        sibling = sibling.next
    if sibling is None:
        return None
    text = " ".join((sibling.text(separator=" ") or "").split())
    match = re.fullmatch(_VALUE, text)
    if match and any(ch.isdigit() for ch in text):
        return Seen(text, _path(sibling) if sibling.tag != "-text" else _path(label) + " + text")
    return None


def _stock(texts: list[tuple[LexborNode, str]], words: re.Pattern[str]) -> Seen | None:
    for node, text in texts:
        # The innermost element that says it (its children do not): the statement, not a container.
        if (
            words.match(text)
            and not any(words.match(" ".join((c.text(separator=" ") or "").split())) for c in node.iter())
            and not _hidden(node)
        ):
            return Seen(text, _path(node))
    return None


def _sibling_text(node: LexborNode, forward: bool) -> str:
    """The text of the node's nearest non-blank sibling (element or text), on one side."""
    sibling = node.next if forward else node.prev
    while sibling is not None and not (sibling.text(deep=True) or "").strip():
        sibling = sibling.next if forward else sibling.prev
    return " ".join((sibling.text(separator=" ") or "").split()) if sibling is not None else ""


def _printed(node: LexborNode, text: str, rules: Rules) -> bool:
    if rules.printed_price.match(text):
        return True
    # "<span>294</span><span>元</span>", "<sup>€</sup><span>12</span>": the currency is the neighbour's.
    return bool(
        rules.split_currency
        and _BARE_AMOUNT.fullmatch(text)
        and (
            _ENDS_WITH_CURRENCY_2.search(_sibling_text(node, False))
            or _STARTS_WITH_CURRENCY_2.match(_sibling_text(node, True))
        )
    )


def _in_link(node: LexborNode) -> bool:
    """Inside a link to another page (a product card, a recommendation), not a script or in-page anchor."""
    current: LexborNode | None = node
    while current is not None and current.tag not in ("body", "html"):
        if current.tag == "a":
            href = (current.attributes.get("href") or "").strip().lower()
            if href and not href.startswith(("#", "javascript:")):
                return True
        current = current.parent
    return False


def _label_text(node: LexborNode) -> str:
    """The words printed with a price: the text of its nearest ancestor (up to three levels) that adds words to
    it ("每期 $ 98" for "$ 98", "Circa EUR 14,43" for "EUR 14,43"), when that is still short; else nothing."""
    own = " ".join((node.text(separator=" ") or "").split())
    current = node.parent
    for _ in range(3):
        if current is None or current.tag in ("body", "html"):
            return ""
        text = " ".join((current.text(separator=" ") or "").split())
        if len(text) > 120:
            return ""
        if re.search(r"[^\W\d_]", text.replace(own, "", 1)):
            return text
        current = current.parent
    return ""


def _price_like(node: LexborNode, text: str, rules: Rules = V1_1) -> Decimal | None:
    """The amount an element shows as a price to pay: a short text with a digit, in an element whose class or
    id (or a near ancestor's) says price, or printed with a currency; never a reference price (was, list,
    per-unit, monthly), a struck one or a hidden one."""
    if len(text) > 40 or not any(ch.isdigit() for ch in text):
        return None
    chain = [node]
    current = node.parent
    while current is not None and len(chain) < 3:
        chain.append(current)
        current = current.parent
    names = [f"{a.attributes.get('class') or ''} {a.attributes.get('id') or ''}" for a in chain]
    if any(rules.reference_classes.search(name) for name in names[:2]) or any(
        a.tag in ("s", "del", "strike") for a in chain
    ):
        return None
    if not _printed(node, text, rules) and not (
        any(_PRICE_CLASS.search(name) for name in names) and _BARE_AMOUNT.fullmatch(text)
    ):
        return None
    if _hidden(node):
        return None
    if rules.links_are_elsewhere and _in_link(node):
        return None
    if rules.per_period_labels and (_PER_PERIOD.search(text) or _PER_PERIOD.search(_label_text(node))):
        return None
    if rules.converted_labels and (_CONVERTED.search(text) or _CONVERTED.search(_label_text(node))):
        return None
    if rules.converted_labels and text.lstrip().startswith("+"):
        return None  # "+45,00 CHF": an amount added to the price (shipping, an option), not the price
    amount = parse_amount(text)
    return amount if amount is not None and amount > 0 else None


def _vat_labelled(node: LexborNode) -> bool:
    names = " ".join(
        f"{a.attributes.get('class') or ''} {a.attributes.get('id') or ''}"
        for a in (node, node.parent)
        if a is not None
    )
    return bool(_VAT_LABEL.search(names) or _VAT_LABEL.search(_label_text(node)))


def _reference_amounts(texts: list[tuple[LexborNode, str]], rules: Rules = V1_1) -> frozenset[Decimal]:
    """Amounts printed as reference prices: struck, or in an element (or its parent) whose class or id
    says old, was, list, original, ..."""
    found = set()
    for node, text in texts:
        if len(text) > 40 or not _printed(node, text, rules):
            continue
        chain = [node, node.parent] if node.parent is not None else [node]
        names = " ".join(f"{a.attributes.get('class') or ''} {a.attributes.get('id') or ''}" for a in chain)
        if rules.reference_classes.search(names) or any(a.tag in ("s", "del", "strike") for a in chain):
            amount = parse_amount(text)
            if amount is not None and amount > 0:
                found.add(amount)
    return frozenset(found)


def _near(node: LexborNode | None, texts: list[tuple[LexborNode, str]]) -> list[tuple[LexborNode, str]]:
    """The texts inside the node's ancestor three levels up: the price block it belongs to."""
    if node is None:
        return []
    inside = _block_ids(node)
    return [(n, t) for n, t in texts if n.mem_id in inside]


def _block_ids(node: LexborNode) -> set[int]:
    block: LexborNode = node
    for _ in range(3):
        if block.parent is None or block.parent.tag in ("body", "html"):
            break
        block = block.parent
    return {n.mem_id for n in block.traverse()}


def _heading(
    document: LexborHTMLParser, texts: list[tuple[LexborNode, str]], rules: Rules, url: str | None
) -> LexborNode | None:
    if not rules.visible_heading:
        return document.css_first("h1")
    heading = next((h for h in document.css("h1") if (h.text() or "").strip() and not _hidden(h)), None)
    if heading is not None:
        return heading
    return _title_element(document, texts, url)


def _title_element(
    document: LexborHTMLParser, texts: list[tuple[LexborNode, str]], url: str | None
) -> LexborNode | None:
    """A page without an ``<h1>`` names its product in another element: the first visible one, outside links,
    whose text is the page's title or a part of it between separators ("Blue Kettle - Shop" gives "Blue
    Kettle"), the longest part first; never the shop's own name (``og:site_name``, or a part naming the URL's
    host)."""
    shop = {" ".join((n.attributes.get("content") or "").split()).lower() for n in _site_name_tags(document)}
    host = _host_label(url)
    titles: set[str] = set()
    for node in [
        document.css_first("title"),
        *document.css("meta[property='og:title'], meta[name='og:title']"),
    ]:
        if node is None:
            continue
        text = node.attributes.get("content") if node.tag == "meta" else node.text()
        whole = " ".join((text or "").split())
        titles.update(part for part in (whole, *_TITLE_SEPARATORS.split(whole)) if len(part) >= 4)
    parts = sorted(
        (
            part
            for part in titles
            if part.lower() not in shop and not (host and re.search(rf"\b{re.escape(host)}\b", part.lower()))
        ),
        key=lambda part: (-len(part), part),
    )
    for part in parts:
        found = next(
            (node for node, text in texts if text == part and not _in_link(node) and not _hidden(node)), None
        )
        if found is not None:
            return found
    return None


def _site_name_tags(document: LexborHTMLParser) -> list[LexborNode]:
    return list(document.css("meta[property='og:site_name'], meta[name='og:site_name']"))


def _host_label(url: str | None) -> str | None:
    """The host's name without ``www.`` and the top-level domain: ``i3fresh`` for ``https://www.i3fresh.tw/p``."""
    if not url:
        return None
    host = (urlsplit(url).hostname or "").lower().removeprefix("www.")
    labels = host.split(".")
    return labels[-2] if len(labels) >= 2 and len(labels[-2]) >= 3 else None


def _buy_box_price(
    document: LexborHTMLParser,
    texts: list[tuple[LexborNode, str]],
    action: LexborNode | None,
    rules: Rules = V1_1,
    url: str | None = None,
) -> tuple[LexborNode | None, Seen | None, Decimal | None, str | None]:
    """The price a visitor is asked to pay: the last price shown before the buy action (after the product's
    ``<h1>`` when there is one); without a buy action, the first price after the ``<h1>``. The other prices of
    that stretch are reported in the conflict note."""
    body = document.body
    if body is None:
        return None, None, None, None
    order = {node.mem_id: index for index, node in enumerate(body.traverse())}
    heading = _heading(document, texts, rules, url)
    start = order.get(heading.mem_id, 0) if heading is not None else 0
    end = order.get(action.mem_id) if action is not None else None
    if end is None and heading is None:
        return None, None, None, None  # no anchor: a price anywhere on the page may be any product's
    window: list[tuple[Decimal, Seen, LexborNode]] = []
    for node, text in texts:
        position = order.get(node.mem_id)
        if position is None or position < start or (end is not None and position > end):
            continue
        amount = _price_like(node, text, rules)
        if amount is not None:
            window.append((amount, Seen(text, _path(node)), node))
    if not window:
        return None, None, None, None
    amount, seen, chosen = window[-1] if end is not None else window[0]
    notes = []
    if rules.vat_pairs and _vat_labelled(chosen):
        pair = _vat_pair(window, chosen)
        if pair is not None:
            amount, seen, first = pair
            notes.append(
                f"prices with and without VAT side by side ({seen.value!r} at {seen.locator}, then "
                f"{_path(chosen)}); the first printed is the listing's"
            )
            chosen = first
    others = sorted({a for a, _, _ in window} - {amount})
    if others:
        notes.append(
            f"{len(others)} other amounts between the title and the buy action ({', '.join(map(str, others[:5]))})"
        )
    return chosen, seen, amount, "; ".join(notes) or None


def _vat_pair(
    window: list[tuple[Decimal, Seen, LexborNode]], chosen: LexborNode
) -> tuple[Decimal, Seen, LexborNode] | None:
    """The first VAT-labelled price of the chosen price's block, when the block shows another (the same price
    with and without VAT: a shop addressing businesses prints the net one first, a consumer shop the gross one;
    either way the first printed is the page's headline)."""
    block = _block_ids(chosen)
    labelled = [(a, s, n) for a, s, n in window if n.mem_id in block and _vat_labelled(n)]
    amounts = {a for a, _, _ in labelled}
    if len(amounts) < 2:
        return None
    return labelled[0]


def read_visible(html: str, rules: Rules = V1_1, url: str | None = None) -> VisiblePage:
    """What the page shows; ``url`` (the capture's) tells the shop's own name from a product's (``@2.0.0``)."""
    document = LexborHTMLParser(html)
    texts = _short_texts(document, rules)
    action, strong = _buy_action(document, texts, rules)
    buy_action = None
    if action is not None:
        label = " ".join((action.text(separator=" ") or action.attributes.get("value") or "").split())
        if rules.label_limit is not None and len(label) > rules.label_limit:
            label = label[: rules.label_limit].rstrip() + "…"
        buy_action = Seen(label, _path(action))
    price_node, price, amount, conflict = _buy_box_price(
        document, texts, action if strong else None, rules, url
    )
    offer = _markup_offer(document) if rules.wider_buy_signals else None
    return VisiblePage(
        buy_action=buy_action,
        buy_button=strong,
        in_stock=_stock(texts, _IN_STOCK_WORDS),
        out_of_stock=_stock(texts, _OUT_OF_STOCK_WORDS),
        sku=_label_value(texts, _LABELLED_SKU, _SKU_LABEL_ONLY),
        mpn=_label_value(texts, _LABELLED_MPN, _MPN_LABEL_ONLY),
        buy_box_price=price,
        buy_box_amount=amount,
        buy_box_others=conflict,
        reference_amounts=_reference_amounts(_near(price_node, texts), rules),
        buy_box_vat_labelled=bool(rules.vat_pairs and price_node is not None and _vat_labelled(price_node)),
        markup_offer=offer,
    )


def _markup_offer(document: LexborHTMLParser) -> Seen | None:
    for node in document.css("[itemtype], [typeof]")[:2000]:
        kinds = f"{node.attributes.get('itemtype') or ''} {node.attributes.get('typeof') or ''}".split()
        offer = next((k for k in kinds if re.search(r"(^|[/#:])(Offer|AggregateOffer)$", k)), None)
        if offer is not None:
            return Seen(offer, _path(node))
    return None
