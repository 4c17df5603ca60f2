"""Errors of the managed catalog files (seed 004), each carrying the status and code the admin origin answers."""

from __future__ import annotations

from prw_platform.coded_error import CodedError


class CatalogFileError(CodedError):
    status = 409
    code = "CONFLICT"


class InvalidFileTransition(CatalogFileError):
    """A state change that STATE-COM-CAT-004 does not have (the database refuses it too)."""

    code = "INVALID_FILE_TRANSITION"

    def __init__(self, from_state: str, to_state: str, why: str | None = None) -> None:
        self.from_state = from_state
        self.to_state = to_state
        self.why = why
        reason = f": {why}" if why else ""
        super().__init__(f"{from_state} -> {to_state} is not a transition of STATE-COM-CAT-004{reason}")


class UnreadableSource(CatalogFileError):
    """Seed 004 preparing -> ready guard: "The asset source must be readable by the pipeline" (400)."""

    status = 400
    code = "UNREADABLE_SOURCE"


class UnpreparedReference(CatalogFileError):
    """Seed 004 ready -> attached guard: "The save must have prepared the reference it commits" (400)."""

    status = 400
    code = "UNPREPARED_REFERENCE"


class FileNotFound(CatalogFileError):
    status = 404
    code = "NOT_FOUND"


class ClassExists(CatalogFileError):
    status = 409
    code = "CLASS_EXISTS"
