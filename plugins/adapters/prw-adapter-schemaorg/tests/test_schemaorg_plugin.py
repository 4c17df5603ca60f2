"""The distribution's ``prw`` entry point registers pa_schemaorg@1.0.0, @1.1.0, @2.0.0 and @3.0.0 through pluggy, and the adapter says
which captures it reads and refuses what it cannot read with ExtractionError."""

from __future__ import annotations

from importlib.metadata import entry_points

import pluggy
import prw_adapter_schemaorg.plugin as plugin_module
import pytest
from prw_adapter_schemaorg import SchemaOrgAdapter

from prw_platform.plugins import Artifact, CaptureView, ExtractionError, SourceAdapter, hookspecs


def capture(media_type: str) -> CaptureView:
    return CaptureView(capture_id="cap_1", source_id="src_1", media_type=media_type)


def test_plugin_module_declares_plugin_api_1() -> None:
    assert plugin_module.PRW_PLUGIN_API == 1


def test_plugin_module_registers_the_adapter_through_pluggy() -> None:
    manager = pluggy.PluginManager("prw")
    manager.add_hookspecs(hookspecs)
    manager.register(plugin_module)
    manager.check_pending()
    adapters = [adapter for result in manager.hook.prw_register_adapters() for adapter in result]
    assert [(a.name, a.version) for a in adapters] == [
        ("pa_schemaorg", "1.0.0"),
        ("pa_schemaorg", "1.1.0"),
        ("pa_schemaorg", "2.0.0"),
        ("pa_schemaorg", "3.0.0"),
    ]
    assert all(isinstance(adapter, SourceAdapter) for adapter in adapters)


def test_distribution_declares_the_prw_entry_point() -> None:
    (entry_point,) = [e for e in entry_points(group="prw") if e.name == "schemaorg"]
    assert entry_point.value == "prw_adapter_schemaorg.plugin"
    assert entry_point.load() is plugin_module


@pytest.mark.parametrize(
    ("media_type", "supported"),
    [
        ("text/html", True),
        ("text/html; charset=ISO-8859-1", True),
        ("TEXT/HTML;charset=utf-8", True),
        ("application/xhtml+xml", True),
        ("application/xhtml+xml; charset=utf-8", True),
        ("application/json", False),
        ("application/ld+json", False),
        ("text/plain", False),
        ("image/png", False),
        ("", False),
    ],
)
def test_supports_html_media_types_only(media_type: str, supported: bool) -> None:
    assert SchemaOrgAdapter().supports(capture(media_type)) is supported


def test_extract_without_an_html_artifact_raises_extraction_error() -> None:
    pdf = Artifact("art_pdf", "-", "application/pdf", b"%PDF-1.7")
    with pytest.raises(ExtractionError, match="has no HTML artifact"):
        SchemaOrgAdapter().extract(capture("text/html"), [pdf, pdf])
    with pytest.raises(ExtractionError, match="has no HTML artifact"):
        SchemaOrgAdapter().extract(capture("text/html"), [])


@pytest.mark.parametrize("data", [b"", b"  \n ", b"<!-- nothing but a comment -->"])
def test_extract_of_a_page_without_elements_raises_extraction_error(data: bytes) -> None:
    with pytest.raises(ExtractionError):
        SchemaOrgAdapter().extract(capture("text/html"), [Artifact("art_1", "-", "text/html", data)])


def test_the_only_artifact_of_an_html_capture_is_read_whatever_its_stored_type() -> None:
    page = b"<html><head><title>Lamp</title></head><body></body></html>"
    extraction = SchemaOrgAdapter().extract(
        capture("text/html"), [Artifact("art_1", "-", "application/octet-stream", page)]
    )
    assert extraction.listing.title == "Lamp"
    assert extraction.adapter == "pa_schemaorg@1.0.0"


def test_the_html_artifact_is_chosen_among_several() -> None:
    page = b"<html><head><title>Lamp</title></head><body></body></html>"
    artifacts = [
        Artifact("art_png", "-", "image/png", b"\x89PNG"),
        Artifact("art_html", "-", "text/html", page),
    ]
    assert SchemaOrgAdapter().extract(capture("text/html"), artifacts).listing.title == "Lamp"
