"""The PostgreSQL queue (the embedded default): named queues in ``queue.message``, dead letters in
``queue.dead_letter`` (migration 0002).

A receive is one short transaction: lock visible rows ``FOR UPDATE SKIP LOCKED`` in ``due_at`` order, move the
ones already delivered ``max_receives`` times to the DLQ, and give the others a new ``visible_after``, a bumped
``receive_count`` and a fresh ``delivery_token``. Parallel consumers skip each other's locked rows and, once the
transaction commits, the rows are invisible, so no two consumers hold the same message while it is invisible.
Ack, retry and dead-letter match on the row id *and* the token, so a handle from an earlier delivery does nothing.

The claim changes no indexed column (migration 0022): ``due_at``, the receive order and the index range, is set by
the send (now plus the delay) and by ``retry_later`` only; ``visible_after`` says whether a consumer holds the
message. ``due_at <= visible_after`` always holds (a send and ``retry_later`` set both alike, a claim pushes
``visible_after`` past now), so ``visible_after <= now()`` alone still says "visible" (``depth``), and
``due_at <= now()`` is only the index range that stops the scan at the first message not due yet. With the
table's free space per page, a claim is a HOT update: the row is rewritten in its page and no index is touched.
A receive steps over the rows other consumers hold (they are at the front of ``due_at`` order until acked), a few
hundred per consumer at most.

The queue works through the caller's ``Database``, whose role decides what it may do (0002's grants). ``send``
with ``conn`` joins the caller's open transaction instead (AW-02's sweeper, or a producer that wants the message
to commit with its own rows); the database clock of that transaction is the enqueue time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString, TypeVar
from uuid import UUID

from psycopg.rows import class_row, tuple_row

from prw_platform.db.database import Connection, Database
from prw_platform.db.errors import DatabaseUnavailable
from prw_platform.queues.body import Body, JsonObject, encode_body
from prw_platform.queues.errors import QueueUnavailable
from prw_platform.queues.port import (
    MAX_RECEIVES_EXCEEDED,
    POSTGRES_RECEIVE_LIMIT,
    DeadLetter,
    OutgoingMessage,
    QueueDepth,
    ReceiptHandle,
    Received,
    check_delay,
    check_max_receives,
    check_message_id,
    check_queue_name,
    check_reason,
    check_receive,
    check_visibility_timeout,
)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _DeadLetterRow:
    dead_letter_id: str
    queue_name: str
    message_key: str
    body: JsonObject | None
    body_bytes: bytes | None
    enqueued_at: datetime
    receive_count: int
    reason: str
    detail: str | None
    dead_lettered_at: datetime


@dataclass(frozen=True, slots=True)
class _Depth:
    visible: int
    in_flight: int
    delayed: int
    dead: int


_INSERT = """
INSERT INTO queue.message (queue_name, message_key, body, body_bytes, visible_after, due_at)
VALUES (%(queue)s, %(key)s, %(body)s::json, %(bytes)s, now() + %(delay)s * interval '1 second',
        now() + %(delay)s * interval '1 second')
"""

# ADR-009: the receive that would be delivery max_receives + 1 dead-letters the message instead of delivering it.
# RETURNING order: ``PostgresQueue._received`` unpacks it.
_RECEIVE = """
WITH due AS (
    SELECT id, receive_count FROM queue.message
    WHERE queue_name = %(queue)s AND due_at <= now() AND visible_after <= now()
    ORDER BY due_at
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
), exhausted AS (
    DELETE FROM queue.message m USING due
    WHERE m.id = due.id AND due.receive_count >= %(max_receives)s
    RETURNING m.*
), dead AS (
    INSERT INTO queue.dead_letter
        (queue_name, message_key, body, body_bytes, enqueued_at, first_received_at, receive_count, reason)
    SELECT queue_name, message_key, body, body_bytes, enqueued_at, first_received_at, receive_count, %(reason)s
    FROM exhausted
)
UPDATE queue.message m
SET receive_count = m.receive_count + 1,
    visible_after = now() + %(visibility)s * interval '1 second',
    first_received_at = coalesce(m.first_received_at, now()),
    delivery_token = gen_random_uuid()
FROM due
WHERE m.id = due.id AND due.receive_count < %(max_receives)s
RETURNING m.id, m.message_key, m.body, m.body_bytes, m.receive_count, m.enqueued_at, m.first_received_at,
          m.visible_after, m.delivery_token
"""

_ACK = "DELETE FROM queue.message WHERE id = %s AND delivery_token = %s"
_ACK_BATCH = """
DELETE FROM queue.message m USING unnest(%s::bigint[], %s::uuid[]) AS d(id, token)
WHERE m.id = d.id AND m.delivery_token = d.token
RETURNING m.id
"""

# A message put back for later is settled for this delivery: clearing the token retires the handle.
_RETRY_LATER = """
UPDATE queue.message
SET visible_after = now() + %(delay)s * interval '1 second', due_at = now() + %(delay)s * interval '1 second',
    delivery_token = NULL
