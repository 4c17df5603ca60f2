"""The admin origin's signed tokens have one spelling (prw_platform.auth.signed): an evidence link
(``GET /v1/evidence/{token}``) and a review queue cursor (``GET /v1/review?cursor=``) spelled another way that
a lenient base64 decoder reads as the same mac (unused low bits, ``=`` padding, the standard alphabet) are
refused with the same error as a forged mac."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
import pytest

from prw_platform.auth.keys import derived_secret
from prw_platform.auth.signed import TokenSigner, b64url_decode
from prw_platform.bootstrap import Platform
from prw_platform.resolver.review.queue import CURSOR_PURPOSE
from tests.e2e.admin.conftest import Cases, MovableClock, Operator
from tests.support.token_spellings import SPELLINGS, respell, token_with_url_safe_mac


@dataclass
class TokenUse:
    """How a test gets genuine tokens of one kind (another one for every ``n``) and presents one."""

    issue: Callable[[int], str]
    present: Callable[[str], httpx.Response]


def _evidence_links(vic: Operator, cases: Cases, clock: MovableClock) -> TokenUse:
    case_id = cases.open()["case_id"]

    def issue(n: int) -> str:
        clock.advance(
            timedelta(seconds=n and 1)
        )  # a link expires a fixed time after it is issued: another mac
        [link] = vic.http.get(f"/v1/review/{case_id}").json()["evidence"]
        return str(link["url"]).removeprefix("/v1/evidence/")

    return TokenUse(issue, lambda token: vic.http.get(f"/v1/evidence/{token}"))


def _review_cursors(vic: Operator, cases: Cases, platform: Platform) -> TokenUse:
    cases.open(), cases.open()
    issued = vic.http.get("/v1/review", params={"limit": 1}).json()["next_cursor"]
    assert issued
    created_at, case_id, fingerprint = json.loads(b64url_decode(issued.partition(".")[0]))
    # The deployment's own cursor key (prw_platform.composition.resolver): genuine cursors after other instants.
    signer = TokenSigner(derived_secret(platform.token_signing_key, "prw review v1"), CURSOR_PURPOSE)

    def issue(n: int) -> str:
        if n == 0:
            return str(issued)
        after = datetime.fromisoformat(created_at) + timedelta(microseconds=n)
        return signer.sign([after.isoformat(), case_id, fingerprint])

    return TokenUse(issue, lambda cursor: vic.http.get("/v1/review", params={"limit": 1, "cursor": cursor}))


def _forged(token: str) -> str:
    payload, _, mac = token.rpartition(".")
    return f"{payload}.{'B' if mac[0] == 'A' else 'A'}{mac[1:]}"


def _error(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("kind", ["evidence link", "review cursor"])
def test_a_token_spelled_another_way_is_refused_like_a_forged_mac(
    kind: str,
    spelling: str,
    login: Callable[[str], Operator],
    cases: Cases,
    clock: MovableClock,
    admin_platform: Platform,
) -> None:
    vic = login("vic")
    tokens = (
        _evidence_links(vic, cases, clock)
        if kind == "evidence link"
        else _review_cursors(vic, cases, admin_platform)
    )
    token = token_with_url_safe_mac(tokens.issue) if spelling == "standard alphabet" else tokens.issue(0)

    accepted = tokens.present(token)
    forged = tokens.present(_forged(token))
    respelled = tokens.present(respell(token, spelling))

    assert accepted.status_code == 200, accepted.text
    assert (
        _error(forged)
        == {"evidence link": (404, "NOT_FOUND"), "review cursor": (422, "INVALID_CURSOR")}[kind]
    )
    assert _error(respelled) == _error(forged)
