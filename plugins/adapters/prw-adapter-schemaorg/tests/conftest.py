"""Fixtures for pa_schemaorg's tests. Every input is a file under ``fixtures/`` (see fixtures/PROVENANCE.md)
or an HTML string written in the test; nothing outside this distribution is read."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest
from prw_adapter_schemaorg import SchemaOrgAdapter

from prw_platform.plugins import Artifact, CaptureView, Extraction

FIXTURES = Path(__file__).parent / "fixtures"

ExtractHtml = Callable[..., Extraction]


def capture_for(media_type: str = "text/html", url: str | None = None) -> CaptureView:
    return CaptureView(capture_id="cap_test", source_id="src_test", media_type=media_type, url=url)


def artifact_for(data: bytes, media_type: str = "text/html") -> Artifact:
    sha256 = hashlib.sha256(data).hexdigest()
    return Artifact(artifact_id=f"art_{sha256[:12]}", sha256=sha256, media_type=media_type, data=data)


@pytest.fixture
def adapter() -> SchemaOrgAdapter:
    return SchemaOrgAdapter()


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture
def extract_html(adapter: SchemaOrgAdapter) -> ExtractHtml:
    """``extract_html(html_or_bytes, url=None, media_type="text/html")``: one fresh extraction."""

    def extract(page: str | bytes, url: str | None = None, media_type: str = "text/html") -> Extraction:
        data = page.encode("utf-8") if isinstance(page, str) else page
        return adapter.extract(capture_for(media_type, url), [artifact_for(data, media_type)])

    return extract


@pytest.fixture
def extract_fixture(extract_html: ExtractHtml) -> Callable[..., Extraction]:
    """``extract_fixture("metascraper_shopping/html/costco.html", url=None)``."""

    def extract(relative_path: str, url: str | None = None) -> Extraction:
        return extract_html((FIXTURES / relative_path).read_bytes(), url=url)

    return extract


def _claims_of(extraction: Extraction, attribute: str) -> list[tuple[object, str]]:
    return [(c.value, c.evidence_locator) for c in extraction.claims if c.attribute == attribute]


@pytest.fixture
def claims_of() -> Callable[[Extraction, str], list[tuple[object, str]]]:
    """``claims_of(extraction, "core:gtin")``: (value, evidence locator) of every such claim, in order."""
    return _claims_of
