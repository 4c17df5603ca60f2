"""``prw demo``: the README's main command, on embedded defaults.

Starts (or attaches to) the embedded PostgreSQL when no PRW_DATABASE_URL is set, migrates it, stores the bundled
real pages in the object store (content-addressed, put-if-absent: a second run stores nothing new) and extracts
each with the installed adapters and profiles, printing what was read.
"""

from __future__ import annotations

import hashlib

from rich.console import Console
from rich.table import Table

from prw_cli.demo_pages import demo_pages
from prw_cli.settings import databases, load_settings
from prw_platform.db.migrate import migrate_all
from prw_platform.plugins import Artifact, CaptureView, PluginRegistry, get_plugin_manager
from prw_platform.storage import build_object_store, evidence_key

console = Console()
DEMO_TENANT = "ten_primary"


def demo() -> None:
    """Run the main job on embedded defaults and print a summary."""
    settings = load_settings()
    with console.status("starting the database", spinner="dots") as status:
        urls = databases(settings)
        status.update("migrating")
        migrations = migrate_all(urls.main, urls.control)
    where = (
        "embedded PostgreSQL under " + str(settings.embedded_pg_dir) if urls.embedded else "PRW_DATABASE_URL"
    )
    console.print(
        f"[bold]database[/bold]: {where}; schema at " + ", ".join(f"{m.kind} {m.after}" for m in migrations)
    )

    store = build_object_store(settings)
    registry = PluginRegistry.from_manager(get_plugin_manager())
    profile = registry.latest_profile("np_core")

    table = Table(title="bundled pages: stored and extracted")
    for column in ("page", "stored", "adapter", "title", "price", "gtin", "brand / mpn", "problems"):
        table.add_column(column, overflow="fold")
    pages = demo_pages()
    with console.status("extracting", spinner="dots") as status:
        for page in pages:
            status.update(f"extracting {page.path.name}")
            data = page.data
            sha256 = hashlib.sha256(data).hexdigest()
            put = store.put_if_absent(evidence_key(DEMO_TENANT, sha256), data, sha256, "text/html")
            capture = CaptureView(
                capture_id=page.native_record_id, source_id=page.source_id, media_type="text/html"
            )
            adapter = registry.select_adapter(capture)
            if adapter is None:
                table.add_row(page.path.name, _yes(put.stored), "-", "-", "-", "-", "-", "no adapter")
                continue
            extraction = adapter.extract(capture, [Artifact(f"art_{sha256[:12]}", sha256, "text/html", data)])
            normalization = profile.normalize(extraction.claims)

            def value(key: str, n=normalization) -> str:
                attribute = n.get(key)
                return str(attribute.value) if attribute else ""

            price = f"{value('core:price')} {value('core:currency')}".strip()
            brand_mpn = " / ".join(v for v in (value("core:brand"), value("core:mpn")) if v)
            table.add_row(
                page.path.name,
                _yes(put.stored),
                f"{adapter.name}@{adapter.version}",
                value("core:title")[:48],
                price,
                value("core:gtin"),
                brand_mpn,
                str(len(normalization.problems)),
            )
    console.print(table)
    console.print(
        f"{len(pages)} real pages read with [bold]{profile.name}@{profile.version}[/bold]. "
        "Try: ./run prw plugins, ./run prw extract --adapter auto <file>."
    )


def _yes(stored: bool) -> str:
    return "new" if stored else "already stored"
