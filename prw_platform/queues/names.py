"""The platform's named queues and their bindings (which service role produces, which consumes).

Seed names: if_resolution_job ("Only the resolver Worker can produce, and only the resolver consumer can
consume"), if_replay_job (DLQ ``resolution-replay-dlq``), if_accepted_change ("resolver relay = producer, product
Worker = consumer"). The bindings document the grants of migration 0002 and are checked by its tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from prw_platform.db import roles
from prw_platform.queues.port import check_queue_name


@dataclass(frozen=True, slots=True)
class QueueSpec:
    name: str
    #: The SQS dead-letter queue's name (before the prefix). PostgreSQL keeps dead letters in one table.
    dead_letter_name: str
    #: Roles that send to this queue.
    producers: tuple[str, ...]
    #: The role that receives, acks, retries and dead-letters.
    consumer: str
    #: The seed connection the queue implements.
    interface: str


RESOLUTION_JOBS = QueueSpec(
    name="resolution-jobs",
    dead_letter_name="resolution-jobs-dlq",
    producers=(roles.RESOLVER_APP,),
    consumer=roles.RESOLVER_APP,
    interface="if_resolution_job",
)
#: if_resolution_job's later stages: "extraction -> normalization -> identity. Each stage enqueues the next stage
#: message" (``resolution-jobs`` above is the extract stage's queue, the one intake sends to). One queue per stage,
#: so each stage has its own dead-letter queue, depth and Dagster sensor, and is re-driven on its own.
RESOLUTION_NORMALIZE = QueueSpec(
    name="resolution-normalize",
    dead_letter_name="resolution-normalize-dlq",
    producers=(roles.RESOLVER_APP,),
    consumer=roles.RESOLVER_APP,
    interface="if_resolution_job",
)
RESOLUTION_IDENTITY = QueueSpec(
    name="resolution-identity",
    dead_letter_name="resolution-identity-dlq",
    producers=(roles.RESOLVER_APP,),
    consumer=roles.RESOLVER_APP,
    interface="if_resolution_job",
)
#: The queue of each ``resolution.job.v1`` stage, in pipeline order.
RESOLUTION_STAGE_QUEUES = {
    "extract": RESOLUTION_JOBS,
    "normalize": RESOLUTION_NORMALIZE,
    "identity": RESOLUTION_IDENTITY,
}
RESOLUTION_REPLAYS = QueueSpec(
    name="resolution-replays",
    dead_letter_name="resolution-replay-dlq",
    producers=(roles.RESOLVER_APP,),
    consumer=roles.RESOLVER_APP,
    interface="if_replay_job",
)
ACCEPTED_CHANGES = QueueSpec(
    name="accepted-changes",
    dead_letter_name="accepted-changes-dlq",
    producers=(roles.RESOLVER_RELAY,),
    consumer=roles.PRODUCT_APP,
    interface="if_accepted_change",
)

CATALOG_FILE_CLEANUP = QueueSpec(
    name="catalog-file-cleanup",
    dead_letter_name="catalog-file-cleanup-dlq",
    # Seed 004: the files sweep (across tenants) and an operator's retry of a failed file send; the cleanup
    # consumer settles each file in its tenant.
    producers=(roles.RESOLVER_SWEEPER, roles.RESOLVER_APP),
    consumer=roles.RESOLVER_APP,
    interface="STATE-COM-CAT-004",
)

PLATFORM_QUEUES = (
    RESOLUTION_JOBS,
    RESOLUTION_NORMALIZE,
    RESOLUTION_IDENTITY,
    RESOLUTION_REPLAYS,
    ACCEPTED_CHANGES,
    CATALOG_FILE_CLEANUP,
)
PLATFORM_QUEUE_NAMES = tuple(spec.name for spec in PLATFORM_QUEUES)


def dead_letter_queue_name(name: str) -> str:
    """The DLQ of a platform queue by its seed name; ``<name>-dlq`` for any other queue."""
    for spec in PLATFORM_QUEUES:
        if spec.name == name:
            return spec.dead_letter_name
    return f"{check_queue_name(name)}-dlq"
