"""Saves of pictures and product classes (seed 004): copy first, then commit the reference.

Every save follows STATE-COM-CAT-004:

1. Each new picture (upload, capture artifact, allowed URL) is read and copied into the managed asset store
   *before* the record transaction: preparing -> ready, in a transaction of its own that inserts the file row
   under the object's lock, puts the bytes and marks the row ready. A source that cannot be read as a picture is
   ``UnreadableSource`` (400) and nothing is created.
2. The record transaction locks the record and the files it names, commits the new references and moves the files
   it prepared ready -> attached (only files *this* save prepared: a reference the save never prepared is
   ``UnpreparedReference``, 400). A committed file named again (an unchanged picture) keeps its reference and its
   state. Files the record no longer names, and no other record names, go attached -> detached with their cleanup
   due instant.
3. When the record transaction fails after the copies, the copies go ready -> abandoned (the sweep cleans them).

Every record transaction is also an accepted change (``publication``): it locks the stream cursor
first (AW-01) and appends the ``item_pictures`` / ``product_class`` event (and an automatic release) before it
commits, so the product service learns of pictures and classes through the stream and the public API shows them
only after a release.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

import httpx

from prw_platform.clock import Clock
from prw_platform.contracts import ITEM_PICTURES, PRODUCT_CLASS, StreamKey
from prw_platform.db.database import Connection, Database
from prw_platform.queues import Queue
from prw_platform.resolver.catalogs import release_policy
from prw_platform.resolver.decisions.facts import get_item
from prw_platform.resolver.files import publication, records, store
from prw_platform.resolver.files.dimensions import picture_size
from prw_platform.resolver.files.errors import (
    ClassExists,
    FileNotFound,
    InvalidFileTransition,
    UnpreparedReference,
    UnreadableSource,
)
from prw_platform.resolver.files.lifecycle import INVALID, FileState
from prw_platform.resolver.files.sources import (
    ArtifactSource,
    ExistingFile,
    NewSource,
    PictureSource,
    UploadSource,
    UrlSource,
    check_picture,
    fetch_url,
)
from prw_platform.resolver.intake.artifacts import artifacts_by_id
from prw_platform.storage import ObjectStore
from prw_platform.storage.errors import StorageError
from prw_platform.storage.keys import ObjectKey, parse_tenant_ref
from prw_platform.storage.port import sha256_hex

T = TypeVar("T")

#: States in which a committed file may be named again by a save (its bytes are still there and it is not being
#: deleted): the consumer's settlement re-attaches a detached or discarding one it finds named.
_REFERENCEABLE: frozenset[FileState] = frozenset({"attached", "detached", "discarding"})


@dataclass(frozen=True, slots=True)
class FileSettings:
    bucket: str = "catalog-files"
    url_allow: tuple[str, ...] = ()
    max_bytes: int = 10 * 1024 * 1024
    cleanup_delay: timedelta = timedelta(hours=1)
    url_timeout_seconds: float = 10.0


@dataclass(frozen=True, slots=True)
class FileView:
    file_id: str
    state: FileState
    media_type: str
    size_bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class ItemPictures:
    item_id: str
    catalog_id: str
    main: FileView | None
    gallery: list[FileView]


@dataclass(frozen=True, slots=True)
class ClassView:
    class_id: str
    catalog_id: str
    name: str
    picture: FileView | None
    members: list[str]
    created_at: datetime
    updated_at: datetime


class _Keep:
    """``update_class(picture=KEEP)``: the class keeps the picture it has."""


KEEP = _Keep()


class CatalogFiles:
    """Pictures of items and product classes, saved through the managed file pipeline (seed 004)."""

    def __init__(
        self,
        db: Database,
        object_store: ObjectStore,
        clock: Clock,
        settings: FileSettings,
        http: httpx.Client | None = None,
        cleanup_queue: Queue | None = None,
        streams: publication.StreamLocator | None = None,
    ) -> None:
        self._db = db
        self._streams = streams
        self._cleanup_queue = cleanup_queue
        self._store = object_store
        self._clock = clock
        self._settings = settings
        self._http = http or httpx.Client(timeout=settings.url_timeout_seconds)

    # -- Preparation (before the record transaction). -----------------------------------------------------------
    def read_source(self, tenant_id: str, source: NewSource) -> tuple[bytes, str, str, str | None]:
        """(bytes, media type, origin, origin detail), or ``UnreadableSource``."""
        limit = self._settings.max_bytes
        if isinstance(source, UploadSource):
            data = source.data
            return data, check_picture(data, limit, "the uploaded file"), "upload", source.filename
        if isinstance(source, ArtifactSource):
            found = self._db.run(
                lambda c: artifacts_by_id(c, tenant_id, [source.artifact_id]), tenant_id=tenant_id
            )
            artifact = found.get(source.artifact_id)
            if artifact is None:
                raise UnreadableSource(f"no stored capture artifact {source.artifact_id!r} in this tenant")
            try:
                data = self._store.get(parse_tenant_ref(artifact.ref, tenant_id)).data
            except StorageError as error:
                raise UnreadableSource(f"artifact {source.artifact_id} cannot be read: {error}") from error
            media_type = check_picture(data, limit, f"artifact {source.artifact_id}")
            return data, media_type, "artifact", source.artifact_id
        data = fetch_url(self._http, source.url, list(self._settings.url_allow), limit)
        return data, check_picture(data, limit, source.url), "url", source.url

    def prepare(self, tenant_id: str, catalog_id: str, source: NewSource, *, save_id: str, actor: str) -> str:
        """preparing -> ready: copy the source into the managed store; returns the prepared file id."""
        data, media_type, origin, detail = self.read_source(tenant_id, source)
        sha256 = sha256_hex(data)
        key = ObjectKey(self._settings.bucket, tenant_id, sha256)
        file_id = store.new_file_id()

        def copy(conn: Connection) -> None:
            now = self._clock()
            store.insert_preparing(
                conn,
                tenant_id=tenant_id,
                catalog_id=catalog_id,
                file_id=file_id,
                save_id=save_id,
                origin=origin,
                origin_detail=detail,
                object_ref=key.ref,
                sha256=sha256,
                size=len(data),
                media_type=media_type,
                actor=actor,
                now=now,
                dimensions=picture_size(data, media_type),
            )
            # Under the object's lock: a cleanup deleting the same bytes has finished or waits for this commit.
            self._store.put_if_absent(key, data, sha256, media_type)
            store.move(conn, tenant_id, [file_id], "preparing", "ready", actor=actor, now=now)

        self._db.run(copy, tenant_id=tenant_id)
        return file_id

    def _prepare_all(
        self, tenant_id: str, catalog_id: str, sources: Sequence[PictureSource], save_id: str, actor: str
    ) -> dict[int, str]:
        prepared: dict[int, str] = {}
        try:
            for index, source in enumerate(sources):
                if not isinstance(source, ExistingFile):
                    prepared[index] = self.prepare(
                        tenant_id, catalog_id, source, save_id=save_id, actor=actor
                    )
        except BaseException:
            self._abandon(tenant_id, list(prepared.values()), actor)
            raise
        return prepared

    def _abandon(self, tenant_id: str, file_ids: list[str], actor: str) -> None:
        """ready -> abandoned: the save failed after copying; the sweep cleans the copies when they are due."""
        if not file_ids:
            return
        now = self._clock()
        due = now + self._settings.cleanup_delay
        self._db.run(
            lambda c: store.move(
                c, tenant_id, file_ids, "ready", "abandoned", actor=actor, now=now, cleanup_due_at=due
            ),
            tenant_id=tenant_id,
        )

    def _save(
        self,
        tenant_id: str,
        catalog_id: str,
        sources: Sequence[PictureSource],
        actor: str,
        commit: Callable[[Connection, list[str], str], T],
    ) -> T:
        """Prepare the new sources, then run ``commit(conn, file ids in source order, save id)`` in the record
        transaction; abandon the copies when it fails."""
        save_id = store.new_save_id()
        prepared = self._prepare_all(tenant_id, catalog_id, sources, save_id, actor)
        file_ids = [
            source.file_id if isinstance(source, ExistingFile) else prepared[index]
            for index, source in enumerate(sources)
        ]
        try:
            return self._db.run(lambda c: commit(c, file_ids, save_id), tenant_id=tenant_id)
        except BaseException:
            self._abandon(tenant_id, list(prepared.values()), actor)
            raise

    def _stream(self, tenant_id: str, catalog_id: str) -> StreamKey:
        if self._streams is None:
            raise RuntimeError("this service has no stream locator: it cannot publish saves")
        return self._streams(tenant_id, catalog_id)

    # -- The record transaction's file steps. ------------------------------------------------------------------
    def _attach(
        self,
        conn: Connection,
        tenant_id: str,
        catalog_id: str,
        file_ids: Sequence[str],
        before: set[str],
        save_id: str,
        actor: str,
        now: datetime,
    ) -> None:
        """Lock the named files; ready -> attached for the ones this save prepared; a committed file named again
        keeps its state; anything else is refused."""
        files = store.get_files(conn, tenant_id, list(dict.fromkeys(file_ids)), lock=True)
        to_attach: list[str] = []
        for file_id in dict.fromkeys(file_ids):
            found = files.get(file_id)
            if found is None or found.catalog_id != catalog_id:
                raise UnpreparedReference(
                    f"picture {file_id!r} is not a file of catalog {catalog_id}: a reference the save never prepared"
                )
            if found.state == "ready" and found.save_id == save_id:
                to_attach.append(file_id)
            elif file_id in before and found.state in _REFERENCEABLE:
                continue  # an unchanged picture keeps its reference
            elif found.committed and found.state in _REFERENCEABLE:
                continue  # a committed file named again; the cleanup consumer re-attaches it if it was released
            elif found.state == "discarded":
                why = next(t.why for t in INVALID if t.from_state == "discarded")
                raise InvalidFileTransition("discarded", "attached", why)
            else:
                raise UnpreparedReference(
                    f"picture {file_id!r} is {found.state} and was not prepared by this save: a reference the save"
                    " never prepared"
                )
        moved = store.move(
            conn, tenant_id, to_attach, "ready", "attached", actor=actor, now=now, save_id=save_id
        )
        if len(moved) != len(to_attach):
            raise UnpreparedReference("a prepared picture changed state before its save committed")

    def _detach(
        self, conn: Connection, tenant_id: str, released: set[str], actor: str, now: datetime
    ) -> None:
        """attached -> detached for released files no saved record names any more."""
        unnamed = sorted(released - records.references(conn, tenant_id, sorted(released)))
        store.move(
            conn,
            tenant_id,
            unnamed,
            "attached",
            "detached",
            actor=actor,
            now=now,
            cleanup_due_at=now + self._settings.cleanup_delay,
        )

    # -- Item pictures. ----------------------------------------------------------------------------------------
    def item_pictures(self, tenant_id: str, item_id: str) -> ItemPictures:
        def read(conn: Connection) -> ItemPictures:
            item = get_item(conn, tenant_id, item_id)
            if item is None:
                raise FileNotFound(f"no item {item_id}")
            return self._item_view(conn, tenant_id, item_id, item.catalog_id)

        return self._db.run(read, tenant_id=tenant_id, read_only=True)

    def save_item_pictures(
        self,
        tenant_id: str,
        item_id: str,
        main: PictureSource | None,
        gallery: Sequence[PictureSource],
        *,
        actor: str,
    ) -> ItemPictures:
        """Set the item's main picture and gallery (the whole set: a picture left out is removed)."""
        item = self._db.run(lambda c: get_item(c, tenant_id, item_id), tenant_id=tenant_id, read_only=True)
        if item is None:
            raise FileNotFound(f"no item {item_id}")
        catalog_id = item.catalog_id
        sources = ([main] if main is not None else []) + list(gallery)
        stream = self._stream(tenant_id, catalog_id)

        def commit(conn: Connection, file_ids: list[str], save_id: str) -> ItemPictures:
            cursor = publication.lock_stream(conn, stream)
            now = self._clock()
            if get_item(conn, tenant_id, item_id) is None:
                raise FileNotFound(f"no item {item_id}")
            current = records.item_pictures(conn, tenant_id, item_id, lock=True)
            before = {p.file_id for p in current}
            self._attach(conn, tenant_id, catalog_id, file_ids, before, save_id, actor, now)
            pictures: list[records.ItemPicture] = []
            rest = file_ids
            if main is not None:
                pictures.append(records.ItemPicture("main", 0, file_ids[0]))
                rest = file_ids[1:]
            pictures.extend(records.ItemPicture("gallery", i, f) for i, f in enumerate(rest))
            records.replace_item_pictures(conn, tenant_id, catalog_id, item_id, pictures, now)
            self._detach(conn, tenant_id, before - set(file_ids), actor, now)
            publication.publish(
                conn,
                stream,
                cursor,
                action=publication.SAVE_ITEM_PICTURES,
                aggregate_type=ITEM_PICTURES,
                aggregate_id=item_id,
                deleted=False,
                actor=actor,
                now=now,
            )
            return self._item_view(conn, tenant_id, item_id, catalog_id)

        return self._save(tenant_id, catalog_id, sources, actor, commit)

    def _item_view(self, conn: Connection, tenant_id: str, item_id: str, catalog_id: str) -> ItemPictures:
        pictures = records.item_pictures(conn, tenant_id, item_id)
        files = store.get_files(conn, tenant_id, [p.file_id for p in pictures])
        main = next((_view(files[p.file_id]) for p in pictures if p.slot == "main"), None)
        gallery = [_view(files[p.file_id]) for p in pictures if p.slot == "gallery"]
        return ItemPictures(item_id, catalog_id, main, gallery)

    # -- Product classes. --------------------------------------------------------------------------------------
    def create_class(
        self,
        tenant_id: str,
        catalog_id: str,
        class_id: str,
        name: str,
        *,
        picture: PictureSource | None,
        members: Sequence[str],
        actor: str,
    ) -> ClassView:
        self._check_catalog(tenant_id, catalog_id)
        sources = [picture] if picture is not None else []
        stream = self._stream(tenant_id, catalog_id)

        def commit(conn: Connection, file_ids: list[str], save_id: str) -> ClassView:
            cursor = publication.lock_stream(conn, stream)
            now = self._clock()
            self._check_members(conn, tenant_id, catalog_id, members)
            self._attach(conn, tenant_id, catalog_id, file_ids, set(), save_id, actor, now)
            if not records.insert_class(
                conn, tenant_id, catalog_id, class_id, name, file_ids[0] if file_ids else None, now
            ):
                raise ClassExists(f"class {class_id} exists")
            records.replace_members(conn, tenant_id, catalog_id, class_id, sorted(set(members)))
            self._publish_class(conn, stream, cursor, class_id, actor, now)
            return self._class_view(conn, tenant_id, class_id)

        return self._save(tenant_id, catalog_id, sources, actor, commit)

    def update_class(
        self,
        tenant_id: str,
        class_id: str,
        *,
        name: str | None,
        picture: PictureSource | _Keep | None,
        members: Sequence[str] | None,
        actor: str,
    ) -> ClassView:
        """Change the name, the picture (``KEEP``: unchanged; None: removed) and the members (None: unchanged)."""
        found = self._db.run(
            lambda c: records.get_class(c, tenant_id, class_id), tenant_id=tenant_id, read_only=True
        )
        if found is None:
            raise FileNotFound(f"no class {class_id}")
        catalog_id = found.catalog_id
        sources: list[PictureSource] = (
            [picture] if isinstance(picture, UploadSource | ArtifactSource | UrlSource | ExistingFile) else []
        )
        stream = self._stream(tenant_id, catalog_id)

        def commit(conn: Connection, file_ids: list[str], save_id: str) -> ClassView:
            cursor = publication.lock_stream(conn, stream)
            now = self._clock()
            current = records.get_class(conn, tenant_id, class_id, lock=True)
            if current is None:
                raise FileNotFound(f"no class {class_id}")
            before = {current.picture_file_id} if current.picture_file_id else set()
            if members is not None:
                self._check_members(conn, tenant_id, catalog_id, members)
            self._attach(conn, tenant_id, catalog_id, file_ids, before, save_id, actor, now)
            picture_id = (
                current.picture_file_id if isinstance(picture, _Keep) else (file_ids[0] if file_ids else None)
            )
            records.update_class(conn, tenant_id, class_id, name or current.name, picture_id, now)
            if members is not None:
                records.replace_members(conn, tenant_id, catalog_id, class_id, sorted(set(members)))
            self._detach(conn, tenant_id, before - ({picture_id} if picture_id else set()), actor, now)
            self._publish_class(conn, stream, cursor, class_id, actor, now)
            return self._class_view(conn, tenant_id, class_id)

        return self._save(tenant_id, catalog_id, sources, actor, commit)

    def delete_class(self, tenant_id: str, class_id: str, *, actor: str) -> None:
        """Delete the class with its memberships and detach its picture; an unknown class is ``FileNotFound``."""

        found = self._db.run(
            lambda c: records.get_class(c, tenant_id, class_id), tenant_id=tenant_id, read_only=True
        )
        if found is None:
            raise FileNotFound(f"no class {class_id}")
        stream = self._stream(tenant_id, found.catalog_id)

        def delete(conn: Connection) -> None:
            cursor = publication.lock_stream(conn, stream)
            now = self._clock()
            current = records.get_class(conn, tenant_id, class_id, lock=True)
            if current is None:
                raise FileNotFound(f"no class {class_id}")
            if current.picture_file_id:
                store.get_files(conn, tenant_id, [current.picture_file_id], lock=True)
            records.delete_class(conn, tenant_id, class_id)
            if current.picture_file_id:
                self._detach(conn, tenant_id, {current.picture_file_id}, actor, now)
            publication.publish(
                conn,
                stream,
                cursor,
                action=publication.DELETE_PRODUCT_CLASS,
                aggregate_type=PRODUCT_CLASS,
                aggregate_id=class_id,
                deleted=True,
                actor=actor,
                now=now,
            )

        self._db.run(delete, tenant_id=tenant_id)

    @staticmethod
    def _publish_class(
        conn: Connection,
        stream: StreamKey,
        cursor: publication.LockedCursor,
        class_id: str,
        actor: str,
        now: datetime,
    ) -> None:
        publication.publish(
            conn,
            stream,
            cursor,
            action=publication.SAVE_PRODUCT_CLASS,
            aggregate_type=PRODUCT_CLASS,
            aggregate_id=class_id,
            deleted=False,
            actor=actor,
            now=now,
        )

    def get_class(self, tenant_id: str, class_id: str) -> ClassView:
        return self._db.run(
            lambda c: self._class_view(c, tenant_id, class_id), tenant_id=tenant_id, read_only=True
        )

    def list_classes(self, tenant_id: str, catalog_id: str) -> list[ClassView]:
        """The classes of one catalog of the tenant; FileNotFound (404) for a catalog the tenant does not have,
        as a write to it (INV-06: another tenant's catalog reads as unknown, not as empty)."""

        def read(conn: Connection) -> list[ClassView]:
            _require_catalog(conn, tenant_id, catalog_id)
            return [
                self._class_view(conn, tenant_id, c.class_id)
                for c in records.list_classes(conn, tenant_id, catalog_id)
            ]

        return self._db.run(read, tenant_id=tenant_id, read_only=True)

    def _class_view(self, conn: Connection, tenant_id: str, class_id: str) -> ClassView:
        found = records.get_class(conn, tenant_id, class_id)
        if found is None:
            raise FileNotFound(f"no class {class_id}")
        picture = None
        if found.picture_file_id:
            picture = _view(store.get_files(conn, tenant_id, [found.picture_file_id])[found.picture_file_id])
        members = records.class_members(conn, tenant_id, class_id)
        return ClassView(
            found.class_id, found.catalog_id, found.name, picture, members, found.created_at, found.updated_at
        )

    def _check_catalog(self, tenant_id: str, catalog_id: str) -> None:
        self._db.run(
            lambda c: _require_catalog(c, tenant_id, catalog_id), tenant_id=tenant_id, read_only=True
        )

    @staticmethod
    def _check_members(conn: Connection, tenant_id: str, catalog_id: str, members: Sequence[str]) -> None:
        for item_id in sorted(set(members)):
            item = get_item(conn, tenant_id, item_id)
            if item is None or item.catalog_id != catalog_id:
                raise FileNotFound(f"no item {item_id} in catalog {catalog_id}")

    # -- Files. ------------------------------------------------------------------------------------------------
    def get_file(self, tenant_id: str, file_id: str) -> store.CatalogFile:
        found = self._db.run(
            lambda c: store.get_files(c, tenant_id, [file_id]), tenant_id=tenant_id, read_only=True
        )
        if file_id not in found:
            raise FileNotFound(f"no file {file_id}")
        return found[file_id]

    def failed_files(self, tenant_id: str, limit: int = 100) -> list[store.CatalogFile]:
        """Files whose cleanup exhausted its deliveries, oldest first, with the reason (operator review)."""
        return self._db.run(
            lambda c: store.files_in_state(c, tenant_id, "failed", limit), tenant_id=tenant_id, read_only=True
        )

    def retry_cleanup(self, tenant_id: str, file_id: str, *, actor: str) -> store.CatalogFile:
        """failed -> discarding with a fresh message: the consumer checks the references again."""
        queue = self._cleanup_queue
        if queue is None:
            raise RuntimeError("this service has no cleanup queue")
        now = self._clock()

        def retry(conn: Connection) -> store.CatalogFile:
            found = store.get_files(conn, tenant_id, [file_id], lock=True).get(file_id)
            if found is None:
                raise FileNotFound(f"no file {file_id}")
            if found.state != "failed":
                raise InvalidFileTransition(
                    found.state, "discarding", "only a failed file's cleanup is retried"
                )
            store.move(
                conn, tenant_id, [file_id], "failed", "discarding", actor=actor, now=now, failed_receives=0
            )
            if queue.transactional_send:
                queue.send({"tenant_id": tenant_id, "file_id": file_id}, conn=conn)
            return store.get_files(conn, tenant_id, [file_id])[file_id]

        retried = self._db.run(retry, tenant_id=tenant_id)
        if not queue.transactional_send:
            queue.send({"tenant_id": tenant_id, "file_id": file_id})
        return retried

    def history(self, tenant_id: str, file_id: str) -> list[store.HistoryEntry]:
        return self._db.run(
            lambda c: store.history(c, tenant_id, file_id), tenant_id=tenant_id, read_only=True
        )

    def read_bytes(self, tenant_id: str, file_id: str) -> bytes:
        """The file's bytes from the managed store (a retired file's until its thirty days are over)."""
        found = self.get_file(tenant_id, file_id)
        return self._store.get(parse_tenant_ref(found.object_ref, tenant_id)).data


def _view(found: store.CatalogFile) -> FileView:
    return FileView(found.file_id, found.state, found.media_type, found.size_bytes, found.sha256)


def _require_catalog(conn: Connection, tenant_id: str, catalog_id: str) -> None:
    """FileNotFound (404 NOT_FOUND) unless the tenant has the catalog."""
    try:
        release_policy(conn, tenant_id, catalog_id)
    except LookupError as error:
        raise FileNotFound(f"no catalog {catalog_id}") from error
