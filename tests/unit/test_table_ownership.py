"""One owner per table: the SQL in ``prw_platform`` against ``prw_platform.db.ownership``.

Every table is written by exactly one module, its owner, and read by other modules only through it; the operator
read models (``REPORT_READERS``) may read their side's tables and write nothing. No database is needed: the scanner
reads the source.

What the scanner counts as SQL: the string literals of a module (f-strings with their placeholders blanked), never
its docstrings or other bare string statements, and never its comments (``ast`` drops them), that contain an SQL
keyword. In such a string every schema-qualified name ``resolver.x``, ``product.x``, ``queue.x`` or ``control.x``
(not a function call, not the tail of a dotted Python path) is a use of that table: a write when it is the target of
INSERT INTO, UPDATE, DELETE FROM, MERGE INTO, TRUNCATE or COPY ... FROM, a read otherwise (FROM, JOIN, USING, in a
CTE or a subquery alike). SQL comments inside the strings are dropped first. A string that is nothing but a table
name is a read too, so a name kept in a constant and spliced into SQL cannot hide.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from prw_platform.db.ownership import DATABASE_WRITTEN, REPORT_READERS, TABLE_OWNERS

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "prw_platform"

#: Not scanned: the migrations create and grant every table, and the map itself names every table.
EXCLUDED = (PACKAGE / "db" / "migrations", PACKAGE / "db" / "ownership.py")

SCHEMAS = ("resolver", "product", "queue", "control")

# --- the scanner ---------------------------------------------------------------------------------------------

_SCHEMA = "|".join(SCHEMAS)
#: A schema-qualified name, not the tail of a dotted Python path (``prw_platform.product.x``).
_TABLE = rf"(?<![\w.])(?:{_SCHEMA})\.[a-z_][a-z0-9_]*\b"
_TABLE_RE = re.compile(_TABLE, re.IGNORECASE)
_T = rf"(?P<table>{_TABLE})"
_WRITE_RES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\bINSERT\s+INTO\s+{_T}",
        rf"\bUPDATE\s+(?:ONLY\s+)?{_T}",
        rf"\bDELETE\s+FROM\s+(?:ONLY\s+)?{_T}",
        rf"\bMERGE\s+INTO\s+(?:ONLY\s+)?{_T}",
        rf"\bCOPY\s+{_T}\s*(?:\([^)]*\)\s*)?FROM\b",
    )
)
#: TRUNCATE takes a list of tables: every name up to the end of the statement is written.
_TRUNCATE_RE = re.compile(r"\bTRUNCATE\b[^;]*", re.IGNORECASE)
_SQL_KEYWORD_RE = re.compile(
    r"\b(?:SELECT|INSERT|UPDATE|DELETE|FROM|JOIN|WITH|USING|RETURNING|TRUNCATE|MERGE|COPY)\b", re.IGNORECASE
)
_SQL_COMMENT_RE = re.compile(r"--[^\n]*|/\*.*?\*/", re.DOTALL)
_CALL_RE = re.compile(r"\s*\(")
_BARE_TABLE_RE = re.compile(rf"\s*{_TABLE}\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True, order=True)
class TableUse:
    module: str
    table: str
    kind: str  # "read" | "write"
    line: int

    def __str__(self) -> str:
        return f"{self.module}:{self.line} {self.kind}s {self.table}"


def sql_uses(sql: str) -> Iterator[tuple[str, str]]:
    """(table, kind) for each schema-qualified table an SQL text uses, in order."""
    sql = _SQL_COMMENT_RE.sub(" ", sql)
    written: dict[int, str] = {}
    for pattern in _WRITE_RES:
        for match in pattern.finditer(sql):
            written[match.start("table")] = match.group("table")
    for statement in _TRUNCATE_RE.finditer(sql):
        for match in _TABLE_RE.finditer(sql, statement.start(), statement.end()):
            written[match.start()] = match.group()
    for match in _TABLE_RE.finditer(sql):
        if match.start() in written:
            yield match.group().lower(), "write"
        elif not _CALL_RE.match(sql, match.end()):  # resolver.f(...) is a function, not a table
            yield match.group().lower(), "read"


def _documentation(tree: ast.AST) -> set[int]:
    """ids of the string constants that are statements of their own: docstrings and other bare strings."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant | ast.JoinedStr)
    }


