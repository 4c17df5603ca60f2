"""The development identity provider (``prw dev``, the demo) over real HTTP, as a hostile client meets it: codes
go only to a registered redirect URI (a wrong one is an error page, never a redirect), and a 100 MB body is 413
before it is read, so the process that serves it (under ``prw dev``, the one that also serves intake, product and
admin) grows by far less than the body.

Memory is read from ``/proc/<pid>/status`` (VmHWM: the peak resident set), as in test_body_limit_memory.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from prw_api.devidp import create_dev_idp
from prw_api.server import BackgroundServer
from prw_platform.config import DevIdpSettings

REPO = Path(__file__).resolve().parents[3]
MIB = 1024 * 1024
BODY_BYTES = 100 * MIB
#: The growth a refused body may cost: far less than the body (reading it would cost more than the body).
MAX_GROWTH_BYTES = 25 * MIB

FOREIGN_REDIRECT_URIS = [
    "http://evil.example/auth/callback",
    "https://evil.example/auth/callback",
    "//evil.example/auth/callback",
    "http://127.0.0.1:8083@evil.example/auth/callback",
    "http://evil.example\\@127.0.0.1:8083/auth/callback",
    "http://evil.example%5C@127.0.0.1:8083/auth/callback",
    "http://127.0.0.1.evil.example/auth/callback",
    "http://127.0.0.1:8083.evil.example/auth/callback",
    "https://127.0.0.1:8083/auth/callback",
    "http://127.0.0.1:8083/other",
    "http://127.0.0.1:8083/auth/callback/../../other",
    "http://127.0.0.1:8083/auth/callback?next=//evil.example",
    "http://127.0.0.1:8083/auth/callback#evil",
    "http://127.0.0.1:8083/auth/callback\t",
    "http://127.0.0.1:99999999/auth/callback",
    "javascript:alert(1)//127.0.0.1/auth/callback",
]
#: The defaults (``PRW_DEV_IDP__REDIRECT_URIS``): the admin origin's callback on loopback, on any port.
REGISTERED_REDIRECT_URIS = [
    "http://127.0.0.1:8083/auth/callback",
    "http://127.0.0.1/auth/callback",
    "http://localhost:1/auth/callback",
    "http://[::1]:65535/auth/callback",
]


def _authorize(redirect_uri: str) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": "prw-admin",
        "redirect_uri": redirect_uri,
        "state": "state-of-this-login",
        "nonce": "nonce-of-this-login",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "login_hint": "rita",
    }


@pytest.fixture(scope="module")
def idp() -> Iterator[BackgroundServer]:
    with BackgroundServer(create_dev_idp(DevIdpSettings())) as server:
        yield server


def _authorize_both_ways(idp: BackgroundServer, redirect_uri: str) -> list[httpx.Response]:
    """The authorization request as a link (GET) and as the login form's post (POST)."""
    with httpx.Client(base_url=idp.url, timeout=30) as http:
        return [
            http.get("/authorize", params=_authorize(redirect_uri)),
            http.post("/authorize", data=_authorize(redirect_uri)),
        ]


@pytest.mark.parametrize("redirect_uri", FOREIGN_REDIRECT_URIS)
def test_an_unregistered_redirect_uri_is_an_error_page_never_a_redirect(
    idp: BackgroundServer, redirect_uri: str
) -> None:
    for response in _authorize_both_ways(idp, redirect_uri):
        assert response.status_code == 400, response.text
        assert "location" not in response.headers
        assert "is not registered" in response.text


@pytest.mark.parametrize("redirect_uri", REGISTERED_REDIRECT_URIS)
def test_a_registered_loopback_redirect_uri_gets_the_code_on_any_port(
    idp: BackgroundServer, redirect_uri: str
) -> None:
    for response in _authorize_both_ways(idp, redirect_uri):
        assert response.status_code == 302, response.text
        assert response.headers["location"].startswith(f"{redirect_uri}?code=")


def test_a_configured_redirect_uri_is_the_only_one() -> None:
    registered = "https://admin.example.test/auth/callback"
    with (
        BackgroundServer(create_dev_idp(DevIdpSettings(redirect_uris=[registered]))) as server,
        httpx.Client(base_url=server.url, timeout=30) as http,
    ):
        accepted = http.get("/authorize", params=_authorize(registered))
        refused = [
            http.get("/authorize", params=_authorize(uri))
            for uri in (
                "https://admin.example.test:8443/auth/callback",
                "http://admin.example.test/auth/callback",
                "http://127.0.0.1:8083/auth/callback",
            )
        ]
    assert accepted.status_code == 302
    assert accepted.headers["location"].startswith(f"{registered}?code=")
    assert [r.status_code for r in refused] == [400, 400, 400]


@pytest.fixture
def idp_process() -> Iterator[tuple[str, int]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.idp_process"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = json.loads(process.stdout.readline())
        yield ready["url"], ready["pid"]
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _peak_memory(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == "VmHWM":
            return int(value.split()[0]) * 1024
    raise AssertionError(f"no VmHWM for process {pid}")


def _post_with_curl(url: str, body: Path, *, chunked: bool) -> tuple[int, str]:
    """The body is sent by another process, so the memory measured is the provider's, not this test's."""
    # "Expect:" switches off curl's 100-continue handshake: the whole body is sent whether or not the server
    # asks for it, as a hostile client would.
    headers = ["-H", "Content-Type: application/x-www-form-urlencoded", "-H", "Expect:"]
    if chunked:
        headers += ["-H", "Transfer-Encoding: chunked"]
    done = subprocess.run(
        ["curl", "-sS", "-o", "-", "-w", "\\n%{http_code}", *headers, "--data-binary", f"@{body}", url],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    text, _, status = done.stdout.rpartition("\n")
    return int(status), text


def test_a_100_mb_body_is_413_without_growing_the_process(
    idp_process: tuple[str, int], tmp_path: Path
) -> None:
    url, pid = idp_process
    body = tmp_path / "big.form"
    with body.open("wb") as out:
        out.write(b"grant_type=authorization_code&code=")
        out.write(b"a" * (BODY_BYTES - out.tell()))
    with httpx.Client(base_url=url, timeout=30) as http:
        for _ in range(3):  # warm up: the first requests' imports and buffers are the idle state
            http.post("/token", data={"grant_type": "authorization_code", "code": "unknown"})
            http.get("/.well-known/openid-configuration")
        idle = _peak_memory(pid)

        statuses = {
            (path, chunked): _post_with_curl(f"{url}{path}", body, chunked=chunked)[0]
            for path in ("/token", "/authorize")
            for chunked in (False, True)
        }
        growth = _peak_memory(pid) - idle
        still_serving = http.get("/.well-known/openid-configuration")
    print(
        f"\ndevelopment identity provider: peak growth {growth / MIB:.1f} MiB after four 100 MB bodies: {statuses}"
    )
    assert set(statuses.values()) == {413}
    assert growth < MAX_GROWTH_BYTES
    assert still_serving.status_code == 200
