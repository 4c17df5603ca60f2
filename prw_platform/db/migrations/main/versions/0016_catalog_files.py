"""Managed catalog files (seed 004, STATE-COM-CAT-004): pictures of items and product classes.

Revision ID: 0016_catalog_files
Revises: 0018_replays (re-chained when branches merged)

- ``catalog_file``: one managed copy of a picture in the catalog-files bucket, in one of the seed's eight states.
- ``catalog_file_transition``: the seed's transitions as data (trigger, guard, side effects, actor), and
  ``catalog_file_invalid_transition`` the two it names as impossible, with why. A trigger on ``catalog_file``
  refuses any state change that is not a row of the first table (with the reason of the second when it names the
  pair), and refuses a file created in any state but ``preparing``: no code path can skip the machine.
- ``catalog_file_history``: every state a file entered, who made the change and when; written by the trigger only
  (a SECURITY DEFINER function), so it cannot be left out or written by hand.
- ``item_picture`` (an item's main picture and its gallery), ``product_class`` (a category with a picture) and
  ``product_class_member`` (its items): the saved records that reference files.

Tenant-scoped with row-level security like 0003 (INV-06). The files sweep runs as ``resolver_sweeper`` across
tenants (it claims due files and re-checks references), so that role reads and updates files and reads the
referencing tables under its own policies; ``prw_operator`` reads them for the reports.
"""

from alembic import op

revision = "0016_catalog_files"
down_revision = "0018_replays"
branch_labels = None
depends_on = None

STATES = ("preparing", "ready", "attached", "detached", "abandoned", "discarding", "discarded", "failed")

# (from, to, trigger, guard, side effects, actor): seed 004 "transitions", word for word.
TRANSITIONS = (
    (
        "preparing",
        "ready",
        "Asset copying finishes successfully.",
        "The asset source must be readable by the pipeline.",
        "The pending record receives the prepared permanent asset reference.",
        "The saving request",
    ),
    (
        "ready",
        "attached",
        "The parent save commits the prepared reference.",
        "The save must have prepared the reference it commits.",
        "",
        "The saving request",
    ),
    (
        "ready",
        "abandoned",
        "The parent save fails after copying.",
        "No additional condition applies.",
        "",
        "The saving request",
    ),
    (
        "attached",
        "detached",
        "A saved change or removal releases the reference.",
        "A retained unchanged picture bypasses detachment and keeps its existing reference.",
        "",
        "The saving or deleting request",
    ),
    (
        "detached",
        "discarding",
        "The scheduled sweep claims a due released file.",
        "The cleanup due instant must have arrived.",
        "Cleanup publishes an individual work message for the file.",
        "Scheduled asset sweep",
    ),
    (
        "abandoned",
        "discarding",
        "The scheduled sweep claims a due abandoned copy.",
        "The cleanup due instant must have arrived.",
        "Cleanup publishes an individual work message for the file.",
        "Scheduled asset sweep",
    ),
    (
        "discarding",
        "discarded",
        "Queue processing finishes cleanup.",
        "The workspace-scoped owner check must find no retained reference.",
        "Released assets receive thirty-day retirement; uncommitted copies are deleted.",
        "Cleanup queue consumer",
    ),
    (
        "discarding",
        "attached",
        "Settlement finds that a saved record still retains the reference.",
        "A saved owner record must still name the asset.",
        "The referenced asset is retained.",
        "Cleanup queue consumer",
    ),
    (
        "discarding",
        "failed",
        "The final queue delivery cannot complete cleanup.",
        "The receipt must be the final permitted retry after earlier failures.",
        "The failed row records the reason and the queue sends exhausted work for operator review.",
        "Cleanup queue consumer",
    ),
    # Operator review (failed files are listed and retried on the admin origin): a retry hands the
    # file back to the consumer with a fresh delivery count.
    (
        "failed",
        "discarding",
        "An operator retries a failed cleanup.",
        "The file must be failed.",
        "Cleanup publishes an individual work message for the file.",
        "Operator (operator_admin)",
    ),
)

INVALID = (
    (
        "discarded",
        "attached",
        "A retired or deleted asset requires fresh preparation before another attachment.",
    ),
    ("preparing", "attached", "The parent transaction can attach only a successfully prepared reference."),
)

