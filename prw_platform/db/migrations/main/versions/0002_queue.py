"""Queue schema: named queues in one message table, and their dead letters (ADR-009).

Revision ID: 0002
Revises: 0001

``queue.message`` holds every named queue (``resolution-jobs``, ``resolution-replays``, ``accepted-changes``);
a consumer takes rows with ``FOR UPDATE SKIP LOCKED`` ordered by ``visible_after`` and, in the same short
transaction, bumps ``receive_count``, pushes ``visible_after`` out by the visibility timeout and sets a fresh
``delivery_token``. Ack, retry and dead-letter match on (id, delivery_token), so a stale handle never touches a
newer delivery. ``queue.dead_letter`` is the DLQ of every queue, with the reason code.

Queue rows are platform infrastructure, not tenant data: no row-level security. Messages carry tenant ids only as
data, and each consumer re-checks them against its own rows (if_resolution_job, if_accepted_change, INV-06).

Grants (least privilege, if_db; the queue bindings are ``prw_platform.queues.names``):

* resolver_relay produces ``accepted-changes``: INSERT on message, nothing else. It cannot read, take or delete
  any message (sending needs no RETURNING: message ids are made by the caller).
* resolver_app produces and consumes ``resolution-jobs`` and ``resolution-replays``: INSERT, SELECT, DELETE on
  message and UPDATE of the delivery columns only (never the body or queue name). On dead_letter it may SELECT,
  INSERT and DELETE: it dead-letters its messages, and its admin API is the operator surface that inspects and
  redrives (redrive = DELETE dead_letter + INSERT message).
* product_app consumes ``accepted-changes``: SELECT, DELETE and UPDATE of the delivery columns on message, SELECT
  and INSERT on dead_letter. It produces to no queue, so it cannot INSERT messages (and so cannot redrive; the
  operator does that as resolver_app or as the owner).

Table privileges cannot tell one queue name from another without RLS, which this schema deliberately does not
use; the per-queue binding is kept by each service building only its own queues (composition root).
"""

from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

QUEUE_TABLES = """
CREATE SCHEMA queue;

CREATE TABLE queue.message (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_name         text NOT NULL CHECK (queue_name ~ '^[a-z][a-z0-9-]{0,59}$'),
    -- ADR-009: the key consumers dedupe on in their inbox; not unique here (the queue is at-least-once).
    message_key        text NOT NULL CHECK (length(message_key) BETWEEN 1 AND 256),
    -- json, not jsonb: the text is kept as sent, so every body round-trips (jsonb re-renders numbers, e.g.
    -- 1.7976931348623157e308 comes back as an integer literal) and operators can still use ->> on it.
    body               json,
    body_bytes         bytea,
    enqueued_at        timestamptz NOT NULL DEFAULT now(),
    visible_after      timestamptz NOT NULL DEFAULT now(),
    receive_count      integer NOT NULL DEFAULT 0 CHECK (receive_count >= 0),
    first_received_at  timestamptz,
    -- A fresh token per delivery; NULL while the message waits (never received, or put back by retry_later).
    delivery_token     uuid,
    CHECK ((body IS NULL) <> (body_bytes IS NULL))
) WITH (
    -- Every message is inserted, updated per delivery and deleted: vacuum early so dead tuples do not pile up.
    autovacuum_vacuum_scale_factor = 0.01,
    autovacuum_vacuum_insert_scale_factor = 0.01
);
CREATE INDEX message_due ON queue.message (queue_name, visible_after);

CREATE TABLE queue.dead_letter (
    id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_name         text NOT NULL,
    message_key        text NOT NULL,
    body               json,
    body_bytes         bytea,
    enqueued_at        timestamptz NOT NULL,
    first_received_at  timestamptz,
    receive_count      integer NOT NULL CHECK (receive_count >= 0),
    -- The seed's code: TENANT_MISMATCH, DIGEST_MISMATCH, SCHEMA_INVALID, SCOPE_NOT_PROJECTED,
    -- MAX_RECEIVES_EXCEEDED, ...
    reason             text NOT NULL CHECK (reason ~ '^[A-Z][A-Z0-9_]{0,63}$'),
    detail             text CHECK (length(detail) <= 1000),
    dead_lettered_at   timestamptz NOT NULL DEFAULT now(),
    CHECK ((body IS NULL) <> (body_bytes IS NULL))
);
CREATE INDEX dead_letter_by_queue ON queue.dead_letter (queue_name, id);
"""

DELIVERY_COLUMNS = "visible_after, receive_count, first_received_at, delivery_token"


def upgrade() -> None:
    op.execute(QUEUE_TABLES)
    op.execute("REVOKE ALL ON SCHEMA queue FROM PUBLIC")
    op.execute("GRANT USAGE ON SCHEMA queue TO resolver_app, resolver_relay, product_app")

    op.execute("GRANT INSERT ON queue.message TO resolver_relay")

    op.execute("GRANT SELECT, INSERT, DELETE ON queue.message TO resolver_app")
    op.execute(f"GRANT UPDATE ({DELIVERY_COLUMNS}) ON queue.message TO resolver_app")
    op.execute("GRANT SELECT, INSERT, DELETE ON queue.dead_letter TO resolver_app")

    op.execute("GRANT SELECT, DELETE ON queue.message TO product_app")
    op.execute(f"GRANT UPDATE ({DELIVERY_COLUMNS}) ON queue.message TO product_app")
    op.execute("GRANT SELECT, INSERT ON queue.dead_letter TO product_app")


def downgrade() -> None:
    op.execute("DROP SCHEMA queue CASCADE")
