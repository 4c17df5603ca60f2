"""Admin reads over real HTTP (if_admin_read, if_receipt_get for operators), filtered to the active tenant:
``GET /v1/decisions/{id}``, ``GET /v1/workers``, ``GET /v1/receipts/{id}``, ``GET /v1/improvements`` and the
``POST /v1/resolve`` dry run, whose ``writes: 0`` is proven by counting every row of the resolver, product and
queue schemas and every stored object before and after. Errors: 401 SESSION_EXPIRED and 403 FORBIDDEN per
route (the role x tenant matrix covers every cell), 404 NOT_FOUND, 403 TENANT_SCOPE_DENIED, 422
UNKNOWN_ADAPTER_VERSION."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from psycopg import sql

from prw_api.server import BackgroundServer
from prw_platform.auth import ClientSpec, create_client
from prw_platform.bootstrap import Platform
from prw_platform.db.database import Connection, Database
from prw_platform.resolver.improvements import Improvement, insert_improvement
from prw_platform.resolver.intake.requests import Heartbeat, Registration, RunReport
from prw_platform.resolver.intake.workers import CollectorService
from prw_platform.storage import ObjectStore
from tests.e2e.admin.conftest import OTHER_TENANT, TENANT, Cases, Operator
from tests.integration.resolution.pipeline import ANVIL_MICRODATA, CATALOG, SOURCE, Collector, page

Login = Callable[[str], Operator]


@pytest.fixture
def store(admin_platform: Platform) -> ObjectStore:
    """The captures' bytes in the admin platform's own store, which the dry run reads."""
    return admin_platform.store


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code


# -- GET /v1/decisions/{id} -------------------------------------------------------------------------------------
def test_a_decision_reads_with_its_provenance_facts_and_outbox_events(login: Login, cases: Cases) -> None:
    case = cases.open()
    rita = login("rita")
    decided = rita.decide(
        {
            "case_id": case["case_id"],
            "expected_revision": case["revision"],
            "action": "map_to",
            "map_to": cases.item(),
            "rationale": "the spec grid names the same anvil",
        }
    )
    assert decided.status_code == 201, decided.text

    response = login("vic").http.get(f"/v1/decisions/{decided.json()['decision_id']}")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["action"] == "map_listing"
    assert body["case_id"] == case["case_id"]
    assert body["provenance"] == {
        "actor": "reviewer:rita",
        "rationale": "the spec grid names the same anvil",
        "evidence": [case["capture_id"]],
        "prior_decisions": [case["opened_by"]],
    }
    assert [e["event_id"] for e in body["outbox"]] == decided.json()["outbox"]
    mapping = next(f for f in body["facts"] if f["aggregate_type"] == "listing_mapping")
    assert mapping["aggregate_id"] == case["listing_id"]
    assert mapping["state"]["item"] == cases.item()
    assert all(e["published_at"] is None and e["pruned"] is False for e in body["outbox"])


def test_an_unknown_decision_is_404_and_another_tenants_is_404_too(login: Login, cases: Cases) -> None:
    cases.item()
    decision_id = cases.resolution.one("SELECT decision_id FROM resolver.decision LIMIT 1")["decision_id"]

    _error(login("vic").http.get("/v1/decisions/dec_nowhere"), 404, "NOT_FOUND")
    # INV-06: mia reads ten_other (her active tenant there), where the decision does not exist.
    _error(
        login("mia").http.get(f"/v1/decisions/{decision_id}", headers={"X-PRW-Tenant": OTHER_TENANT}),
        404,
        "NOT_FOUND",
    )


# -- GET /v1/workers --------------------------------------------------------------------------------------------
def test_the_fleet_lists_the_tenants_instances_with_lease_and_last_run(
    login: Login, collector: Collector, resolver_db: Database
) -> None:
    principal = collector.principal
    create_client(
        resolver_db, ClientSpec(TENANT, CATALOG, principal.worker_id, principal.instance_id, (SOURCE,))
    )
    at = datetime.now(UTC)
    workers = CollectorService(resolver_db, clock=lambda: at)
    workers.register(
        principal,
        Registration(
            worker_id=principal.worker_id,
            instance_id=principal.instance_id,
            targets=(SOURCE,),
            version="0.4.2",
        ),
    )
    run = RunReport(outcome="failed", pages_fetched=4, captures_submitted=0, failures={"UPSTREAM_503": 4})
    workers.heartbeat(principal, principal.instance_id, Heartbeat(at=at + timedelta(seconds=1), run=run))

    body = login("vic").http.get("/v1/workers").json()
    other = login("mia").http.get("/v1/workers", headers={"X-PRW-Tenant": OTHER_TENANT}).json()

    [worker] = body["workers"]
    assert worker["instance_id"] == principal.instance_id
    assert worker["worker_id"] == principal.worker_id
    assert worker["sources"] == [SOURCE]
    assert worker["lease_state"] == "active"
    assert worker["consecutive_failures"] == 1
    assert worker["last_heartbeat_at"] is not None
    assert worker["last_run"]["outcome"] == "failed"
    assert worker["last_run"]["failures"] == {"UPSTREAM_503": 4}
    assert other == {"workers": []}  # INV-06


# -- GET /v1/receipts/{id} --------------------------------------------------------------------------------------
def test_an_operator_reads_any_receipt_of_the_tenant(login: Login, cases: Cases) -> None:
    case = cases.open()
    receipt = cases.resolution.one(
        "SELECT receipt_id FROM resolver.receipt WHERE capture_id = %s", case["capture_id"]
    )

    response = login("vic").http.get(f"/v1/receipts/{receipt['receipt_id']}")

    assert response.status_code == 200, response.text
    assert response.json()["capture_id"] == case["capture_id"]
    assert response.json()["status"] == "in_review"


def test_a_receipt_of_another_tenant_is_403_and_an_unknown_one_404(login: Login, cases: Cases) -> None:
    cases.item()
    receipt_id = cases.resolution.one("SELECT receipt_id FROM resolver.receipt LIMIT 1")["receipt_id"]

    other = login("mia").http.get(f"/v1/receipts/{receipt_id}", headers={"X-PRW-Tenant": OTHER_TENANT})

    _error(other, 403, "TENANT_SCOPE_DENIED")
    _error(login("vic").http.get("/v1/receipts/rcpt_nowhere"), 404, "NOT_FOUND")


# -- GET /v1/improvements ---------------------------------------------------------------------------------------
def _improvement(n: int) -> Improvement:
    return Improvement(
        tenant_id=TENANT,
        catalog_id=CATALOG,
        improvement_id=f"imp_{n:04d}",
        adapter_version="pa_schemaorg@1.0.0",
        profile_version="np_storage@2",
        definition_version="np_storage@2",
        selection={"source_id": SOURCE},
        status="draft",
        created_by="operator:ada",
        created_at=datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=n),
    )


def test_improvements_are_empty_then_paged_newest_first(
    login: Login, cases: Cases, resolver_db: Database
) -> None:
    vic = login("vic")
    assert vic.http.get("/v1/improvements").json() == {"improvements": [], "next_cursor": None}
    for n in range(1, 4):
        resolver_db.run(lambda conn, n=n: insert_improvement(conn, _improvement(n)), tenant_id=TENANT)

    first = vic.http.get("/v1/improvements", params={"limit": 2}).json()
    second = vic.http.get("/v1/improvements", params={"limit": 2, "after": first["next_cursor"]}).json()

    assert [i["improvement_id"] for i in first["improvements"]] == ["imp_0003", "imp_0002"]
    assert [i["improvement_id"] for i in second["improvements"]] == ["imp_0001"]
    assert second["next_cursor"] is None
    assert first["improvements"][0]["status"] == "draft"
    other = login("mia").http.get("/v1/improvements", headers={"X-PRW-Tenant": OTHER_TENANT}).json()
    assert other["improvements"] == []  # INV-06
    _error(vic.http.get("/v1/improvements", params={"after": "not-a-cursor"}), 422, "VALIDATION_FAILED")


# -- POST /v1/resolve -------------------------------------------------------------------------------------------
def _census(owner: Database, objects: Path) -> dict[str, int]:
    """Rows of every table of the resolver, product and queue schemas, and the stored objects."""

    def count_rows(conn: Connection) -> dict[str, int]:
        tables = conn.execute(
            "SELECT schemaname, tablename FROM pg_tables WHERE schemaname IN ('resolver', 'product', 'queue')"
        ).fetchall()
        return {
            f"{t['schemaname']}.{t['tablename']}": conn.execute(
                sql.SQL("SELECT count(*) AS n FROM {}.{}").format(
                    sql.Identifier(t["schemaname"]), sql.Identifier(t["tablename"])
                )
            ).fetchone()["n"]
            for t in tables
        }

    counts = owner.run(count_rows)
    counts["objects"] = sum(1 for f in objects.rglob("*") if f.is_file())
    return counts


def test_a_dry_run_re_resolves_a_stored_capture_and_writes_nothing(
    login: Login, cases: Cases, collector: Collector, owner: Database, admin_platform: Platform
) -> None:
    cases.item()
    capture_id = collector.submit(page(ANVIL_MICRODATA), record="anvil-again")
    ada = login("ada")
    before = _census(owner, admin_platform.settings.data_dir)

    response = ada.http.post(
        "/v1/resolve",
        json={"capture_id": capture_id, "record": "anvil-again", "adapter": "auto", "dry_run": True},
    )
    pinned = ada.http.post("/v1/resolve", json={"capture_id": capture_id, "adapter": "pa_schemaorg@1.0.0"})

    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["dry_run"], body["writes"]) == (True, 0)
    assert body["adapter"].startswith("pa_schemaorg@")
    assert body["stage_outcome"] == "extracted"
    assert body["claims"]
    assert body["attributes"]
    # The anvil exists: identity would map this listing to it.
    assert body["identity"]["would_decide"] == "map_listing"
    assert body["identity"]["matched_item"] == cases.item()
    assert pinned.status_code == 200, pinned.text
    assert pinned.json()["adapter"] == "pa_schemaorg@1.0.0"
    assert pinned.json()["adapter_rule"] == "job_pin"
    assert _census(owner, admin_platform.settings.data_dir) == before


def test_a_dry_run_with_an_unknown_adapter_version_is_422(login: Login, cases: Cases) -> None:
    cases.item()
    capture_id = cases.resolution.one("SELECT capture_id FROM resolver.capture LIMIT 1")["capture_id"]

    response = login("ada").http.post(
        "/v1/resolve", json={"capture_id": capture_id, "adapter": "pa_schemaorg@9.9.9"}
    )

    _error(response, 422, "UNKNOWN_ADAPTER_VERSION")


def test_a_dry_run_of_an_unknown_capture_or_record_is_404(login: Login, cases: Cases) -> None:
    cases.item()
    capture_id = cases.resolution.one("SELECT capture_id FROM resolver.capture LIMIT 1")["capture_id"]
    ada = login("ada")

    _error(ada.http.post("/v1/resolve", json={"capture_id": "cap_nowhere"}), 404, "NOT_FOUND")
    _error(ada.http.post("/v1/resolve", json={"capture_id": capture_id, "record": "other"}), 404, "NOT_FOUND")


def test_a_dry_run_needs_operator_admin_403_forbidden(login: Login, cases: Cases) -> None:
    _error(login("rita").http.post("/v1/resolve", json={"capture_id": "cap_x"}), 403, "FORBIDDEN")


def test_dry_run_false_is_refused_422(login: Login) -> None:
    response = login("ada").http.post("/v1/resolve", json={"capture_id": "cap_x", "dry_run": False})

    _error(response, 422, "VALIDATION_FAILED")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/decisions/dec_x"),
        ("GET", "/v1/workers"),
        ("GET", "/v1/receipts/rcpt_x"),
        ("GET", "/v1/improvements"),
        ("POST", "/v1/resolve"),
    ],
)
def test_without_a_session_every_read_is_401_session_expired(
    admin: BackgroundServer, method: str, path: str
) -> None:
    response = httpx.request(
        method, f"{admin.url}{path}", json={"capture_id": "cap_x"} if method == "POST" else None
    )

    _error(response, 401, "SESSION_EXPIRED")
