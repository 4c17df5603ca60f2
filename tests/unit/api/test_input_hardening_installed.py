"""Every origin installs the input hardening, and every route of every router parses JSON the platform's way:
a new router or app that forgets it fails here, not in production."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

import prw_api
from prw_api.intake import create_app as create_intake_app
from prw_api.middleware import (
    BodySizeLimitMiddleware,
    RequestIdMiddleware,
    RequestTargetGuardMiddleware,
    UnexpectedErrorMiddleware,
)
from prw_api.product import create_app as create_product_app
from prw_api.routing import PlatformRoute
from prw_platform.config import Settings
from prw_platform.resolver.intake import IntakeLimits


def _routers() -> dict[str, APIRouter]:
    found: dict[str, APIRouter] = {}
    root = Path(prw_api.__file__).parent
    for module in pkgutil.walk_packages([str(root)], prefix="prw_api."):
        loaded = importlib.import_module(module.name)
        for name, value in vars(loaded).items():
            if isinstance(value, APIRouter) and value.routes:
                found[f"{module.name}.{name}"] = value
    return found


def test_the_routers_are_found() -> None:
    assert {"prw_api.intake.routes.captures.router", "prw_api.product.routes.items.router"} <= set(_routers())


@pytest.mark.parametrize(("name", "router"), _routers().items(), ids=_routers().keys())
def test_every_route_parses_json_the_platform_way(name: str, router: APIRouter) -> None:
    # A subclass (the review console's ConsoleRoute renders refusals as pages) keeps the platform's parsing.
    assert issubclass(router.route_class, PlatformRoute)
    api_routes = [route for route in router.routes if isinstance(route, APIRoute)]
    assert api_routes
    assert all(isinstance(route, PlatformRoute) for route in api_routes)


def _apps(tmp_path: Path) -> dict[str, FastAPI]:
    settings = Settings(data_dir=tmp_path)
    # create_app only stores the services (and reads the intake's artifact limit): stand-ins are enough here.
    intake = SimpleNamespace(max_artifact_bytes=IntakeLimits().max_artifact_bytes)
    return {
        "intake": create_intake_app(settings, cast(Any, intake), cast(Any, None), cast(Any, None)),
        "product": create_product_app(settings, cast(Any, None)),
    }


def test_both_origins_install_the_middleware_outermost_first(tmp_path: Path) -> None:
    for app in _apps(tmp_path).values():
        assert [m.cls for m in app.user_middleware] == [
            RequestIdMiddleware,
            UnexpectedErrorMiddleware,
            BodySizeLimitMiddleware,
            RequestTargetGuardMiddleware,
        ]


def test_each_origin_refuses_with_its_own_validation_code(tmp_path: Path) -> None:
    codes = {
        origin: next(
            m.kwargs["validation_code"] for m in app.user_middleware if m.cls is RequestTargetGuardMiddleware
        )
        for origin, app in _apps(tmp_path).items()
    }

    assert codes == {"intake": "VALIDATION_FAILED", "product": "INVALID_QUERY"}
