"""A real product HTTP server: uvicorn in a thread on a free loopback port (``prw_api.server.BackgroundServer``),
over a real PostgreSQL whose product schema was filled the way production fills it: the resolver relay's role
sends accepted changes to the PostgreSQL queue and the product queue driver applies them (AW-04).

The tests only read, so one catalog, one database and one server serve the whole module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from prw_api.product import create_app
from prw_api.server import BackgroundServer
from prw_platform.config import Settings
from prw_platform.db import roles
from prw_platform.db.database import Database
from prw_platform.plugins import PluginRegistry, get_plugin_manager
from prw_platform.plugins.query import QueryVocabulary
from prw_platform.product.public.catalog import PublicCatalog
from prw_platform.product.public.items import CursorCodec
from prw_platform.product.public.pictures import PictureLinks
from prw_platform.queues import ACCEPTED_CHANGES, PostgresQueue
from prw_platform.storage import FilesystemObjectStore
from tests.e2e.product.catalog import CATALOG, PICTURE_BUCKET, TENANT, Catalog, build_catalog, store_pictures
from tests.support.postgres import MAIN, fresh_database


@pytest.fixture(scope="module")
def product_api_db_url(pg_admin_url: str, pg_templates: dict[str, str]) -> Iterator[str]:
    with fresh_database(pg_admin_url, pg_templates[MAIN], "prw_tp") as url:
        yield url


@pytest.fixture(scope="module")
def module_product_db(product_api_db_url: str) -> Iterator[Database]:
    # if_db: the API's statement timeout is 5 s.
    with Database(product_api_db_url, role=roles.PRODUCT_APP, max_size=4, statement_timeout_ms=5_000) as db:
        yield db


@pytest.fixture(scope="module")
def catalog(product_api_db_url: str, module_product_db: Database) -> Catalog:
    with Database(product_api_db_url, role=roles.RESOLVER_RELAY, max_size=2) as relay_db:
        relay = PostgresQueue(relay_db, ACCEPTED_CHANGES.name)
        consumer = PostgresQueue(module_product_db, ACCEPTED_CHANGES.name)
        return build_catalog(relay, consumer, module_product_db)


@pytest.fixture(scope="module")
def picture_store(tmp_path_factory: pytest.TempPathFactory) -> FilesystemObjectStore:
    """The managed asset store the released pictures of the module's catalog are in."""
    store = FilesystemObjectStore(Path(tmp_path_factory.mktemp("prw-pictures")))
    store_pictures(store)
    return store


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory,
    module_product_db: Database,
    catalog: Catalog,
    picture_store: FilesystemObjectStore,
) -> Iterator[BackgroundServer]:
    settings = Settings(data_dir=Path(tmp_path_factory.mktemp("prw-product")))
    served = served_catalog(module_product_db, picture_links(picture_store))
    with BackgroundServer(create_app(settings, served)) as running:
        yield running


#: The keys the module's server signs its cursors and picture links with.
CURSOR_KEY = b"e2e product cursor key, 32 bytes"
PICTURE_KEY = b"e2e product picture key, 32 bytes"


def picture_links(store: FilesystemObjectStore) -> PictureLinks:
    return PictureLinks(store, PICTURE_BUCKET, PICTURE_KEY)


def served_catalog(db: Database, pictures: PictureLinks | None = None) -> PublicCatalog:
    """The catalog as ``Platform.public_catalog`` builds it: the installed profiles' vocabulary (classes, values
    with units), a cursor key of its own and (when given) the signed links of released pictures."""
    vocabulary = QueryVocabulary.from_registry(PluginRegistry.from_manager(get_plugin_manager()))
    return PublicCatalog(db, TENANT, CATALOG, vocabulary, CursorCodec(CURSOR_KEY), pictures)


@pytest.fixture(scope="module")
def http(server: BackgroundServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=10) as client:
        yield client


def error_of(response: httpx.Response) -> tuple[int, str, bool]:
    """(status, code, retryable) of the platform's error body ``{"error": {"code", "message", "retryable"}}``."""
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"code", "message", "retryable"}
    assert error["message"]
    return response.status_code, error["code"], error["retryable"]
