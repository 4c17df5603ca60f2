"""ETag and Cache-Control of the public reads, from the release served (if_product_query: the release pointer
changes every public document at once, so the release identifies a document's version for its URL).

The ETag is ``"g<generation>r<publication revision>"``; a request whose ``If-None-Match`` names it gets 304 Not
Modified after one query for the release, without its body being built (RFC 9110 13.1.2, 15.4.5).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import Request, Response
from fastapi.responses import JSONResponse
from pydantic_core import to_json

from prw_api.errors import ApiError
from prw_platform.services import Detail, Page, PublicCatalog, Release

T = TypeVar("T")


def etag_of(release: Release) -> str:
    return f'"g{release.generation}r{release.publication_revision or 0}"'


def cache_control(request: Request) -> str:
    return f"public, max-age={request.app.state.settings.product_cache_max_age_seconds}"


def not_modified(request: Request, catalog: PublicCatalog) -> Response | None:
    """304 when ``If-None-Match`` names the current release's ETag (or is ``*``); None otherwise."""
    header = request.headers.get("if-none-match")
    if header is None:
        return None
    return _compared(request, header, catalog.release())


async def not_modified_async(request: Request, catalog: PublicCatalog) -> Response | None:
    """``not_modified`` for an ``async`` route: the release is read on the event loop."""
    header = request.headers.get("if-none-match")
    if header is None:
        return None
    return _compared(request, header, await catalog.release_async())


def _compared(request: Request, header: str, release: Release) -> Response | None:
    etag = etag_of(release)
    tags = {tag.strip().removeprefix("W/") for tag in header.split(",")}
    if "*" in tags or etag in tags:
        return Response(status_code=304, headers={"ETag": etag, "Cache-Control": cache_control(request)})
    return None


class PublicJSONResponse(JSONResponse):
    """JSON rendered by pydantic-core (Rust: several times faster than ``json.dumps`` on a page of items),
    UTF-8, compact, as Starlette's JSONResponse renders it otherwise."""

    def render(self, content: Any) -> bytes:
        return to_json(content)


def public_json(request: Request, document: dict[str, Any], release: Release) -> JSONResponse:
    return PublicJSONResponse(
        document, headers={"ETag": etag_of(release), "Cache-Control": cache_control(request)}
    )


def public_page(
    request: Request,
    catalog: PublicCatalog,
    read: Callable[[], Page[T]],
    document: Callable[[Page[T]], dict[str, Any]],
) -> Response:
    """A page of a released collection (merchants, categories), or 304 (``not_modified``)."""
    if (cached := not_modified(request, catalog)) is not None:
        return cached
    page = read()
    return public_json(request, document(page), page.release)


def public_entry(
    request: Request,
    catalog: PublicCatalog,
    read: Callable[[], Detail[T]],
    document: Callable[[T], dict[str, Any]],
    missing: str,
) -> Response:
    """One released entry, or 304 (``not_modified``); if_product_query: 404 NOT_FOUND ``missing`` for an unknown
    entry and for one no applied release has published."""
    if (cached := not_modified(request, catalog)) is not None:
        return cached
    detail = read()
    if detail.entry is None:
        raise ApiError(404, "NOT_FOUND", missing)
    return public_json(request, document(detail.entry), detail.release)
