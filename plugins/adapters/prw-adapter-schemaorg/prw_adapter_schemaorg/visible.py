"""``pa_schemaorg@1.1.0``: what a visitor reads on the page when the markup says nothing — the buy action,
stock statements, labelled identifiers and the buy box's price — read with selectolax. Every rule is general
(words in several languages, page structure), never a site's selectors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

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


def _short_texts(document: LexborHTMLParser) -> list[tuple[LexborNode, str]]:
    """The elements holding a text directly whose whole text is short (a statement, a label, a value), in
    document order, each once."""
    body = document.body
    if body is None:
        return []
    found: list[tuple[LexborNode, str]] = []
    seen: set[int] = set()
    for index, node in enumerate(body.traverse(include_text=True)):
        if index > _MAX_NODES:
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


_BUY_ATTRIBUTES = re.compile(
    r"add[-_]?to[-_]?(cart|basket|bag|trolley)|addtocart|addtobasket|buy[-_]?(now|button|box)|"
    r"add[-_]?cart|cart[-_]?add|purchase[-_]?button",
    re.IGNORECASE,
)


def _disabled(node: LexborNode) -> bool:
    attributes = node.attributes
    return "disabled" in attributes or attributes.get("aria-disabled") == "true"


def _buy_action(
    document: LexborHTMLParser, texts: list[tuple[LexborNode, str]]
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
            and _BUY_WORDS.search(text)
            and not _disabled(node)
            and not _hidden(node)
        ):
            return node, True
    for node, text in texts:
        if (
            (
                len(text) <= 40
                and _BUY_WORDS.search(text)
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
        if _BUY_ATTRIBUTES.search(names) and not _disabled(node) and not _hidden(node):
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


def _price_like(node: LexborNode, text: str) -> Decimal | None:
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
    if any(_REFERENCE_PRICE_CLASSES.search(name) for name in names[:2]) or any(
        a.tag in ("s", "del", "strike") for a in chain
    ):
        return None
    if not _PRINTED_PRICE.match(text) and not (
        any(_PRICE_CLASS.search(name) for name in names)
        and re.fullmatch(rf"\W{{0,3}}{_AMOUNT}\W{{0,3}}", text)
    ):
        return None
    if _hidden(node):
        return None
    amount = parse_amount(text)
    return amount if amount is not None and amount > 0 else None


def _reference_amounts(texts: list[tuple[LexborNode, str]]) -> frozenset[Decimal]:
    """Amounts printed as reference prices: struck, or in an element (or its parent) whose class or id
    says old, was, list, original, ..."""
    found = set()
    for node, text in texts:
        if len(text) > 40 or not _PRINTED_PRICE.match(text):
            continue
        chain = [node, node.parent] if node.parent is not None else [node]
        names = " ".join(f"{a.attributes.get('class') or ''} {a.attributes.get('id') or ''}" for a in chain)
        if _REFERENCE_PRICE_CLASSES.search(names) or any(a.tag in ("s", "del", "strike") for a in chain):
            amount = parse_amount(text)
            if amount is not None and amount > 0:
                found.add(amount)
    return frozenset(found)


def _near(node: LexborNode | None, texts: list[tuple[LexborNode, str]]) -> list[tuple[LexborNode, str]]:
    """The texts inside the node's ancestor three levels up: the price block it belongs to."""
    if node is None:
        return []
    block: LexborNode = node
    for _ in range(3):
        if block.parent is None or block.parent.tag in ("body", "html"):
            break
        block = block.parent
    inside = {n.mem_id for n in block.traverse()}
    return [(n, t) for n, t in texts if n.mem_id in inside]


def _buy_box_price(
    document: LexborHTMLParser, texts: list[tuple[LexborNode, str]], action: LexborNode | None
) -> tuple[LexborNode | None, Seen | None, Decimal | None, str | None]:
    """The price a visitor is asked to pay: the last price shown before the buy action (after the product's
    ``<h1>`` when there is one); without a buy action, the first price after the ``<h1>``. The other prices of
    that stretch are reported in the conflict note."""
    body = document.body
    if body is None:
        return None, None, None, None
    order = {node.mem_id: index for index, node in enumerate(body.traverse())}
    heading = document.css_first("h1")
    start = order.get(heading.mem_id, 0) if heading is not None else 0
    end = order.get(action.mem_id) if action is not None else None
    if end is None and heading is None:
        return None, None, None, None  # no anchor: a price anywhere on the page may be any product's
    window: list[tuple[Decimal, Seen, LexborNode]] = []
    for node, text in texts:
        position = order.get(node.mem_id)
        if position is None or position < start or (end is not None and position > end):
            continue
        amount = _price_like(node, text)
        if amount is not None:
            window.append((amount, Seen(text, _path(node)), node))
    if not window:
        return None, None, None, None
    amount, seen, chosen = window[-1] if end is not None else window[0]
    others = sorted({a for a, _, _ in window} - {amount})
    note = (
        f"{len(others)} other amounts between the title and the buy action ({', '.join(map(str, others[:5]))})"
        if others
        else None
    )
    return chosen, seen, amount, note


def _self_and_ancestors(node: LexborNode, stop: LexborNode) -> list[LexborNode]:
    chain = []
    current: LexborNode | None = node
    while current is not None and current is not stop and current.tag not in ("body", "html"):
        chain.append(current)
        current = current.parent
    return chain


def read_visible(html: str) -> VisiblePage:
    document = LexborHTMLParser(html)
    texts = _short_texts(document)
    action, strong = _buy_action(document, texts)
    buy_action = None
    if action is not None:
        label = " ".join((action.text(separator=" ") or action.attributes.get("value") or "").split())
        buy_action = Seen(label, _path(action))
    price_node, price, amount, conflict = _buy_box_price(document, texts, action if strong else None)
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
        reference_amounts=_reference_amounts(_near(price_node, texts)),
    )
