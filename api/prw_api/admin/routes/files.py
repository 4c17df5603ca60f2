"""Managed catalog files (seed 004): item pictures and product classes on the admin origin.

Role viewer for the GETs; operator_admin with the session's CSRF token for every write. A picture comes from an
upload (base64 in the JSON body, within the request body limit), a stored capture artifact, a URL the platform is
allowed to read (``PRW_CATALOG_FILE_URL_ALLOW``) or a managed file a save already committed. Errors: 400
UNREADABLE_SOURCE (a picture the pipeline cannot read as a file: nothing is created), 400 UNPREPARED_REFERENCE (a
reference the save never prepared), 404 NOT_FOUND, 409 CLASS_EXISTS, 409 INVALID_FILE_TRANSITION (a discarded
file named again), 422 VALIDATION_FAILED; 401/403 as every admin route. A catalog the active tenant does not have
is 404 NOT_FOUND for a read as for a write (INV-06).

Failed files (seed 004 failed): ``GET /v1/files/failed`` lists the files whose cleanup exhausted its five receives,
with the reason; ``POST /v1/files/{file_id}/retry`` (operator_admin) hands one back to the cleanup consumer
(failed -> discarding, a fresh message): 404 NOT_FOUND, 409 INVALID_FILE_TRANSITION for a file that is not failed.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from prw_api.admin.deps import AdminWriteDep, ViewerDep
from prw_api.admin.files_models import (
    ClassCreateRequest,
    ClassList,
    ClassOut,
    ClassUpdateRequest,
    ItemPicturesOut,
    ItemPicturesRequest,
    ManagedFileList,
    ManagedFileOut,
    PictureBody,
)
from prw_api.errors import ApiError, ErrorBody
from prw_api.ids import CatalogId, ClassId, FileId, ItemId
from prw_api.routing import PlatformRoute
from prw_platform.services import KEEP, CatalogFiles, PictureSource

router = APIRouter(tags=["catalog files"], route_class=PlatformRoute)

_VALIDATION_FAILED = "VALIDATION_FAILED"


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": ErrorBody} for status in (401, 403, *statuses)}


def _files(request: Request) -> CatalogFiles:
    files: CatalogFiles = request.app.state.files
    return files


def _source(body: PictureBody | None) -> PictureSource | None:
    if body is None:
        return None
    try:
        return body.source()
    except ValueError as error:
        raise ApiError(422, _VALIDATION_FAILED, str(error)) from error


@router.get(
    "/v1/items/{item_id}/pictures",
    operation_id="getItemPictures",
    response_model=ItemPicturesOut,
    responses=_errors(404, 422),
)
def get_item_pictures(item_id: ItemId, access: ViewerDep, request: Request) -> ItemPicturesOut:
    return ItemPicturesOut.model_validate(_files(request).item_pictures(access.tenant_id, item_id))


@router.put(
    "/v1/items/{item_id}/pictures",
    operation_id="setItemPictures",
    response_model=ItemPicturesOut,
    responses=_errors(400, 404, 409, 422),
)
def set_item_pictures(
    item_id: ItemId, body: ItemPicturesRequest, access: AdminWriteDep, request: Request
) -> ItemPicturesOut:
    main = _source(body.main)
    gallery = [source for g in body.gallery if (source := _source(g)) is not None]
    saved = _files(request).save_item_pictures(access.tenant_id, item_id, main, gallery, actor=access.actor)
    return ItemPicturesOut.model_validate(saved)


@router.get(
    "/v1/catalogs/{catalog_id}/classes",
    operation_id="listProductClasses",
    response_model=ClassList,
    responses=_errors(404, 422),
)
def list_classes(catalog_id: CatalogId, access: ViewerDep, request: Request) -> ClassList:
    """The catalog's classes; 404 NOT_FOUND for a catalog the active tenant does not have, as for a write."""
    return ClassList(
        classes=[
            ClassOut.model_validate(c) for c in _files(request).list_classes(access.tenant_id, catalog_id)
        ]
    )


@router.post(
    "/v1/catalogs/{catalog_id}/classes",
    operation_id="createProductClass",
    status_code=201,
    response_model=ClassOut,
    responses=_errors(400, 404, 409, 422),
)
def create_class(
    catalog_id: CatalogId, body: ClassCreateRequest, access: AdminWriteDep, request: Request
) -> ClassOut:
    created = _files(request).create_class(
        access.tenant_id,
        catalog_id,
        body.class_id,
        body.name,
        picture=_source(body.picture),
        members=body.members,
        actor=access.actor,
    )
    return ClassOut.model_validate(created)


@router.get(
    "/v1/classes/{class_id}",
    operation_id="getProductClass",
    response_model=ClassOut,
    responses=_errors(404, 422),
)
def get_class(class_id: ClassId, access: ViewerDep, request: Request) -> ClassOut:
    return ClassOut.model_validate(_files(request).get_class(access.tenant_id, class_id))


@router.patch(
    "/v1/classes/{class_id}",
    operation_id="updateProductClass",
    response_model=ClassOut,
    responses=_errors(400, 404, 409, 422),
)
def update_class(
    class_id: ClassId, body: ClassUpdateRequest, access: AdminWriteDep, request: Request
) -> ClassOut:
    picture = _source(body.picture) if "picture" in body.model_fields_set else KEEP
    updated = _files(request).update_class(
        access.tenant_id, class_id, name=body.name, picture=picture, members=body.members, actor=access.actor
    )
    return ClassOut.model_validate(updated)


@router.get(
    "/v1/files/failed",
    operation_id="listFailedFiles",
    response_model=ManagedFileList,
    responses=_errors(422),
)
def list_failed_files(access: ViewerDep, request: Request) -> ManagedFileList:
    return ManagedFileList(
        files=[ManagedFileOut.model_validate(f) for f in _files(request).failed_files(access.tenant_id)]
    )


@router.post(
    "/v1/files/{file_id}/retry",
    operation_id="retryFileCleanup",
    response_model=ManagedFileOut,
    responses=_errors(404, 409, 422),
)
def retry_file_cleanup(file_id: FileId, access: AdminWriteDep, request: Request) -> ManagedFileOut:
    return ManagedFileOut.model_validate(
        _files(request).retry_cleanup(access.tenant_id, file_id, actor=access.actor)
    )


@router.delete(
    "/v1/classes/{class_id}",
    operation_id="deleteProductClass",
    status_code=204,
    response_class=Response,
    responses=_errors(404, 422),
)
def delete_class(class_id: ClassId, access: AdminWriteDep, request: Request) -> Response:
    _files(request).delete_class(access.tenant_id, class_id, actor=access.actor)
    return Response(status_code=204)
