"""A released item's attribute filter keys, computed when the row is written (if_product_query).

Revision ID: 0023_public_attribute_keys
Revises: 0022_queue_claims

``GET /v1/items?attr[storage:capacity]=1 TB`` matches an attribute whose value, or value and unit, equals the
text, or whose unit and value equal the canonical unit and value a profile reads the text as (1 TB is 1000 GB),
two numbers comparing as numbers ("1000" and "1000.0"). The list statement evaluated that per row: eight
extractions from ``fields`` and a regular expression and a numeric cast per candidate row, none of which a bare
page of the same rows does (bench/README.md, "Public reads over HTTP").

``public_item.attribute_keys`` holds, per attribute, the keys each of those comparisons can match, computed by
PostgreSQL from ``fields`` whenever a row is written (a stored generated column: the release path, the rebuild's
shadow load and this migration's rewrite of the existing rows all fill it); a filter is one array overlap
(``attribute_keys && ARRAY[...]``) with the keys of the text, built by the same function:

- ``v``: the value as stored (``->>'value'``), ``u``: value and unit as ``concat_ws(' ', value, unit)`` reads
  them (what the text is compared with as typed);
- ``c``: unit (empty when none) and value as stored, ``n``: unit and the value as a number with its trailing
  zeros removed (``trim_scale``), for a value that is a decimal number (the canonical comparisons).

Each key is ``<kind><length of name>:<name><length of unit>:<unit><value>``: the lengths make a key name one
attribute, unit and value only (no separator a value could contain).

No index on the keys: a page is read in item-id order until it is full, which the planner prefers as long as it
does not believe the filter very selective (a GIN index made a prepared statement's generic plan read and sort every
released item, which cost more than the per-row comparison: bench/README.md). An index for selective filters on large
catalogs is left for when one is measured.
"""

from alembic import op

revision = "0023_public_attribute_keys"
down_revision = "0022_queue_claims"
branch_labels = None
depends_on = None

UPGRADE = r"""
CREATE FUNCTION product.attribute_key(kind text, name text, unit text, value text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN kind || length(name) || ':' || name || length(coalesce(unit, '')) || ':' || coalesce(unit, '') || value;

-- if_product_query: what an attr[<name>]=<text> filter can match of each attribute of ``fields`` (see above).
CREATE FUNCTION product.public_attribute_keys(fields jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN ARRAY(
        SELECT DISTINCT k.key
          FROM jsonb_each(CASE WHEN jsonb_typeof(fields->'attributes') = 'object' THEN fields->'attributes'
                               ELSE '{}'::jsonb END) AS a (name, attribute),
               LATERAL (SELECT a.attribute->>'value' AS value, a.attribute->>'unit' AS unit) AS v,
               LATERAL (VALUES
                   (product.attribute_key('v', a.name, NULL, v.value)),
                   -- concat_ws(' ', value, unit) without concat_ws (stable, not immutable):
                   (product.attribute_key('u', a.name, NULL, coalesce(v.value || ' ' || v.unit, v.value, v.unit, ''))),
                   (product.attribute_key('c', a.name, v.unit, v.value)),
                   (CASE WHEN v.value ~ '^-?[0-9]+(\.[0-9]+)?$'
                         THEN product.attribute_key('n', a.name, v.unit, trim_scale(v.value::numeric)::text) END)
               ) AS k (key)
         WHERE k.key IS NOT NULL
         ORDER BY k.key);

ALTER TABLE product.public_item
    ADD COLUMN attribute_keys text[] GENERATED ALWAYS AS (product.public_attribute_keys(fields)) STORED;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute("ALTER TABLE product.public_item DROP COLUMN attribute_keys")
    op.execute("DROP FUNCTION product.public_attribute_keys(jsonb)")
    op.execute("DROP FUNCTION product.attribute_key(text, text, text, text)")
