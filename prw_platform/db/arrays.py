"""Array parameters as PostgreSQL array literals, for the set-based statements of the hot paths.

psycopg dumps a Python list element by element in Python (``ListDumper``), which made parameter conversion a
visible share of product apply time at 400 deliveries per transaction (bench/README.md, "Profile-driven trims").
The same array written as one literal string by ``str.join`` and cast in the statement (``%s::text[]``) converts
much faster and reaches the server as the same value. Use them where a statement takes long arrays; a short
``= ANY(%s)`` is fine as a list.

The literal syntax is PostgreSQL's (docs: "Array Value Input"): every text element double-quoted with ``\\`` and
``"`` escaped, so commas, braces, blanks and the word NULL inside an element stay text; ``None`` is an unquoted
NULL.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic_core import to_json


def _quoted(value: str | None) -> str:
    if value is None:
        return "NULL"
    if "\x00" in value:
        raise ValueError("PostgreSQL text cannot contain NUL characters")
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def text_array(values: Iterable[str | None]) -> str:
    """The literal of a ``text[]`` (cast it: ``%s::text[]``)."""
    return "{" + ",".join(map(_quoted, values)) + "}"


def int_array(values: Iterable[int | None]) -> str:
    """The literal of a ``bigint[]`` (cast it: ``%s::bigint[]``). Only ints (and None): a bool or a str is refused."""
    items = list(values)
    if not all(type(value) is int or value is None for value in items):
        wrong = next(value for value in items if not (type(value) is int or value is None))
        raise TypeError(f"int_array takes ints, not {type(wrong).__name__}")
    return "{" + ",".join("NULL" if value is None else str(value) for value in items) + "}"


def json_array(documents: Iterable[Any]) -> str:
    """The literal of a ``text[]`` of JSON documents (cast each: ``f::jsonb``), serialized by pydantic-core (faster
    than ``json.dumps``; UTF-8, not ``\\u`` escapes: the same jsonb value)."""
    return text_array(to_json(document).decode() for document in documents)
