"""PostgreSQL queue specifics: sending inside the caller's transaction, the role grants of migration 0002, and
what the tables keep for operators."""

from __future__ import annotations

import threading

import pytest

from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.db.errors import InsufficientPrivilege
from prw_platform.queues import (
    MAX_RECEIVES_EXCEEDED,
    PLATFORM_QUEUES,
    PostgresQueue,
    QueueSpec,
    Received,
)
from tests.integration.queues.conftest import make_postgres_queue, unique_queue_name
from tests.integration.queues.delivery import receive_one

Databases = dict[str | None, Database]


class RolledBack(Exception):
    """Raised inside a transaction to roll it back."""


def test_send_inside_a_rolled_back_transaction_leaves_no_message(queue_dbs: Databases) -> None:
    db = queue_dbs[roles.RESOLVER_APP]
    queue = make_postgres_queue(db)

    def send_then_fail() -> None:
        with db.transaction(tenant_id="ten_primary") as conn:
            queue.send({"job_id": "cap_1:extract:1"}, message_id="cap_1:extract:1", conn=conn)
            raise RolledBack

    with pytest.raises(RolledBack):
        send_then_fail()

    assert queue.receive(10) == []
    assert queue.depth().visible == 0


def test_send_inside_the_callers_transaction_is_invisible_until_it_commits(queue_dbs: Databases) -> None:
    db = queue_dbs[roles.RESOLVER_APP]
    queue = make_postgres_queue(db)

    with db.transaction(tenant_id="ten_primary") as conn:
        queue.send({"job_id": "cap_1:extract:1"}, message_id="cap_1:extract:1", conn=conn)
        # Another pooled connection sees nothing yet.
        assert queue.receive(10) == []

    assert receive_one(queue, visibility_timeout=60).message_id == "cap_1:extract:1"


def test_relay_publishes_and_marks_in_one_transaction_and_product_consumes(queue_dbs: Databases) -> None:
    # AW-03 on the PostgreSQL backend: the relay may insert the message in its own transaction.
    name = unique_queue_name()
    relay = PostgresQueue(queue_dbs[roles.RESOLVER_RELAY], name)
    product = PostgresQueue(queue_dbs[roles.PRODUCT_APP], name)

    with queue_dbs[roles.RESOLVER_RELAY].transaction() as conn:
        relay.send({"event_id": "evt_0142"}, message_id="ten_primary/cat_primary/h1/evt_0142", conn=conn)

    message = receive_one(product, visibility_timeout=60)
    assert message.body == {"event_id": "evt_0142"}
    assert product.ack(message.handle) is True


def test_relay_can_send_but_never_take_messages(queue_dbs: Databases) -> None:
    relay = PostgresQueue(queue_dbs[roles.RESOLVER_RELAY], unique_queue_name())
    relay.send({"event_id": "evt_1"})

    with pytest.raises(InsufficientPrivilege):
        relay.receive(1)
    with pytest.raises(InsufficientPrivilege):
        relay.depth()


def test_product_consumer_cannot_send_or_redrive(queue_dbs: Databases) -> None:
    name = unique_queue_name()
    PostgresQueue(queue_dbs[roles.RESOLVER_RELAY], name).send({"event_id": "evt_1"})
    product = PostgresQueue(queue_dbs[roles.PRODUCT_APP], name)

    with pytest.raises(InsufficientPrivilege):
        product.send({"event_id": "evt_2"})
    message = receive_one(product, visibility_timeout=60)
    # if_accepted_change: an unknown tenant/catalog goes to the DLQ (SCOPE_NOT_PROJECTED).
    assert product.dead_letter(message, "SCOPE_NOT_PROJECTED") is True
    [dead] = product.dead_letters()
    with pytest.raises(InsufficientPrivilege):
        product.redrive([dead.dead_letter_id])


@pytest.mark.parametrize("role", [roles.RESOLVER_APP, roles.PRODUCT_APP])
def test_consumers_cannot_rewrite_a_message_body_or_queue(queue_dbs: Databases, role: str) -> None:
    queue = make_postgres_queue(queue_dbs[roles.RESOLVER_APP])
    queue.send({"tenant_id": "ten_primary"})

    with pytest.raises(InsufficientPrivilege):
        queue_dbs[role].run(
            lambda conn: conn.execute('UPDATE queue.message SET body = \'{"tenant_id": "x"}\'')
        )
    with pytest.raises(InsufficientPrivilege):
        queue_dbs[role].run(
            lambda conn: conn.execute("UPDATE queue.message SET queue_name = 'accepted-changes'")
        )


