"""Templates of the console, their filters, and the headers every console page carries."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

HERE: Final = Path(__file__).parent
STATIC_DIR: Final = HERE / "static"

#: Scripts and styles from the origin only: an untrusted page's text is rendered escaped, never run.
PAGE_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

templates = Jinja2Templates(directory=HERE / "templates")


def _ago(moment: datetime) -> str:
    seconds = int((datetime.now(UTC) - moment).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return "just now"


def _value(value: Any) -> str:
    """A claim or attribute value as a reviewer reads it: text as is, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _label(name: str) -> str:
    return name.replace("_", " ")


def _confidence(value: Any) -> str:
    """A claim's confidence with two decimals; a dash for a claim its adapter did not rate."""
    return f"{value:.2f}" if isinstance(value, int | float) and not isinstance(value, bool) else "\u2013"


templates.env.filters.update(ago=_ago, value=_value, label=_label, confidence=_confidence)


def page(request: Request, name: str, context: dict[str, Any], *, status_code: int = 200) -> HTMLResponse:
    return templates.TemplateResponse(request, name, context, status_code=status_code, headers=PAGE_HEADERS)
