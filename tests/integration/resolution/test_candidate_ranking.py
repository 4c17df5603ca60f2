"""Review-case candidates on real rows of the Abt-Buy fixture (tests/fixtures/eval/abt_buy, see its PROVENANCE.md):
pg_trgm title similarity plus model-number tokens and brand, ranked, with the reasons a reviewer reads;
the same ranking without pg_trgm (the embedded server's case); and migration 0014_trgm itself."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from prw_platform.db.database import Database
from prw_platform.resolver.decisions import Candidate, CreateItemAndMap, ItemFacts, decide
from prw_platform.resolver.resolution.candidates import (
    model_tokens,
    rank_candidates,
    trigram_similarity,
    trigrams,
)
from tests.integration.resolver.decision_builders import Catalog, provision

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "eval" / "abt_buy"
#: Abt records: the Buy listing 710's labelled match (573), a turntable of the same brand (0), two other Sony
#: products (2, 3) and a Bose speaker (1).
CATALOG_RECORDS = ("0", "1", "2", "3", "573")
LISTING = "710"  # "sony pslx300usb usb record turntable"


def _names(table: str) -> dict[str, str]:
    with (FIXTURE / table).open(encoding="utf-8", newline="") as handle:
        return {row["id"]: row["name"] for row in csv.DictReader(handle)}


@pytest.fixture
def catalog(resolver_db: Database, control_db: Database, owner_db: Database) -> Catalog:
    return provision(resolver_db, control_db, owner_db)


@pytest.fixture
def items(catalog: Catalog) -> dict[str, str]:
    """Abt record id -> item id."""
    names = _names("tableA.csv")
    created = {}
    for record in CATALOG_RECORDS:
        title = names[record]
        command = CreateItemAndMap(
            item=ItemFacts("np_core@1", title=title, brand=title.split()[0], mpn=f"record-{record}"),
            listing=catalog.observation(f"abt-{record}", title=title),
            actor="rule:test_load@1",
            rationale="a fixture row",
            idempotency_key=catalog.key(),
        )
        result = decide(command, catalog.resolver_db, catalog.stream, clock=catalog.clock)
        assert result.item_id is not None
        created[record] = result.item_id
    return created


def _rank(catalog: Catalog, title: str, brand: str | None = None) -> tuple[Candidate, ...]:
    return catalog.resolver_db.run(
        lambda conn: rank_candidates(conn, catalog.tenant_id, "cat_primary", brand=brand, title=title),
        tenant_id=catalog.tenant_id,
        read_only=True,
    )


def test_the_labelled_match_ranks_first_with_its_reasons(catalog: Catalog, items: dict[str, str]) -> None:
    ranked = _rank(catalog, _names("tableB.csv")[LISTING])

    assert ranked[:3] == (
        Candidate(
            items["573"], 0.7231, "title trigram similarity 0.54; model number pslx300usb; same brand sony"
        ),
        Candidate(items["0"], 0.4077, "title trigram similarity 0.51; same brand sony"),
        Candidate(items["3"], 0.1621, "title trigram similarity 0.10; same brand sony"),
    )
    assert [c.item_id for c in ranked[3:]] == [items["2"], items["1"]]


def test_a_brand_claim_counts_only_when_it_agrees(catalog: Catalog, items: dict[str, str]) -> None:
    (top, *_) = _rank(catalog, "record turntable pslx300usb", brand="Panasonic")
    assert (top.item_id, top.reason) == (
        items["573"],
        "title trigram similarity 0.40; model number pslx300usb",
    )


def _has_trgm(owner_db: Database) -> bool:
    """PostgreSQL 15 on 127.0.0.1 ships pg_trgm; the embedded pgserver build does not (0014_trgm falls back)."""
    with owner_db.transaction() as conn:
        return conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'").fetchone() is not None


def test_without_pg_trgm_the_scan_ranks_the_same(
    catalog: Catalog, items: dict[str, str], owner_db: Database
) -> None:
    if not _has_trgm(owner_db):
        pytest.skip(
            "this server has no pg_trgm: every other test of this module ranks through the scan already"
        )
    title = _names("tableB.csv")[LISTING]
    with_index = _rank(catalog, title)
    with owner_db.transaction() as conn:
        conn.execute("DROP EXTENSION pg_trgm CASCADE")
    assert _rank(catalog, title) == with_index


def test_no_title_no_candidates(catalog: Catalog, items: dict[str, str]) -> None:
    assert _rank(catalog, "  ", brand="sony") == ()


def test_retired_items_are_never_candidates(
    catalog: Catalog, items: dict[str, str], owner_db: Database
) -> None:
    with owner_db.transaction() as conn:
        conn.execute(
            "UPDATE resolver.catalog_item SET status = 'retired' WHERE item_id = %s", (items["573"],)
        )
    assert items["573"] not in [c.item_id for c in _rank(catalog, _names("tableB.csv")[LISTING])]


def test_migration_0014_adds_the_normalized_title_and_its_trigram_index(
    catalog: Catalog, items: dict[str, str], owner_db: Database
) -> None:
    with owner_db.transaction() as conn:
        key = conn.execute(
            "SELECT title_key FROM resolver.catalog_item WHERE item_id = %s", (items["0"],)
        ).fetchone()
        index = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'resolver' AND indexname = 'catalog_item_title_trgm'"
        ).fetchone()
        extension = conn.execute(
            "SELECT extnamespace::regnamespace::text FROM pg_extension WHERE extname = 'pg_trgm'"
        ).fetchone()
    assert key == {"title_key": "sony turntable pslx350h"}
    if extension is None:  # the embedded server: no pg_trgm, so no index; candidates scan active items
        assert index is None
        return
    assert index is not None
    assert "USING gist (title_key gist_trgm_ops)" in index["indexdef"]
    assert extension == {"extnamespace": "public"}


def test_python_trigrams_are_pg_trgm_trigrams(owner_db: Database) -> None:
    if not _has_trgm(owner_db):
        pytest.skip("this server has no pg_trgm to compare the Python trigrams with")
    left, right = "sony pslx300usb usb record turntable", "sony black usb stereo turntable system pslx300usb"
    with owner_db.transaction() as conn:
        row = conn.execute("SELECT public.similarity(%s, %s)::float8 AS similarity", (left, right)).fetchone()
    assert row is not None
    assert trigram_similarity(trigrams(left), trigrams(right)) == pytest.approx(row["similarity"], abs=1e-6)


def test_model_number_tokens_are_mixed_words_long_digit_runs_and_short_prefixes_joined() -> None:
    assert model_tokens("garmin gps receiver dash mount 010-10613-00") == {"01010613"}
    assert model_tokens("sony ps lx350h 2.0 cu ft 1080p") == {"pslx350h", "lx350h", "1080p", "ft1080p"}
    assert model_tokens("lg 27 ' front-load electric dryer 7.3") == set()
