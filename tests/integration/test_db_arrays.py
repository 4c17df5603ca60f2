"""Array literals (prw_platform.db.arrays) read back by PostgreSQL as exactly the values they were built from."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prw_platform.db.arrays import int_array, text_array
from prw_platform.db.database import Database

_TEXT = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=12)
_INT = st.integers(-(2**63), 2**63 - 1)


def test_text_literals_keep_every_awkward_element_as_text() -> None:
    values = ['a"b', "c\\d", "", "NULL", "x,y", "{z}", " sp ", None, "é ü 漢"]
    assert text_array(values) == '{"a\\"b","c\\\\d","","NULL","x,y","{z}"," sp ",NULL,"é ü 漢"}'
    assert text_array([]) == "{}"


def test_int_literals_refuse_what_is_not_an_int() -> None:
    assert int_array([1, -2, None, 2**62]) == "{1,-2,NULL,4611686018427387904}"
    with pytest.raises(TypeError, match="bool"):
        int_array([1, True])
    with pytest.raises(TypeError, match="str"):
        int_array(["1"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="NUL"):
        text_array(["a\x00b"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.lists(st.one_of(st.none(), _TEXT), max_size=8),
    ints=st.lists(st.one_of(st.none(), _INT), max_size=8),
)
def test_postgresql_reads_the_literals_back_unchanged(
    owner_db: Database, texts: list[str | None], ints: list[int | None]
) -> None:
    with owner_db.transaction(read_only=True) as conn:
        row = conn.execute(
            "SELECT %s::text[] AS t, %s::bigint[] AS i", (text_array(texts), int_array(ints))
        ).fetchone()
    assert row == {"t": texts, "i": ints}
