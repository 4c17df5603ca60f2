"""The consoles commands print their results on.

On a terminal rich fits tables to its width. Off a terminal (piped into ``less``, ``grep``, a file, a script)
rich would assume 80 columns and wrap every table, splitting ids across lines; there the results console is
``PIPED_WIDTH`` columns wide instead, so a table is as wide as its content. ``COLUMNS``, when set, wins in both
cases (rich reads it).
"""

from __future__ import annotations

import os
import sys

from rich.console import Console

#: Wider than any table a command prints: a piped table keeps one line per row.
PIPED_WIDTH = 1000


def results_console(*, highlight: bool = True) -> Console:
    """The console for a command's results on standard output."""
    piped = not sys.stdout.isatty() and not os.environ.get("COLUMNS")
    return Console(highlight=highlight, width=PIPED_WIDTH if piped else None)
