"""Bodies of the admin origin's catalog file routes (seed 004): item pictures and product classes."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from prw_api.ids import ClassId, FileId
from prw_platform.services import (
    ArtifactSource,
    ExistingFile,
    PictureSource,
    UploadSource,
    UrlSource,
)


class UploadBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: The picture's bytes, base64 (standard alphabet, padded).
    content_base64: str = Field(min_length=1)
    filename: str | None = Field(default=None, max_length=255)


class PictureBody(BaseModel):
    """Exactly one source: bytes uploaded with the save, a stored capture artifact, a URL the platform is allowed
    to read (``PRW_CATALOG_FILE_URL_ALLOW``), or a managed file a save already committed (kept unchanged)."""

    model_config = ConfigDict(extra="forbid")

    upload: UploadBody | None = None
    artifact_id: str | None = Field(default=None, pattern=r"^art_[0-9a-f]{1,64}$")
    url: str | None = Field(default=None, max_length=2048)
    file_id: FileId | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Self:
        given = [v for v in (self.upload, self.artifact_id, self.url, self.file_id) if v is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of upload, artifact_id, url, file_id")
        return self

    def source(self) -> PictureSource:
        if self.upload is not None:
            try:
                data = base64.b64decode(self.upload.content_base64, validate=True)
            except (binascii.Error, ValueError) as error:
                raise ValueError(f"upload.content_base64 is not base64: {error}") from error
            return UploadSource(data, self.upload.filename)
        if self.artifact_id is not None:
            return ArtifactSource(self.artifact_id)
        if self.url is not None:
            return UrlSource(self.url)
        assert self.file_id is not None
        return ExistingFile(self.file_id)


class ItemPicturesRequest(BaseModel):
    """The item's whole picture set: a picture left out is removed (and detached)."""

    model_config = ConfigDict(extra="forbid")

    main: PictureBody | None = None
    gallery: list[PictureBody] = Field(default_factory=list, max_length=50)


class ClassCreateRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    class_id: ClassId
    name: str = Field(min_length=1, max_length=200)
    picture: PictureBody | None = None
    members: list[str] = Field(default_factory=list, max_length=1000)


class ClassUpdateRequest(BaseModel):
    """Fields left out are unchanged; ``"picture": null`` removes the picture."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=200)
    picture: PictureBody | None = None
    members: list[str] | None = Field(default=None, max_length=1000)


class FileOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    file_id: str
    state: str
    media_type: str
    size_bytes: int
    sha256: str


class ItemPicturesOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    item_id: str
    catalog_id: str
    main: FileOut | None
    gallery: list[FileOut]


class ClassOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    class_id: str
    catalog_id: str
    name: str
    picture: FileOut | None
    members: list[str]
    created_at: datetime
    updated_at: datetime


class ClassList(BaseModel):
    classes: list[ClassOut]


class ManagedFileOut(BaseModel):
    """A managed file as an operator reviews it (seed 004 failed: "retains a failure reason for operator review")."""

    model_config = ConfigDict(from_attributes=True)

    file_id: str
    catalog_id: str
    state: str
    origin: str
    media_type: str
    size_bytes: int
    sha256: str
    failed_receives: int
    failure_reason: str | None
    state_changed_at: datetime


class ManagedFileList(BaseModel):
    files: list[ManagedFileOut]
