"""The reviewer client ``prw demo`` plays (prw_cli.reviewer) against the served admin origin: it logs in through
the development identity provider, reads the queue, decides at the case's revision, and reports refusals."""

from __future__ import annotations

import pytest

from prw_api.server import BackgroundServer
from prw_cli.reviewer import Reviewer, ReviewerError
from tests.e2e.admin.conftest import Cases


def test_the_reviewer_reads_the_queue_and_decides_once_per_revision(
    admin: BackgroundServer, cases: Cases
) -> None:
    opened = cases.open()

    with Reviewer(admin.url, "rita") as reviewer:
        (summary,) = reviewer.queue()
        case = reviewer.case(summary["case_id"])
        assert (case["case_id"], case["revision"]) == (opened["case_id"], opened["revision"])

        first = reviewer.decide(case, "create_item", "a product the catalog does not have")
        again = reviewer.decide(case, "create_item", "a product the catalog does not have")

        assert (first.action, first.replayed, first.case_revision) == (
            "create_item",
            False,
            case["revision"] + 1,
        )
        assert (again.decision_id, again.replayed) == (first.decision_id, True)
        assert list(reviewer.queue()) == []
        # Another decision at the revision it read is stale now: 409, never a second decision.
        with pytest.raises(ReviewerError) as stale:
            reviewer.decide(case, "reject", "changed my mind")
        assert stale.value.status == 409
    # The item's automatic decision, the rule's decision that opened the case, and the reviewer's one.
    assert cases.count("resolver.decision") == 3


def test_a_viewer_may_read_the_queue_but_not_decide(admin: BackgroundServer, cases: Cases) -> None:
    cases.open()

    with Reviewer(admin.url, "vic") as viewer:
        (summary,) = viewer.queue()
        with pytest.raises(ReviewerError) as refused:
            viewer.decide(viewer.case(summary["case_id"]), "reject", "not mine to decide")

    assert refused.value.status == 403


def test_an_unknown_user_cannot_log_in(admin: BackgroundServer) -> None:
    with pytest.raises(ReviewerError):
        Reviewer(admin.url, "nobody")
