"""Text PostgreSQL can store.

A PostgreSQL ``text`` (and ``jsonb`` string) cannot hold the NUL character, and a lone UTF-16 surrogate
(``"\\ud800"`` in a JSON escape) has no UTF-8 encoding at all: either makes psycopg or the server fail the whole
statement. Such text is refused where it enters, wherever it sits in a request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class UnstorableText:
    #: Where the string is: keys and indexes from the top (``("artifacts", 0, "ref")``); () for the value itself.
    location: tuple[str | int, ...]
    reason: str

    def __str__(self) -> str:
        where = ".".join(str(part) for part in self.location)
        return f"{where}: {self.reason}" if where else self.reason


def unstorable_character(text: str) -> str | None:
    """Why PostgreSQL cannot store ``text`` (its first offending character), or None when it can."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    character = found.group()
    if character == "\x00":
        return f"contains a NUL character (\\x00) at offset {found.start()}"
    return f"contains a lone surrogate (\\u{ord(character):04x}) at offset {found.start()}, which is not Unicode text"


def find_unstorable_text(value: object) -> UnstorableText | None:
    """The first string, key or value, at any depth of a JSON-like value (mappings, lists, tuples) that
    PostgreSQL cannot store; None when there is none. Iterative, so any depth is safe to walk."""
    pending: list[tuple[tuple[str | int, ...], object]] = [((), value)]
    while pending:
        location, current = pending.pop()
        if isinstance(current, str):
            reason = unstorable_character(current)
            if reason is not None:
                return UnstorableText(location, reason)
        elif isinstance(current, Mapping):
            for key, item in current.items():
                if isinstance(key, str) and (reason := unstorable_character(key)) is not None:
                    escaped = key.encode("unicode_escape", "backslashreplace").decode("ascii")
                    return UnstorableText((*location, escaped), f"the field name {reason}")
                pending.append(((*location, str(key)), item))
        elif isinstance(current, list | tuple):
            pending.extend(((*location, index), item) for index, item in enumerate(current))
    return None
