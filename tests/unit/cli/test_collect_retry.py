"""The collector client's retry policy (seed 003: full-jitter exponential backoff, base 1 s, cap 5 min, 8 attempts;
retry 408, 429, 5xx and network errors, honouring Retry-After; never another 4xx; the same Idempotency-Key on every
attempt; stop on CREDENTIAL_REVOKED), driven through ``httpx.MockTransport`` with an injected sleep and random."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime

import httpx
import pytest

from prw_cli.collect import (
    CollectorClient,
    CredentialRevoked,
    IntakeError,
    RetryEvent,
    RetryPolicy,
    is_retryable_status,
    parse_retry_after,
)

SHA = "ab" * 32


def _token() -> str:
    claims = (
        base64.urlsafe_b64encode(json.dumps({"sub": "ci_a", "worker": "cw_a"}).encode()).decode().rstrip("=")
    )
    return f"e30.{claims}.sig"


Handler = Callable[[httpx.Request], httpx.Response]


def token_answer(expires_in: int = 900) -> httpx.Response:
    return httpx.Response(200, json={"access_token": _token(), "expires_in": expires_in})


class Script:
    """A fake intake: the token endpoint always answers; other requests take the next scripted answer."""

    def __init__(self, *answers: httpx.Response | Exception, expires_in: int = 900) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.tokens = 0
        self.expires_in = expires_in

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/oauth/token":
            self.tokens += 1
            return token_answer(self.expires_in)
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def error(status: int, code: str, **headers: str) -> httpx.Response:
    return httpx.Response(
        status, json={"error": {"code": code, "message": code, "retryable": False}}, headers=headers
    )


RECEIPT = {"receipt_id": "rcpt_1", "capture_id": "cap_1", "status": "stored"}


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client_for(script: Script, sleeps: Sleeps, draw: float = 0.5, attempts: int = 8) -> CollectorClient:
    policy = RetryPolicy(1.0, 300.0, attempts, sleep=sleeps, random=lambda: draw)
    return CollectorClient(
        "http://intake.test", "cc_1", "secret", retry=policy, transport=httpx.MockTransport(script)
    )


def submit(client: CollectorClient) -> object:
    return client.capture(
        source_id="src_a", native_record_id="r1", observed_at="2026-10-10T00:00:00Z", artifacts=[SHA]
    )


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_408_429_and_5xx_are_retried_with_the_same_idempotency_key_and_body(status: int) -> None:
    script, sleeps = (
        Script(error(status, "X"), error(status, "X"), httpx.Response(202, json=RECEIPT)),
        Sleeps(),
    )
    with client_for(script, sleeps) as client:
        captured = submit(client)
    assert captured.attempts == 3  # type: ignore[attr-defined]
    assert len(script.requests) == 3
    assert len({r.headers["Idempotency-Key"] for r in script.requests}) == 1
    assert len({r.content for r in script.requests}) == 1
    assert len(sleeps) == 2


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 422])
def test_any_other_4xx_is_sent_once_and_reported(status: int) -> None:
    script, sleeps = Script(error(status, "REFUSED")), Sleeps()
    with client_for(script, sleeps) as client, pytest.raises(IntakeError) as raised:
        submit(client)
    assert (raised.value.status, raised.value.code, raised.value.attempts) == (status, "REFUSED", 1)
    assert len(script.requests) == 1
    assert sleeps == []


def test_network_errors_are_retried() -> None:
    script = Script(
        httpx.ConnectError("refused"),
        httpx.RemoteProtocolError("peer closed"),
        httpx.Response(202, json=RECEIPT),
    )
    events: list[RetryEvent] = []
    with client_for(script, Sleeps()) as client:
        client.on_retry = events.append
        assert submit(client).attempts == 3  # type: ignore[attr-defined]
    assert [e.reason for e in events] == ["connect_error", "remote_protocol_error"]


def test_attempts_are_capped_and_the_last_failure_is_reported() -> None:
    script, sleeps = Script(*[error(503, "STORAGE_UNAVAILABLE")] * 8), Sleeps()
    with client_for(script, sleeps) as client, pytest.raises(IntakeError) as raised:
        submit(client)
    assert (raised.value.status, raised.value.attempts) == (503, 8)
    assert len(script.requests) == 8
    assert len(sleeps) == 7


def test_network_failures_are_capped_too() -> None:
    script = Script(*[httpx.ReadTimeout("slow")] * 3)
    with client_for(script, Sleeps(), attempts=3) as client, pytest.raises(IntakeError) as raised:
        submit(client)
    assert (raised.value.status, raised.value.code, raised.value.attempts) == (None, "read_timeout", 3)


def test_backoff_is_full_jitter_doubling_from_1_s_up_to_the_5_minute_cap() -> None:
    top = RetryPolicy(random=lambda: 1.0)
    assert [top.backoff(n) for n in range(1, 11)] == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300]
    assert RetryPolicy(random=lambda: 0.0).backoff(7) == 0.0
    draws = iter([0.25, 0.75])
    jittered = RetryPolicy(random=lambda: next(draws))
    assert jittered.backoff(3) == 1.0  # 0.25 * 4
    assert jittered.backoff(3) == 3.0  # 0.75 * 4
    assert RetryPolicy().attempts == 8


def test_sleeps_lie_within_the_jitter_bounds() -> None:
    script, sleeps = Script(*[error(500, "INTERNAL")] * 4, httpx.Response(202, json=RECEIPT)), Sleeps()
    with client_for(script, sleeps, draw=0.999) as client:
        submit(client)
    assert [0 <= s <= 2 ** (n - 1) for n, s in enumerate(sleeps, start=1)] == [True] * 4
    assert sleeps[-1] > 7.9


def test_retry_after_is_honoured_as_a_floor() -> None:
    script = Script(
        error(429, "RATE_LIMITED", **{"Retry-After": "7"}),
        error(503, "STORAGE_UNAVAILABLE", **{"Retry-After": "0"}),
        httpx.Response(202, json=RECEIPT),
    )
    sleeps = Sleeps()
    with client_for(script, sleeps, draw=0.5) as client:
        submit(client)
    assert sleeps == [7.0, 1.0]  # max(Retry-After 7, 0.5 * 1); max(0, 0.5 * 2)


def test_retry_after_is_bounded_by_the_cap_and_read_as_seconds_or_an_http_date() -> None:
    assert RetryPolicy(random=lambda: 0.0).delay(1, retry_after=86400) == 300
    now = datetime(2026, 10, 10, 0, 0, 0, tzinfo=UTC)
    assert parse_retry_after("Sat, 10 Oct 2026 00:00:30 GMT", now=lambda: now) == 30
    assert parse_retry_after("120") == 120
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_which_statuses_retry() -> None:
    assert [s for s in range(400, 600) if is_retryable_status(s)] == [408, 429, *range(500, 600)]


def test_credential_revoked_is_not_retried_and_says_stop() -> None:
    script, sleeps = Script(error(401, "CREDENTIAL_REVOKED")), Sleeps()
    with client_for(script, sleeps) as client, pytest.raises(CredentialRevoked) as raised:
        submit(client)
    assert raised.value.code == "CREDENTIAL_REVOKED"
    assert sleeps == []


def test_a_refused_client_at_the_token_endpoint_is_a_revoked_credential() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": "invalid_client"})

    with (
        CollectorClient("http://intake.test", "cc_1", "s", transport=httpx.MockTransport(refuse)) as client,
        pytest.raises(CredentialRevoked),
    ):
        client.token()


def test_the_token_is_fetched_again_before_it_expires() -> None:
    now = [0.0]
    script = Script(*[httpx.Response(202, json=RECEIPT)] * 3, expires_in=100)
    policy = RetryPolicy(sleep=Sleeps())
    with CollectorClient(
        "http://intake.test",
        "cc_1",
        "s",
        retry=policy,
        transport=httpx.MockTransport(script),
        clock=lambda: now[0],
    ) as client:
        submit(client)
        now[0] = 79.0
        submit(client)
        assert script.tokens == 1
        now[0] = 80.0  # 80 % of expires_in: renew before the token can expire in flight
        submit(client)
        assert script.tokens == 2
        assert client.instance_id == "ci_a"


def test_a_server_without_the_registration_route_skips_registration() -> None:
    script = Script(
        httpx.Response(404, json={"detail": "Not Found"}), httpx.Response(404, json={"detail": "Not Found"})
    )
    with client_for(script, Sleeps()) as client:
        assert client.register(["src_a"]) is None
        assert client.heartbeat({"outcome": "running"}, at="2026-10-10T00:00:00Z") is None
    assert [r.url.path for r in script.requests] == ["/v1/workers/register", "/v1/workers/ci_a/heartbeat"]
    assert json.loads(script.requests[0].content)["instance_id"] == "ci_a"


def test_a_heartbeat_is_retried_once_after_5_s_then_skipped() -> None:
    script, sleeps = Script(error(503, "UNAVAILABLE"), error(503, "UNAVAILABLE")), Sleeps()
    with client_for(script, sleeps) as client, pytest.raises(IntakeError):
        client.heartbeat({}, at="2026-10-10T00:00:00Z")
    assert sleeps == [5.0]
