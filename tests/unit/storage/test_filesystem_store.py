"""Filesystem backend: on-disk layout, crash safety of the commit protocol, and cross-process exclusivity.

if_object_storage: "filesystem temp envelope + fsync + exclusive atomic link". The shared behaviour is in
``tests/integration/storage/test_object_store_contract.py``; this file covers what only a filesystem can get wrong.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from prw_platform.config import Settings
from prw_platform.storage import (
    DigestMismatch,
    FilesystemObjectStore,
    ImmutableMetadataConflict,
    StorageUnavailable,
    build_object_store,
    evidence_key,
)

HTML = b"<html><body>Halden 2 TB NVMe</body></html>\n<p>second line</p>"
HTML_SHA256 = hashlib.sha256(HTML).hexdigest()
TENANT = "ten_primary"
KEY = evidence_key(TENANT, HTML_SHA256)

# A child process that puts HTML into the store at argv[1]; argv[2] says where it dies: "link" (os.link never
# runs), "after_link" (the name is committed, the temp name and directory fsync are not), or "none". It prints
# "ready", waits for a line on stdin, then puts, so a parent can release several children together.
CHILD = r"""
import os, sys
from pathlib import Path
from prw_platform.storage import FilesystemObjectStore, evidence_key

root, crash_at, data_hex = sys.argv[1:4]
data = bytes.fromhex(data_hex)
real_link = os.link
if crash_at == "link":
    os.link = lambda *args, **kwargs: os._exit(70)
elif crash_at == "after_link":
    def link_then_die(*args, **kwargs):
        real_link(*args, **kwargs)
        os._exit(71)
    os.link = link_then_die
