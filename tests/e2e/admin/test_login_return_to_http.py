"""if_operator_session: the login's ``return_to`` is only ever a path of the admin origin (no open redirect).

Every request goes through the real login over HTTP (``/auth/login`` → the development identity provider →
``/auth/callback``), and the page the callback answers with is then read as a browser reads it: leading and
trailing controls and spaces trimmed, tab, CR and LF dropped anywhere, a backslash read as a slash (the WHATWG
URL parser on an http URL). Wherever that page sends the browser must be on the admin origin.
"""

from __future__ import annotations

import base64
import html
import json
import re
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from prw_api import compose
from prw_api.admin.deps import LOGIN_COOKIE
from prw_api.admin.oidc import DEFAULT_RETURN_TO
from prw_api.devidp import create_dev_idp
from prw_api.server import BackgroundServer
from prw_platform.bootstrap import bootstrap
from prw_platform.config import DevIdpSettings, OperatorOidcSettings, Settings
from tests.e2e.admin.conftest import USERS
from tests.support.postgres import CONTROL, MAIN, fresh_database

#: ``return_to`` values as they appear in the query string, already percent-encoded as an attacker would send them.
FOREIGN_RETURN_TOS = [
    "/%09/evil.example/",
    "/%0A/evil.example/",
    "/%0D/evil.example/",
    "/%0D%0A/evil.example/",
    "/%09%09/evil.example/",
    "%09//evil.example/",
    "%20//evil.example/",
    "/%20/evil.example/",
    "/%0B/evil.example/",
    "/%0C/evil.example/",
    "/%1F/evil.example/",
    "/%7F/evil.example/",
    "/%C2%85/evil.example/",
    "/%C2%A0/evil.example/",
    "/%E2%80%8B/evil.example/",
    "/%E2%80%A8/evil.example/",
    "/%EF%BB%BF/evil.example/",
    "//evil.example/",
    "///evil.example/",
    "/%2F/evil.example/",
    "%2F%2Fevil.example/",
    "/%5Cevil.example/",
    "/%5C/evil.example/",
    "%5C%5Cevil.example/",
    "%5C/evil.example/",
    "/%09%5Cevil.example/",
    "/%2509/evil.example/",
    "/%252F/evil.example/",
    "/%255Cevil.example/",
    "https://evil.example/",
    "HTTPS://evil.example/",
    "http:evil.example",
    "http:/evil.example",
    "https:%2F%2Fevil.example/",
    "javascript:alert(1)",
    "evil.example",
    "",
]
#: Paths of the admin origin: kept as they are.
LOCAL_RETURN_TOS = ["/v1/session", "/console/review?status=awaiting_human", "/console/review#queue"]

_C0_AND_SPACE = "".join(map(chr, range(0x21)))


@pytest.fixture(scope="module")
def admin(
    pg_admin_url: str, pg_templates: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BackgroundServer]:
    """One admin origin and development identity provider for the module: a login only adds a session row."""
    with (
        fresh_database(pg_admin_url, pg_templates[MAIN], "prw_t") as main,
        fresh_database(pg_admin_url, pg_templates[CONTROL], "prw_tc") as control,
        BackgroundServer(create_dev_idp(DevIdpSettings(users=USERS))) as idp,
    ):
        settings = Settings(
            database_url=main,
            control_database_url=control,
            data_dir=tmp_path_factory.mktemp("admin"),
            operator_oidc=OperatorOidcSettings(issuer=idp.url),
        )
        with bootstrap(settings) as platform, BackgroundServer(compose.admin_app(platform)) as server:
            yield server


def _browser_target(admin_url: str, target: str) -> str:
    """Where a browser at ``/auth/callback`` goes for ``target`` (WHATWG URL parsing of an http URL)."""
    cleaned = target.strip(_C0_AND_SPACE)
    for dropped in "\t\n\r":
        cleaned = cleaned.replace(dropped, "")
    return urljoin(f"{admin_url}/auth/callback", cleaned.replace("\\", "/"))


def _callback_targets(page: str) -> list[str]:
    """The targets of the callback page: its meta refresh and its Continue link."""
    refresh = re.search(r'http-equiv="refresh" content="0;url=([^"]*)"', page)
    link = re.search(r'<a href="([^"]*)">Continue</a>', page)
    assert refresh is not None, page
    assert link is not None, page
    return [html.unescape(refresh.group(1)), html.unescape(link.group(1))]


def _log_in(http: httpx.Client, return_to_query: str) -> httpx.Response:
    """The whole login with a raw (already percent-encoded) ``return_to``, ending at the callback's page."""
    return http.get(f"/auth/login?login_hint=rita&return_to={return_to_query}")


@pytest.mark.parametrize("return_to", FOREIGN_RETURN_TOS)
def test_a_return_to_that_is_not_a_local_path_lands_on_the_default_page_of_the_admin_origin(
    admin: BackgroundServer, return_to: str
) -> None:
    with httpx.Client(base_url=admin.url, follow_redirects=True, timeout=30) as http:
        response = _log_in(http, return_to)
    assert response.status_code == 200, response.text
    assert response.url.path == "/auth/callback"
    for target in _callback_targets(response.text):
        landed = urlsplit(_browser_target(admin.url, target))
        assert (landed.scheme, landed.netloc) == ("http", urlsplit(admin.url).netloc), target
        assert target == DEFAULT_RETURN_TO


@pytest.mark.parametrize("return_to", LOCAL_RETURN_TOS)
def test_a_local_return_to_is_where_the_login_lands(admin: BackgroundServer, return_to: str) -> None:
    with httpx.Client(base_url=admin.url, follow_redirects=True, timeout=30) as http:
        response = http.get("/auth/login", params={"login_hint": "rita", "return_to": return_to})
    assert response.status_code == 200, response.text
    assert _callback_targets(response.text) == [return_to, return_to]


def test_a_nul_in_return_to_is_refused_before_any_redirect(admin: BackgroundServer) -> None:
    with httpx.Client(base_url=admin.url, timeout=30) as http:
        response = http.get("/auth/login?login_hint=rita&return_to=/%00/evil.example/")
    assert response.status_code == 422
    assert "location" not in response.headers


def test_a_login_cookie_carrying_a_foreign_return_to_still_lands_on_the_admin_origin(
    admin: BackgroundServer,
) -> None:
    """The login cookie comes back from the browser: one planted with a foreign ``return_to`` (and this login's
    own state, so the login itself succeeds) is checked again at the callback."""
    with httpx.Client(base_url=admin.url, timeout=30) as http:
        started = http.get("/auth/login", params={"login_hint": "rita", "return_to": "/v1/session"})
        assert started.status_code == 302
        login = json.loads(base64.urlsafe_b64decode(http.cookies[LOGIN_COOKIE]))
        planted = {**login, "return_to": "/\t/evil.example/"}
        http.cookies.delete(LOGIN_COOKIE)
        http.cookies.set(LOGIN_COOKIE, base64.urlsafe_b64encode(json.dumps(planted).encode()).decode())
        at_issuer = httpx.get(started.headers["location"], timeout=30)
        assert at_issuer.status_code == 302
        response = http.get(at_issuer.headers["location"])
    assert response.status_code == 200, response.text
    assert _callback_targets(response.text) == [DEFAULT_RETURN_TO, DEFAULT_RETURN_TO]
