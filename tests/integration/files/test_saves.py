"""Saves of item pictures and product classes through the managed file pipeline (seed 004): copy
before the record transaction (preparing -> ready), commit the prepared reference with the record (ready ->
attached), abandon the copy when the save fails after copying, detach what a change or a deletion releases, keep
an unchanged picture's reference."""

from __future__ import annotations

import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.files.errors import (
    ClassExists,
    FileNotFound,
    InvalidFileTransition,
    UnpreparedReference,
    UnreadableSource,
)
from prw_platform.resolver.files.service import KEEP, CatalogFiles
from prw_platform.resolver.files.sources import (
    ArtifactSource,
    ExistingFile,
    PictureSource,
    UploadSource,
    UrlSource,
)
from prw_platform.resolver.intake.artifacts import record_artifact
from prw_platform.storage import FilesystemObjectStore
from prw_platform.storage.keys import evidence_key
from prw_platform.storage.port import sha256_hex
from tests.integration.files.conftest import ACTOR, Items, PictureServer, Rows, SimClock, png
from tests.integration.resolution.pipeline import CATALOG, TENANT


def _history(rows: Rows, file_id: str) -> list[tuple[str | None, str, str]]:
    return [
        (r["from_state"], r["to_state"], r["actor"])
        for r in rows.all(
            "SELECT from_state, to_state, actor FROM resolver.catalog_file_history WHERE file_id = %s ORDER BY seq",
            file_id,
        )
    ]


def _artifact(resolver_db: Database, store: FilesystemObjectStore, sim_clock: SimClock, data: bytes) -> str:
    sha = sha256_hex(data)
    key = evidence_key(TENANT, sha)
    store.put_if_absent(key, data, sha, "image/png")
    found = resolver_db.run(
        lambda c: record_artifact(c, TENANT, sha, len(data), "image/png", key.ref, sim_clock()),
        tenant_id=TENANT,
    )
    return found.artifact_id


def test_item_pictures_from_an_upload_an_artifact_and_an_allowed_url_are_attached(
    files: CatalogFiles,
    items: Items,
    rows: Rows,
    resolver_db: Database,
    object_store: FilesystemObjectStore,
    sim_clock: SimClock,
    picture_server: PictureServer,
) -> None:
    item = items.add("itm_anvil")
    uploaded = png()
    artifact_bytes = png()
    artifact_id = _artifact(resolver_db, object_store, sim_clock, artifact_bytes)

    saved = files.save_item_pictures(
        TENANT,
        item,
        UploadSource(uploaded, "anvil.png"),
        [ArtifactSource(artifact_id), UrlSource(f"{picture_server.url}/ok/anvil.png")],
        actor=ACTOR,
    )

    assert saved.main is not None
    assert saved.main.state == "attached"
    assert saved.main.media_type == "image/png"
    assert [g.state for g in saved.gallery] == ["attached", "attached"]
    assert files.read_bytes(TENANT, saved.main.file_id) == uploaded
    assert files.read_bytes(TENANT, saved.gallery[0].file_id) == artifact_bytes
    assert files.read_bytes(TENANT, saved.gallery[1].file_id) == picture_server.pictures["anvil.png"]
    assert _history(rows, saved.main.file_id) == [
        (None, "preparing", ACTOR),
        ("preparing", "ready", ACTOR),
        ("ready", "attached", ACTOR),
    ]
    assert files.item_pictures(TENANT, item) == saved
    # The evidence artifact was copied, not moved (INV-05).
    assert object_store.get(evidence_key(TENANT, sha256_hex(artifact_bytes))).data == artifact_bytes


