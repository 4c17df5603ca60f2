"""What ``prw eval extraction`` costs, beside the raw adapter parse of the same pages in the same run.

    python bench/bench_extraction.py [--pages 63] [--smoke]

On the bundled development pages of Zyte's product extraction benchmark (tests/fixtures/eval/zyte_benchmark_dev):

* ``parse``: ``adapter.extract`` alone per page, for ``pa_schemaorg@1.0.0`` (the baseline), ``@1.1.0`` (its
  recall rules on top) and ``@2.0.0`` (the whole page read, the sharper visible rules): median and total, and
  each total as a ratio to ``@1.0.0``'s;
* ``eval in process``: the eval's per-page work (``DryRun``: capture, extract, normalize with ``np_core``, read the
  predictions) and the scoring, as a ratio to ``@2.0.0``'s raw parse: the eval's own overhead;
* ``prw eval extraction``: the command as a fresh process on the same pages (start-up, plugin loading, the table):
  wall time, as a ratio to the in-process eval.

One untimed pass over 3 pages warms the adapters up first. ``--smoke`` takes 3 pages. Absolute numbers depend on
the machine; nothing here asserts anything.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from prw_cli.commands.extract import DryRun
from prw_cli.evaluation.extraction import Page, load_dataset, read_page, run_page, score
from prw_platform.plugins import Artifact, CaptureView, PluginRegistry, get_plugin_manager

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT / "tests" / "fixtures" / "eval" / "zyte_benchmark_dev"
PRW = str(Path(sys.executable).parent / "prw")
NEWEST = "pa_schemaorg@2.0.0"


def parse_times(registry: PluginRegistry, pin: str, pages: list[Page]) -> list[float]:
    adapter = registry.adapter(pin)
    times = []
    for page in pages:
        data = read_page(page)
        capture = CaptureView(capture_id="bench", source_id="bench", media_type="text/html", url=page.url)
        started = time.perf_counter()
        adapter.extract(capture, [Artifact("art_bench", "-", "text/html", data)])
        times.append(time.perf_counter() - started)
    return times


def subset(pages: list[Page], target: Path) -> Path:
    """The chosen pages as a page set of their own (for the command run)."""
    truth = json.loads((DATASET / "ground-truth.json").read_text(encoding="utf-8"))
    (target / "html").mkdir(parents=True)
    for page in pages:
        shutil.copy(page.path, target / "html" / page.path.name)
    chosen = {page.page_id: truth[page.page_id] for page in pages}
    (target / "ground-truth.json").write_text(json.dumps(chosen), encoding="utf-8")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pages", type=int, default=63)
    parser.add_argument("--smoke", action="store_true", help="3 pages: checks the script runs")
    args = parser.parse_args()
    pages = load_dataset(DATASET)[: 3 if args.smoke else args.pages]
    registry = PluginRegistry.from_manager(get_plugin_manager())

    parse_times(registry, NEWEST, pages[:3])  # untimed warm-up: imports and first-use caches
    baseline = parse_times(registry, "pa_schemaorg@1.0.0", pages)
    previous = parse_times(registry, "pa_schemaorg@1.1.0", pages)
    current = parse_times(registry, NEWEST, pages)

    dry_run = DryRun.load(NEWEST, None, None, "text/html")
    started = time.perf_counter()
    results = [run_page(dry_run, page) for page in pages]
    score(results, n_bootstrap=0)
    in_process = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as scratch:
        page_set = subset(pages, Path(scratch) / "pages")
        started = time.perf_counter()
        subprocess.run(
            [PRW, "eval", "extraction", str(page_set), "--adapter", NEWEST, "--bootstrap", "0"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        command = time.perf_counter() - started

    print(f"{len(pages)} pages of {DATASET.relative_to(ROOT)}")
    print(f"{'case':<40}{'median ms':>12}{'total s':>10}{'ratio':>8}")
    print(
        f"{'parse, pa_schemaorg@1.0.0 (baseline)':<40}{statistics.median(baseline) * 1000:>12.1f}{sum(baseline):>10.2f}{1.0:>8.2f}"
    )
    for pin, times in (("pa_schemaorg@1.1.0", previous), (NEWEST, current)):
        print(
            f"{'parse, ' + pin:<40}{statistics.median(times) * 1000:>12.1f}{sum(times):>10.2f}"
            f"{sum(times) / sum(baseline):>8.2f}"
        )
    print(
        f"{'eval in process, vs 2.0.0 parse':<40}{'-':>12}{in_process:>10.2f}{in_process / sum(current):>8.2f}"
    )
    print(f"{'prw eval extraction, vs in process':<40}{'-':>12}{command:>10.2f}{command / in_process:>8.2f}")


if __name__ == "__main__":
    main()