@pytest.mark.parametrize("spec", PLATFORM_QUEUES, ids=lambda spec: spec.name)
def test_platform_queue_bindings_are_granted(queue_dbs: Databases, spec: QueueSpec) -> None:
    # The queues are shared by name across tests here, so each message is found by its own id.
    message_id = f"binding-{unique_queue_name()}"
    for producer in spec.producers:
        PostgresQueue(queue_dbs[producer], spec.name).send({"check": spec.interface}, message_id=message_id)
    consumer = PostgresQueue(queue_dbs[spec.consumer], spec.name)

    taken: list[Received] = []
    while not any(m.message_id == message_id for m in taken):
        batch = consumer.receive(10, visibility_timeout=60, wait_seconds=1)
        assert batch, f"{message_id} was not delivered on {spec.name}"
        taken.extend(batch)
    for message in taken:
        assert consumer.ack(message.handle) is True


def test_exhausted_message_keeps_its_delivery_history_in_the_dead_letter_table(queue_dbs: Databases) -> None:
    queue = make_postgres_queue(queue_dbs[roles.RESOLVER_APP], max_receives=1)
    queue.send({"n": 1}, message_id="poison")
    first = receive_one(queue, visibility_timeout=1)

    while not queue.dead_letters():
        assert queue.receive(1, visibility_timeout=1, wait_seconds=1) == []

    row = queue_dbs[None].run(
        lambda conn: conn.execute(
            "SELECT message_key, receive_count, reason, enqueued_at, first_received_at, body::text AS body, "
            "dead_lettered_at IS NOT NULL AS stamped "
            "FROM queue.dead_letter WHERE queue_name = %s",
            (queue.name,),
        ).fetchone()
    )
    assert row == {
        "message_key": "poison",
        "receive_count": 1,
        "reason": MAX_RECEIVES_EXCEEDED,
        "enqueued_at": first.enqueued_at,
        "first_received_at": first.first_received_at,
        "body": '{"n":1}',
        "stamped": True,
    }


def test_depth_counts_are_exact(queue_dbs: Databases) -> None:
    queue = make_postgres_queue(queue_dbs[roles.RESOLVER_APP])
    queue.send({"n": 1}, message_id="to-dead")
    queue.dead_letter(receive_one(queue, visibility_timeout=60), "SCHEMA_INVALID")
    queue.send({"n": 2}, message_id="in-flight")
    receive_one(queue, visibility_timeout=600)
    queue.send({"n": 3}, message_id="delayed", delay_seconds=600)
    queue.send({"n": 4}, message_id="visible")

    depth = queue.depth()
    assert (depth.visible, depth.in_flight, depth.delayed, depth.dead, depth.approximate) == (
        1,
        1,
        1,
        1,
        False,
    )


def test_waiting_receive_returns_a_message_sent_meanwhile(queue_dbs: Databases) -> None:
    queue = make_postgres_queue(queue_dbs[roles.RESOLVER_APP])
    started = threading.Event()
    got: list[str] = []

    def wait_for_one() -> None:
        started.set()
        got.extend(m.message_id for m in queue.receive(1, visibility_timeout=60, wait_seconds=20))

    waiter = threading.Thread(target=wait_for_one)
    waiter.start()
    started.wait()
    queue.send({"n": 1}, message_id="arrived")
    waiter.join()

    assert got == ["arrived"]


def test_queue_rows_are_not_tenant_scoped(queue_dbs: Databases) -> None:
    # Queue rows are platform infrastructure: tenant ids travel only as data and consumers re-check them.
    db = queue_dbs[roles.RESOLVER_APP]
    queue = make_postgres_queue(db)
    with db.transaction(tenant_id="ten_primary") as conn:
        queue.send({"tenant_id": "ten_primary"}, conn=conn)

    with db.transaction(tenant_id="ten_other") as conn:
        count = conn.execute(
            "SELECT count(*) AS n FROM queue.message WHERE queue_name = %s", (queue.name,)
        ).fetchone()
    assert count == {"n": 1}
    rls = queue_dbs[None].run(
        lambda conn: conn.execute(
            "SELECT bool_or(relrowsecurity) AS rls FROM pg_class WHERE oid IN "
            "('queue.message'::regclass, 'queue.dead_letter'::regclass)"
        ).fetchone()
    )
    assert rls == {"rls": False}
