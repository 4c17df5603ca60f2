"""Media types, as RFC 9110 8.3.1 writes them: ``type "/" subtype *( OWS ";" OWS [ parameter ] )``.

Every part is a ``token`` and a parameter value is a ``token`` or a ``quoted-string``. Stricter than the RFC in
two places, both about characters the platform cannot carry (the type is stored as S3 user metadata, which must
be ASCII, and on one line of the filesystem store's envelope): no ``obs-text`` (non-ASCII) inside a quoted
string, and optional whitespace is spaces only (no HTAB, a control character).
"""

from __future__ import annotations

import re

from prw_platform.inputs.errors import InvalidInput

MAX_MEDIA_TYPE_LENGTH = 255

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
# quoted-string: DQUOTE *( qdtext / quoted-pair ) DQUOTE, printable ASCII only.
_QUOTED_STRING = r'"(?:[ !\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"'
_PARAMETER = rf"{_TOKEN}=(?:{_TOKEN}|{_QUOTED_STRING})"
_MEDIA_TYPE = re.compile(rf"{_TOKEN}/{_TOKEN}(?: *; *(?:{_PARAMETER})?)*")


def check_media_type(media_type: str) -> str:
    """``media_type`` if it is an RFC 9110 ``type/subtype`` with optional parameters, at most 255 characters."""
    if len(media_type) > MAX_MEDIA_TYPE_LENGTH or not _MEDIA_TYPE.fullmatch(media_type):
        raise InvalidInput(
            f"media type {media_type!r} is not an RFC 9110 type/subtype of printable ASCII tokens with optional "
            f"parameters, at most {MAX_MEDIA_TYPE_LENGTH} characters"
        )
    return media_type
