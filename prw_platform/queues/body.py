"""Message bodies: a JSON object or raw bytes, checked once so that both backends carry them unchanged.

A JSON body must survive ``json.dumps`` -> PostgreSQL ``json`` (kept as text) or an SQS string -> ``json.loads``
and compare equal to what was sent. That rules out non-string keys and tuples (they come back changed) and NaN
and infinities (not JSON). Bytes travel as ``bytea`` in PostgreSQL and as base64 text in SQS.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from prw_platform.queues.errors import MessageBodyInvalid

#: A body is at most 180 KiB (JSON text as UTF-8, or raw bytes): base64 plus our message attributes then stay
#: under 256 KiB, the SQS message size limit that older queues still have (new ones allow 1 MiB).
MAX_BODY_BYTES = 180 * 1024

JsonObject = dict[str, Any]
Body = JsonObject | bytes
BodyKind = Literal["json", "bytes"]


@dataclass(frozen=True, slots=True)
class EncodedBody:
    kind: BodyKind
    #: Compact JSON text for ``json``; None for ``bytes``.
    text: str | None
    #: The raw bytes for ``bytes``; None for ``json``.
    data: bytes | None

    @property
    def size(self) -> int:
        if self.data is not None:
            return len(self.data)
        return len((self.text or "").encode())


def encode_body(body: Body) -> EncodedBody:
    """Validate ``body`` and give its transport form; raises ``MessageBodyInvalid``."""
    if isinstance(body, bytes | bytearray | memoryview):
        data = bytes(body)
        _check_size(len(data))
        return EncodedBody("bytes", None, data)
    if not isinstance(body, dict):
        raise MessageBodyInvalid(f"a message body is a JSON object or bytes, not {type(body).__name__}")
    try:
        text = json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        size = len(text.encode())  # a lone surrogate cannot be UTF-8
    except (TypeError, ValueError) as exc:
        raise MessageBodyInvalid(f"the message body is not JSON: {exc}") from exc
    _check_size(size)
    if json.loads(text) != body:
        raise MessageBodyInvalid(
            "the message body does not survive a JSON round trip (non-string keys, tuples)"
        )
    return EncodedBody("json", text, None)


def decode_json(text: str) -> JsonObject:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise MessageBodyInvalid("the stored JSON body is not an object")
    return value


def _check_size(size: int) -> None:
    if size > MAX_BODY_BYTES:
        raise MessageBodyInvalid(f"the message body is {size} bytes; the limit is {MAX_BODY_BYTES}")
