"""Filesystem ObjectStore, the embedded default (if_object_storage: "filesystem temp envelope + fsync + exclusive
atomic link").

Layout: one file per object at ``<root>/<bucket>/<tenant>/<sha256>``. The file is an *envelope*: one JSON header
line (format, key, sha256, size, media_type) followed by exactly ``size`` raw bytes. Metadata and bytes live in
the same inode, so they cannot commit separately; a separate sidecar file would need two commits and a rule for
a sidecar whose data never arrived.

Commit protocol of ``put_if_absent`` and why a crash at any point leaves either no object or a complete one:

1. Write the envelope to ``.<sha256>.<random>.tmp`` in the object's own directory, ``fsync`` it, close it.
   A crash here leaves only a temp file, which no reader looks at (names starting with a dot are never keys).
2. ``os.link(tmp, final)``: atomic and exclusive. It fails with ``FileExistsError`` when the key exists, so an
   existing object is never replaced (no rename-over). The temp inode was fsynced before it got the final
   name, so whenever ``final`` exists its content is complete.
3. ``fsync`` the directory so the new name survives power loss, then unlink the temp name. A crash between the
   link and the unlink leaves the complete object plus a temp hard link to it.

Temp files left by a crash are removed by ``remove_stale_temp_files``; temp files of a failed call are removed
by the call itself. Concurrent puts of one key (threads or processes) race only at step 2: exactly one link
succeeds; the others read the winner's header and return "already stored" or raise the conflict.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO

from prw_platform.storage.errors import (
    DigestMismatch,
    ImmutableMetadataConflict,
    ObjectNotFound,
    StorageUnavailable,
)
from prw_platform.storage.keys import ObjectKey
from prw_platform.storage.port import (
    ObjectMetadata,
    PresignedPut,
    PutResult,
    StoredObject,
    check_deletable,
    check_presign,
    check_put,
    conflict_reason,
    sha256_hex,
)

ENVELOPE_FORMAT = "prw-object/1"
_HEADER_LIMIT = 4096
_TEMP_NAME = re.compile(r"\.[0-9a-f]{64}\.[0-9a-f]{16}\.tmp")
# INV-05: objects are immutable, so their files are read-only from the start.
_OBJECT_MODE = 0o444


class FilesystemObjectStore:
    def __init__(self, root: Path, *, protected_buckets: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.protected_buckets = protected_buckets

    def path_of(self, key: ObjectKey) -> Path:
        return self.root / key.bucket / key.tenant_id / key.sha256

    def put_if_absent(self, key: ObjectKey, data: bytes, sha256: str, media_type: str) -> PutResult:
        check_put(key, data, sha256, media_type)
        final = self.path_of(key)
        with _unavailable_on_os_error(key):
            if final.exists():
                return self._already_stored(key, final, sha256, len(data), media_type)
            self._ensure_directory(final.parent)
            temp = final.parent / f".{sha256}.{secrets.token_hex(8)}.tmp"
            try:
                _write_envelope(temp, key, data, sha256, media_type)
                try:
                    os.link(temp, final)
                except FileExistsError:
                    return self._already_stored(key, final, sha256, len(data), media_type)
                _fsync_directory(final.parent)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(temp)
        return PutResult(stored=True, etag=sha256, size=len(data))

    def _already_stored(
        self, key: ObjectKey, final: Path, sha256: str, size: int, media_type: str
    ) -> PutResult:
        try:
            existing = self.head(key)
        except DigestMismatch as error:
            # The caller's bytes are fine (checked before writing); the stored object is not, and is never
            # replaced (INV-05): an operator repairs it.
            raise ImmutableMetadataConflict(f"{key} is stored but unreadable: {error}") from error
        reason = conflict_reason(existing, sha256, size, media_type, key=key)
        if reason is not None:
            raise ImmutableMetadataConflict(reason)
        # The writer that linked it may have crashed before its directory fsync: make "already stored" durable.
        _fsync_directory(final.parent)
        return PutResult(stored=False, etag=existing.etag, size=existing.size)

    def get(self, key: ObjectKey, *, verify: bool = False) -> StoredObject:
        with self._open(key) as file:
            metadata = _read_header(file, key)
            data = file.read()
        if len(data) != metadata.size:
            raise DigestMismatch(f"{key} is truncated: {len(data)} of {metadata.size} bytes")
        if verify and sha256_hex(data) != metadata.sha256:
            raise DigestMismatch(f"{key} is corrupt: its bytes no longer hash to {metadata.sha256}")
        return StoredObject(
            data=data,
            sha256=metadata.sha256,
            size=metadata.size,
            media_type=metadata.media_type,
            etag=metadata.etag,
        )

    def head(self, key: ObjectKey) -> ObjectMetadata:
        with self._open(key) as file:
            return _read_header(file, key)

    def exists(self, key: ObjectKey) -> bool:
        with _unavailable_on_os_error(key):
            return self.path_of(key).is_file()

    def delete(self, key: ObjectKey) -> None:
        check_deletable(key, self.protected_buckets)
        final = self.path_of(key)
        with _unavailable_on_os_error(key):
            try:
                os.unlink(final)
            except FileNotFoundError:
                return
            _fsync_directory(final.parent)

    def presign_put(
        self, key: ObjectKey, sha256: str, size: int, media_type: str, ttl: timedelta
    ) -> PresignedPut | None:
        """None: a filesystem has no presigning; uploads stream through the resolver (if_artifact_upload)."""
        check_presign(key, sha256, size, media_type, ttl)
        return None

    def remove_stale_temp_files(self, older_than: timedelta) -> int:
        """Remove temp files a crashed writer left behind (older than ``older_than``); return how many."""
        deadline = time.time() - older_than.total_seconds()
        removed = 0
        with _unavailable_on_os_error(None):
            for temp in self._temp_files():
                with contextlib.suppress(FileNotFoundError):
                    if temp.stat().st_mtime < deadline:
                        temp.unlink()
                        removed += 1
        return removed

    def _temp_files(self) -> Iterator[Path]:
        if not self.root.is_dir():
            return
        for candidate in self.root.glob("*/*/.*.tmp"):
            if _TEMP_NAME.fullmatch(candidate.name):
                yield candidate

    @contextlib.contextmanager
    def _open(self, key: ObjectKey) -> Iterator[BinaryIO]:
        with _unavailable_on_os_error(key):
            try:
                with open(self.path_of(key), "rb") as file:
                    yield file
            except FileNotFoundError:
                # Only open() can raise it: the caller's block reads an already open file.
                raise ObjectNotFound(f"{key} is not stored") from None

    def _ensure_directory(self, directory: Path) -> None:
        if directory.is_dir():
            return
        missing: list[Path] = []
        candidate = directory
        while not candidate.is_dir():
            missing.append(candidate)
            candidate = candidate.parent
        for new_directory in reversed(missing):
            with contextlib.suppress(FileExistsError):
                new_directory.mkdir()
            # A new directory entry is durable only once its parent is fsynced.
            _fsync_directory(new_directory.parent)


@contextlib.contextmanager
def _unavailable_on_os_error(key: ObjectKey | None) -> Iterator[None]:
    try:
        yield
    except OSError as error:
        where = f" for {key}" if key is not None else ""
        raise StorageUnavailable(f"filesystem object store failed{where}: {error}") from error


def _write_envelope(temp: Path, key: ObjectKey, data: bytes, sha256: str, media_type: str) -> None:
    header = {
        "format": ENVELOPE_FORMAT,
        "key": key.path,
        "sha256": sha256,
        "size": len(data),
        "media_type": media_type,
        "stored_at": datetime.now(UTC).isoformat(),
    }
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _OBJECT_MODE)
    with os.fdopen(descriptor, "wb") as file:
        file.write(json.dumps(header, separators=(",", ":")).encode("ascii") + b"\n")
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _read_header(file: BinaryIO, key: ObjectKey) -> ObjectMetadata:
    line = file.readline(_HEADER_LIMIT)
    try:
        if not line.endswith(b"\n"):
            raise ValueError("header line is missing or too long")
        header = json.loads(line)
        if header["format"] != ENVELOPE_FORMAT or header["key"] != key.path:
            raise ValueError(f"envelope is {header['format']} of {header['key']}")
        metadata = ObjectMetadata(
            sha256=str(header["sha256"]),
            size=int(header["size"]),
            media_type=str(header["media_type"]),
            etag=str(header["sha256"]),
        )
    except (ValueError, KeyError, TypeError) as error:
        raise DigestMismatch(f"{key} has a corrupt envelope: {error}") from error
    stored_length = os.fstat(file.fileno()).st_size - len(line)
    if stored_length != metadata.size or metadata.sha256 != key.sha256:
        raise DigestMismatch(
            f"{key} is corrupt: {stored_length} bytes stored for size {metadata.size}, sha256 {metadata.sha256}"
        )
    return metadata


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
