"""docs/architecture.md's "Rooms" table is a map of the tree, checked both ways when the test runs: every folder it
names exists, and every folder it should name is there. Should: every top-level folder of the repository, every
plugin distribution, and every package folder (one with ``__init__.py``) of the core and the edges that sits in a
root (``prw_platform/``, ``api/prw_api/``, ``orchestration/prw_orchestration/``, ``cli/prw_cli/``) or in a folder
whose sub-folders the map lists. A citation of a section (``docs/architecture.md: Layers``) must name a heading
the guide has.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "architecture.md"
ROOTS = ("prw_platform/", "api/prw_api/", "orchestration/prw_orchestration/", "cli/prw_cli/")


def _mapped() -> list[str]:
    section = GUIDE.read_text("utf-8").split("\n## Rooms\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+/)` \|", section, flags=re.MULTILINE)


def _package_folders(folder: str) -> set[str]:
    return {
        f"{folder}{child.name}/"
        for child in (ROOT / folder).iterdir()
        if child.is_dir() and (child / "__init__.py").is_file()
    }


def test_every_folder_on_the_map_exists() -> None:
    mapped = _mapped()
    assert len(mapped) == len(set(mapped)), "a folder has two rows"
    gone = [folder for folder in mapped if not (ROOT / folder).is_dir()]
    assert not gone, f"docs/architecture.md maps folders that do not exist: {gone}"


def test_every_top_level_folder_and_plugin_distribution_is_on_the_map() -> None:
    mapped = _mapped()
    top = {
        f"{child.name}/"
        for child in ROOT.iterdir()
        if child.is_dir() and not child.name.startswith((".", "_")) and not child.name.endswith(".egg-info")
    }
    distributions = {
        f"{path.parent.relative_to(ROOT).as_posix()}/" for path in ROOT.glob("plugins/*/*/pyproject.toml")
    }
    assert distributions, "no plugin distribution found: is ROOT the repository?"
    unmapped = sorted(
        {folder for folder in top if not any(path.startswith(folder) for path in mapped)}
        | (distributions - set(mapped))
    )
    assert not unmapped, f"docs/architecture.md: Rooms has no row for {unmapped}"


def test_every_package_folder_of_the_core_and_the_edges_at_the_mapped_depth_is_on_the_map() -> None:
    mapped = set(_mapped())
    assert set(ROOTS) <= mapped
    opened = set(ROOTS) | {
        folder.rstrip("/").rpartition("/")[0] + "/"
        for folder in mapped
        if folder.startswith(ROOTS) and folder not in ROOTS
    }
    unmapped = sorted(
        package
        for folder in opened
        if (ROOT / folder).is_dir()
        for package in _package_folders(folder) - mapped
    )
    assert not unmapped, f"docs/architecture.md: Rooms has no row for {unmapped}"


_CITATION = re.compile(r"docs/architecture\.md[:,]? \"?([A-Z][^\"\n]*)")


def test_every_cited_section_of_the_guide_exists() -> None:
    guide = GUIDE.read_text("utf-8")
    # A section is a heading or a bold step of the data path ("6. **Release**", "1. **Intake (AW-02)**").
    headings = re.findall(r"^#{2,3} (.+)$", guide, flags=re.MULTILINE)
    headings += re.findall(r"^\d+[a-z]?\. \*\*([^*(]+?)(?: \(.*\))?\*\*", guide, flags=re.MULTILINE)
    cited = []
    for folder, dirs, names in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in {"__pycache__", "node_modules"}]
        for name in names:
            if name.endswith((".py", ".md", ".toml")):
                path = Path(folder) / name
                cited += [
                    (path, text) for text in _CITATION.findall(path.read_text("utf-8", errors="replace"))
                ]
    assert cited, "no citation found: is ROOT the repository?"
    unknown = [
        f"{path.relative_to(ROOT)}: {text[:40]!r}"
        for path, text in cited
        if not any(text.startswith(heading) for heading in headings)
    ]
    assert not unknown, f"citations of docs/architecture.md sections it does not have: {unknown}"
