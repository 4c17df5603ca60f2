"""A real SQS-protocol server for tests: moto's ThreadedMotoServer on a free loopback port.

The SQS backend runs its real boto3 code path against it (signing, JSON protocol, error parsing). What moto
5.2.5 does and does not do, so tests claim only true statements:

* It implements visibility timeouts, DelaySeconds, ChangeMessageVisibility, ApproximateReceiveCount,
  ApproximateFirstReceiveTimestamp and the redrive policy: a receive finding a message already delivered
  ``maxReceiveCount`` times moves it to the DLQ instead of delivering it (as AWS does).
* It deletes a message given *any* receipt handle it ever had, so a stale handle deletes the newer delivery
  (AWS ignores such a delete). The SQS backend's own deadline check is what keeps the contract there.
* Concurrent ReceiveMessage calls are not serialized: two parallel receivers occasionally get the same message
  while it is invisible (seen: 1 duplicate in 600 messages in 2 of 3 runs). AWS standard queues also allow this
  ("the visibility timeout isn't a guarantee against receiving a message twice"), so the contract suite does not
  claim exclusive delivery for SQS.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from moto.server import ThreadedMotoServer
from pydantic import SecretStr

from prw_platform.config import SqsSettings
from prw_platform.queues import build_sqs_client

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

#: moto accepts any credentials; fixed ones keep boto3 away from the machine's credential chain.
TEST_ACCESS_KEY_ID = "testing"
TEST_SECRET_ACCESS_KEY = "testing"


@dataclass(frozen=True)
class SqsServer:
    endpoint_url: str

    def settings(self, *, queue_prefix: str = "prw-test-") -> SqsSettings:
        return SqsSettings(
            endpoint_url=self.endpoint_url,
            region="us-east-1",
            access_key_id=TEST_ACCESS_KEY_ID,
            secret_access_key=SecretStr(TEST_SECRET_ACCESS_KEY),
            queue_prefix=queue_prefix,
        )

    def client(self) -> SQSClient:
        return build_sqs_client(self.settings())


@contextmanager
def running_sqs_server() -> Iterator[SqsServer]:
    """Start moto on 127.0.0.1 with an OS-chosen free port; stop it on exit."""
    # werkzeug logs every request line; the suite's output should show failures, not traffic.
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        yield SqsServer(endpoint_url=f"http://{host}:{port}")
    finally:
        server.stop()
