"""ETag and Cache-Control of the public reads, from the release served (if_product_query: the release pointer
changes every public document at once, so the release identifies a document's version for its URL) and, for a
document that carries signed picture links, the links' window (they are signed anew each window and expire).

The ETag is ``"g<generation>r<publication revision>"``, and ``"g<generation>r<publication revision>x<expiry>"`` for
a document with picture links (``expiry`` the links', ``SignedPictures``): the validator changes whenever the bytes
served do. A request whose ``If-None-Match`` names the current one gets 304 Not Modified after one query for the
release, without its body being built (RFC 9110 13.1.2, 15.4.5): the window is the clock's, and within one release
a document either carries links or not. ``If-None-Match: *`` matches only a document that exists (RFC 9110 13.1.2),
so it is answered after the read: 404 for a missing entry, as without the header. A document with links is fresh
(``max-age``) no longer than until the links are renewed, so a cached copy's links live at least a window more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from pydantic_core import to_json

from prw_api.errors import ApiError
from prw_platform.services import Detail, LinkWindow, Page, PublicCatalog, Release, SignedPictures

T = TypeVar("T")


def etag_of(release: Release, links: LinkWindow | None = None) -> str:
    window = "" if links is None else f"x{links.expires}"
    return f'"g{release.generation}r{release.publication_revision or 0}{window}"'


def cache_control(request: Request, links: LinkWindow | None = None) -> str:
    max_age: int = request.app.state.settings.product_cache_max_age_seconds
    if links is not None:
        max_age = min(max_age, links.renews_in)
    return f"public, max-age={max_age}"


def not_modified(
    request: Request, catalog: PublicCatalog, pictures: SignedPictures | None = None
) -> Response | None:
    """304 when ``If-None-Match`` names the current ETag of the route's documents (``pictures``: the response's
    signer, when they may carry picture links); None otherwise, and for ``*`` (answered by ``public_json``)."""
    tags = _tags(request)
    if tags is None or "*" in tags:
        return None
    return _compared(request, tags, catalog.release(), pictures)


async def not_modified_async(
    request: Request, catalog: PublicCatalog, pictures: SignedPictures | None = None
) -> Response | None:
    """``not_modified`` for an ``async`` route: the release is read on the event loop."""
    tags = _tags(request)
    if tags is None or "*" in tags:
        return None
    return _compared(request, tags, await catalog.release_async(), pictures)


def _tags(request: Request) -> set[str] | None:
    header = request.headers.get("if-none-match")
    if header is None:
        return None
    # Weak comparison (RFC 9110 13.1.2).
    return {tag.strip().removeprefix("W/") for tag in header.split(",")}


def _compared(
    request: Request, tags: set[str], release: Release, pictures: SignedPictures | None
) -> Response | None:
    candidates: list[LinkWindow | None] = [None] if pictures is None else [None, pictures.window]
    for links in candidates:
        if (etag := etag_of(release, links)) in tags:
            return _not_modified(request, etag, links)
    return None


def _not_modified(request: Request, etag: str, links: LinkWindow | None) -> Response:
    return Response(status_code=304, headers={"ETag": etag, "Cache-Control": cache_control(request, links)})


class PublicJSONResponse(JSONResponse):
    """JSON rendered by pydantic-core (Rust: several times faster than ``json.dumps`` on a page of items),
    UTF-8, compact, as Starlette's JSONResponse renders it otherwise."""

    def render(self, content: Any) -> bytes:
        return to_json(content)


def public_json(
    request: Request, document: dict[str, Any], release: Release, pictures: SignedPictures | None = None
) -> Response:
    """The document read, with its ETag and Cache-Control (``pictures``: the signer it was serialized with); 304
    when ``If-None-Match`` names its ETag or is ``*`` (the document exists)."""
    links = pictures.window if pictures is not None and pictures.signed else None
    etag = etag_of(release, links)
    tags = _tags(request)
    if tags is not None and ("*" in tags or etag in tags):
        return _not_modified(request, etag, links)
    return PublicJSONResponse(
        document, headers={"ETag": etag, "Cache-Control": cache_control(request, links)}
    )


def public_redirect(request: Request, location: str, release: Release) -> Response:
    """301 Moved Permanently to ``location``: an item merged into another answers with the item it leads to now.
    The redirect changes only with a release, so it carries the release's ETag and Cache-Control like a document
    (``If-None-Match`` with that ETag was answered 304 before the read); ``If-None-Match: *`` does not match it,
    as the merged item has no current document of its own (RFC 9110 13.1.2)."""
    return Response(
        status_code=301,
        headers={"Location": location, "ETag": etag_of(release), "Cache-Control": cache_control(request)},
    )


def public_page(
    request: Request,
    catalog: PublicCatalog,
    read: Callable[[], Page[T]],
    document: Callable[[Page[T]], dict[str, Any]],
    pictures: SignedPictures | None = None,
) -> Response:
    """A page of a released collection (merchants, categories), or 304 (``not_modified``); ``pictures`` is the
    signer ``document`` serializes with, when the collection's documents carry picture links."""
    if (cached := not_modified(request, catalog, pictures)) is not None:
        return cached
    page = read()
    return public_json(request, document(page), page.release, pictures)


def public_entry(
    request: Request,
    catalog: PublicCatalog,
    read: Callable[[], Detail[T]],
    document: Callable[[T], dict[str, Any]],
    missing: str,
    pictures: SignedPictures | None = None,
) -> Response:
    """One released entry, or 304 (``not_modified``); if_product_query: 404 NOT_FOUND ``missing`` for an unknown
    entry and for one no applied release has published (``If-None-Match: *`` too)."""
    if (cached := not_modified(request, catalog, pictures)) is not None:
        return cached
    detail = read()
    if detail.entry is None:
        raise ApiError(404, "NOT_FOUND", missing)
    return public_json(request, document(detail.entry), detail.release, pictures)