TABLES = """
CREATE TABLE resolver.catalog_file_transition (
    from_state    text NOT NULL,
    to_state      text NOT NULL,
    trigger       text NOT NULL,
    guard         text NOT NULL,
    side_effects  text NOT NULL,
    actor         text NOT NULL,
    PRIMARY KEY (from_state, to_state)
);

CREATE TABLE resolver.catalog_file_invalid_transition (
    from_state  text NOT NULL,
    to_state    text NOT NULL,
    why         text NOT NULL,
    PRIMARY KEY (from_state, to_state)
);

CREATE TABLE resolver.catalog_file (
    tenant_id          text NOT NULL,
    catalog_id         text NOT NULL,
    file_id            text NOT NULL CHECK (file_id ~ '^fil_[0-9a-f]{24}$'),
    state              text NOT NULL CHECK (state IN ('preparing', 'ready', 'attached', 'detached', 'abandoned',
                                                      'discarding', 'discarded', 'failed')),
    -- The save that prepared the file: only that save may attach it (ready -> attached guard).
    save_id            text NOT NULL,
    origin             text NOT NULL CHECK (origin IN ('upload', 'artifact', 'url')),
    origin_detail      text,
    object_ref         text NOT NULL,
    sha256             text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size_bytes         bigint NOT NULL CHECK (size_bytes >= 0),
    media_type         text NOT NULL,
    -- True once a save committed the file: a released file is retired, an uncommitted copy deleted.
    committed          boolean NOT NULL DEFAULT false,
    cleanup_due_at     timestamptz,
    retained_until     timestamptz,
    bytes_deleted_at   timestamptz,
    failed_receives    integer NOT NULL DEFAULT 0 CHECK (failed_receives >= 0),
    failure_reason     text,
    -- Who made the last state change and when: the trigger copies them into catalog_file_history.
    state_actor        text NOT NULL,
    state_changed_at   timestamptz NOT NULL,
    created_at         timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, file_id),
    UNIQUE (tenant_id, catalog_id, file_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog
);
-- The sweep's claim: due detached and abandoned files, oldest first.
CREATE INDEX catalog_file_due ON resolver.catalog_file (cleanup_due_at)
    WHERE state IN ('detached', 'abandoned');
-- Retired bytes whose thirty days are over.
CREATE INDEX catalog_file_retired ON resolver.catalog_file (retained_until)
    WHERE state = 'discarded' AND bytes_deleted_at IS NULL;
CREATE INDEX catalog_file_object ON resolver.catalog_file (tenant_id, object_ref);

CREATE TABLE resolver.catalog_file_history (
    tenant_id   text NOT NULL,
    file_id     text NOT NULL,
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    from_state  text,
    to_state    text NOT NULL,
    actor       text NOT NULL,
    at          timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, file_id, seq),
    FOREIGN KEY (tenant_id, file_id) REFERENCES resolver.catalog_file
);

CREATE TABLE resolver.item_picture (
    tenant_id   text NOT NULL,
    catalog_id  text NOT NULL,
    item_id     text NOT NULL,
    slot        text NOT NULL CHECK (slot IN ('main', 'gallery')),
    position    integer NOT NULL CHECK (position >= 0 AND (slot = 'gallery' OR position = 0)),
    file_id     text NOT NULL,
    updated_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, item_id, slot, position),
    FOREIGN KEY (tenant_id, catalog_id, item_id) REFERENCES resolver.catalog_item (tenant_id, catalog_id, item_id),
    FOREIGN KEY (tenant_id, catalog_id, file_id) REFERENCES resolver.catalog_file (tenant_id, catalog_id, file_id)
);
CREATE INDEX item_picture_file ON resolver.item_picture (tenant_id, file_id);

CREATE TABLE resolver.product_class (
    tenant_id        text NOT NULL,
    catalog_id       text NOT NULL,
    class_id         text NOT NULL CHECK (class_id ~ '^cls_[a-z0-9_]{1,120}$'),
    name             text NOT NULL CHECK (name <> ''),
    picture_file_id  text,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, class_id),
    UNIQUE (tenant_id, catalog_id, class_id),
    FOREIGN KEY (tenant_id, catalog_id) REFERENCES resolver.catalog,
    FOREIGN KEY (tenant_id, catalog_id, picture_file_id)
        REFERENCES resolver.catalog_file (tenant_id, catalog_id, file_id)
);
CREATE INDEX product_class_picture ON resolver.product_class (tenant_id, picture_file_id)
    WHERE picture_file_id IS NOT NULL;

CREATE TABLE resolver.product_class_member (
    tenant_id   text NOT NULL,
    catalog_id  text NOT NULL,
    class_id    text NOT NULL,
    item_id     text NOT NULL,
    PRIMARY KEY (tenant_id, class_id, item_id),
    FOREIGN KEY (tenant_id, catalog_id, class_id) REFERENCES resolver.product_class (tenant_id, catalog_id, class_id)
        ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, catalog_id, item_id) REFERENCES resolver.catalog_item (tenant_id, catalog_id, item_id)
);
"""

