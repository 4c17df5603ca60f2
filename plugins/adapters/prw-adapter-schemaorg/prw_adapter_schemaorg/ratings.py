"""``pa_schemaorg@3.0.0``: the source and confidence of every claim (README.md, "Confidence").

A claim's source follows from where it was read (its evidence locator); its confidence is how often a statement of
that kind, for that attribute, is the right value. The offer's claims (price, currency, availability) are rated
statement by statement in ``adapter_3``; the others here.
"""

from __future__ import annotations

from prw_platform.plugins import Claim, EvidenceSource

INFERRED = "inferred:"
_STRUCTURED_PREFIXES = ("jsonld", "microdata", "rdfa")
_META_PREFIXES = ("meta[", "link[")

# By source: what the merchant's markup states is usually right; meta tags are often a template's defaults; a
# labelled value read from the page's text, or a token of the URL, is a reading of ours.
_CONFIDENCE: dict[EvidenceSource, float] = {
    "structured": 0.9,
    "meta": 0.8,
    "buy_box": 0.75,
    "text": 0.7,
    "url": 0.6,
}
# Attributes whose visible reading is the page's heading or title, not a pattern.
_TITLE_LOCATORS = ("css:title", "css:h1")


def source_of(locator: str) -> EvidenceSource:
    """The kind of place a locator points into."""
    if locator.startswith(_STRUCTURED_PREFIXES):
        return "structured"
    if locator.startswith(_META_PREFIXES):
        return "meta"
    if locator.startswith("url:"):
        return "url"
    if locator.startswith(INFERRED):
        return "buy_box"
    return "text"


def rated(claim: Claim) -> Claim:
    """The claim with the source its locator says and that source's confidence (a title read from ``<title>`` or
    the ``<h1>`` counts as the page's own statement of it: meta's confidence)."""
    if claim.confidence is not None:
        return claim
    source = source_of(claim.evidence_locator)
    confidence = _CONFIDENCE[source]
    if claim.attribute == "core:title" and claim.evidence_locator.startswith(_TITLE_LOCATORS):
        confidence = _CONFIDENCE["meta"]
    return Claim(claim.attribute, claim.value, claim.evidence_locator, source, confidence)
