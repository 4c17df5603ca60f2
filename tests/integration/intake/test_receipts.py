"""if_receipt_get on the core services: own instance only, tenant and instance scope, unknown ids."""

from __future__ import annotations

import pytest

from prw_platform.auth.errors import MissingScope
from prw_platform.auth.scopes import ARTIFACTS_WRITE, CAPTURES_WRITE
from prw_platform.resolver.intake import (
    InstanceScopeDenied,
    IntakeService,
    NotFound,
    SubmittedCapture,
    TenantScopeDenied,
)
from tests.integration.intake.helpers import World
from tests.integration.intake.test_captures import KEY, stored_page, submission


@pytest.fixture
def submitted(world: World, intake: IntakeService) -> SubmittedCapture:
    stored_page(intake, world)
    return intake.submit_capture(world.principal(), KEY, submission())


def test_a_collector_reads_its_own_receipt(
    world: World, intake: IntakeService, submitted: SubmittedCapture
) -> None:
    receipt = intake.get_receipt(world.principal(), submitted.receipt.receipt_id)

    assert receipt == submitted.receipt


def test_a_rotated_credential_of_the_same_instance_reads_the_receipt(
    world: World, intake: IntakeService, submitted: SubmittedCapture
) -> None:
    receipt = intake.get_receipt(
        world.principal(client_id="cc_rotated00000000000"), submitted.receipt.receipt_id
    )

    assert receipt.receipt_id == submitted.receipt.receipt_id


def test_another_instance_of_the_tenant_is_instance_scope_denied(
    world: World, intake: IntakeService, submitted: SubmittedCapture
) -> None:
    with pytest.raises(InstanceScopeDenied):
        intake.get_receipt(world.principal(instance_id="ci_lumen_fra_02"), submitted.receipt.receipt_id)


def test_another_tenant_is_tenant_scope_denied(
    world: World, intake: IntakeService, submitted: SubmittedCapture
) -> None:
    with pytest.raises(TenantScopeDenied):
        intake.get_receipt(world.principal(tenant_id=world.other_tenant), submitted.receipt.receipt_id)


def test_an_unknown_receipt_is_not_found(world: World, intake: IntakeService) -> None:
    with pytest.raises(NotFound):
        intake.get_receipt(world.principal(), "rcpt_000000000000000000000000")


def test_without_receipts_read_the_lookup_is_missing_scope(
    world: World, intake: IntakeService, submitted: SubmittedCapture
) -> None:
    with pytest.raises(MissingScope):
        intake.get_receipt(
            world.principal(scopes=frozenset({ARTIFACTS_WRITE, CAPTURES_WRITE})), submitted.receipt.receipt_id
        )


def test_the_receipt_id_policy_does_not_open_other_tenants_receipts_to_a_scan(
    world: World, intake: IntakeService, submitted: SubmittedCapture
) -> None:
    # Migration 0005: naming one receipt id makes that row visible; nothing else of another tenant is.
    def scan(conn):  # type: ignore[no-untyped-def]
        conn.execute("SELECT set_config('app.receipt_id', 'rcpt_unrelated', true)")
        return conn.execute("SELECT receipt_id FROM resolver.receipt").fetchall()

    rows = intake.context.db.run(scan, tenant_id=world.other_tenant)

    assert rows == []
