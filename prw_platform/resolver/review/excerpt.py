"""The page excerpt of a review case: the visible text of the captured page, bounded, for a reviewer to read
beside the claims. Scripts, styles and markup are dropped; the text is never rendered as HTML."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Final

#: Characters of text in an excerpt, and bytes of a page read to find them.
MAX_EXCERPT_CHARS: Final = 4000
MAX_SCANNED_BYTES: Final = 2_000_000

_HIDDEN: Final = frozenset({"script", "style", "noscript", "template", "svg"})
_BLOCK: Final = frozenset(
    {"p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "br", "section", "dt", "dd"}
)
_WHITESPACE = re.compile(r"\s+")
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_LINES = re.compile(r"\s*\n\s*")


@dataclass(frozen=True, slots=True)
class Excerpt:
    text: str
    truncated: bool


class _VisibleText(HTMLParser):
    def __init__(self, limit: int) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit
        self._hidden = 0
        #: One entry per open tag of ``_HIDDEN``: whether it hides its text.
        self._open: list[bool] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HIDDEN:
            hides = not _structured_data(tag, attrs)
            self._open.append(hides)
            self._hidden += hides
        if tag in _BLOCK or tag == "script":
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN and self._open:
            self._hidden -= self._open.pop()
        if tag in _BLOCK or tag == "script":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden and self.size <= self.limit:
            data = _WHITESPACE.sub(" ", data)  # the page's line breaks are layout; blocks make the lines
            self.parts.append(data)
            self.size += len(data)


def _structured_data(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    """JSON-LD is where many pages state what adapters read: a reviewer sees it as text."""
    return tag == "script" and any(name == "type" and "ld+json" in (value or "") for name, value in attrs)


def page_excerpt(data: bytes, media_type: str, limit: int = MAX_EXCERPT_CHARS) -> Excerpt:
    """The visible text (and JSON-LD) of a page, at most ``limit`` characters: a reviewer's excerpt, or the
    untrusted input of an LLM request (``prw_platform.resolver.assist``)."""
    text = data[:MAX_SCANNED_BYTES].decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    if "html" in media_type:
        parser = _VisibleText(limit)
        parser.feed(text)
        parser.close()
        text = "".join(parser.parts)
    text = _LINES.sub("\n", _SPACES.sub(" ", text)).strip()
    truncated = len(text) > limit or len(data) > MAX_SCANNED_BYTES
    return Excerpt(text[:limit], truncated)
