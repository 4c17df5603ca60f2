"""``pa_schemaorg@3.0.0``: every amount the buy box prints, with what the page says it is.

``@2.0.0`` left out an amount it did not take for the price (a struck one, one per month, one with or without
VAT beside another); ``@3.0.0`` keeps each with its *role*, so the consumer price rules (``consumer_price``) can
say which statement an amount explains: a markup price the page shows struck out, a net price beside the gross
one, an auction's starting price beside its current bid. The roles come from the element's class or id, the tags
around it and the words printed with it, in several languages; never a site's selectors.

The buy box is ``@2.0.0``'s: the prices between the product's heading and its buy button (the last one before the
button is the price), or, without a button, the first price after the heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from selectolax.lexbor import LexborHTMLParser, LexborNode

from prw_adapter_schemaorg.money import parse_amount
from prw_adapter_schemaorg.visible import (
    _BARE_AMOUNT,
    _BUY_WORDS_2,
    _CONVERTED,
    _PER_PERIOD,
    _PRICE_CLASS,
    _TEXT_LIMIT,
    Rules,
    Seen,
    _block_ids,
    _buy_action,
    _disabled,
    _heading,
    _hidden,
    _in_link,
    _label_text,
    _path,
    _printed,
    _short_texts,
)

Role = Literal[
    "current",
    "reference",
    "vat_excl",
    "vat_incl",
    "per_unit",
    "converted",
    "shipping",
    "discount",
    "extra",
    "difference",
    "conditional",
    "bid_start",
    "bid_current",
    "bid_input",
    "estimate",
]
#: Roles a visitor may be asked to pay (``@2.0.0`` read each of them as a price; ``@3.0.0`` reads the auction and
#: VAT roles through their rules).
PAYABLE: frozenset[Role] = frozenset({"current", "vat_excl", "vat_incl", "bid_current"})

_STRUCK_TAGS = ("s", "del", "strike")
_SHIPPING_CLASSES = re.compile(
    r"shipping|delivery|postage|freight|versand|livraison|spedizione|envio|doprava|doruc|frete|verzend", re.I
)
# A discount amount ("discount", "saving"), not a discounted price ("discountPrice", "discounted-price").
_DISCOUNT_CLASSES = re.compile(
    r"discount(?!ed|[-_]?price)|save|saving|reduction|rabatt|sconto|remise|descuento|korting|sleva",
    re.IGNORECASE,
)
_PER_UNIT_CLASSES = re.compile(r"per-unit|unit-price|installment|monthly", re.IGNORECASE)
# A class word that starts a token or a camelCase part ("price-old", "oldPrice", "priceOld"; never "bold").
_REFERENCE_CLASSES = re.compile(
    r"(?i:(?<![a-z])(old|was|list|regular|strike|barred|compare|before|original|rrp|msrp|uvp|crossed|previous))|"
    r"Old|Was|List|Regular|Strike|Barred|Compare|Before|Original|Crossed|Previous"
)
# Amounts that apply only on a condition (a loyalty card, a membership, an app) or that come back later (cash
# back, points): not what a visitor pays for the offer.
_CONDITIONAL = re.compile(
    r"cash\s?back|back to (your )?card|\bspäť na\b|\bzpět na\b|\bbonus\b|\bpoints?\b|\bpunkte\b|\bbodů?\b|"
    r"\brewards?\b|loyalty|member(ship)?s?\s*price|club\s*price|with (the )?[\w ]{0,20}card\b|\bs kartou\b|"
    r"\bmit (der )?\w*karte\b|\bcon (la )?tarjeta\b|\bavec (la )?carte\b|subscribe\s*(&|and)\s*save",
    re.IGNORECASE,
)
_VAT_EXCLUDED = re.compile(
    r"\b(excl\.?|exkl\.?|excluding|without|ex\.?|zzgl\.?|plus|\+)\s*(vat|tax|mwst|btw|moms|gst)\b|"
    r"\bnetto\b|\bnet\b|\bbez (dph|pdv|ddv|ндс)\b|\bbrez ddv\b|\bбез ндс\b|\bht\b|hors tax|"  # noqa: RUF001
    r"\b(sin|senza|sem) iva\b|\bzonder btw\b|\bnotax\b|\bno-tax\b",
    re.IGNORECASE,
)
_VAT_INCLUDED = re.compile(
    r"\b(incl\.?|inkl\.?|including|with|inc\.?)\s*(vat|tax|mwst|btw|moms|gst)\b|"
    r"\b(vat|tax|mwst|gst) (incl\.?|included|inkl\.?)|\bbrutto\b|\bs (dph|pdv)\b|\bz ddv\b|\bс ндс\b|\bttc\b|"  # noqa: RUF001
    r"\b(con|iva) (iva|incl\.?|inclusa|incluido)\b|\bmet btw\b",
    re.IGNORECASE,
)
_BID_START = re.compile(
    r"starting (price|bid)|start(ing)? price|opening bid|minimum bid|prezzo (di partenza|base)|startpreis|"
    r"mindestgebot|prix de départ|mise à prix|precio (de salida|inicial)|cena wywoławcza|vyvolávací cena|"
    r"начальная цена|起標價",
    re.IGNORECASE,
)
_BID_CURRENT = re.compile(
    r"current (bid|price)|high(est)? bid|winning bid|leading bid|\b\d+\s*(bids?|offerte|gebote|enchères|pujas|"
    r"ofert|ставок|次出價)\b|offerta attuale|aktuelles gebot|höchstgebot|enchère actuelle|offre actuelle|"
    r"puja actual|aktualna oferta|текущая ставка|目前出價",
    re.IGNORECASE,
)
_BID_INPUT = re.compile(
    r"(your )?max(imum)? bid|offerta massima|maximalgebot|enchère maximale|puja máxima|\benter\b.{0,30}\bor more\b|"
    r"inserisci.{0,30}o più",
    re.IGNORECASE,
)
_ESTIMATE = re.compile(r"\bestimate\b|\best\.|\bstima\b|schätz(preis|wert|ung)|\bestimation\b", re.IGNORECASE)
_NO_BIDS = re.compile(r"\b0\s*(bids?|offerte|gebote|enchères|pujas|ofert|ставок)\b", re.IGNORECASE)
# A labelled amount in one text ("Starting Price $150", "Prezzo di partenza: GBP 12,99"): the label words and
# the printed amount.
_LABELLED_AMOUNT = re.compile(
    r"^(?P<label>[^\d]{3,60}?)[\s:]*(?P<amount>\W{0,3}[^\s\d]{0,4}\s?\d[\d\s.,']*.{0,4})$"
)
_CLUSTER_TEXT_LIMIT = 200  # the words around one price block: a price, its labels, its reference prices
_CLUSTER_LEVELS = 6


@dataclass(frozen=True, slots=True)
class PriceCandidate:
    """One amount the buy box prints: the amount, the text it was read from, where, and what it is."""

    amount: Decimal
    text: str
    locator: str
    role: Role
    #: The words printed with it ("Brez DDV: 36.53€", "$200 2 bids"), or "".
    label: str
    #: The element carries the markup's own price (``itemprop=price``, an RDFa ``price`` property): a markup
    #: statement and this one are one statement.
    marked_up: bool
    position: int


@dataclass(frozen=True, slots=True)
class BuyBox:
    """What the buy box shows. ``price`` is the amount a visitor is asked to pay as ``@2.0.0`` would choose it
    among the payable roles only; ``rules`` say which of ``@3.0.0``'s readings changed that choice."""

    price: PriceCandidate | None
    #: ``button``: between the heading and a buy button; ``heading``: the first price after the heading.
    anchor: Literal["button", "heading", "none"]
    #: Every amount of the window with its role, in document order.
    window: tuple[PriceCandidate, ...]
    #: Other payable amounts in the price's own block (its cluster): competitors a reviewer should see.
    cluster: tuple[PriceCandidate, ...]
    #: Labelled amounts anywhere on the page (an auction's starting price, current bid, estimate).
    labelled: tuple[PriceCandidate, ...]
    #: (rule, what ``@2.0.0`` would have taken): the role that kept the buy box from taking that amount.
    excluded: tuple[tuple[str, PriceCandidate], ...]
    #: A buy button the page shows disabled, when no enabled one is shown.
    buy_disabled: Seen | None
    #: The price's block shows it with and without VAT: the net amount and the gross one (VAT included, or the
    #: unlabelled higher amount beside a net one).
    net: PriceCandidate | None = None
    gross: PriceCandidate | None = None
    #: Amounts printed as reference prices (struck, was, list, original) in the price's block.
    references: frozenset[Decimal] = frozenset()