WHERE id = %(id)s AND delivery_token = %(token)s
"""

_DEAD_LETTER = """
WITH taken AS (
    DELETE FROM queue.message WHERE id = %(id)s AND delivery_token = %(token)s RETURNING *
)
INSERT INTO queue.dead_letter
    (queue_name, message_key, body, body_bytes, enqueued_at, first_received_at, receive_count, reason, detail)
SELECT queue_name, message_key, body, body_bytes, enqueued_at, first_received_at, receive_count,
       %(reason)s, %(detail)s
FROM taken
"""

_DEAD_LETTERS = """
SELECT id::text AS dead_letter_id, queue_name, message_key, body, body_bytes, enqueued_at, receive_count, reason,
       detail, dead_lettered_at
FROM queue.dead_letter WHERE queue_name = %s ORDER BY id LIMIT %s
"""

# Redrive: a new delivery history (receive_count 0, visible now), like a new send.
_REDRIVE = """
WITH moved AS (
    DELETE FROM queue.dead_letter WHERE queue_name = %s AND id = ANY(%s) RETURNING *
)
INSERT INTO queue.message (queue_name, message_key, body, body_bytes)
SELECT queue_name, message_key, body, body_bytes FROM moved
"""

_DISCARD = "DELETE FROM queue.dead_letter WHERE queue_name = %s AND id = ANY(%s)"

_DEPTH = """
SELECT count(*) FILTER (WHERE visible_after <= now()) AS visible,
       count(*) FILTER (WHERE visible_after > now() AND delivery_token IS NOT NULL) AS in_flight,
       count(*) FILTER (WHERE visible_after > now() AND delivery_token IS NULL) AS delayed,
       (SELECT count(*) FROM queue.dead_letter WHERE queue_name = %(queue)s) AS dead
