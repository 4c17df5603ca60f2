"""A 100 MB request body sent unauthenticated to the intake origin is refused with 413 before it is read: the
serving process (a separate process, like ``prw dev``: intake and product APIs in one process) grows by far less
than the body, and the product API it also serves keeps answering promptly.

Memory is read from ``/proc/<pid>/status`` (VmHWM: the peak resident set; VmRSS: the current one), not psutil.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from prw_platform.config import Settings

REPO = Path(__file__).resolve().parents[3]
MIB = 1024 * 1024
BODY_BYTES = 100 * MIB
#: The growth the refusal may cost: far less than the body itself.
MAX_GROWTH_BYTES = 100 * MIB
#: A product read while (and after) the big body is refused.
MAX_PRODUCT_SECONDS = 1.0


@dataclass(frozen=True)
class ApiProcess:
    process: subprocess.Popen[str]
    intake: str
    product: str
    pid: int

    def memory(self) -> dict[str, int]:
        """VmHWM and VmRSS of the serving process, in bytes."""
        found: dict[str, int] = {}
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            name, _, value = line.partition(":")
            if name in ("VmHWM", "VmRSS"):
                found[name] = int(value.split()[0]) * 1024
        return found


@pytest.fixture
def api_process(deployment_settings: Settings) -> Iterator[ApiProcess]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.api_process"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready = json.loads(process.stdout.readline())
        yield ApiProcess(process, ready["intake"], ready["product"], ready["pid"])
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _write_big_json(path: Path, size: int) -> Path:
    """Valid JSON of ``size`` bytes that costs the most to parse: an array of empty objects (each becomes a
    Python dict, ~20 times its 3 bytes)."""
    count = (size - 2) // 3
    path.write_bytes(b"[" + b"{}," * (count - 1) + b"{}" + b" " * (size - 2 - 3 * count + 1) + b"]")
    return path


def _post_with_curl(url: str, body: Path, *, chunked: bool) -> subprocess.Popen[str]:
    """The body is sent by another process, so the product reads below measure the server, not this process."""
    # "Expect:" switches off curl's 100-continue handshake: the whole body is sent whether or not the server
    # asks for it, as a hostile client would, so the server must discard what it refuses.
    headers = ["-H", "Content-Type: application/json", "-H", "Expect:"]
    if chunked:
        headers += ["-H", "Transfer-Encoding: chunked"]
    return subprocess.Popen(
        ["curl", "-sS", "-o", "-", "-w", "\\n%{http_code}", *headers, "--data-binary", f"@{body}", url],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_100_mb_unauthenticated_body_is_413_without_growing_the_process_or_stalling_the_product_api(
    api_process: ApiProcess, tmp_path: Path
) -> None:
    body = _write_big_json(tmp_path / "big.json", BODY_BYTES)
    captures = f"{api_process.intake}/v1/captures"
    with httpx.Client(base_url=api_process.product, timeout=30) as product:

        def timed_read() -> float:
            started = time.monotonic()
            response = product.get("/v1/items")
            assert response.status_code == 200, response.text
            return time.monotonic() - started

        # Warm both apps (imports, pools, first parse) so that "idle" is the steady state.
        for _ in range(3):
            timed_read()
            httpx.post(captures, json={"schema_version": "capture/1"}, timeout=30)
        idle = api_process.memory()

        refusals: dict[str, tuple[int, dict[str, object]]] = {}
        product_seconds: list[float] = []
        for chunked in (False, True):
            sender = _post_with_curl(captures, body, chunked=chunked)
            while sender.poll() is None:
                product_seconds.append(timed_read())
            output, _ = sender.communicate()
            text, _, status = output.rpartition("\n")
            refusals["chunked" if chunked else "announced"] = (int(status), json.loads(text)["error"])
        after = api_process.memory()
        product_after = timed_read()

    growth = after["VmHWM"] - idle["VmHWM"]
    print(
        f"\nserving process: idle VmHWM {idle['VmHWM'] / MIB:.1f} MiB, VmRSS {idle['VmRSS'] / MIB:.1f} MiB; "
        f"after two 100 MB bodies VmHWM {after['VmHWM'] / MIB:.1f} MiB, VmRSS {after['VmRSS'] / MIB:.1f} MiB "
        f"(peak growth {growth / MIB:.1f} MiB); product reads meanwhile: {len(product_seconds)}, slowest "
        f"{max(product_seconds, default=0):.3f} s; after: {product_after:.3f} s; refusals {refusals}"
    )
    for status, error in refusals.values():
        assert (status, error["code"], error["retryable"]) == (413, "PAYLOAD_TOO_LARGE", False)
    assert growth < MAX_GROWTH_BYTES
    assert max(product_seconds, default=0) < MAX_PRODUCT_SECONDS
    assert product_after < MAX_PRODUCT_SECONDS
