"""if_artifact_upload: POST /v1/artifacts/uploads (declare) and PUT /v1/artifacts/uploads/{upload_id} (bytes)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from prw_api.errors import ApiError, ErrorBody
from prw_api.intake.deps import CollectorDep, IntakeDep
from prw_api.intake.models import UploadDeclaredBody, UploadStoredBody, UploadTargetBody
from prw_api.routing import PlatformRoute
from prw_platform.services import UploadDeclaration

router = APIRouter(tags=["artifacts"], route_class=PlatformRoute)

#: The streamed PUT of an upload's bytes (the body limit of this route is the artifact limit, not the JSON one).
UPLOAD_BYTES_PATH = "/v1/artifacts/uploads/{upload_id}"

_ERRORS: dict[int | str, dict[str, object]] = {
    status: {"model": ErrorBody} for status in (401, 403, 404, 409, 413, 422, 503)
}


@router.post(
    "/v1/artifacts/uploads",
    operation_id="declareArtifactUpload",
    name="declareArtifactUpload",
    status_code=201,
    response_model=UploadDeclaredBody,
    response_model_exclude_none=True,
    responses={200: {"model": UploadDeclaredBody, "description": "already_stored: skip the PUT"}, **_ERRORS},
)
def declare_upload(
    declaration: UploadDeclaration,
    principal: CollectorDep,
    intake: IntakeDep,
    request: Request,
    response: Response,
) -> UploadDeclaredBody:
    declared = intake.declare_upload(principal, declaration)
    if declared.status == "already_stored":
        response.status_code = 200
        return UploadDeclaredBody(status="already_stored", ref=declared.ref, sha256=declared.sha256)
    assert declared.upload_id is not None
    assert declared.target is not None
    url = declared.target.url or str(request.url_for("uploadArtifactBytes", upload_id=declared.upload_id))
    return UploadDeclaredBody(
        upload_id=declared.upload_id,
        status="pending",
        ref=declared.ref,
        sha256=declared.sha256,
        target=UploadTargetBody(method=declared.target.method, url=url, headers=declared.target.headers),
        expires_at=declared.expires_at,
    )


@router.put(
    UPLOAD_BYTES_PATH,
    operation_id="uploadArtifactBytes",
    name="uploadArtifactBytes",
    response_model=UploadStoredBody,
    responses=_ERRORS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def upload_bytes(
    upload_id: str, request: Request, principal: CollectorDep, intake: IntakeDep
) -> UploadStoredBody:
    upload = await run_in_threadpool(intake.open_upload, principal, upload_id)
    body = intake.upload_body(upload, _content_length(request))
    # Streamed: each chunk is hashed and size-checked as it arrives, so an oversized or wrong body is refused
    # without being read to its end (if_artifact_upload: "PUT ... streamed through the resolver").
    async for chunk in request.stream():
        body.feed(chunk)
    stored = await run_in_threadpool(intake.complete_upload, principal, upload, body)
    return UploadStoredBody(
        upload_id=stored.upload_id,
        status=stored.status,
        ref=stored.ref,
        sha256=stored.sha256,
        artifact_id=stored.artifact_id,
        size=stored.size,
    )


def _content_length(request: Request) -> int | None:
    value = request.headers.get("content-length")
    if value is None:
        return None
    if not value.isdigit():
        raise ApiError(422, "VALIDATION_FAILED", "Content-Length must be a non-negative integer")
    return int(value)