@pytest.mark.parametrize(
    "source",
    [
        UploadSource(b"just some words"),
        UploadSource(b""),
        ArtifactSource("art_unknown"),
        UrlSource("/text"),
        UrlSource("/ok/missing.png"),
        UrlSource("http://127.0.0.2/not-allowed.png"),
        UrlSource("file:///etc/passwd"),
    ],
    ids=[
        "text-upload",
        "empty-upload",
        "unknown-artifact",
        "text-url",
        "404-url",
        "url-off-list",
        "file-url",
    ],
)
def test_answers_400_to_a_picture_the_pipeline_cannot_read_as_a_file_creating_nothing(
    files: CatalogFiles, items: Items, rows: Rows, picture_server: PictureServer, source: PictureSource
) -> None:
    item = items.add("itm_anvil")
    if isinstance(source, UrlSource) and source.url.startswith("/"):
        source = UrlSource(picture_server.url + source.url)
    before = rows.written()

    with pytest.raises(UnreadableSource) as refused:
        files.save_item_pictures(TENANT, item, UploadSource(png()), [source], actor=ACTOR)

    assert refused.value.status == 400
    # The main picture was copied before the unreadable gallery picture failed: it is abandoned, never attached.
    assert rows.all("SELECT state FROM resolver.catalog_file") == [{"state": "abandoned"}]
    assert rows.count("resolver.item_picture") == before["item_picture"]

    with pytest.raises(UnreadableSource):
        files.create_class(TENANT, CATALOG, "cls_tools", "Tools", picture=source, members=[item], actor=ACTOR)
    assert rows.count("resolver.product_class") == 0
    assert rows.count("resolver.catalog_file") == 1


def test_refuses_a_gallery_picture_written_past_the_pipeline_a_reference_the_save_never_prepared(
    files: CatalogFiles, items: Items, rows: Rows
) -> None:
    item = items.add("itm_anvil")
    other = items.add("itm_hammer")
    # A file another save prepared and has not committed (ready), and an id no save ever prepared.
    foreign = files.prepare(TENANT, CATALOG, UploadSource(png()), save_id="sav_other", actor=ACTOR)
    saved = files.save_item_pictures(TENANT, other, UploadSource(png()), [], actor=ACTOR)
    before = rows.written()

    for gallery in ([ExistingFile(foreign)], [ExistingFile("fil_000000000000000000000000")]):
        with pytest.raises(UnpreparedReference, match="a reference the save never prepared") as refused:
            files.save_item_pictures(TENANT, item, ExistingFile(saved.main.file_id), gallery, actor=ACTOR)  # type: ignore[union-attr]
        assert refused.value.status == 400

    assert rows.written() == before
    assert rows.state(foreign) == "ready"
    assert files.item_pictures(TENANT, item).main is None


def test_replacing_a_picture_detaches_the_old_one_and_an_unchanged_picture_keeps_its_reference(
    files: CatalogFiles, items: Items, rows: Rows
) -> None:
    item = items.add("itm_anvil")
    first = files.save_item_pictures(TENANT, item, UploadSource(png()), [UploadSource(png())], actor=ACTOR)
    assert first.main is not None
    kept = first.gallery[0].file_id
    kept_history = _history(rows, kept)

    second = files.save_item_pictures(
        TENANT, item, UploadSource(png()), [ExistingFile(kept)], actor="operator:bob"
    )

    assert second.gallery[0].file_id == kept
    assert rows.state(kept) == "attached"
    assert _history(rows, kept) == kept_history  # no transition: the reference is kept
    assert rows.state(first.main.file_id) == "detached"
    assert _history(rows, first.main.file_id)[-1] == ("attached", "detached", "operator:bob")
    due = rows.all("SELECT cleanup_due_at FROM resolver.catalog_file WHERE file_id = %s", first.main.file_id)
    assert due[0]["cleanup_due_at"] is not None

    # Removing every picture detaches them.
    files.save_item_pictures(TENANT, item, None, [], actor=ACTOR)
    assert rows.state(kept) == "detached"
    assert files.item_pictures(TENANT, item).gallery == []


def test_a_picture_two_records_name_stays_attached_until_neither_does(
    files: CatalogFiles, items: Items, rows: Rows
) -> None:
    anvil = items.add("itm_anvil")
    hammer = items.add("itm_hammer")
    saved = files.save_item_pictures(TENANT, anvil, UploadSource(png()), [], actor=ACTOR)
    assert saved.main is not None
    shared = saved.main.file_id
    files.save_item_pictures(TENANT, hammer, ExistingFile(shared), [], actor=ACTOR)

    files.save_item_pictures(TENANT, anvil, None, [], actor=ACTOR)
    assert rows.state(shared) == "attached"
    files.save_item_pictures(TENANT, hammer, None, [], actor=ACTOR)
    assert rows.state(shared) == "detached"


