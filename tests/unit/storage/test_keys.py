"""if_object_storage / if_artifact_upload: keys are derived server-side from tenant + digest and validated."""

from __future__ import annotations

import pytest

from prw_platform.storage import (
    InvalidMediaType,
    InvalidObjectKey,
    ObjectKey,
    TenantScopeDenied,
    evidence_key,
    export_key,
    format_ref,
    parse_ref,
    parse_tenant_ref,
)
from prw_platform.storage.keys import validate_media_type

# The digest and ref of the seed's if_artifact_upload example.
SEED_SHA256 = "a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192"
SEED_REF = f"r2://evidence-private/ten_primary/{SEED_SHA256}"


def test_evidence_key_gives_the_seed_key_and_ref() -> None:
    key = evidence_key("ten_primary", SEED_SHA256)

    assert key.path == f"evidence-private/ten_primary/{SEED_SHA256}"
    assert key.object_name == f"ten_primary/{SEED_SHA256}"
    assert key.ref == SEED_REF
    assert format_ref(key) == SEED_REF


def test_ref_round_trips() -> None:
    assert parse_ref(SEED_REF) == evidence_key("ten_primary", SEED_SHA256)
    assert parse_ref(export_key("ten_synth_a", SEED_SHA256).ref).bucket == "exports-private"


def test_identical_digest_in_two_tenants_gives_two_keys() -> None:
    assert evidence_key("ten_synth_a", SEED_SHA256) != evidence_key("ten_synth_b", SEED_SHA256)


@pytest.mark.parametrize(
    "sha256",
    [
        SEED_SHA256.upper(),
        SEED_SHA256[:-1],
        SEED_SHA256 + "0",
        "g" * 64,
        "",
        f"../{SEED_SHA256[3:]}",
    ],
)
def test_sha256_must_be_64_lowercase_hex(sha256: str) -> None:
    with pytest.raises(InvalidObjectKey) as raised:
        evidence_key("ten_primary", sha256)

    assert (raised.value.code, raised.value.status) == ("INVALID_OBJECT_KEY", 422)


@pytest.mark.parametrize(
    "tenant_id",
    [
        "",
        "ten/primary",
        "..",
        "ten..primary",
        ".hidden",
        "ten primary",
        "ten\x00",
        "t" * 129,
        "/abs",
        "ten\\x",
    ],
)
def test_tenant_id_must_be_one_safe_path_segment(tenant_id: str) -> None:
    with pytest.raises(InvalidObjectKey):
        evidence_key(tenant_id, SEED_SHA256)


@pytest.mark.parametrize(
    "bucket", ["", "ab", "Evidence", "evidence/private", "..evidence", "-evidence", "a..b"]
)
def test_bucket_must_be_a_valid_bucket_name(bucket: str) -> None:
    with pytest.raises(InvalidObjectKey):
        ObjectKey(bucket=bucket, tenant_id="ten_primary", sha256=SEED_SHA256)


@pytest.mark.parametrize(
    "ref",
    [
        f"s3://evidence-private/ten_primary/{SEED_SHA256}",
        f"evidence-private/ten_primary/{SEED_SHA256}",
        f"r2://evidence-private/ten_primary/extra/{SEED_SHA256}",
        f"r2://evidence-private/../{SEED_SHA256}",
        "r2://evidence-private/ten_primary",
        f"r2://evidence-private/ten_primary/{SEED_SHA256}/",
    ],
)
def test_malformed_refs_are_rejected(ref: str) -> None:
    with pytest.raises(InvalidObjectKey):
        parse_ref(ref)


def test_ref_of_another_tenant_is_tenant_scope_denied() -> None:
    # if_object_storage: "Reads check that the object's tenant prefix equals the caller's tenant" (INV-06).
    with pytest.raises(TenantScopeDenied) as raised:
        parse_tenant_ref(SEED_REF, "ten_synth_a")

    assert (raised.value.code, raised.value.status) == ("TENANT_SCOPE_DENIED", 403)
    assert parse_tenant_ref(SEED_REF, "ten_primary").tenant_id == "ten_primary"


@pytest.mark.parametrize(
    "media_type", ["text/html", "application/ld+json", "text/html; charset=utf-8", "image/svg+xml"]
)
def test_ordinary_media_types_are_accepted(media_type: str) -> None:
    assert validate_media_type(media_type) == media_type


@pytest.mark.parametrize(
    "media_type", ["", "html", "text/", "/html", "text/html\r\nx-evil: 1", "text/htmlé", "text/" + "x" * 300]
)
def test_malformed_media_types_are_rejected(media_type: str) -> None:
    with pytest.raises(InvalidMediaType):
        validate_media_type(media_type)
