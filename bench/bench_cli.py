"""How long the ``prw`` command takes to start, beside the bare interpreter in the same run.

    python bench/bench_cli.py [--repeat 7] [--pages 100] [--smoke]

Each command is a fresh process (``subprocess.run``, output to /dev/null), as an adapter author runs it:

* ``python -c pass``: the bare interpreter of the locked environment, the baseline;
* ``prw --help``;
* ``prw extract PAGE``: one bundled real page (``cli/prw_cli/demo_pages/extruct_samples/schema.org_product.html``)
  through ``pa_schemaorg`` and ``np_core``, rendered as tables;
* ``prw extract DIR``: ``--pages`` copies of the bundled HTML pages in one run (progress and a results table).

The commands run interleaved, ``--repeat`` rounds with the order rotated per round, so drift on a shared machine
hits all of them alike; each is reported as its median wall time, the difference to the bare interpreter and the
ratio to it. Absolute numbers depend on the machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "cli" / "prw_cli" / "demo_pages"
ONE_PAGE = PAGES / "extruct_samples" / "schema.org_product.html"
PRW = str(Path(sys.executable).parent / "prw")
#: `prw --help` should cost at most this much over the bare interpreter (commands are imported lazily).
HELP_TARGET_S = 0.5


@dataclass(frozen=True)
class Case:
    label: str
    command: list[str]


def copy_pages(target: Path, n: int) -> None:
    """``n`` HTML files cycled from the bundled pages (distinct names, the same bytes as the originals)."""
    pages = sorted(PAGES.rglob("*.html"))
    for index in range(n):
        page = pages[index % len(pages)]
        shutil.copyfile(page, target / f"{index:04d}_{page.name}")


def run_once(case: Case, env: dict[str, str]) -> float:
    began = time.perf_counter()
    completed = subprocess.run(
        case.command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False
    )
    took = time.perf_counter() - began
    if completed.returncode != 0:
        raise RuntimeError(
            f"{' '.join(case.command)} exited with {completed.returncode}:\n{completed.stderr.decode()}"
        )
    return took


def measure(cases: Sequence[Case], repeat: int, env: dict[str, str], warm_up: bool) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {case.label: [] for case in cases}
    for case in cases if warm_up else ():  # the first start after a change compiles bytecode, fills caches
        run_once(case, env)
    for round_index in range(repeat):
        rotation = round_index % len(cases)
        for case in [*cases[rotation:], *cases[:rotation]]:
            samples[case.label].append(run_once(case, env))
    return samples


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each command (default 7)")
    parser.add_argument(
        "--pages", type=int, default=100, help="pages for the one-run extract (default 100; 0 skips it)"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a tiny run that checks the benchmark works (1 run each, 3 pages)",
    )
    args = parser.parse_args(argv)
    repeat, pages = (1, 3) if args.smoke else (args.repeat, args.pages)
    # The environment an adapter author has: plugins autoloaded, no database needed, a fixed terminal width.
    env = {k: v for k, v in os.environ.items() if k != "PRW_DISABLE_PLUGIN_AUTOLOAD"} | {"COLUMNS": "120"}

    bare = Case("python -c pass (bare interpreter)", [sys.executable, "-c", "pass"])
    cases = [
        bare,
        Case("prw --help", [PRW, "--help"]),
        Case("prw extract (1 page)", [PRW, "extract", str(ONE_PAGE)]),
    ]
    with tempfile.TemporaryDirectory(prefix="prw-bench-cli-") as scratch:
        if pages:
            copy_pages(Path(scratch), pages)
            cases.append(Case(f"prw extract DIR ({pages} pages, one run)", [PRW, "extract", scratch]))
        print(f"{sys.executable}; {repeat} interleaved runs of each command, median wall time", flush=True)
        samples = measure(cases, repeat, env, warm_up=not args.smoke)

    medians = {label: statistics.median(values) for label, values in samples.items()}
    base = medians[bare.label]
    print(f"{'command':<42} {'median s':>9} {'min s':>7} {'- bare s':>9} {'/ bare':>8}")
    for label, median in medians.items():
        print(
            f"{label:<42} {median:>9.3f} {min(samples[label]):>7.3f} {median - base:>+9.3f}"
            f" {median / base:>8.1f}"
        )
    help_over = medians["prw --help"] - base
    verdict = "within" if help_over <= HELP_TARGET_S else "NOT within"
    print(
        f"\nratio prw --help / bare interpreter: {medians['prw --help'] / base:.1f}"
        f" (+{help_over:.3f} s: {verdict} the {HELP_TARGET_S} s target)"
    )
    if pages:
        one = medians["prw extract (1 page)"] - base
        many = medians[cases[-1].label] - base
        print(
            f"ratio prw extract DIR / {pages} separate runs of prw extract: {many / (pages * one):.3f}"
            f" ({many / pages * 1000:.0f} ms per page in one run against {one * 1000:.0f} ms per run,"
            " each over the bare interpreter)"
        )


if __name__ == "__main__":
    main()
