"""Improvement replays over real HTTP and the real replay stage (seed 003 if_replay_job):
``POST /v1/improvements/{id}/replays`` fans out one resolution.replay.v1 message per selected capture, the
``replay`` stage re-runs each stored capture with the pinned versions (never re-fetching) and records a diff, and
``GET /v1/replays/{id}`` serves its summary. A dry run provably writes nothing outside its diff. One test per
error row: 403 FORBIDDEN (role; apply without approval), 409 REPLAY_IN_PROGRESS, 422 UNKNOWN_ADAPTER_VERSION, and
the consumer's DLQ for a capture not in the tenant, a malformed message and a missing pinned version."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dagster as dg
import httpx
import pytest

from prw_orchestration.definitions import build_definitions
from prw_orchestration.resources import PlatformResource
from prw_platform.bootstrap import Platform
from prw_platform.config import Settings
from prw_platform.contracts import ResolutionReplay
from prw_platform.db.database import Database
from prw_platform.plugins import Artifact, CaptureView
from prw_platform.resolver.improvements import Improvement, insert_improvement
from prw_platform.runtime import Budget, drain, run_stage
from prw_platform.storage import ObjectStore
from tests.e2e.admin.conftest import TENANT, Cases, Operator
from tests.e2e.admin.test_admin_reads_http import _census
from tests.integration.resolution.pipeline import CATALOG, SOURCE, page

Login = Callable[[str], Operator]
REPLAY_TABLES = ("resolver.replay", "resolver.replay_capture")


@pytest.fixture
def store(admin_platform: Platform) -> ObjectStore:
    """The captures' bytes in the admin platform's own store, which the replay reads."""
    return admin_platform.store


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


def _post(operator: Operator, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return operator.http.post(path, json=body, headers={"X-CSRF-Token": operator.csrf})


def _improvement(ada: Operator, adapter: str, **selection: Any) -> str:
    body = {
        "catalog_id": CATALOG,
        "adapter_version": adapter,
        "selection": selection or {"source_id": SOURCE},
        "rationale": f"re-read with {adapter}",
    }
    created = _post(ada, "/v1/improvements", body)
    assert created.status_code == 201, created.text
    return str(created.json()["improvement_id"])


def _drain(platform: Platform) -> None:
    run_stage(platform, "replay", Budget(seconds=60))


def _outside_replays(census: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in census.items() if k not in REPLAY_TABLES}


def test_a_dry_run_diffs_every_selected_capture_and_writes_nothing_else(
    login: Login, cases: Cases, owner: Database, admin_platform: Platform
) -> None:
    cases.open()
    cases.open()
    ada = login("ada")
    improvement_id = _improvement(ada, "pa_schemaorg@3.0.0")
    before = _census(owner, admin_platform.settings.data_dir)

    requested = _post(ada, f"/v1/improvements/{improvement_id}/replays")
    assert requested.status_code == 202, requested.text
    replay = requested.json()
    assert (replay["mode"], replay["status"], replay["captures"], replay["enqueued"]) == (
        "dry_run",
        "queued",
        3,
        3,
    )
    assert replay["preserves_observed_at"] is True
    _drain(admin_platform)

    after = _census(owner, admin_platform.settings.data_dir)
    detail = login("vic").http.get(f"/v1/replays/{replay['replay_id']}").json()

    # Only the replay's own rows: no claim, result, decision, case, outbox row, object or message is left.
    assert _outside_replays(after) == _outside_replays(before)
    assert (after["resolver.replay"], after["resolver.replay_capture"]) == (1, 3)
    assert (detail["status"], detail["settled"], detail["failed"]) == ("completed", 3, 0)
    # The same version the captures were resolved with reproduces their claims and attributes exactly.
    assert detail["summary"]["claims"] == 0
    assert detail["summary"]["attributes"] == 0
    assert detail["summary"]["errors"] == 0
    listed = login("vic").http.get(f"/v1/improvements/{improvement_id}").json()["replays"]
    assert [(r["replay_id"], r["status"]) for r in listed] == [(replay["replay_id"], "completed")]


def test_a_replay_pinned_to_the_older_version_reproduces_its_claims(
    login: Login, cases: Cases, admin_platform: Platform, owner: Database
) -> None:
    cases.item()
    # A page where the versions differ: 1.1.0 and later infer availability from the offer, 1.0.0 does not.
    offer_page = page("schemaorg_examples/eg-0011.jsonld.html")
    capture_id = cases.collector.submit(offer_page, record="eg-0011")
    cases.resolution.run()
    ada = login("ada")
    improvement_id = _improvement(ada, "pa_schemaorg@1.0.0", capture_ids=[capture_id])
    replay_id = _post(ada, f"/v1/improvements/{improvement_id}/replays").json()["replay_id"]
    _drain(admin_platform)

    row = owner.run(
        lambda conn: conn.execute(
            "SELECT diff FROM resolver.replay_capture WHERE replay_id = %s", (replay_id,)
        ).fetchone()
    )
    assert row is not None
    diff = row["diff"]
    stored = owner.run(
        lambda conn: conn.execute(
            """SELECT c.attribute, c.value FROM resolver.extracted_claim c
               JOIN resolver.resolution_result r USING (tenant_id, job_id)
               WHERE r.capture_id = %s ORDER BY c.ordinal""",
            (capture_id,),
        ).fetchall()
    )
    # What pa_schemaorg@1.0.0 itself reads from the stored bytes, run directly.
    adapter = admin_platform.registry.adapter("pa_schemaorg@1.0.0")
    view = CaptureView(capture_id=capture_id, source_id=SOURCE, media_type="text/html", url=None)
    direct = [
        {"attribute": c.attribute, "value": c.value}
        for c in adapter.extract(view, [Artifact("a", "-", "text/html", offer_page)]).claims
    ]
    before = [{"attribute": r["attribute"], "value": r["value"]} for r in stored]

    assert diff["adapter"] == {"before": "pa_schemaorg@3.0.0", "after": "pa_schemaorg@1.0.0"}
    assert diff["claims"]["added"] == [c for c in direct if c not in before]
    assert diff["claims"]["removed"] == [c for c in before if c not in direct]
    assert {"attribute": "core:availability", "value": "InStock"} in diff["claims"]["removed"]
    assert diff["outcome_changed"] is True


def test_replay_errors_and_nothing_is_written_on_a_refusal(
    login: Login, cases: Cases, owner: Database, admin_platform: Platform
) -> None:
    cases.open()
    ada, rita = login("ada"), login("rita")
    improvement_id = _improvement(ada, "pa_schemaorg@1.1.0")
    untouched = _census(owner, admin_platform.settings.data_dir)

    _error(
        _post(rita, f"/v1/improvements/{improvement_id}/replays"), 403, "FORBIDDEN"
    )  # operator_admin required
    _error(
        _post(ada, f"/v1/improvements/{improvement_id}/replays", {"mode": "apply"}), 403, "FORBIDDEN"
    )  # a draft
    _error(_post(ada, "/v1/improvements/imp_nowhere/replays"), 404, "NOT_FOUND")
    assert _census(owner, admin_platform.settings.data_dir) == untouched

    first = _post(ada, f"/v1/improvements/{improvement_id}/replays")
    assert first.status_code == 202
    _error(_post(ada, f"/v1/improvements/{improvement_id}/replays"), 409, "REPLAY_IN_PROGRESS")
    _drain(admin_platform)
    assert (
        _post(ada, f"/v1/improvements/{improvement_id}/replays").status_code == 202
    )  # the first one finished

    # An improvement whose pinned adapter is no longer installed.
    gone = Improvement(
        tenant_id=TENANT,
        catalog_id=CATALOG,
        improvement_id="imp_uninstalled",
        adapter_version="pa_schemaorg@9.9.9",
        profile_version=None,
        definition_version=None,
        selection={"source_id": SOURCE},
        status="draft",
        created_by="operator:zed",
        created_at=datetime.now(UTC),
    )
    owner.run(lambda conn: insert_improvement(conn, gone))
    _error(_post(ada, "/v1/improvements/imp_uninstalled/replays"), 422, "UNKNOWN_ADAPTER_VERSION")

    abandoned = _improvement(ada, "pa_schemaorg@1.0.0")
    assert _post(ada, f"/v1/improvements/{abandoned}/abandon", {"rationale": "no"}).status_code == 200
    _error(_post(ada, f"/v1/improvements/{abandoned}/replays"), 409, "INVALID_TRANSITION")


def test_apply_re_resolves_through_the_accept_path_and_the_public_catalog_waits_for_a_release(
    login: Login, cases: Cases, owner: Database, admin_platform: Platform
) -> None:
    ada, rita, vic = login("ada"), login("rita"), login("vic")
    switched = ada.http.put(
        f"/v1/catalogs/{CATALOG}/release-policy",
        json={"release_policy": "manual", "rationale": "publish only what an operator releases"},
        headers={"X-CSRF-Token": ada.csrf},
    )
    assert switched.status_code == 200, switched.text
    case = cases.open()
    improvement_id = _improvement(ada, "pa_schemaorg@1.0.0", capture_ids=[case["capture_id"]])
    _error(_post(ada, f"/v1/improvements/{improvement_id}/replays", {"mode": "apply"}), 403, "FORBIDDEN")
    assert _post(rita, f"/v1/improvements/{improvement_id}/approve", {"rationale": "ok"}).status_code == 200
    drain(admin_platform)
    public_before = _public(owner)
    decisions_before = owner.run(
        lambda conn: conn.execute("SELECT count(*) AS n FROM resolver.decision").fetchone()
    )

    requested = _post(ada, f"/v1/improvements/{improvement_id}/replays", {"mode": "apply"})
    assert requested.status_code == 202, requested.text
    replay_id = requested.json()["replay_id"]
    _drain(admin_platform)
    drain(admin_platform)  # the new attempt group through extract, normalize, identity, relay and apply

    detail = vic.http.get(f"/v1/replays/{replay_id}").json()
    assert (detail["mode"], detail["status"]) == ("apply", "completed")
    assert vic.http.get(f"/v1/improvements/{improvement_id}").json()["status"] == "applied"
    jobs = owner.run(
        lambda conn: conn.execute(
            """SELECT stage, status, message ->> 'trace_id' AS trace, message -> 'pins' ->> 'adapter' AS pin
               FROM resolver.resolution_job WHERE capture_id = %s AND attempt_group = 2 ORDER BY stage""",
            (case["capture_id"],),
        ).fetchall()
    )
    assert [(j["stage"], j["status"]) for j in jobs] == [
        ("extract", "completed"),
        ("identity", "completed"),
        ("normalize", "completed"),
    ]
    assert {(j["trace"], j["pin"]) for j in jobs} == {
        (f"replay:{replay_id}:{improvement_id}", "pa_schemaorg@1.0.0")
    }
    # The accept path decided (here: a review case, as the page names no strong identifier), with the replay
    # and the improvement as its evidence beside the capture.
    decision = owner.run(
        lambda conn: conn.execute(
            "SELECT action, actor, evidence FROM resolver.decision ORDER BY created_at DESC LIMIT 1"
        ).fetchone()
    )
    assert decision is not None
    assert decision["actor"].startswith("rule:")
    assert set(decision["evidence"]) >= {case["capture_id"], replay_id, improvement_id}
    decisions_after = owner.run(
        lambda conn: conn.execute("SELECT count(*) AS n FROM resolver.decision").fetchone()
    )
    assert decisions_after["n"] == decisions_before["n"] + 1
    # Nothing public changed: the catalog publishes only what a release authorizes.
    assert _public(owner) == public_before


def _public(owner: Database) -> dict[str, int]:
    return owner.run(
        lambda conn: {
            t: conn.execute(f"SELECT count(*) AS n FROM product.{t}").fetchone()["n"]  # noqa: S608
            for t in ("public_item", "public_listing")
        }
    )


def _message(platform: Platform, owner: Database, capture_id: str, **changes: Any) -> dict[str, Any]:
    row = owner.run(lambda conn: conn.execute("SELECT replay_id FROM resolver.replay LIMIT 1").fetchone())
    assert row is not None
    sha = "a" * 64
    message = ResolutionReplay(
        job_id=f"{row['replay_id']}:{capture_id}",
        replay_id=row["replay_id"],
        improvement_id="imp_x",
        tenant_id=TENANT,
        catalog_id=CATALOG,
        capture_id=capture_id,
        artifacts=(
            {
                "artifact_id": "a",
                "ref": f"r2://evidence-private/{TENANT}/{sha}",
                "sha256": sha,
                "media_type": "text/html",
                "bytes": 1,
            },
        ),  # type: ignore[arg-type]
        pins={"adapter": "pa_schemaorg@1.1.0"},  # type: ignore[arg-type]
        mode="dry_run",
        requested_by="operator:ada",
        enqueued_at=datetime.now(UTC),
        history_epoch="h",
    ).to_message()
    message.update(changes)
    return message


def test_the_consumer_dead_letters_what_it_must_not_replay_and_absorbs_redeliveries(
    login: Login, cases: Cases, owner: Database, admin_platform: Platform
) -> None:
    case = cases.open()
    ada = login("ada")
    improvement_id = _improvement(ada, "pa_schemaorg@1.1.0", capture_ids=[case["capture_id"]])
    replay_id = _post(ada, f"/v1/improvements/{improvement_id}/replays").json()["replay_id"]
    _drain(admin_platform)
    queue = admin_platform.replay_queue
    settled = owner.run(lambda conn: conn.execute("SELECT settled FROM resolver.replay").fetchone())

    # A redelivery of a settled capture: acked, nothing written.
    redelivered = _message(admin_platform, owner, case["capture_id"])
    queue.send(redelivered, message_id=redelivered["job_id"])
    queue.send(_message(admin_platform, owner, "cap_of_another_tenant"), message_id="m2")
    queue.send({"schema_version": "resolution.replay/1", "job_id": "x"}, message_id="m3")
    queue.send(
        _message(admin_platform, owner, case["capture_id"], pins={"adapter": "pa_schemaorg@9.9.9"}),
        message_id="m4",
    )
    _drain(admin_platform)

    reasons = sorted(d.reason for d in queue.dead_letters())
    assert reasons == ["CAPTURE_NOT_IN_TENANT", "SCHEMA_INVALID", "UNKNOWN_ADAPTER_VERSION"]
    assert owner.run(lambda conn: conn.execute("SELECT settled FROM resolver.replay").fetchone()) == settled
    assert queue.depth().visible == 0
    assert replay_id


def test_a_replay_is_a_dagster_run_whose_diff_summary_is_the_improvement_replays_assets_metadata(
    login: Login,
    cases: Cases,
    admin_settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cases.open()
    ada = login("ada")
    improvement_id = _improvement(ada, "pa_schemaorg@1.0.0")
    replay_id = _post(ada, f"/v1/improvements/{improvement_id}/replays").json()["replay_id"]
    monkeypatch.setenv("PRW_CONTROL_DATABASE_URL", str(admin_settings.control_database_url))
    resource = PlatformResource(database_url=admin_settings.database_url, data_dir=str(tmp_path))

    with dg.instance_for_test() as instance:
        run = build_definitions(resource).resolve_job_def("replay_job").execute_in_process(instance=instance)

    assert run.success
    (materialized,) = [e for e in run.all_events if e.event_type_value == "ASSET_MATERIALIZATION"]
    event = materialized.event_specific_data.materialization  # type: ignore[union-attr]
    assert event.asset_key == dg.AssetKey("improvement_replays")
    assert replay_id in event.metadata["per_replay"].value
    assert event.metadata["latest_replay"].value == replay_id
