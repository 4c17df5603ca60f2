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
    r"pievienot grozam|į krepšelį|lisää ostoskoriin|lägg i varukorg|læg i kurv|legg i handlekurv|"
    r"в корзину|купить|добавить в корзину|sepete ekle|kosárba|"
    r"加入購物車|加入购物车|立即購買|立即购买|カートに入れる|購入)\b|"
    r"(加入購物車|加入购物车|立即購買|立即购买|カートに入れる|직접구매|장바구니)",
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
    r"old|was|list|regular|strike|compare|before|original|rrp|msrp|uvp|crossed|previous|save|saving|"
    r"discount|per-unit|unit-price|installment|monthly",
    re.IGNORECASE,
)
_PRICE_CLASS = re.compile(r"price|preis|prix|prezzo|precio|cena|cijena|cena|цена|kaina|hinta", re.IGNORECASE)
_PRICE_SEARCH_DEPTH = 6  # ancestors of the buy action searched for its price
_MAX_NODES = 20000


@dataclass(frozen=True, slots=True)
class Seen:
    value: str
    locator: str


@dataclass(frozen=True, slots=True)
class VisiblePage:
    buy_action: Seen | None
    in_stock: Seen | None
    out_of_stock: Seen | None
    sku: Seen | None
    mpn: Seen | None
    buy_box_price: Seen | None
    buy_box_amount: Decimal | None
    buy_box_conflict: str | None


def _path(node: LexborNode) -> str:
    """A CSS path a reviewer can follow: tag#id or tag.class, up to three ancestors."""
    parts = []
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


def _buy_action(document: LexborHTMLParser) -> LexborNode | None:
    candidates = document.css("button, input[type=submit], input[type=button], a[role=button], a[class*=cart], a[class*=buy]")
    for node in candidates[:2000]:
        attributes = node.attributes
        if "disabled" in attributes or attributes.get("aria-disabled") == "true":
            continue
        text = " ".join((node.text(separator=" ") or attributes.get("value") or attributes.get("title") or "").split())
        if text and len(text) <= _TEXT_LIMIT and _BUY_WORDS.search(text) and not _hidden(node):
            return node
    return None


def _label_value(texts: list[tuple[LexborNode, str]], labelled: re.Pattern[str], label_only: re.Pattern[str]) -> Seen | None:
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
        if words.match(text) and not any(words.match(" ".join((c.text(separator=" ") or "").split())) for c in node.iter()):
            if not _hidden(node):
                return Seen(text, _path(node))
    return None


def _buy_box_price(action: LexborNode | None) -> tuple[Seen | None, Decimal | None, str | None]:
    """The price next to the buy action: the nearest ancestor (up to a few levels) holding price-like elements
    that agree once reference prices (was, list, unit, monthly) are left out."""
    if action is None:
        return None, None, None
    current: LexborNode | None = action.parent
    for _ in range(_PRICE_SEARCH_DEPTH):
        if current is None or current.tag in ("body", "html"):
            break
        found: dict[Decimal, Seen] = {}
        for node in current.css("[class*=price], [class*=Price], [id*=price], [id*=Price], [itemprop=price]"):
            if _hidden(node) or node.css_first("[class*=price], [class*=Price]") is not None:
                continue
            if any(_REFERENCE_PRICE_CLASSES.search(f"{a.attributes.get('class') or ''} {a.attributes.get('id') or ''}") for a in _self_and_ancestors(node, current)):
                continue
            if any(a.tag in ("s", "del", "strike") for a in _self_and_ancestors(node, current)):
                continue
            text = " ".join((node.attributes.get("content") or node.text(separator=" ") or "").split())
            if not text or len(text) > 40 or not any(ch.isdigit() for ch in text):
                continue
            amount = parse_amount(text)
            if amount is not None and amount > 0:
                found.setdefault(amount, Seen(text, _path(node)))
        if len(found) == 1:
            (amount, seen), = found.items()
            return seen, amount, None
        if len(found) > 1:
            listed = ", ".join(f"{seen.value!r} at {seen.locator}" for seen in list(found.values())[:5])
            return None, None, listed
        current = current.parent
    return None, None, None


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
    action = _buy_action(document)
    buy_action = None
    if action is not None:
        label = " ".join((action.text(separator=" ") or action.attributes.get("value") or "").split())
        buy_action = Seen(label, _path(action))
    price, amount, conflict = _buy_box_price(action)
    return VisiblePage(
        buy_action=buy_action,
        in_stock=_stock(texts, _IN_STOCK_WORDS),
        out_of_stock=_stock(texts, _OUT_OF_STOCK_WORDS),
        sku=_label_value(texts, _LABELLED_SKU, _SKU_LABEL_ONLY),
        mpn=_label_value(texts, _LABELLED_MPN, _MPN_LABEL_ONLY),
        buy_box_price=price,
        buy_box_amount=amount,
        buy_box_conflict=conflict,
    )
