"""Where a picture comes from, and reading it as a file (seed 004 preparing -> ready guard: "The asset source must be
readable by the pipeline").

Three sources: bytes uploaded with the save, a capture artifact already in the evidence store (copied, never
moved: evidence is immutable, INV-05), or a URL under a prefix of the allow-list setting
(``PRW_CATALOG_FILE_URL_ALLOW``). Whatever the source, the bytes must be a picture the platform recognizes by its
first bytes (PNG, JPEG, GIF, WebP): anything else, an empty or too large body, an unknown artifact, a URL outside
the allow-list or one that does not answer 200 is ``UnreadableSource`` (400) before anything is created.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import httpx

from prw_platform.resolver.files.errors import UnreadableSource


@dataclass(frozen=True, slots=True)
class UploadSource:
    data: bytes
    filename: str | None = None


@dataclass(frozen=True, slots=True)
class ArtifactSource:
    artifact_id: str


@dataclass(frozen=True, slots=True)
class UrlSource:
    url: str


@dataclass(frozen=True, slots=True)
class ExistingFile:
    """A file a save already committed (kept unchanged, or named again): no copy, no preparation."""

    file_id: str


NewSource = UploadSource | ArtifactSource | UrlSource
PictureSource = NewSource | ExistingFile


def sniff_picture(data: bytes) -> str | None:
    """The picture's media type from its first bytes, or None when it is not a picture the platform serves."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(data) >= 12 and data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def check_picture(data: bytes, max_bytes: int, what: str) -> str:
    if not data:
        raise UnreadableSource(f"{what} is empty: there is no file to read")
    if len(data) > max_bytes:
        raise UnreadableSource(f"{what} has {len(data)} bytes, more than the {max_bytes} a picture may have")
    media_type = sniff_picture(data)
    if media_type is None:
        raise UnreadableSource(f"{what} is not a picture the pipeline can read (PNG, JPEG, GIF or WebP)")
    return media_type


def allowed_url(url: str, allow: list[str]) -> bool:
    """The URL is http(s), has no credentials and starts with one of the allowed prefixes (compared after the
    scheme and host are lower-cased, so ``HTTP://Example`` cannot slip past ``http://example``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if (
        parts.scheme.lower() not in ("http", "https")
        or not parts.hostname
        or parts.username
        or parts.password
    ):
        return False
    # A dot segment (also percent-encoded) could climb out of an allowed path prefix.
    if any(segment in (".", "..") for segment in unquote(parts.path).split("/")):
        return False
    normalized = parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower()).geturl()
    return any(prefix and normalized.startswith(prefix) for prefix in allow)


def fetch_url(client: httpx.Client, url: str, allow: list[str], max_bytes: int) -> bytes:
    """GET the URL (no redirects: a redirect could leave the allow-list), at most ``max_bytes`` of body."""
    if not allowed_url(url, allow):
        raise UnreadableSource(f"the platform is not allowed to read {url!r} (PRW_CATALOG_FILE_URL_ALLOW)")
    try:
        with client.stream("GET", url, follow_redirects=False) as response:
            if response.status_code != 200:
                raise UnreadableSource(f"{url!r} answered {response.status_code}, not a file")
            body = bytearray()
            for chunk in response.iter_bytes():
                body.extend(chunk)
                if len(body) > max_bytes:
                    raise UnreadableSource(f"{url!r} is larger than the {max_bytes} bytes a picture may have")
            return bytes(body)
    except httpx.HTTPError as error:
        raise UnreadableSource(f"{url!r} cannot be read: {error}") from error
