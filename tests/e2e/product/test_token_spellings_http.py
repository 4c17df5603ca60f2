"""The product API's signed tokens have one spelling (prw_platform.auth.signed): a released picture's link
(``GET /v1/files/{token}``) and a page cursor (``GET /v1/items?cursor=``) spelled another way that a lenient
base64 decoder reads as the same mac (unused low bits, ``=`` padding, the standard alphabet) are refused with the
same error as a forged mac."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from prw_platform.auth.signed import b64url_decode
from prw_platform.product.public.items import CursorCodec
from prw_platform.storage import FilesystemObjectStore
from tests.e2e.product.catalog import CATALOG, TENANT
from tests.e2e.product.conftest import CURSOR_KEY, error_of, picture_links
from tests.support.token_spellings import SPELLINGS, respell, token_with_url_safe_mac


@dataclass
class TokenUse:
    """How a test gets genuine tokens of one kind (another one for every ``n``) and presents one."""

    issue: Callable[[int], str]
    present: Callable[[str], httpx.Response]


def _document(token: str) -> Any:
    return json.loads(b64url_decode(token.partition(".")[0]))


def _picture_links(http: httpx.Client, store: FilesystemObjectStore) -> TokenUse:
    url = http.get("/v1/items/itm_ssd_p5_1t").json()["pictures"]["main"]["url"]
    issued = str(url).removeprefix("/v1/files/")
    claims = _document(issued)
    assert isinstance(claims, dict)
    links = picture_links(store)  # the server's key: genuine links with later expiries

    def issue(n: int) -> str:
        if n == 0:
            return issued
        picture = {"sha256": claims["s"], "media_type": claims["m"]}
        signed = links.public_picture(TENANT, CATALOG, picture, claims["x"] + n)
        assert signed is not None
        return str(signed["url"]).removeprefix("/v1/files/")

    return TokenUse(issue, lambda token: http.get(f"/v1/files/{token}"))


def _item_cursors(http: httpx.Client) -> TokenUse:
    issued = http.get("/v1/items", params={"limit": 1}).json()["next_cursor"]
    assert issued
    after, fingerprint = _document(issued)
    cursors = CursorCodec(CURSOR_KEY)  # the server's key: genuine cursors after other ids

    def issue(n: int) -> str:
        return str(issued) if n == 0 else cursors.encode_keyed(f"{after}~{n}", fingerprint)

    return TokenUse(issue, lambda cursor: http.get("/v1/items", params={"limit": 1, "cursor": cursor}))


def _forged(token: str) -> str:
    payload, _, mac = token.rpartition(".")
    return f"{payload}.{'B' if mac[0] == 'A' else 'A'}{mac[1:]}"


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("kind", ["picture link", "items cursor"])
def test_a_token_spelled_another_way_is_refused_like_a_forged_mac(
    kind: str, spelling: str, http: httpx.Client, picture_store: FilesystemObjectStore
) -> None:
    tokens = _picture_links(http, picture_store) if kind == "picture link" else _item_cursors(http)
    token = token_with_url_safe_mac(tokens.issue) if spelling == "standard alphabet" else tokens.issue(0)

    accepted = tokens.present(token)
    forged = tokens.present(_forged(token))
    respelled = tokens.present(respell(token, spelling))

    assert accepted.status_code == 200, accepted.text
    assert (
        error_of(forged)
        == {"picture link": (404, "NOT_FOUND", False), "items cursor": (422, "INVALID_QUERY", False)}[kind]
    )
    assert error_of(respelled) == error_of(forged)