print("ready", flush=True)
sys.stdin.readline()
sha256 = __import__("hashlib").sha256(data).hexdigest()
result = FilesystemObjectStore(Path(root)).put_if_absent(evidence_key("ten_primary", sha256), data, sha256, "text/html")
print(result.stored, flush=True)
"""


class SimulatedCrash(BaseException):
    """Not an Exception: nothing in the store may catch it, like an interpreter dying mid-call."""


def spawn_child(root: Path, crash_at: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root), crash_at, HTML.hex()],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def wait_ready(child: subprocess.Popen[str]) -> subprocess.Popen[str]:
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    return child


def start_child(root: Path, crash_at: str) -> subprocess.Popen[str]:
    return wait_ready(spawn_child(root, crash_at))


def release(child: subprocess.Popen[str]) -> tuple[int, str]:
    stdout, _ = child.communicate("go\n", timeout=60)
    return child.returncode, stdout.strip()


def temp_files(store: FilesystemObjectStore) -> list[Path]:
    return sorted(store.root.glob("*/*/.*.tmp"))


@pytest.fixture
def store(tmp_path: Path) -> FilesystemObjectStore:
    return FilesystemObjectStore(tmp_path / "objects")


def test_object_is_one_read_only_envelope_at_root_bucket_tenant_sha256(store: FilesystemObjectStore) -> None:
    store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html")

    path = store.root / "evidence-private" / TENANT / HTML_SHA256
    header_line, body = path.read_bytes().split(b"\n", 1)
    header = json.loads(header_line)
    assert body == HTML
    assert header["format"] == "prw-object/1"
    assert (header["key"], header["sha256"], header["size"], header["media_type"]) == (
        KEY.path,
        HTML_SHA256,
        len(HTML),
        "text/html",
    )
    assert path.stat().st_mode & 0o777 == 0o444
    assert sorted(p.name for p in path.parent.iterdir()) == [HTML_SHA256]


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        pytest.param(SimulatedCrash(), SimulatedCrash, id="crash"),
        pytest.param(OSError(errno.EIO, "I/O error"), StorageUnavailable, id="io-error"),
    ],
)
def test_failure_at_the_link_leaves_no_object_and_no_temp_file(
    store: FilesystemObjectStore,
    monkeypatch: pytest.MonkeyPatch,
    failure: BaseException,
    expected: type[BaseException],
) -> None:
    written: list[int] = []

    def failing_link(source: str | Path, target: str | Path) -> None:
        written.append(Path(source).stat().st_size)
        raise failure

    monkeypatch.setattr(os, "link", failing_link)

    with pytest.raises(expected):
        store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html")

    monkeypatch.undo()
    assert len(written) == 1
    assert written[0] > len(HTML), "the temp envelope was fully written before the link"
    assert store.exists(KEY) is False
    assert temp_files(store) == []
    assert store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html").stored is True


def test_full_disk_while_writing_is_storage_unavailable_and_leaves_nothing(
    store: FilesystemObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync
    failed: list[int] = []

    def disk_full_on_file_fsync(descriptor: int) -> None:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return real_fsync(descriptor)
        failed.append(descriptor)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full_on_file_fsync)

    with pytest.raises(StorageUnavailable) as raised:
        store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html")

    monkeypatch.undo()
    assert failed, "the temp file was written up to its fsync"
    assert raised.value.retryable is True
    assert store.exists(KEY) is False
    assert temp_files(store) == []


def test_process_killed_before_the_link_leaves_no_object(store: FilesystemObjectStore) -> None:
    returncode, _ = release(start_child(store.root, "link"))

    assert returncode == 70
    assert store.exists(KEY) is False
    assert len(temp_files(store)) == 1, "a killed writer leaves its temp file for the sweep"
    assert store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html").stored is True
    assert store.remove_stale_temp_files(older_than=timedelta(0)) == 1
    assert temp_files(store) == []
    assert store.get(KEY, verify=True).data == HTML


def test_process_killed_after_the_link_leaves_a_complete_object(store: FilesystemObjectStore) -> None:
    returncode, _ = release(start_child(store.root, "after_link"))

    assert returncode == 71
    assert store.get(KEY, verify=True).data == HTML
    assert store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html").stored is False
    assert store.remove_stale_temp_files(older_than=timedelta(0)) == 1
    assert store.get(KEY, verify=True).data == HTML


def test_sweep_keeps_temp_files_younger_than_the_cutoff(store: FilesystemObjectStore) -> None:
    # A young temp file may belong to a put in flight in another process.
    release(start_child(store.root, "link"))

    assert store.remove_stale_temp_files(older_than=timedelta(hours=1)) == 0
    assert len(temp_files(store)) == 1


def test_concurrent_puts_from_processes_store_exactly_once(store: FilesystemObjectStore) -> None:
    children = [wait_ready(child) for child in [spawn_child(store.root, "none") for _ in range(4)]]

    outcomes = [release(child) for child in children]

    assert [returncode for returncode, _ in outcomes] == [0, 0, 0, 0]
    assert sorted(stdout for _, stdout in outcomes) == ["False", "False", "False", "True"]
    assert store.get(KEY, verify=True).data == HTML
    assert temp_files(store) == []


def test_truncated_object_is_detected_and_never_replaced(store: FilesystemObjectStore) -> None:
    store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html")
    path = store.path_of(KEY)
    path.chmod(0o644)
    path.write_bytes(path.read_bytes()[:-5])

    with pytest.raises(DigestMismatch, match="corrupt"):
        store.get(KEY)
    with pytest.raises(ImmutableMetadataConflict, match="unreadable"):
        store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html")


def test_envelope_copied_into_another_tenant_is_not_served_there(store: FilesystemObjectStore) -> None:
    # INV-06: the header names its key, so a file moved across tenant directories is refused.
    store.put_if_absent(KEY, HTML, HTML_SHA256, "text/html")
    other = evidence_key("ten_synth_b", HTML_SHA256)
    store.path_of(other).parent.mkdir(parents=True)
    shutil.copyfile(store.path_of(KEY), store.path_of(other))

    with pytest.raises(DigestMismatch, match="envelope"):
        store.get(other)


def test_presign_put_is_none_after_validating(store: FilesystemObjectStore) -> None:
    assert store.presign_put(KEY, HTML_SHA256, len(HTML), "text/html", timedelta(seconds=300)) is None
    with pytest.raises(DigestMismatch):
        store.presign_put(KEY, "0" * 64, len(HTML), "text/html", timedelta(seconds=300))


def test_root_that_is_not_a_directory_is_storage_unavailable(tmp_path: Path) -> None:
    root = tmp_path / "objects"
    root.write_text("not a directory")

    with pytest.raises(StorageUnavailable):
        FilesystemObjectStore(root).put_if_absent(KEY, HTML, HTML_SHA256, "text/html")


def test_build_object_store_defaults_to_filesystem_under_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRW_OBJECT_STORE", raising=False)

    store = build_object_store(Settings(data_dir=tmp_path))

    assert isinstance(store, FilesystemObjectStore)
    assert store.root == tmp_path / "objects"
    assert store.protected_buckets == frozenset({"evidence-private"})
