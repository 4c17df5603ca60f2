"""Item pictures and product classes over real HTTP on the admin origin (seed 004): operator
session + CSRF, operator_admin for writes, viewer for reads; every error of the routes with its status, and a
refused request persists nothing."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from prw_api.server import BackgroundServer
from prw_platform.bootstrap import Platform
from prw_platform.config import OperatorOidcSettings, Settings
from prw_platform.db.database import Database
from prw_platform.resolver.files.sources import UploadSource
from tests.e2e.admin.conftest import Operator
from tests.integration.files.conftest import Items, PictureServer, Rows, png
from tests.integration.resolution.pipeline import CATALOG, TENANT

if TYPE_CHECKING:
    from tests.support.postgres import TestDatabases

Login = Callable[[str], Operator]


@pytest.fixture
def picture_server() -> Iterator[PictureServer]:
    server = PictureServer()
    yield server
    server.close()


@pytest.fixture
def admin_settings(
    databases: TestDatabases, dev_idp: BackgroundServer, tmp_path: Path, picture_server: PictureServer
) -> Settings:
    return Settings(
        database_url=databases.main,
        control_database_url=databases.control,
        data_dir=tmp_path,
        operator_oidc=OperatorOidcSettings(issuer=dev_idp.url),
        catalog_file_url_allow=[f"{picture_server.url}/ok/", f"{picture_server.url}/text"],
    )


@pytest.fixture
def setup(owner_db: Database, catalogs: None) -> tuple[Items, Rows]:
    return Items(owner_db), Rows(owner_db)


def _upload(data: bytes) -> dict[str, Any]:
    return {"upload": {"content_base64": base64.b64encode(data).decode(), "filename": "p.png"}}


def _write(op: Operator, method: str, url: str, body: Any = None, **headers: str) -> Any:
    return op.http.request(method, url, json=body, headers={"X-CSRF-Token": op.csrf, **headers})


def test_an_admin_sets_item_pictures_and_a_viewer_reads_them(
    login: Login, setup: tuple[Items, Rows], picture_server: PictureServer
) -> None:
    items, rows = setup
    item = items.add("itm_anvil")
    ada = login("ada")

    response = _write(
        ada,
        "PUT",
        f"/v1/items/{item}/pictures",
        {"main": _upload(png()), "gallery": [{"url": f"{picture_server.url}/ok/anvil.png"}]},
    )

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["main"]["state"] == "attached"
    assert [g["state"] for g in body["gallery"]] == ["attached"]
    read = login("vic").http.get(f"/v1/items/{item}/pictures")
    assert read.status_code == 200
    assert read.json() == body

    # Keep the gallery picture, drop the main one: the main one is detached.
    kept = body["gallery"][0]["file_id"]
    again = _write(ada, "PUT", f"/v1/items/{item}/pictures", {"gallery": [{"file_id": kept}]})
    assert again.status_code == 200, again.text
    assert again.json()["main"] is None
    assert rows.state(body["main"]["file_id"]) == "detached"
    assert rows.state(kept) == "attached"


def test_answers_400_to_a_picture_the_pipeline_cannot_read_as_a_file_creating_nothing(
    login: Login, setup: tuple[Items, Rows], picture_server: PictureServer
) -> None:
    items, rows = setup
    item = items.add("itm_anvil")
    ada = login("ada")
    before = rows.written()

    for picture in (
        _upload(b"not a picture"),
        {"url": f"{picture_server.url}/text"},
        {"url": "http://127.0.0.2/elsewhere.png"},
        {"artifact_id": "art_0000"},
    ):
        for method, url, body in (
            ("PUT", f"/v1/items/{item}/pictures", {"main": picture}),
            (
                "POST",
                f"/v1/catalogs/{CATALOG}/classes",
                {"class_id": "cls_tools", "name": "T", "picture": picture},
            ),
        ):
            response = _write(ada, method, url, body)
            assert response.status_code == 400, response.text
            assert response.json()["error"]["code"] == "UNREADABLE_SOURCE"
    assert rows.written() == before


def test_refuses_a_gallery_picture_written_past_the_pipeline_a_reference_the_save_never_prepared(
    login: Login, setup: tuple[Items, Rows]
) -> None:
    items, rows = setup
    item = items.add("itm_anvil")
    ada = login("ada")
    before = rows.written()

    response = _write(
        ada, "PUT", f"/v1/items/{item}/pictures", {"gallery": [{"file_id": "fil_0123456789abcdef01234567"}]}
    )

    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "UNPREPARED_REFERENCE"
    assert rows.written() == before


def test_deletes_the_category_with_its_memberships_and_detaches_its_picture_a_second_delete_is_404(
    login: Login, setup: tuple[Items, Rows]
) -> None:
    items, rows = setup
    anvil = items.add("itm_anvil")
    ada = login("ada")
    created = _write(
        ada,
        "POST",
        f"/v1/catalogs/{CATALOG}/classes",
        {"class_id": "cls_tools", "name": "Tools", "picture": _upload(png()), "members": [anvil]},
    )
    assert created.status_code == 201, created.text
    picture = created.json()["picture"]["file_id"]
    listed = login("vic").http.get(f"/v1/catalogs/{CATALOG}/classes")
    assert [c["class_id"] for c in listed.json()["classes"]] == ["cls_tools"]

    deleted = _write(ada, "DELETE", "/v1/classes/cls_tools")

    assert deleted.status_code == 204, deleted.text
    assert rows.count("resolver.product_class_member") == 0
    assert rows.state(picture) == "detached"
    second = _write(ada, "DELETE", "/v1/classes/cls_tools")
    assert second.status_code == 404
    assert second.json()["error"]["code"] == "NOT_FOUND"


def test_class_updates_and_their_errors(login: Login, setup: tuple[Items, Rows]) -> None:
    items, rows = setup
    anvil = items.add("itm_anvil")
    ada = login("ada")
    url = f"/v1/catalogs/{CATALOG}/classes"
    assert _write(ada, "POST", url, {"class_id": "cls_tools", "name": "Tools"}).status_code == 201

    exists = _write(ada, "POST", url, {"class_id": "cls_tools", "name": "Again", "picture": _upload(png())})
    assert exists.status_code == 409
    assert exists.json()["error"]["code"] == "CLASS_EXISTS"
    assert list(rows.states().values()) == ["abandoned"]  # copied before the refused record transaction

    renamed = _write(ada, "PATCH", "/v1/classes/cls_tools", {"name": "Hand tools", "members": [anvil]})
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["members"] == [anvil]
    with_picture = _write(ada, "PATCH", "/v1/classes/cls_tools", {"picture": _upload(png())})
    assert with_picture.json()["name"] == "Hand tools"
    removed = _write(ada, "PATCH", "/v1/classes/cls_tools", {"picture": None})
    assert removed.json()["picture"] is None
    assert rows.state(with_picture.json()["picture"]["file_id"]) == "detached"

    assert _write(ada, "PATCH", "/v1/classes/cls_nope", {"name": "x"}).status_code == 404
    assert (
        _write(ada, "POST", "/v1/catalogs/cat_nope/classes", {"class_id": "cls_x", "name": "x"}).status_code
        == 404
    )
    unknown_member = _write(ada, "POST", url, {"class_id": "cls_x", "name": "x", "members": ["itm_nope"]})
    assert unknown_member.status_code == 404
    for bad in (
        {"class_id": "tools", "name": "x"},
        {"class_id": "cls_x", "name": "x", "picture": {}},
        {
            "class_id": "cls_x",
            "name": "x",
            "picture": {"url": "http://a", "file_id": "fil_0123456789abcdef01234567"},
        },
        {"class_id": "cls_x", "name": "x", "picture": {"upload": {"content_base64": "***"}}},
    ):
        refused = _write(ada, "POST", url, bad)
        assert refused.status_code == 422, (bad, refused.text)
        assert refused.json()["error"]["code"] == "VALIDATION_FAILED"
    assert rows.count("resolver.product_class") == 1


def test_writes_need_csrf_and_operator_admin(login: Login, setup: tuple[Items, Rows]) -> None:
    items, rows = setup
    item = items.add("itm_anvil")
    before = rows.written()
    ada = login("ada")
    no_csrf = ada.http.put(f"/v1/items/{item}/pictures", json={"main": _upload(png())})
    assert no_csrf.status_code == 403
    assert no_csrf.json()["error"]["code"] == "CSRF_REJECTED"
    rita = login("rita")
    forbidden = _write(rita, "POST", f"/v1/catalogs/{CATALOG}/classes", {"class_id": "cls_x", "name": "x"})
    assert forbidden.status_code == 403
    assert forbidden.json()["error"]["code"] == "FORBIDDEN"
    assert rows.written() == before
    assert login("vic").http.get("/v1/items/itm_nope/pictures").status_code == 404


def test_failed_files_are_listed_and_one_is_retried(
    login: Login, setup: tuple[Items, Rows], admin_platform: Platform, owner_db: Database
) -> None:
    _items, rows = setup
    files = admin_platform.catalog_files
    file_id = files.prepare(TENANT, CATALOG, UploadSource(png()), save_id="sav_gone", actor="request:x")
    files._abandon(TENANT, [file_id], "request:x")
    # Setup: the sweep claimed it and its fifth receive failed (the consumer's path is tested in
    # tests/integration/files/test_cleanup.py); the trigger still checks each step.
    for state, reason in (("discarding", None), ("failed", "StorageUnavailable: the store did not answer")):
        owner_db.run(
            lambda c, s=state, r=reason: c.execute(
                """UPDATE resolver.catalog_file SET state = %s, failure_reason = coalesce(%s, failure_reason),
                       failed_receives = 5, state_actor = 'test' WHERE file_id = %s""",
                (s, r, file_id),
            )
        )
    vic = login("vic")
    listed = vic.http.get("/v1/files/failed")
    assert listed.status_code == 200, listed.text
    (entry,) = listed.json()["files"]
    assert entry["file_id"] == file_id
    assert entry["failure_reason"] == "StorageUnavailable: the store did not answer"
    assert entry["failed_receives"] == 5

    ada = login("ada")
    assert _write(vic, "POST", f"/v1/files/{file_id}/retry").status_code == 403
    retried = _write(ada, "POST", f"/v1/files/{file_id}/retry")
    assert retried.status_code == 200, retried.text
    assert retried.json()["state"] == "discarding"
    assert rows.state(file_id) == "discarding"
    messages = rows.all("SELECT body FROM queue.message WHERE queue_name = 'catalog-file-cleanup'")
    assert messages == [{"body": {"tenant_id": TENANT, "file_id": file_id}}]
    again = _write(ada, "POST", f"/v1/files/{file_id}/retry")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "INVALID_FILE_TRANSITION"
    assert rows.count("queue.message") == 1
    missing = _write(ada, "POST", "/v1/files/fil_000000000000000000000000/retry")
    assert missing.status_code == 404
    assert vic.http.get("/v1/files/failed").json() == {"files": []}


def test_the_console_lists_failed_files_and_retries_one(
    login: Login, setup: tuple[Items, Rows], admin_platform: Platform, owner_db: Database
) -> None:
    _items, rows = setup
    files = admin_platform.catalog_files
    file_id = files.prepare(TENANT, CATALOG, UploadSource(png()), save_id="sav_gone", actor="request:x")
    files._abandon(TENANT, [file_id], "request:x")
    for state in ("discarding", "failed"):  # setup, as in test_failed_files_are_listed_and_one_is_retried
        owner_db.run(
            lambda c, s=state: c.execute(
                """UPDATE resolver.catalog_file SET state = %s, failure_reason = 'StorageUnavailable: down',
                       failed_receives = 5, state_actor = 'test' WHERE file_id = %s""",
                (s, file_id),
            )
        )
    vic = login("vic")
    listed = vic.http.get("/console/files")
    assert listed.status_code == 200
    assert file_id in listed.text
    assert "StorageUnavailable: down" in listed.text
    assert "Retry cleanup" not in listed.text  # a viewer cannot retry
    refused = vic.http.post(f"/console/files/{file_id}/retry", data={"csrf_token": vic.csrf})
    assert refused.status_code == 403
    ada = login("ada")
    no_csrf = ada.http.post(f"/console/files/{file_id}/retry", data={"csrf_token": "wrong"})
    assert no_csrf.status_code == 403
    assert rows.state(file_id) == "failed"

    retried = ada.http.post(f"/console/files/{file_id}/retry", data={"csrf_token": ada.csrf})

    assert retried.status_code == 200
    assert "is back with the cleanup consumer" in retried.text
    assert rows.state(file_id) == "discarding"
    again = ada.http.post(f"/console/files/{file_id}/retry", data={"csrf_token": ada.csrf})
    assert again.status_code == 409
    assert "INVALID_FILE_TRANSITION" in again.text