def _names(node: LexborNode | None) -> str:
    if node is None:
        return ""
    return f"{node.attributes.get('class') or ''} {node.attributes.get('id') or ''}"


def _marked_up(node: LexborNode) -> bool:
    current: LexborNode | None = node
    for _ in range(3):
        if current is None:
            return False
        attributes = current.attributes
        if "price" in (attributes.get("itemprop") or "").lower().split() or (
            (attributes.get("property") or "").lower().rsplit(":", 1)[-1] == "price"
        ):
            return True
        current = current.parent
    return False


def classify(node: LexborNode, text: str, rules: Rules) -> tuple[Decimal, Role, str] | None:
    """The amount an element prints, its role and the words printed with it; None when the element is not a
    price at all (no amount, not printed as a price, hidden, or in a link to another page)."""
    if len(text) > 40 or not any(ch.isdigit() for ch in text):
        return None
    chain = [node]
    current = node.parent
    while current is not None and len(chain) < 3:
        chain.append(current)
        current = current.parent
    names = [_names(a) for a in chain]
    near = " ".join(names[:2])
    role: Role | None = None
    if any(a.tag in _STRUCK_TAGS for a in chain):
        role = "reference"
    elif _SHIPPING_CLASSES.search(near):
        role = "shipping"
    elif _DISCOUNT_CLASSES.search(near):
        role = "discount"
    elif _PER_UNIT_CLASSES.search(near):
        role = "per_unit"
    elif _REFERENCE_CLASSES.search(near):
        role = "reference"
    if not _printed(node, text, rules) and not (
        any(_PRICE_CLASS.search(name) for name in names) and _BARE_AMOUNT.fullmatch(text)
    ):
        return None
    if _hidden(node) or _in_link(node):
        return None
    amount = parse_amount(text)
    if amount is None or amount <= 0:
        return None
    label = _label_text(node)
    if role is None:
        role = _role_from_words(text, label, near)
    return amount, role, label


