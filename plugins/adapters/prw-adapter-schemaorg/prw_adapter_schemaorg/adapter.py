"""``pa_schemaorg@1.0.0``: schema.org Product data (JSON-LD, microdata, RDFa) and OpenGraph from HTML pages,
with visible-page heuristics when the page has no structured price or title."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import lxml.html
from extruct.rdfa import RDFaExtractor
from extruct.w3cmicrodata import MicrodataExtractor
from extruct.xmldom import XmlDomHTMLParser
from lxml.html import HtmlElement

from prw_adapter_schemaorg.claims import ClaimList, add_page_claims, add_product_claims
from prw_adapter_schemaorg.decoding import decode_html, media_type_charset
from prw_adapter_schemaorg.entities import (
    Entity,
    ProductView,
    jsonld_entities,
    microdata_entities,
    rdfa_entities,
)
from prw_adapter_schemaorg.jsonld import jsonld_blocks
from prw_adapter_schemaorg.money import region_hint
from prw_adapter_schemaorg.offers import OfferReading, read_offer
from prw_adapter_schemaorg.page import PageSignals, read_page
from prw_adapter_schemaorg.pricing import PriceDecision, decide_price
from prw_adapter_schemaorg.selection import select_primary
from prw_platform.plugins import (
    Artifact,
    CaptureView,
    Extraction,
    ExtractionError,
    ListingFields,
    RuleFired,
    availability_from_text,
)

HTML_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def essence(media_type: str | None) -> str:
    """``text/html`` for ``Text/HTML; charset=utf-8``."""
    return (media_type or "").split(";")[0].strip().lower()


class SchemaOrgAdapter:
    name = "pa_schemaorg"
    version = "1.0.0"
    # A generic adapter for any HTML page: a site-specific adapter with a higher priority wins automatic
    # selection (SourceAdapter's optional ``priority``).
    priority = -10

    def supports(self, capture: CaptureView) -> bool:
        try:
            return essence(capture.media_type) in HTML_MEDIA_TYPES
        except Exception:  # supports() must not raise, whatever a capture carries
            return False

    def extract(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> Extraction:
        reading = self._read(capture, artifacts)
        self._refine(reading)
        return Extraction(
            adapter=f"{self.name}@{self.version}",
            claims=tuple(reading.claims.claims),
            listing=_listing(reading.claims, reading.decision, capture),
            diagnostics=tuple(reading.diagnostics),
            rules_fired=tuple(reading.rules_fired),
        )

    def _refine(self, reading: PageReading) -> None:
        """A later version's rules on top of this version's reading (``pa_schemaorg@1.1.0``); none here."""

    def _read(self, capture: CaptureView, artifacts: Sequence[Artifact]) -> PageReading:
        artifact = _html_artifact(capture, artifacts)
        # The artifact's own charset, else the capture's (an artifact stored as application/octet-stream).
        declared = artifact.media_type if media_type_charset(artifact.media_type) else capture.media_type
        document = decode_html(artifact.data, declared)
        diagnostics: list[str] = []
        if document.replaced:
            diagnostics.append(
                f"bytes not valid {document.encoding} ({document.source}) replaced with U+FFFD"
            )
        tree = _parse(document.text)
        blocks = jsonld_blocks(tree)
        diagnostics.extend(note for block in blocks if (note := block.diagnostic()))
        roots = jsonld_entities(blocks)
        roots += _extruct_entities("microdata", tree, diagnostics)
        roots += _extruct_entities("rdfa", tree, diagnostics)
        page = read_page(tree, document.text)
        page_urls = [url for url in (capture.url, _meta(page, "og:url"), _canonical(page)) if url]
        selection = select_primary(roots, page.title_texts(), page_urls)
        diagnostics.extend(selection.notes)
        claims = ClaimList()
        offer = OfferReading()
        if selection.primary is None:
            diagnostics.append(
                "no schema.org Product in JSON-LD, microdata or RDFa; claims from meta tags and visible-page "
                "heuristics"
            )
        else:
            offer = read_offer(selection.primary)
            diagnostics.extend(offer.notes)
            add_product_claims(claims, selection.primary, offer)
        region = region_hint(capture.url, page.lang)
        decision = decide_price(offer, page, region)
        diagnostics.extend(decision.notes)
        _add_offer_claims(claims, decision, offer, page)
        add_page_claims(claims, page)
        diagnostics.extend(claims.notes)
        claims.notes.clear()
        return PageReading(
            capture, document.text, page, selection.primary, offer, region, decision, claims, diagnostics
        )


@dataclass
class PageReading:
    """Everything one extraction read, for a later version's rules to refine (``claims``, ``decision`` and
    ``diagnostics`` may be replaced or extended; the rest is what the page is)."""

    capture: CaptureView
    html: str
    page: PageSignals
    primary: ProductView | None
    offer: OfferReading
    region: str | None
    decision: PriceDecision
    claims: ClaimList
    diagnostics: list[str]
    #: The named rules that changed a value (``pa_schemaorg@3.0.0`` and later).
    rules_fired: list[RuleFired] = field(default_factory=list)


def _html_artifact(capture: CaptureView, artifacts: Sequence[Artifact]) -> Artifact:
    """The first HTML artifact; an artifact of another type only when the capture itself is HTML and it is the
    only artifact (collectors that store the page as ``application/octet-stream``)."""
    html = next((a for a in artifacts if essence(a.media_type) in HTML_MEDIA_TYPES), None)
    if html is None and len(artifacts) == 1 and essence(capture.media_type) in HTML_MEDIA_TYPES:
        html = artifacts[0]
    if html is None:
        kinds = ", ".join(sorted({essence(a.media_type) for a in artifacts})) or "none"
        raise ExtractionError(f"capture {capture.capture_id} has no HTML artifact (artifact types: {kinds})")
    return html


def _parse(text: str) -> HtmlElement:
    if not text.strip():
        raise ExtractionError("the HTML artifact is empty")
    try:
        # The parser extruct's RDFa reader needs (an XML DOM view); microdata, OpenGraph and JSON-LD use the
        # same tree. document_fromstring: always the whole document, even for a fragment (extruct's
        # parse_xmldom_html would return the fragment's first element).
        tree: HtmlElement = lxml.html.document_fromstring(
            text.encode("utf-8"), parser=XmlDomHTMLParser(encoding="utf-8")
        )
    except Exception as error:  # lxml raises ParserError ("Document is empty") for a page without elements
        raise ExtractionError(f"the HTML artifact cannot be parsed: {error}") from error
    return tree


def _extruct_entities(syntax: str, tree: HtmlElement, diagnostics: list[str]) -> list[Entity]:
    """One syntax failing (extruct raises on some real pages) costs that syntax only, and is diagnosed."""
    try:
        if syntax == "microdata":
            return microdata_entities(MicrodataExtractor().extract_items(tree, base_url=None))
        return rdfa_entities(RDFaExtractor().extract_items(tree, base_url=None))
    except Exception as error:
        diagnostics.append(f"{syntax} could not be read ({type(error).__name__}); skipped")
        return []


def _meta(page: PageSignals, name: str) -> str | None:
    located = page.meta.get(name)
    return located.value if located else None


def _canonical(page: PageSignals) -> str | None:
    return page.canonical.value if page.canonical else None


def _add_offer_claims(
    claims: ClaimList, decision: PriceDecision, offer: OfferReading, page: PageSignals
) -> None:
    if decision.source is not None:
        claims.add("core:price", decision.source.value, decision.source.locator)
    if decision.currency is not None:
        claims.add("core:currency", decision.currency.value, decision.currency.locator)
    if offer.availability is not None:
        claims.add_value("core:availability", offer.availability)
        return
    located = page.first_meta("product:availability", "og:availability")
    if located is not None:
        claims.add("core:availability", located.value, located.locator)


def _listing(claims: ClaimList, decision: PriceDecision, capture: CaptureView) -> ListingFields:
    def first(attribute: str) -> str | None:
        value = next((c.value for c in claims.claims if c.attribute == attribute), None)
        return str(value) if value is not None else None

    availability = first("core:availability")
    return ListingFields(
        title=first("core:title"),
        url=first("core:url") or capture.url,
        price=decision.source.amount if decision.source else None,
        currency=decision.currency_code,
        # A value the shared vocabulary does not know is still an availability statement: unknown, not absent.
        availability=(availability_from_text(availability) or "unknown") if availability else None,
    )