# STATE-COM-CAT-004 enforced in the database: a file starts in preparing; every state change is a row of
# catalog_file_transition; the two invalid pairs say why. Then the history row, written here and nowhere else.
GUARD = """
CREATE FUNCTION resolver.catalog_file_guard() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, resolver AS $$
DECLARE
    reason text;
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.state <> 'preparing' THEN
            RAISE EXCEPTION 'catalog file % must start in preparing, not %', NEW.file_id, NEW.state
                USING ERRCODE = 'check_violation', CONSTRAINT = 'catalog_file_transition';
        END IF;
    ELSIF NEW.state IS DISTINCT FROM OLD.state THEN
        IF NOT EXISTS (SELECT 1 FROM resolver.catalog_file_transition
                       WHERE from_state = OLD.state AND to_state = NEW.state) THEN
            SELECT why INTO reason FROM resolver.catalog_file_invalid_transition
                WHERE from_state = OLD.state AND to_state = NEW.state;
            RAISE EXCEPTION 'catalog file %: % -> % is not a transition of STATE-COM-CAT-004%', NEW.file_id,
                OLD.state, NEW.state, coalesce(': ' || reason, '')
                USING ERRCODE = 'check_violation', CONSTRAINT = 'catalog_file_transition';
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION resolver.catalog_file_record() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, resolver AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.state IS DISTINCT FROM OLD.state THEN
        INSERT INTO resolver.catalog_file_history (tenant_id, file_id, from_state, to_state, actor, at)
        VALUES (NEW.tenant_id, NEW.file_id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.state END, NEW.state,
                NEW.state_actor, NEW.state_changed_at);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER catalog_file_guard BEFORE INSERT OR UPDATE ON resolver.catalog_file
    FOR EACH ROW EXECUTE FUNCTION resolver.catalog_file_guard();
CREATE TRIGGER catalog_file_record AFTER INSERT OR UPDATE ON resolver.catalog_file
    FOR EACH ROW EXECUTE FUNCTION resolver.catalog_file_record();
"""

# (table, privileges for resolver_app).
TENANT_TABLES = (
    ("catalog_file", "SELECT, INSERT, UPDATE"),
    ("catalog_file_history", "SELECT"),
    ("item_picture", "SELECT, INSERT, UPDATE, DELETE"),
    ("product_class", "SELECT, INSERT, UPDATE, DELETE"),
    ("product_class_member", "SELECT, INSERT, DELETE"),
)
TENANT_PREDICATE = "tenant_id = current_setting('app.tenant_id', true)"


def upgrade() -> None:
    op.execute(TABLES)
    for from_state, to_state, trigger, guard, effects, actor in TRANSITIONS:
        op.execute(
            "INSERT INTO resolver.catalog_file_transition VALUES "
            f"({_q(from_state)}, {_q(to_state)}, {_q(trigger)}, {_q(guard)}, {_q(effects)}, {_q(actor)})"
        )
    for from_state, to_state, why in INVALID:
        op.execute(
            "INSERT INTO resolver.catalog_file_invalid_transition VALUES "
            f"({_q(from_state)}, {_q(to_state)}, {_q(why)})"
        )
    op.execute(GUARD)
    for table in ("catalog_file_transition", "catalog_file_invalid_transition"):
        op.execute(f"GRANT SELECT ON resolver.{table} TO resolver_app, resolver_sweeper, prw_operator")
    for table, privileges in TENANT_TABLES:
        op.execute(f"GRANT {privileges} ON resolver.{table} TO resolver_app")
        op.execute(f"GRANT SELECT ON resolver.{table} TO prw_operator")
        op.execute(f"ALTER TABLE resolver.{table} ENABLE ROW LEVEL SECURITY")
        if table != "catalog_file_history":
            # The history is written by the SECURITY DEFINER trigger (the table owner): not forced.
            op.execute(f"ALTER TABLE resolver.{table} FORCE ROW LEVEL SECURITY")
        op.execute(
            f"CREATE POLICY tenant_isolation ON resolver.{table} TO resolver_app "
            f"USING ({TENANT_PREDICATE}) WITH CHECK ({TENANT_PREDICATE})"
        )
        op.execute(f"CREATE POLICY operator_read ON resolver.{table} FOR SELECT TO prw_operator USING (true)")
    # The files sweep (resolver_sweeper) claims due files of every tenant and retires their bytes.
    op.execute("GRANT SELECT, UPDATE ON resolver.catalog_file TO resolver_sweeper")
    op.execute(
        "CREATE POLICY files_sweep ON resolver.catalog_file TO resolver_sweeper USING (true) WITH CHECK (true)"
    )
    # ... and sends one message per claimed file on catalog-file-cleanup (queue.message, migration 0002).
    op.execute("GRANT USAGE ON SCHEMA queue TO resolver_sweeper")
    op.execute("GRANT INSERT ON queue.message TO resolver_sweeper")


def downgrade() -> None:
    op.execute("REVOKE INSERT ON queue.message FROM resolver_sweeper")
    op.execute("REVOKE USAGE ON SCHEMA queue FROM resolver_sweeper")
    for table in (
        "product_class_member",
        "product_class",
        "item_picture",
        "catalog_file_history",
        "catalog_file",
        "catalog_file_invalid_transition",
        "catalog_file_transition",
    ):
        op.execute(f"DROP TABLE resolver.{table}")
    op.execute("DROP FUNCTION resolver.catalog_file_guard()")
    op.execute("DROP FUNCTION resolver.catalog_file_record()")


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
