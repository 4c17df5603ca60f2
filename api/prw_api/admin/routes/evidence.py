"""``GET /v1/evidence/{token}``: the bytes of one stored artifact behind a short-lived signed link of a review case
(if_review_read: "Evidence artifact links are short-lived signed reads").

The link is the authorization, like a presigned object-store read: the admin origin signed it for an operator
who could read the case, for one object of one tenant, for five minutes. A token it did not sign is 404
NOT_FOUND; a genuine one past its expiry is 403 LINK_EXPIRED; an object no longer in the store is 404.

Evidence is an untrusted merchant page served from the admin origin, so it is answered as a sandboxed document
(``Content-Security-Policy: sandbox``: no scripts, an opaque origin without the operator's cookies), never
sniffed, and never cached by a shared cache.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from prw_api.admin.deps import ReviewDep
from prw_api.errors import ErrorBody
from prw_api.routing import PlatformRoute

router = APIRouter(tags=["review"], route_class=PlatformRoute)

EVIDENCE_HEADERS = {
    "Content-Security-Policy": "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "private, max-age=60",
    "Referrer-Policy": "no-referrer",
}


@router.get(
    "/v1/evidence/{token}",
    operation_id="getEvidence",
    response_class=Response,
    responses={
        200: {"content": {"application/octet-stream": {}}, "description": "the stored bytes, as captured"},
        **{status: {"model": ErrorBody} for status in (403, 404, 503)},
    },
)
def get_evidence(review: ReviewDep, token: Annotated[str, Path(min_length=1, max_length=2000)]) -> Response:
    evidence = review.evidence.open(token)
    headers = {
        **EVIDENCE_HEADERS,
        "Content-Disposition": f'inline; filename="{evidence.artifact_id}"',
        "ETag": f'"{evidence.sha256}"',
    }
    return Response(evidence.data, media_type=evidence.media_type, headers=headers)