_WORD_ROLES: tuple[tuple[re.Pattern[str], Role], ...] = (
    (_CONDITIONAL, "conditional"),
    (_BID_INPUT, "bid_input"),
    (_BID_START, "bid_start"),
    (_BID_CURRENT, "bid_current"),
    (_ESTIMATE, "estimate"),
    (_VAT_EXCLUDED, "vat_excl"),
    (_VAT_INCLUDED, "vat_incl"),
)


def _role_from_words(text: str, label: str, names: str) -> Role:
    stripped = text.lstrip()
    if stripped.startswith("+"):
        return "extra"
    if stripped.startswith(("-", "\u2212", "\u2013")):
        return "difference"
    if _PER_PERIOD.search(text) or _PER_PERIOD.search(label):
        return "per_unit"
    if _CONVERTED.search(text) or _CONVERTED.search(label):
        return "converted"
    words = f"{text} {label}"
    for pattern, role in _WORD_ROLES:
        if pattern.search(words):
            return role
    if _VAT_EXCLUDED.search(names):
        return "vat_excl"
    return "current"


_AUCTION_LABELS: tuple[tuple[re.Pattern[str], Role], ...] = (
    (_BID_INPUT, "bid_input"),
    (_BID_START, "bid_start"),
    (_BID_CURRENT, "bid_current"),
    (_ESTIMATE, "estimate"),
)


def _labelled_amounts(texts: list[tuple[LexborNode, str]], order: dict[int, int]) -> list[PriceCandidate]:
    """Amounts printed in one text with an auction label ("Starting Price $150", "Prezzo di partenza: GBP 12,99")."""
    found: list[PriceCandidate] = []
    for node, text in texts:
        match = _LABELLED_AMOUNT.match(text)
        if match is None or _hidden(node):
            continue
        label = match.group("label")
        role = next((r for pattern, r in _AUCTION_LABELS if pattern.search(label)), None)
        amount = parse_amount(match.group("amount"))
        if role is not None and amount is not None and amount > 0:
            position = order.get(node.mem_id, 0)
            found.append(PriceCandidate(amount, text, _path(node), role, label, False, position))
    return found


def _cluster(
    chosen_node: LexborNode, candidates: list[tuple[PriceCandidate, LexborNode]]
) -> list[PriceCandidate]:
    """The other payable amounts of the chosen price's block: the highest ancestor (up to six levels) whose text
    stays as short as one price block."""
    block: LexborNode = chosen_node
    current = chosen_node.parent
    for _ in range(_CLUSTER_LEVELS):
        if current is None or current.tag in ("body", "html"):
            break
        if len(" ".join((current.text(separator=" ") or "").split())) > _CLUSTER_TEXT_LIMIT:
            break
        block = current
        current = current.parent
    inside = {n.mem_id for n in block.traverse()}
    return [c for c, node in candidates if node.mem_id in inside and node.mem_id != chosen_node.mem_id]


def _pick(
    window: list[tuple[PriceCandidate, LexborNode]], by_button: bool
) -> tuple[PriceCandidate, LexborNode] | None:
    if not window:
        return None
    return window[-1] if by_button else window[0]


