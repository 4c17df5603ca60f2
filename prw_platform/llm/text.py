"""The untrusted input of an LLM request, delimited (if_llm_extract Authorization: "Inputs are untrusted (page
text can carry prompt injection)").

``delimited`` wraps the text in markers the prompts name as the only place data comes from, after removing every
look-alike of those markers from the text itself, so a page cannot close the block early and speak as the
platform. The caller bounds the text (``MAX_EXCERPT_CHARS``).
"""

from __future__ import annotations

import re
from typing import Final

MAX_EXCERPT_CHARS: Final = 24_000
OPEN_MARKER: Final = "<<<UNTRUSTED_PAGE_TEXT"
CLOSE_MARKER: Final = "UNTRUSTED_PAGE_TEXT>>>"
_MARKER = re.compile(
    r"<{2,}\s*UNTRUSTED_PAGE_TEXT|UNTRUSTED_PAGE_TEXT\s*>{2,}|UNTRUSTED_PAGE_TEXT", re.IGNORECASE
)


def delimited(text: str) -> str:
    """The text between the markers, with every marker look-alike inside it removed."""
    return f"{OPEN_MARKER}\n{_MARKER.sub('', text)}\n{CLOSE_MARKER}"