def _string_literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of every string literal that is not documentation; an f-string's placeholders are blanked."""
    skip = _documentation(tree)
    inside_fstrings: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside_fstrings.update(id(part) for part in ast.walk(node) if part is not node)
    for node in ast.walk(tree):
        if id(node) in skip or id(node) in inside_fstrings:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(
                part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else " ? "
                for part in node.values
            )
            yield node.lineno, text


def scan_source(module: str, source: str) -> list[TableUse]:
    """Every table use in the SQL of one module's source."""
    uses: set[TableUse] = set()
    for line, text in _string_literals(ast.parse(source)):
        if _BARE_TABLE_RE.fullmatch(text):
            uses.add(TableUse(module, text.strip().lower(), "read", line))
        elif _SQL_KEYWORD_RE.search(text):
            uses.update(TableUse(module, table, kind, line) for table, kind in sql_uses(text))
    return sorted(uses)


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _scanned_files() -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("*.py")
        if not any(path == excluded or excluded in path.parents for excluded in EXCLUDED)
    )


def scan_package() -> list[TableUse]:
    return [
        use for path in _scanned_files() for use in scan_source(module_name(path), path.read_text("utf-8"))
    ]


def violations(uses: list[TableUse]) -> list[str]:
    """What breaks the rule: unknown tables, writes outside the owner, reads outside the owner and the reports."""
    found: list[str] = []
    for use in uses:
        owner = TABLE_OWNERS.get(use.table)
        schema = use.table.partition(".")[0]
        if owner is None:
            found.append(f"{use}: the table is not in prw_platform.db.ownership.TABLE_OWNERS")
        elif use.module == owner:
            continue
        elif use.kind == "write":
            found.append(f"{use}: only its owner {owner} writes it")
        elif schema not in REPORT_READERS.get(use.module, frozenset()):
            found.append(f"{use}: only its owner {owner} (or an operator report) reads it; call the owner")
    return found


# --- the rule, on prw_platform -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def package_uses() -> list[TableUse]:
    return scan_package()


def test_the_scanner_finds_the_sql_of_every_owner(package_uses: list[TableUse]) -> None:
    # Not vacuous: every table of the map is used somewhere, and the scan saw a write to each (except the tables
    # only the database writes: migration reference data and trigger-written history, which no code may write).
    written = {use.table for use in package_uses if use.kind == "write"}
    assert sorted(set(TABLE_OWNERS) - written - DATABASE_WRITTEN) == []
    assert sorted(DATABASE_WRITTEN & written) == []
    used = {use.table for use in package_uses}
    assert sorted(DATABASE_WRITTEN - used) == []


def test_every_table_is_written_only_by_its_owner_and_read_only_through_it(
    package_uses: list[TableUse],
) -> None:
    assert violations(package_uses) == []


def test_operator_reports_write_nothing(package_uses: list[TableUse]) -> None:
    assert [str(use) for use in package_uses if use.module in REPORT_READERS and use.kind == "write"] == []


def test_every_owner_is_a_module_of_prw_platform() -> None:
    modules = {module_name(path) for path in PACKAGE.rglob("*.py")}
    assert sorted((set(TABLE_OWNERS.values()) | set(REPORT_READERS)) - modules) == []


def test_every_table_is_in_a_known_schema() -> None:
    assert sorted(table for table in TABLE_OWNERS if table.partition(".")[0] not in SCHEMAS) == []


# --- the scanner, on synthetic modules -----------------------------------------------------------------------

