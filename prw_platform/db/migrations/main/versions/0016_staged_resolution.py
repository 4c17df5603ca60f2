"""Staged resolution (if_resolution_job): one result row per stage job.

Revision ID: 0016_staged_resolution
Revises: 0016_catalog_files (re-chained when branches merged)

if_resolution_job chains three consumers, extract -> normalize -> identity, each one ``resolution.job.v1`` message
(``job_id = capture_id:stage:attempt_group``) that "writes job_id to its inbox table in the same transaction as
its results". The results stay in 0006's tables, now one row per *stage job* (a single source of truth, nothing
copied from one stage's row into the next):

- ``resolution_result.stage`` says which stage wrote the row. ``extract``: ``stage_outcome`` (extracted,
  no_adapter, extraction_failed), ``adapter``/``adapter_rule``, ``listing``, ``diagnostics``, ``error``; its claims
  are the ``extracted_claim`` rows of the extract job. ``normalize``: ``profile``/``profile_rule``, ``problems``,
  ``error``; its values are the ``normalized_attribute`` rows of the normalize job. ``identity``: ``identity`` and
  ``decision_id`` (the only stage that decides). ``all``: a row written before this migration, when one job ran
  the three stages (its claims and attributes are under that one job id).
- ``decision_id`` is set exactly on the rows that decided (identity and the earlier single-job rows).

Later stages (and improvement replays) read an earlier stage's results by its job id: the same capture and
attempt group, the other stage's name.
"""

from alembic import op

revision = "0016_staged_resolution"
down_revision = "0016_catalog_files"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """ALTER TABLE resolver.resolution_result
               ADD COLUMN stage text NOT NULL DEFAULT 'all'
                   CHECK (stage IN ('extract', 'normalize', 'identity', 'all'))"""
    )
    op.execute("ALTER TABLE resolver.resolution_result ALTER COLUMN stage DROP DEFAULT")
    op.execute("ALTER TABLE resolver.resolution_result ALTER COLUMN decision_id DROP NOT NULL")
    op.execute(
        """ALTER TABLE resolver.resolution_result ADD CONSTRAINT resolution_result_decided_by_deciding_stage
               CHECK ((decision_id IS NOT NULL) = (stage IN ('identity', 'all')))"""
    )


def downgrade() -> None:
    op.execute(
        "DELETE FROM resolver.normalized_attribute a USING resolver.resolution_result r "
        "WHERE r.tenant_id = a.tenant_id AND r.job_id = a.job_id AND r.stage <> 'all'"
    )
    op.execute(
        "DELETE FROM resolver.extracted_claim c USING resolver.resolution_result r "
        "WHERE r.tenant_id = c.tenant_id AND r.job_id = c.job_id AND r.stage <> 'all'"
    )
    op.execute("DELETE FROM resolver.resolution_result WHERE stage <> 'all'")
    op.execute(
        "ALTER TABLE resolver.resolution_result DROP CONSTRAINT resolution_result_decided_by_deciding_stage"
    )
    op.execute("ALTER TABLE resolver.resolution_result ALTER COLUMN decision_id SET NOT NULL")
    op.execute("ALTER TABLE resolver.resolution_result DROP COLUMN stage")
