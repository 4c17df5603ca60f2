"""``prw eval extraction --strip-markup``: a page as a visitor sees it, without the markup that describes it to
machines, so the visible-page rules are measured alone.

Removed: every ``<script type=application/ld+json>`` block (JSON-LD), the microdata attributes (``itemscope``,
``itemtype``, ``itemprop``, ``itemid``, ``itemref``), the RDFa attributes (``vocab``, ``typeof``, ``property``,
``resource``, ``about``, ``prefix``, ``datatype``, ``content`` outside ``<meta>``, ``rel`` / ``rev`` outside
``<link>``), and every ``<meta>`` tag except the ones that declare the encoding (the page is re-encoded as UTF-8 and
declares that). What a visitor sees (text, links, buttons, classes, ids) is unchanged.
"""

from __future__ import annotations

import lxml.html
from lxml import etree
from w3lib.encoding import html_to_unicode

_MICRODATA = ("itemscope", "itemtype", "itemprop", "itemid", "itemref")
_RDFA = ("vocab", "typeof", "property", "resource", "about", "prefix", "datatype")
_JSONLD = "application/ld+json"


def strip_markup(data: bytes, content_type: str | None = None) -> bytes:
    """The page without structured markup and meta tags, as UTF-8 bytes (declared in a ``<meta charset>``)."""
    _, text = html_to_unicode(content_type, data)
    if not text.strip():
        return data
    try:
        document = lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return data  # nothing to strip in a page that has no element; the adapter reports it
    for script in list(document.iter("script")):
        kind = (script.get("type") or "").split(";")[0].strip().lower()
        if kind == _JSONLD:
            _drop(script)
    for meta in list(document.iter("meta")):
        _drop(meta)
    for element in document.iter():
        if not isinstance(element.tag, str):
            continue  # comments and processing instructions have no attributes
        for name in (*_MICRODATA, *_RDFA):
            element.attrib.pop(name, None)
        if element.tag != "meta":
            element.attrib.pop("content", None)
        if element.tag != "link":
            element.attrib.pop("rel", None)
            element.attrib.pop("rev", None)
    head = document.find("head")
    if head is None:
        head = etree.Element("head")
        document.insert(0, head)
    head.insert(0, etree.Element("meta", charset="utf-8"))
    serialized: bytes = lxml.html.tostring(document, encoding="utf-8", doctype="<!DOCTYPE html>")
    return serialized


def _drop(element: lxml.html.HtmlElement) -> None:
    """Remove the element, keeping the text that followed it (lxml keeps it in the element's tail)."""
    parent = element.getparent()
    if parent is None:
        return
    tail = element.tail
    previous = element.getprevious()
    parent.remove(element)
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