_OFFENDER = '''
"""Reads from resolver.outbox and DELETE FROM queue.message, in prose: a docstring is not SQL."""

# A comment saying SELECT * FROM product.inbox is not SQL either.

_PAGE = """
WITH due AS (
    SELECT id FROM queue.message WHERE queue_name = %s FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM queue.dead_letter d USING due WHERE d.id = due.id RETURNING d.id
)
UPDATE product.progress p SET contiguous_position = x.n   -- not product.parked_event
  FROM (SELECT max(position) AS n FROM product.inbox i
          JOIN LATERAL unnest(%s::text[]) AS f (name) ON true) x
 WHERE p.consumer = ANY(SELECT consumer FROM product.projected_scope)
"""

_FRAGMENT = "JOIN resolver.catalog c ON c.catalog_id = x.catalog_id"
_TABLE = "control.history_epoch"


def insert(conn, table_suffix):
    conn.execute(
        f"""INSERT INTO resolver.outbox (position) SELECT n FROM {table_suffix}, resolver.stream_cursor s
            ON CONFLICT (position) DO NOTHING"""
    )
    conn.execute("TRUNCATE resolver.receipt, resolver.capture")
    conn.execute("COPY resolver.artifact (sha256) FROM STDIN")
    conn.execute("select 1 from Resolver.Tenant")
    conn.execute("SELECT resolver.next_position(%s)", (1,))
    log.info("see prw_platform.product.public.items for the serializer")
'''


def _uses(source: str) -> set[tuple[str, str]]:
    return {(use.table, use.kind) for use in scan_source("prw_platform.example", source)}


def test_the_scanner_classifies_reads_and_writes_in_ctes_subqueries_and_fstrings() -> None:
    assert _uses(_OFFENDER) == {
        ("queue.message", "read"),
        ("queue.dead_letter", "write"),
        ("product.progress", "write"),
        ("product.inbox", "read"),
        ("product.projected_scope", "read"),
        ("resolver.catalog", "read"),
        ("control.history_epoch", "read"),
        ("resolver.outbox", "write"),
        ("resolver.stream_cursor", "read"),
        ("resolver.receipt", "write"),
        ("resolver.capture", "write"),
        ("resolver.artifact", "write"),
        ("resolver.tenant", "read"),
    }


def test_the_scanner_ignores_docstrings_comments_python_paths_calls_and_unnest() -> None:
    tables = {table for table, _ in _uses(_OFFENDER)}
    assert "product.parked_event" not in tables  # an SQL comment
    assert not any(table.endswith(("queries", "next_position")) for table in tables)
    assert _uses('"""SELECT * FROM product.inbox"""\n# DELETE FROM queue.message\nx = 1\n') == set()
    assert _uses('conn.execute("SELECT * FROM unnest(%s::text[]) AS t (x)")') == set()


def test_a_violating_module_is_reported() -> None:
    uses = scan_source("prw_platform.example", _OFFENDER)
    found = violations(uses)
    assert any("writes queue.dead_letter: only its owner prw_platform.queues.postgres" in v for v in found)
    assert any("reads product.inbox: only its owner prw_platform.product.consumer.inbox" in v for v in found)
    assert not violations([use for use in uses if use.module == TABLE_OWNERS[use.table]])


def test_an_unknown_table_is_reported() -> None:
    found = violations(scan_source("prw_platform.example", 'q = "SELECT 1 FROM product.nowhere"'))
    assert found == ["prw_platform.example:1 reads product.nowhere: the table is not in " + _MAP_NAME]


_MAP_NAME = "prw_platform.db.ownership.TABLE_OWNERS"


def test_a_report_may_read_its_side_but_not_the_other_side_nor_write() -> None:
    source = """
A = "SELECT count(*) FROM product.public_item"
B = "SELECT count(*) FROM resolver.outbox"
C = "DELETE FROM product.inbox"
"""
    found = violations(scan_source("prw_platform.product.reports", source))
    assert {v.split(":", 2)[1] for v in found} == {"3 reads resolver.outbox", "4 writes product.inbox"}


# --- the map, in docs/architecture.md ------------------------------------------------------------------------

_DOC_ROW_RE = re.compile(r"^\| (?P<tables>`[^|]+`) \| `(?P<module>prw_platform/[\w/]+\.py)`", re.MULTILINE)


def test_the_architecture_guide_lists_the_same_owners_as_the_map() -> None:
    guide = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    section = guide.split("## One owner per table", 1)[1].split("\n## ", 1)[0]
    documented = {
        table: module_name(ROOT / match.group("module"))
        for match in _DOC_ROW_RE.finditer(section)
        for table in re.findall(r"`([a-z_]+\.[a-z_]+)`", match.group("tables"))
    }
    assert documented == dict(TABLE_OWNERS)
