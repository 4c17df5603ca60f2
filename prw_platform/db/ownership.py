"""Which module owns each table: the one place the ownership rule is written down.

STYLE.md: "SQL lives next to the module that owns the table; another module calls that module, it does not query
the table." Every table is written by exactly one module, its owner, and read by others only through it. The
documented exception are the operator read models (``REPORT_READERS``): they read any table of their side, run as
the read-only ``prw_operator`` role, and write nothing.

``tests/unit/test_table_ownership.py`` scans the SQL of ``prw_platform`` against this map, and
``tests/integration/test_table_ownership_schema.py`` checks that every table the migrations create is in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

#: Schema-qualified table -> the dotted name of the module that owns it.
TABLE_OWNERS: Final[Mapping[str, str]] = MappingProxyType(
    {
        # The control database (history epochs).
        "control.history_epoch": "prw_platform.epochs",
        # Tenants, catalogs and their sources.
        "resolver.tenant": "prw_platform.resolver.catalogs",
        "resolver.catalog": "prw_platform.resolver.catalogs",
        "resolver.source": "prw_platform.resolver.catalogs",
        # Collector OAuth clients.
        "resolver.collector_client": "prw_platform.auth.clients",
        "resolver.collector_client_source": "prw_platform.auth.clients",
        # Operator sessions of the admin origin (if_operator_session).
        "resolver.operator_session": "prw_platform.auth.operators",
        # Intake (AW-02).
        "resolver.artifact": "prw_platform.resolver.intake.artifacts",
        "resolver.artifact_upload": "prw_platform.resolver.intake.artifacts",
        "resolver.capture": "prw_platform.resolver.intake.captures",
        "resolver.capture_artifact": "prw_platform.resolver.intake.captures",
        "resolver.receipt": "prw_platform.resolver.intake.receipts",
        "resolver.resolution_job": "prw_platform.resolver.intake.jobs",
        # Collector registration, leases and heartbeats (if_collector_bootstrap, if_heartbeat).
        "resolver.collector_instance": "prw_platform.resolver.intake.workers",
        "resolver.collector_heartbeat": "prw_platform.resolver.intake.workers",
        # Resolution.
        "resolver.consumer_inbox": "prw_platform.resolver.resolution.results",
        "resolver.resolution_result": "prw_platform.resolver.resolution.results",
        "resolver.extracted_claim": "prw_platform.resolver.resolution.results",
        "resolver.normalized_attribute": "prw_platform.resolver.resolution.results",
        # LLM proposals and advice (if_llm_extract, if_llm_review): annotations, never facts.
        "resolver.llm_extraction": "prw_platform.resolver.assist.store",
        "resolver.llm_advice": "prw_platform.resolver.assist.store",
        "resolver.llm_usage": "prw_platform.resolver.assist.store",
        # Decisions (AW-01), the outbox and releases.
        "resolver.decision": "prw_platform.resolver.decisions.records",
        "resolver.review_case": "prw_platform.resolver.decisions.cases",
        "resolver.catalog_item": "prw_platform.resolver.decisions.facts",
        "resolver.listing": "prw_platform.resolver.decisions.facts",
        "resolver.listing_mapping": "prw_platform.resolver.decisions.facts",
        "resolver.inventory_observation": "prw_platform.resolver.decisions.facts",
        "resolver.item_identifier": "prw_platform.resolver.decisions.identity",
        "resolver.stream_cursor": "prw_platform.resolver.stream.cursor",
        "resolver.outbox": "prw_platform.resolver.stream.outbox",
        "resolver.outbox_relay_pause": "prw_platform.resolver.stream.outbox",
        # Retention control and snapshot exports (AW-03 "Prune", if_projection_bootstrap).
        "resolver.retention_stream": "prw_platform.resolver.stream.retention",
        "resolver.retention_consumer": "prw_platform.resolver.stream.retention",
        "resolver.retention_lease": "prw_platform.resolver.stream.retention",
        "resolver.export_snapshot": "prw_platform.resolver.exports.snapshots",
        "resolver.release": "prw_platform.resolver.decisions.releases",
        "resolver.release_pointer": "prw_platform.resolver.decisions.releases",
        "resolver.released_item": "prw_platform.resolver.decisions.releases",
        "resolver.released_listing": "prw_platform.resolver.decisions.releases",
        # Merchants, source bindings and shipping policies (operator decisions, AW-01).
        "resolver.merchant": "prw_platform.resolver.decisions.merchants",
        # What each catalog's releases published of the merchant facts (0014_released_merchants).
        "resolver.released_merchant": "prw_platform.resolver.decisions.releases",
        "resolver.released_merchant_source": "prw_platform.resolver.decisions.releases",
        "resolver.released_shipping_policy": "prw_platform.resolver.decisions.releases",
        "resolver.merchant_source": "prw_platform.resolver.decisions.merchants",
        "resolver.shipping_policy": "prw_platform.resolver.decisions.merchants",
        # Improvements and replays, listed by the admin origin (if_admin_read).
        "resolver.improvement": "prw_platform.resolver.improvements.store",
        "resolver.improvement_transition": "prw_platform.resolver.improvements.store",
        "resolver.replay": "prw_platform.resolver.improvements.replay_store",
        "resolver.identity_generation": "prw_platform.resolver.resolution.generations",
        "resolver.replay_capture": "prw_platform.resolver.improvements.replay_store",
        # Managed catalog files (seed 004, 0016_catalog_files): the files, their lifecycle table and history.
        "resolver.catalog_file": "prw_platform.resolver.files.store",
        "resolver.catalog_file_transition": "prw_platform.resolver.files.store",
        "resolver.catalog_file_invalid_transition": "prw_platform.resolver.files.store",
        "resolver.catalog_file_history": "prw_platform.resolver.files.store",
        # The saved records that reference them: item pictures and product classes.
        "resolver.item_picture": "prw_platform.resolver.files.records",
        "resolver.product_class": "prw_platform.resolver.files.records",
        "resolver.product_class_member": "prw_platform.resolver.files.records",
        # Their accepted-change revisions (item_pictures, product_class) and what releases published of them.
        "resolver.catalog_file_aggregate": "prw_platform.resolver.files.records",
        "resolver.released_file_aggregate": "prw_platform.resolver.decisions.releases",
        # The PostgreSQL queue (the embedded default of the Queue port).
        "queue.message": "prw_platform.queues.postgres",
        "queue.dead_letter": "prw_platform.queues.postgres",
        # The product consumer (AW-04).
        "product.inbox": "prw_platform.product.consumer.inbox",
        "product.parked_event": "prw_platform.product.consumer.inbox",
        "product.applied_revision": "prw_platform.product.consumer.projection",
        "product.item_projection": "prw_platform.product.consumer.projection",
        "product.listing_projection": "prw_platform.product.consumer.projection",
        "product.listing_mapping_projection": "prw_platform.product.consumer.projection",
        "product.merchant_projection": "prw_platform.product.consumer.merchant_projection",
        "product.merchant_source_projection": "prw_platform.product.consumer.merchant_projection",
        "product.shipping_policy_projection": "prw_platform.product.consumer.merchant_projection",
        "product.inventory_observation": "prw_platform.product.consumer.merchant_projection",
        "product.item_pictures_projection": "prw_platform.product.consumer.picture_projection",
        "product.product_class_projection": "prw_platform.product.consumer.picture_projection",
        "product.progress": "prw_platform.product.progress",
        "product.projected_scope": "prw_platform.product.scopes",
        # Product rebuilds into an isolated generation (if_projection_bootstrap).
        "product.rebuild": "prw_platform.product.rebuild.records",
        # The released public snapshot: written by releases.py, read by queries.py, both through this module.
        "product.public_item": "prw_platform.product.public.store",
        "product.public_listing": "prw_platform.product.public.store",
        "product.release_pointer": "prw_platform.product.public.store",
        "product.public_merchant": "prw_platform.product.public.store",
        "product.public_merchant_source": "prw_platform.product.public.store",
        "product.public_shipping_policy": "prw_platform.product.public.store",
        "product.public_item_pictures": "prw_platform.product.public.store",
        "product.public_class": "prw_platform.product.public.store",
        "product.public_item_redirect": "prw_platform.product.public.store",
    }
)

#: Tables no Python code writes: reference data a migration inserts (the lifecycle table of seed 004) and a
#: history a trigger writes (so no code path can leave it out). Their owner module reads them.
DATABASE_WRITTEN: Final[frozenset[str]] = frozenset(
    {
        "resolver.catalog_file_transition",
        "resolver.catalog_file_invalid_transition",
        "resolver.catalog_file_history",
    }
)

#: Operator read models (run as ``prw_operator`` through the operator database): module -> the schemas whose
#: tables it may read without owning them. They write nothing.
REPORT_READERS: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "prw_platform.resolver.reports": frozenset({"resolver"}),
        "prw_platform.product.reports": frozenset({"product"}),
    }
)
