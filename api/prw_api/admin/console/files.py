"""The console's files page (seed 004), outside the OpenAPI contract, drawn from the service its JSON
routes use:

- ``GET /console/files``: the files whose cleanup failed five times, with the reason (``GET /v1/files/failed``);
- ``POST /console/files/{file_id}/retry``: "Retry cleanup" (``POST /v1/files/{file_id}/retry``: operator_admin,
  CSRF), answered by the page saying the file is back with the cleanup consumer, or 404/409 with the reason.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, Response

from prw_api.admin.console.access import common_context, console_access, console_form_access
from prw_api.admin.console.errors import ConsoleRoute
from prw_api.admin.console.rendering import page
from prw_api.admin.deps import SessionsDep
from prw_api.admin.files_models import ManagedFileOut
from prw_api.ids import FileId
from prw_platform.errors import CatalogFileError
from prw_platform.services import Access, CatalogFiles

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)


def _files(request: Request) -> CatalogFiles:
    files: CatalogFiles = request.app.state.files
    return files


@router.get("/files", response_class=HTMLResponse)
def files_page(request: Request, sessions: SessionsDep) -> Response:
    access = console_access(request, sessions, "viewer")
    return _page(request, access)


@router.post("/files/{file_id}/retry", response_class=HTMLResponse)
def retry_cleanup(
    request: Request,
    file_id: FileId,
    sessions: SessionsDep,
    csrf_token: Annotated[str, Form(max_length=200)],
) -> Response:
    access = console_form_access(request, sessions, csrf_token, "operator_admin")
    try:
        retried = _files(request).retry_cleanup(access.tenant_id, file_id, actor=access.actor)
    except CatalogFileError as error:
        problem = {"code": error.code, "message": str(error)}
        return _page(request, access, status_code=error.status, problem=problem)
    return _page(request, access, retried=ManagedFileOut.model_validate(retried))


def _page(request: Request, access: Access, *, status_code: int = 200, **extra: Any) -> Response:
    failed = [ManagedFileOut.model_validate(f) for f in _files(request).failed_files(access.tenant_id)]
    context = {**common_context(access, "files"), "failed": failed, **extra}
    return page(request, "files.html", context, status_code=status_code)