FROM queue.message WHERE queue_name = %(queue)s
"""


class PostgresQueue:
    transactional_send = True
    receive_limit = POSTGRES_RECEIVE_LIMIT

    def __init__(
        self,
        db: Database,
        name: str,
        *,
        max_receives: int = 5,
        visibility_timeout: int = 60,
        poll_interval_seconds: float = 0.2,
    ) -> None:
        self._db = db
        self._name = check_queue_name(name)
        self._max_receives = check_max_receives(max_receives)
        self._visibility_timeout = check_visibility_timeout(visibility_timeout)
        self._poll_interval = poll_interval_seconds

    @property
    def name(self) -> str:
        return self._name

    @property
    def max_receives(self) -> int:
        return self._max_receives

    def send(
        self,
        body: Body,
        *,
        message_id: str | None = None,
        delay_seconds: int = 0,
        conn: Connection | None = None,
    ) -> str:
        ids = self.send_batch([OutgoingMessage(body, message_id, delay_seconds)], conn=conn)
        return ids[0]

    def send_batch(self, messages: Sequence[OutgoingMessage], *, conn: Connection | None = None) -> list[str]:
        ids: list[str] = []
        params: list[dict[str, object]] = []
        for message in messages:
            encoded = encode_body(message.body)
            message_id = check_message_id(message.message_id)
            ids.append(message_id)
            params.append(
                {
                    "queue": self._name,
                    "key": message_id,
                    "body": encoded.text,
                    "bytes": encoded.data,
                    "delay": check_delay(message.delay_seconds),
                }
            )
        if not params:
            return ids

        def insert(c: Connection) -> None:
            with c.cursor() as cur:
                cur.executemany(_INSERT, params)

        if conn is not None:
            insert(conn)
        else:
            self._run(insert)
        return ids

    def receive(
        self,
        max_messages: int = 1,
        *,
        visibility_timeout: int | None = None,
        wait_seconds: int = 0,
    ) -> list[Received]:
        check_receive(max_messages, wait_seconds, self.receive_limit)
        visibility = check_visibility_timeout(
            self._visibility_timeout if visibility_timeout is None else visibility_timeout
        )
        params = {
            "queue": self._name,
            "limit": max_messages,
            "max_receives": self._max_receives,
            "reason": MAX_RECEIVES_EXCEEDED,
            "visibility": visibility,
        }
        deadline = time.monotonic() + wait_seconds
        while True:
            # Pipelined: BEGIN, the tenant setting and the receive go in one round trip, the COMMIT in another.
            delivered = self._run(
                # Plain tuples in ``_RECEIVE``'s RETURNING order: up to 400 rows per receive on the apply path.
                lambda c: c.cursor(row_factory=tuple_row).execute(_RECEIVE, params).fetchall(),
                pipeline=True,
            )
            if delivered or time.monotonic() >= deadline:
                return [self._received(delivery) for delivery in delivered]
            time.sleep(min(self._poll_interval, max(0.0, deadline - time.monotonic())))

    def ack(self, handle: ReceiptHandle) -> bool:
        row_id, token = self._delivery(handle)
        return self._run(lambda c: c.execute(_ACK, (row_id, token)).rowcount) == 1

    def ack_batch(self, handles: Sequence[ReceiptHandle]) -> list[bool]:
        if not handles:
            return []
        deliveries = [self._delivery(handle) for handle in handles]
        deleted = self._run(
            lambda c: {
                row[0]
                for row in c.cursor(row_factory=tuple_row)
                .execute(_ACK_BATCH, ([d[0] for d in deliveries], [d[1] for d in deliveries]))
                .fetchall()
            },
            pipeline=True,
        )
        return [row_id in deleted for row_id, _ in deliveries]

    def retry_later(self, handle: ReceiptHandle, delay_seconds: int) -> bool:
        row_id, token = self._delivery(handle)
        delay = check_visibility_timeout(delay_seconds)
        params = {"delay": delay, "id": row_id, "token": token}
        return self._run(lambda c: c.execute(_RETRY_LATER, params).rowcount) == 1

    def dead_letter(self, message: Received, reason: str, *, detail: str | None = None) -> bool:
        check_reason(reason, detail)
        row_id, token = self._delivery(message.handle)
        params = {"id": row_id, "token": token, "reason": reason, "detail": detail}
        return self._run(lambda c: c.execute(_DEAD_LETTER, params).rowcount) == 1

    def dead_letters(self, limit: int = 100) -> list[DeadLetter]:
        rows = self._run(
            lambda c: (
                c.cursor(row_factory=class_row(_DeadLetterRow))
                .execute(_DEAD_LETTERS, (self._name, limit))
                .fetchall()
            )
        )
        return [
            DeadLetter(
                dead_letter_id=row.dead_letter_id,
                queue=row.queue_name,
                message_id=row.message_key,
                body=_body(row.body, row.body_bytes),
                reason=row.reason,
                detail=row.detail,
                receive_count=row.receive_count,
                enqueued_at=row.enqueued_at,
                dead_lettered_at=row.dead_lettered_at,
            )
            for row in rows
        ]

    def redrive(self, dead_letter_ids: Sequence[str]) -> int:
        return self._on_dead_letters(_REDRIVE, dead_letter_ids)

    def discard(self, dead_letter_ids: Sequence[str]) -> int:
        return self._on_dead_letters(_DISCARD, dead_letter_ids)

    def _on_dead_letters(self, statement: LiteralString, dead_letter_ids: Sequence[str]) -> int:
        ids = [int(i) for i in dead_letter_ids if i.isdigit()]
        if not ids:
            return 0
        return self._run(lambda c: c.execute(statement, (self._name, ids)).rowcount)

    def depth(self) -> QueueDepth:
        depth = self._run(
            lambda c: (
                c.cursor(row_factory=class_row(_Depth)).execute(_DEPTH, {"queue": self._name}).fetchone()
            )
        )
        assert depth is not None  # an aggregate always returns one row
        return QueueDepth(
            queue=self._name,
            visible=depth.visible,
            in_flight=depth.in_flight,
            delayed=depth.delayed,
            dead=depth.dead,
            approximate=False,
        )

    def _run(self, work: Callable[[Connection], T], *, pipeline: bool = False) -> T:
        try:
            return self._db.run(work, pipeline=pipeline)
        except DatabaseUnavailable as exc:
            raise QueueUnavailable(str(exc)) from exc

    def _received(self, row: tuple[Any, ...]) -> Received:
        (
            row_id,
            message_key,
            body,
            body_bytes,
            receive_count,
            enqueued_at,
            first_received_at,
            visible_after,
            token,
        ) = row
        return Received(
            message_id=message_key,
            body=_body(body, body_bytes),
            handle=ReceiptHandle(
                queue=self._name,
                message_id=message_key,
                delivery=f"{row_id}:{token}",
                invisible_until=visible_after,
            ),
            receive_count=receive_count,
            enqueued_at=enqueued_at,
            first_received_at=first_received_at,
            max_receives=self._max_receives,
        )

    def _delivery(self, handle: ReceiptHandle) -> tuple[int, UUID]:
        if handle.queue != self._name:
            raise ValueError(f"a receipt handle of queue {handle.queue!r} used on {self._name!r}")
        row_id, _, token = handle.delivery.partition(":")
        try:
            return int(row_id), UUID(token)
        except ValueError as exc:
            raise ValueError(f"not a PostgreSQL queue receipt handle: {handle.delivery!r}") from exc


def _body(body: JsonObject | None, body_bytes: bytes | None) -> Body:
    if body_bytes is not None:
        return body_bytes
    assert body is not None  # migration 0002: a message has a JSON body or a bytes body
    return body
