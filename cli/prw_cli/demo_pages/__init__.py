"""Real product pages bundled for ``prw demo`` (see PROVENANCE.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent


@dataclass(frozen=True, slots=True)
class DemoPage:
    path: Path
    source_id: str
    native_record_id: str
    observed_at: str
    url: str | None = None

    @property
    def data(self) -> bytes:
        return self.path.read_bytes()


def demo_pages() -> list[DemoPage]:
    manifest = json.loads((HERE / "manifest.json").read_text())
    return [
        DemoPage(HERE / p["file"], p["source_id"], p["native_record_id"], p["observed_at"], p.get("url"))
        for p in manifest["pages"]
    ]