def _disabled_buy_button(document: LexborHTMLParser) -> Seen | None:
    """A buy button shown disabled ("Add to cart" greyed out), when no enabled buy button is shown."""
    disabled: Seen | None = None
    for node in document.css("button, input[type=submit], input[type=button]")[:2000]:
        text = " ".join((node.text(separator=" ") or node.attributes.get("value") or "").split())
        if not text or len(text) > _TEXT_LIMIT or not _BUY_WORDS_2.search(text) or _hidden(node):
            continue
        if not _disabled(node):
            return None
        disabled = disabled or Seen(text, _path(node))
    return disabled


def read_buy_box(html: str, rules: Rules, url: str | None) -> BuyBox:
    document = LexborHTMLParser(html)
    texts = _short_texts(document, rules)
    body = document.body
    empty = BuyBox(None, "none", (), (), (), (), _disabled_buy_button(document))
    if body is None:
        return empty
    order = {node.mem_id: index for index, node in enumerate(body.traverse())}
    labelled = tuple(_labelled_amounts(texts, order))
    action, strong = _buy_action(document, texts, rules)
    heading = _heading(document, texts, rules, url)
    start = order.get(heading.mem_id, 0) if heading is not None else 0
    end = order.get(action.mem_id) if action is not None and strong else None
    if end is None and heading is None:
        return BuyBox(None, "none", (), (), labelled, (), empty.buy_disabled)
    window: list[tuple[PriceCandidate, LexborNode]] = []
    badged: list[tuple[PriceCandidate, LexborNode]] = []
    for node, text in texts:
        position = order.get(node.mem_id)
        if position is None or position < start or (end is not None and position > end):
            continue
        read = classify(node, text, rules)
        if read is not None:
            amount, role, label = read
            window.append(
                (PriceCandidate(amount, text, _path(node), role, label, _marked_up(node), position), node)
            )
            continue
        # "$229.990 <img> <span>-18%</span>": a price whose element also holds a badge is a price of the block
        # (a competitor a reviewer should see), though not one @2.0.0 would have taken.
        own = " ".join((node.text(deep=False) or "").split())
        read = classify(node, own, rules) if own and own != text else None
        if read is not None and read[1] in PAYABLE:
            amount, role, label = read
            candidate = PriceCandidate(amount, own, _path(node), role, label, _marked_up(node), position)
            badged.append((candidate, node))
    by_button = end is not None
    anchor: Literal["button", "heading"] = "button" if by_button else "heading"
    # What @2.0.0 would take: every price-like amount except the ones it also left out.
    older = [
        (c, n)
        for c, n in window
        if c.role not in ("reference", "shipping", "discount", "per_unit", "converted", "extra")
    ]
    payable = [(c, n) for c, n in window if c.role in PAYABLE]
    before, chosen = _pick(older, by_button), _pick(payable, by_button)
    excluded: tuple[tuple[str, PriceCandidate], ...] = ()
    if before is not None and (chosen is None or before[0].position != chosen[0].position):
        excluded = ((f"price.not_{before[0].role}", before[0]),)
    cluster = tuple(_cluster(chosen[1], payable + badged)) if chosen is not None else ()
    net, gross = _vat_pair(chosen[1], payable) if chosen is not None else (None, None)
    references = _references(chosen[1], texts, rules) if chosen is not None else frozenset()
    return BuyBox(
        chosen[0] if chosen else None,
        anchor,
        tuple(c for c, _ in window),
        cluster,
        labelled,
        excluded,
        empty.buy_disabled,
        net,
        gross,
        references,
    )


def _references(chosen: LexborNode, texts: list[tuple[LexborNode, str]], rules: Rules) -> frozenset[Decimal]:
    """The reference amounts printed in the chosen price's block (three levels up), as ``@2.0.0`` reads them."""
    block = _block_ids(chosen)
    found = set()
    for node, text in texts:
        if node.mem_id in block:
            read = classify(node, text, rules)
            if read is not None and read[1] == "reference":
                found.add(read[0])
    return frozenset(found)


def _vat_pair(
    chosen: LexborNode, payable: list[tuple[PriceCandidate, LexborNode]]
) -> tuple[PriceCandidate | None, PriceCandidate | None]:
    """The net and the gross price of the chosen price's block (three levels up), when it shows both: a price
    labelled without VAT, and a higher one labelled with VAT or not labelled at all."""
    block = _block_ids(chosen)
    inside = [c for c, node in payable if node.mem_id in block]
    net = next((c for c in inside if c.role == "vat_excl"), None)
    if net is None:
        return None, None
    higher = [c for c in inside if c.amount > net.amount and c.role in ("vat_incl", "current")]
    gross = next((c for c in higher if c.role == "vat_incl"), None) or next(iter(higher), None)
    return (net, gross) if gross is not None else (None, None)
