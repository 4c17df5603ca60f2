"""Why a writer cannot take a stream's cursor: the stream was never opened, or its history epoch is superseded.
Both are 503 UNAVAILABLE at the edges (if_review_decision) and retried by the resolution consumer."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class StreamUnavailable(CodedError):
    status = 503
    http_code = "UNAVAILABLE"


class StreamNotOpen(StreamUnavailable):
    """No stream cursor exists for (tenant, catalog, history_epoch): provision the catalog first."""

    code = "STREAM_NOT_OPEN"


class HistoryEpochFenced(StreamUnavailable):
    """The stream belongs to a superseded history epoch (if_projection_bootstrap: "Fence old workers")."""

    code = "HISTORY_EPOCH_FENCED"
