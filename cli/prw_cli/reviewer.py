"""A reviewer over HTTP at the admin origin (if_operator_session, if_review_read, if_review_decision): what
``prw demo`` uses to decide its review cases as an operator would, through the same routes as the console.

It logs in with the authorization code flow like a browser does, following the redirects to the identity provider
and back. Only an identity provider that picks the user from ``login_hint`` without a password (the development
identity provider of ``prw dev`` and ``prw demo``) lets a program log in this way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

#: Where the admin origin answers with the session (its CSRF token) after the login round trip.
SESSION_PATH = "/v1/session"


class ReviewerError(RuntimeError):
    """The admin origin refused a request: its status and error body."""

    def __init__(self, action: str, response: httpx.Response) -> None:
        super().__init__(f"{action}: {response.status_code} {response.text[:500]}")
        self.status = response.status_code


@dataclass(frozen=True, slots=True)
class Decided:
    case_id: str
    action: str
    decision_id: str
    case_revision: int
    #: True when the Idempotency-Key found an earlier decision (a re-run).
    replayed: bool


class Reviewer:
    """An operator session of ``subject`` at ``admin_url``; a context manager."""

    def __init__(self, admin_url: str, subject: str, *, timeout: float = 30.0) -> None:
        self.subject = subject
        self._http = httpx.Client(base_url=admin_url, follow_redirects=True, timeout=timeout)
        try:
            login = self._http.get("/auth/login", params={"login_hint": subject, "return_to": SESSION_PATH})
            if login.status_code != 200:
                raise ReviewerError(f"log in as {subject}", login)
            self._csrf = str(self._get(SESSION_PATH, "read the session")["csrf_token"])
        except BaseException:
            self._http.close()
            raise

    def __enter__(self) -> Reviewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def queue(self, *, status: str = "awaiting_human", limit: int = 200) -> Iterator[dict[str, Any]]:
        """Every case of the active tenant with ``status``, oldest first, following the queue's cursor."""
        cursor: str | None = None
        while True:
            params: dict[str, str | int] = {"status": status, "limit": limit}
            if cursor is not None:
                params["cursor"] = cursor
            page = self._get("/v1/review", "read the review queue", params)
            yield from page["cases"]
            cursor = page.get("next_cursor")
            if cursor is None:
                return

    def case(self, case_id: str) -> dict[str, Any]:
        return self._get(f"/v1/review/{case_id}", f"read case {case_id}")

    def decide(self, case: dict[str, Any], action: str, rationale: str, **fields: Any) -> Decided:
        """``POST /v1/decisions`` on ``case`` (as read) at its revision. The Idempotency-Key names the case and
        its revision, so a retry, or a second run that reads the same revision, returns the first decision."""
        body = {
            "case_id": case["case_id"],
            "expected_revision": case["revision"],
            "action": action,
            "rationale": rationale,
            **fields,
        }
        key = f"review-{case['case_id']}-r{case['revision']}-{action}"
        response = self._http.post(
            "/v1/decisions", json=body, headers={"X-CSRF-Token": self._csrf, "Idempotency-Key": key}
        )
        if response.status_code not in (200, 201):
            raise ReviewerError(f"decide {case['case_id']} ({action})", response)
        created = response.json()
        return Decided(
            case["case_id"],
            action,
            str(created["decision_id"]),
            int(created["case_revision"]),
            replayed=response.status_code == 200,
        )

    def _get(self, path: str, action: str, params: dict[str, str | int] | None = None) -> dict[str, Any]:
        response = self._http.get(path, params=params)
        if response.status_code != 200:
            raise ReviewerError(action, response)
        body: dict[str, Any] = response.json()
        return body
