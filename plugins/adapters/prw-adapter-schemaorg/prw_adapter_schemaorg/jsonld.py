"""JSON-LD blocks, read one by one and tolerantly: real pages carry trailing commas, HTML comments, JavaScript
comments, HTML-escaped JSON and several objects in one block. One bad block never hides the others, and each
block keeps its index so that evidence locators (``jsonld[2].offers.price``) and diagnostics can name it."""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from dataclasses import dataclass

from lxml.html import HtmlElement

JsonValue = object


@dataclass(frozen=True, slots=True)
class JsonLdBlock:
    #: Position among the page's ``<script type="application/ld+json">`` elements, in document order.
    index: int
    #: The parsed JSON, or None when the block could not be read even after repairs.
    data: JsonValue | None
    #: What had to be repaired to read the block (empty when it was valid JSON).
    repairs: tuple[str, ...] = ()
    #: Why the block was skipped (None when ``data`` was read).
    error: str | None = None

    def diagnostic(self) -> str | None:
        if self.error is not None:
            return f"jsonld[{self.index}]: malformed JSON-LD skipped ({self.error})"
        if self.repairs:
            return f"jsonld[{self.index}]: malformed JSON-LD repaired ({', '.join(self.repairs)})"
        return None


def _is_jsonld_script(element: HtmlElement) -> bool:
    media_type = element.get("type") or ""
    return media_type.split(";")[0].strip().lower() == "application/ld+json"


def jsonld_blocks(tree: HtmlElement) -> list[JsonLdBlock]:
    scripts = [element for element in tree.iter("script") if _is_jsonld_script(element)]
    return [parse_block(index, element.text or "") for index, element in enumerate(scripts)]


def parse_block(index: int, text: str) -> JsonLdBlock:
    source = text.strip()
    if not source:
        return JsonLdBlock(index, None, error="empty block")
    try:
        # strict=False: raw newlines and tabs inside strings are common and harmless (extruct does the same).
        return JsonLdBlock(index, json.loads(source, strict=False))
    except ValueError as first_error:
        original_error = _describe(first_error)
    repairs: list[str] = []
    candidate = source
    if candidate.startswith(("{&quot;", "[&quot;", "{ &quot;", "[{&quot;")):
        candidate = html.unescape(candidate)
        repairs.append("HTML-escaped JSON unescaped")
    candidate, removed = _strip_noise(candidate)
    repairs.extend(removed)
    values = _decode_values(candidate)
    if values is None:
        return JsonLdBlock(index, None, error=original_error)
    if len(values) > 1:
        repairs.append(f"{len(values)} concatenated JSON values read as a list")
        return JsonLdBlock(index, values, tuple(repairs))
    return JsonLdBlock(index, values[0], tuple(repairs) or ("stray separators ignored",))


def _describe(error: ValueError) -> str:
    return str(error).split("\n")[0]


def _decode_values(text: str) -> list[JsonValue] | None:
    """All JSON values in ``text``, separated by whitespace, commas or semicolons; None if any is invalid."""
    decoder = json.JSONDecoder(strict=False)
    values: list[JsonValue] = []
    position = 0
    while True:
        while position < len(text) and (text[position].isspace() or text[position] in ",;"):
            position += 1
        if position >= len(text):
            return values or None
        try:
            value, position = decoder.raw_decode(text, position)
        except ValueError:
            return None
        values.append(value)


def _strip_noise(text: str) -> tuple[str, list[str]]:
    """Remove, outside JSON strings: HTML comment and CDATA markers, ``//`` and ``/* */`` comments, and
    commas directly before ``}`` or ``]``. Runs twice so a comma before a comment before ``}`` also goes."""
    found: set[str] = set()
    for _ in range(2):
        text = _strip_once(text, found)
    order = ("HTML comment markers removed", "JavaScript comments removed", "trailing commas removed")
    return text, [repair for repair in order if repair in found]


_MARKERS: tuple[tuple[str, str], ...] = (
    ("<!--", "HTML comment markers removed"),
    ("-->", "HTML comment markers removed"),
    ("<![CDATA[", "HTML comment markers removed"),
    ("]]>", "HTML comment markers removed"),
)


def _strip_once(text: str, found: set[str]) -> str:
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            in_string = char != '"'
            i += 1
            continue
        if char == '"':
            in_string = True
            out.append(char)
            i += 1
            continue
        marker = next((m for m in _MARKERS if text.startswith(m[0], i)), None)
        if marker is not None:
            found.add(marker[1])
            i += len(marker[0])
            continue
        if text.startswith("//", i):
            found.add("JavaScript comments removed")
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith("/*", i):
            found.add("JavaScript comments removed")
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if char == "," and _next_significant(text, i + 1) in ("}", "]", ""):
            found.add("trailing commas removed")
            i += 1
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _next_significant(text: str, start: int) -> str:
    for char in _chars_from(text, start):
        if not char.isspace():
            return char
    return ""


def _chars_from(text: str, start: int) -> Iterable[str]:
    return (text[i] for i in range(start, len(text)))
