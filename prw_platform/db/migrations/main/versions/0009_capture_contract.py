"""The capture contract (if_capture_submit): where a collector ran, the 7-day Idempotency-Key window, receipt status.

Revision ID: 0009
Revises: 0007

- ``resolver.capture.execution_region`` and ``egress`` (jsonb, null when the collector did not send them):
  if_source_fetch "execution_region and egress are recorded on the capture and are never treated as a market".
  They say where the collector ran and how it reached the site; no query derives a market, a price region or a
  shipping destination from them.
- The Idempotency-Key dedupe window (if_capture_submit: "Dedupe window PROP 7 days"). 0001 made the key unique
  per tenant for ever, so a key reused after the window would violate it. Receipts are immutable history
  (INV-05: an old receipt stays readable by its id), so instead of rewriting or deleting the old row each use of
  a key gets a ``key_generation``: 1 for its first use, n + 1 when the key comes back after generation n's window
  expired. The unique constraint becomes (tenant_id, idempotency_key, key_generation): two receipts can never
  claim the same use of a key, and the latest generation is one index probe. Intake serializes uses of a key on
  an advisory lock, so the next generation is always the latest + 1.
- Receipt status (if_receipt_get): ``stored`` when intake commits it, then ``accepted`` (a decision committed),
  ``in_review`` (a review case opened) or ``failed`` with ``reason`` (the dead-letter code). A receipt status of
  accepted never means applied: nothing here follows the product service. The resolution consumer changes it
  through ``prw_platform.resolver.intake.receipts`` in the transaction of its results, so resolver_app may update
  exactly these three columns; everything else of a receipt stays immutable.
"""

from alembic import op

revision = "0009"
down_revision = "0007"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE resolver.capture
    ADD COLUMN execution_region jsonb CHECK (execution_region IS NULL OR jsonb_typeof(execution_region) = 'object'),
    ADD COLUMN egress jsonb CHECK (egress IS NULL OR jsonb_typeof(egress) = 'object');

ALTER TABLE resolver.receipt
    ADD COLUMN key_generation integer NOT NULL DEFAULT 1 CHECK (key_generation >= 1),
    ADD COLUMN reason text,
    ADD COLUMN status_changed_at timestamptz,
    ADD CONSTRAINT receipt_status_known CHECK (status IN ('stored', 'accepted', 'in_review', 'failed')),
    ADD CONSTRAINT receipt_failed_has_reason CHECK ((status = 'failed') = (reason IS NOT NULL));
ALTER TABLE resolver.receipt DROP CONSTRAINT receipt_tenant_id_idempotency_key_key;
ALTER TABLE resolver.receipt
    ADD CONSTRAINT receipt_idempotency_key_generation UNIQUE (tenant_id, idempotency_key, key_generation);
-- The resolution consumer finds a capture's receipt by capture_id.
CREATE INDEX receipt_capture ON resolver.receipt (tenant_id, capture_id);

GRANT UPDATE (status, reason, status_changed_at) ON resolver.receipt TO resolver_app;
"""

DOWNGRADE = """
REVOKE UPDATE (status, reason, status_changed_at) ON resolver.receipt FROM resolver_app;
DROP INDEX resolver.receipt_capture;
DELETE FROM resolver.receipt r WHERE key_generation > 1;
ALTER TABLE resolver.receipt DROP CONSTRAINT receipt_idempotency_key_generation;
ALTER TABLE resolver.receipt ADD CONSTRAINT receipt_tenant_id_idempotency_key_key UNIQUE (tenant_id, idempotency_key);
ALTER TABLE resolver.receipt
    DROP CONSTRAINT receipt_failed_has_reason,
    DROP CONSTRAINT receipt_status_known,
    DROP COLUMN status_changed_at,
    DROP COLUMN reason,
    DROP COLUMN key_generation;
UPDATE resolver.receipt SET status = 'stored';
ALTER TABLE resolver.capture DROP COLUMN egress, DROP COLUMN execution_region;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
