"""The base of every error the platform names with a code: a leaf module (it imports nothing of the platform), so
any family of errors derives from it without an import cycle. ``prw_platform.errors`` re-exports it."""

from __future__ import annotations


class CodedError(Exception):
    """An error with the seed's ``code`` (verbatim where the seed has one), the HTTP ``status`` an edge answers
    (500: none, an edge treats it as unexpected) and whether the same request may succeed later (``retryable``).
    Subclasses set them as class attributes; an instance that needs its own sets them in ``__init__``."""

    code: str = "ERROR"
    status: int = 500
    retryable: bool = False
    #: The code an edge answers instead of ``code`` where the seed's interface names the condition more broadly
    #: than the core (if_review_decision: a stream that is not open is 503 UNAVAILABLE).
    http_code: str | None = None