def test_a_save_failing_after_the_copy_leaves_the_copy_abandoned(
    files: CatalogFiles, items: Items, rows: Rows
) -> None:
    items.add("itm_anvil")
    files.create_class(TENANT, CATALOG, "cls_tools", "Tools", picture=None, members=[], actor=ACTOR)

    with pytest.raises(ClassExists):
        files.create_class(
            TENANT, CATALOG, "cls_tools", "Tools again", picture=UploadSource(png()), members=[], actor=ACTOR
        )
    (copy,) = rows.all("SELECT file_id, state, cleanup_due_at FROM resolver.catalog_file")
    assert copy["state"] == "abandoned"
    assert copy["cleanup_due_at"] is not None
    assert [h[:2] for h in _history(rows, copy["file_id"])] == [
        (None, "preparing"),
        ("preparing", "ready"),
        ("ready", "abandoned"),
    ]
    # An unknown member fails the record transaction after the copy, too.
    with pytest.raises(FileNotFound):
        files.create_class(
            TENANT, CATALOG, "cls_new", "New", picture=UploadSource(png()), members=["itm_nope"], actor=ACTOR
        )
    assert sorted(rows.states().values()) == ["abandoned", "abandoned"]
    assert rows.count("resolver.product_class") == 1


def test_deletes_the_category_with_its_memberships_and_detaches_its_picture_a_second_delete_is_404(
    files: CatalogFiles, items: Items, rows: Rows
) -> None:
    anvil = items.add("itm_anvil")
    hammer = items.add("itm_hammer")
    created = files.create_class(
        TENANT,
        CATALOG,
        "cls_tools",
        "Tools",
        picture=UploadSource(png()),
        members=[anvil, hammer],
        actor=ACTOR,
    )
    assert created.picture is not None
    assert created.picture.state == "attached"
    assert created.members == [anvil, hammer]

    files.delete_class(TENANT, "cls_tools", actor="operator:bob")

    assert rows.count("resolver.product_class") == 0
    assert rows.count("resolver.product_class_member") == 0
    assert rows.state(created.picture.file_id) == "detached"
    assert _history(rows, created.picture.file_id)[-1] == ("attached", "detached", "operator:bob")
    with pytest.raises(FileNotFound) as second:
        files.delete_class(TENANT, "cls_tools", actor=ACTOR)
    assert second.value.status == 404


def test_updating_a_class_keeps_replaces_or_removes_its_picture(
    files: CatalogFiles, items: Items, rows: Rows
) -> None:
    anvil = items.add("itm_anvil")
    created = files.create_class(
        TENANT, CATALOG, "cls_tools", "Tools", picture=UploadSource(png()), members=[], actor=ACTOR
    )
    assert created.picture is not None
    first = created.picture.file_id

    renamed = files.update_class(
        TENANT, "cls_tools", name="Hand tools", picture=KEEP, members=[anvil], actor=ACTOR
    )
    assert renamed.picture == created.picture
    assert renamed.members == [anvil]
    assert rows.state(first) == "attached"

    replaced = files.update_class(
        TENANT, "cls_tools", name=None, picture=UploadSource(png()), members=None, actor=ACTOR
    )
    assert replaced.picture is not None
    assert replaced.picture.file_id != first
    assert replaced.name == "Hand tools"
    assert rows.state(first) == "detached"

    removed = files.update_class(TENANT, "cls_tools", name=None, picture=None, members=None, actor=ACTOR)
    assert removed.picture is None
    assert rows.state(replaced.picture.file_id) == "detached"
    with pytest.raises(FileNotFound):
        files.update_class(TENANT, "cls_nope", name="x", picture=KEEP, members=None, actor=ACTOR)


def test_a_discarded_file_cannot_be_attached_again(
    files: CatalogFiles, items: Items, rows: Rows, owner_db: Database
) -> None:
    item = items.add("itm_anvil")
    saved = files.save_item_pictures(TENANT, item, UploadSource(png()), [], actor=ACTOR)
    assert saved.main is not None
    files.save_item_pictures(TENANT, item, None, [], actor=ACTOR)
    for to_state in ("discarding", "discarded"):
        owner_db.run(
            lambda c, s=to_state: c.execute(
                "UPDATE resolver.catalog_file SET state = %s, state_actor = 'test' WHERE file_id = %s",
                (s, saved.main.file_id),  # type: ignore[union-attr]
            )
        )
    before = rows.written()

    with pytest.raises(InvalidFileTransition, match="requires fresh preparation") as refused:
        files.save_item_pictures(TENANT, item, ExistingFile(saved.main.file_id), [], actor=ACTOR)

    assert refused.value.status == 409
    assert rows.written() == before
