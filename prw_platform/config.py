"""Settings (pydantic-settings). Read once, by the composition root (``prw_platform.bootstrap``), never at import.

Every field can be set from the environment with the ``PRW_`` prefix (``PRW_DATABASE_URL``,
``PRW_OBJECT_STORE=s3``, ``PRW_S3__ENDPOINT_URL``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class S3Settings(BaseModel):
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: SecretStr | None = None
    #: if_artifact_upload: a presigned PUT is a short-lived capability (PROP 300 s).
    presign_ttl_seconds: int = 300


class SqsSettings(BaseModel):
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: str | None = None
    secret_access_key: SecretStr | None = None
    queue_prefix: str = "prw-"


class DevUser(BaseModel):
    """A user of the development identity provider (``prw dev``): no password, roles per tenant."""

    subject: str
    name: str
    email: str | None = None
    #: {"ten_primary": "reviewer"}: viewer, reviewer or operator_admin per tenant.
    tenants: dict[str, str] = Field(default_factory=dict)


def _default_dev_users() -> list[DevUser]:
    return [
        DevUser(subject="ada", name="Ada Admin", tenants={"ten_primary": "operator_admin"}),
        DevUser(subject="rita", name="Rita Reviewer", tenants={"ten_primary": "reviewer"}),
        DevUser(subject="vic", name="Vic Viewer", tenants={"ten_primary": "viewer"}),
    ]


class OperatorOidcSettings(BaseModel):
    """if_operator_session: the admin origin is an OIDC relying party (authorization code + PKCE)."""

    #: The issuer (its ``/.well-known/openid-configuration`` is read). None: ``prw dev`` serves the development
    #: identity provider and fills this in; ``prw serve admin`` refuses to start without one.
    issuer: str | None = None
    client_id: str = "prw-admin"
    client_secret: SecretStr | None = None
    #: The redirect URI registered at the issuer (``https://admin.example.com/auth/callback``). None: derived from
    #: the request (right on loopback and behind no proxy — ``prw dev``); set it whenever the admin origin sits
    #: behind a proxy or TLS terminator, so the Host and scheme a request arrives with never choose it.
    redirect_uri: str | None = None
    #: The ID token claim holding the roles per tenant (``{"ten_primary": "reviewer"}``).
    memberships_claim: str = "prw_tenants"
    scopes: str = "openid profile email"
    #: if_operator_session Timeouts: "Session idle 30 min, absolute 12 h".
    session_idle_seconds: int = Field(default=1800, ge=1)
    session_absolute_seconds: int = Field(default=43_200, ge=1)


class DevIdpSettings(BaseModel):
    """The development identity provider of ``prw dev`` (offline; never for production)."""

    users: list[DevUser] = Field(default_factory=_default_dev_users)
    client_id: str = "prw-admin"
    #: The only redirect URIs codes are sent to. A loopback one without a port matches any port (RFC 8252 7.3):
    #: ``prw dev``, the demo and the tests serve the admin origin on a loopback port.
    redirect_uris: list[str] = Field(
        default_factory=lambda: [
            f"http://{host}/auth/callback" for host in ("127.0.0.1", "localhost", "[::1]")
        ]
    )


class LlmSettings(BaseModel):
    """if_llm_extract, if_llm_review: a model that only proposes (DEC-02). Disabled unless a provider is set:
    ``PRW_LLM__PROVIDER=openai PRW_LLM__BASE_URL=https://.../v1 PRW_LLM__MODEL=... PRW_LLM__API_KEY=...``."""

    provider: Literal["disabled", "openai"] = "disabled"
    #: An OpenAI-compatible API root (``https://api.openai.com/v1``, a vLLM or Ollama server's ``/v1``).
    base_url: str | None = None
    model: str | None = None
    #: A resolver secret: sent to the provider only, never to collectors or a browser.
    api_key: SecretStr | None = None
    #: "60 s per call"; "Retry 429/5xx with backoff, up to 3 times".
    timeout_seconds: float = Field(default=60.0, gt=0, le=600)
    max_retries: int = Field(default=3, ge=0, le=10)
    #: Requests (with their repair turn) per tenant per UTC day; ``tenant_budgets`` overrides it per tenant.
    calls_per_tenant_per_day: int = Field(default=200, ge=0)
    tenant_budgets: dict[str, int] = Field(default_factory=dict)
    #: if_llm_review: advice only for cases whose best candidate scores within this band.
    advice_min_score: float = Field(default=0.3, ge=0, le=1)
    advice_max_score: float = Field(default=0.95, ge=0, le=1)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PRW_", env_nested_delimiter="__", extra="ignore")

    #: The main database (schemas ``resolver`` and ``product``). None: an embedded PostgreSQL under ``data_dir``.
    database_url: str | None = None
    #: The control database for history epochs; None: a database named ``<main>_control`` on the same server.
    control_database_url: str | None = None
    #: Where embedded state lives (embedded PostgreSQL, filesystem object store, Dagster home).
    data_dir: Path = Path(".prw")

    object_store: Literal["filesystem", "s3"] = "filesystem"
    evidence_bucket: str = "evidence-private"
    exports_bucket: str = "exports-private"
    s3: S3Settings = Field(default_factory=S3Settings)

    queue_backend: Literal["postgres", "sqs"] = "postgres"
    sqs: SqsSettings = Field(default_factory=SqsSettings)
    #: ADR-009: after 5 failed deliveries (PROP) the message moves to the dead-letter queue.
    queue_max_receives: int = 5
    queue_visibility_timeout_seconds: int = 60

    #: if_db timeouts: statement timeout 5 s (API), 30 s (consumers).
    statement_timeout_api_ms: int = 5_000
    statement_timeout_consumer_ms: int = 30_000
    db_pool_max_size: int = 10

    #: The platform's one retry policy (``prw_platform.retry``): the first redelivery of a message that failed for
    #: a retryable reason waits ``retry_base_seconds``, each later one twice as long, at most ``retry_max_seconds``.
    retry_base_seconds: int = Field(default=5, ge=0, le=900)
    retry_max_seconds: int = Field(default=900, ge=0, le=900)
    #: AW-02: the sweeper re-enqueues a resolution job left pending this long (its send after commit failed).
    sweep_pending_after_seconds: int = Field(default=60, ge=1)

    #: Seed 004, managed catalog files: the bucket of the managed copies (deletable, unlike evidence), the URL
    #: prefixes the pipeline may read a picture from (nothing by default), the largest picture, how long a
    #: released or abandoned file waits before the sweep claims it, and how long a failed file may wait for an
    #: operator before the ``catalog_files`` asset check fails.
    catalog_files_bucket: str = "catalog-files"
    catalog_file_url_allow: list[str] = Field(default_factory=list)
    catalog_file_max_bytes: int = Field(default=10 * 1024 * 1024, ge=1)
    catalog_file_cleanup_delay_seconds: int = Field(default=3600, ge=0)
    catalog_file_failed_alert_seconds: int = Field(default=86_400, ge=1)

    #: if_product_query Tenant: "Deployment binds ten_primary and tenant-private cat_primary." The product API
    #: serves this one released catalog; no request can pick another (INV-06).
    product_tenant_id: str = "ten_primary"
    product_catalog_id: str = "cat_primary"
    #: Signs the public API's page cursors (HMAC-SHA256; at least 16 characters). Unset: derived from the token
    #: signing key, so every worker and server sharing the data dir (or ``PRW_TOKEN_SIGNING_KEY_PEM``) agrees.
    product_cursor_secret: SecretStr | None = None
    #: if_product_query 429 RATE_LIMITED: requests per second per client address; unset: no limit here (the
    #: seed puts rate limiting at the edge). ``product_rate_limit_burst`` requests may come at once.
    product_rate_limit_per_second: float | None = Field(default=None, gt=0)
    product_rate_limit_burst: int = Field(default=20, ge=1)
    #: Cache-Control max-age of a public read (the ETag, from the release, revalidates it).
    product_cache_max_age_seconds: int = Field(default=30, ge=0)
    #: How long a released picture's signed link (``GET /v1/files/{token}``) stays valid: at least this long after
    #: the document that carries it was served, at most twice as long (docs/operators/files.md).
    product_picture_link_ttl_seconds: int = Field(default=3600, ge=60)

    #: A request body above this many bytes is refused with 413 before it is read, whatever route it is for
    #: (JSON and form bodies; the artifact PUT streams up to ``PRW_INTAKE_MAX_ARTIFACT_BYTES`` instead).
    max_request_body_bytes: int = Field(default=1024 * 1024, ge=1)
    #: A JSON body nested deeper than this (arrays and objects) is refused with 422.
    max_json_depth: int = Field(default=32, ge=1, le=512)
    #: How far after the server's clock a reported ``observed_at`` may be (collectors' clock skew); later is 422.
    clock_skew_tolerance_seconds: int = Field(default=300, ge=0)

    #: if_heartbeat: "Lease 90 s (DEC-05, OPEN thresholds)": a registration or heartbeat holds the lease this long;
    #: an instance whose lease lapsed is ``silent``.
    collector_lease_seconds: int = Field(default=90, ge=1, le=86_400)
    #: More consecutive failed runs than this (heartbeat run reports) mark an instance ``failing``.
    collector_failing_after: int = Field(default=3, ge=0)
    #: The ``collector_fleet`` asset check fails when an instance with grants has been silent or failing longer.
    collector_alert_after_seconds: int = Field(default=900, ge=0)

    #: The admin origin's operator login (``PRW_OPERATOR_OIDC__ISSUER``, ...).
    operator_oidc: OperatorOidcSettings = Field(default_factory=OperatorOidcSettings)
    #: ``PRW_DEV_IDP__USERS='[{"subject": "ada", "name": "Ada", "tenants": {"ten_primary": "operator_admin"}}]'``.
    dev_idp: DevIdpSettings = Field(default_factory=DevIdpSettings)
    #: Gap closure: where the product consumer reads the resolver's export stream (the intake origin,
    #: e.g. ``http://127.0.0.1:8000``) and the product principal's client credentials (a client with scope
    #: ``exports:read``: ``prw clients create ... --scope exports:read`` without ``--source``). Unset: gaps are reported, not closed.
    exports_url: str | None = None
    exports_client_id: str | None = None
    exports_client_secret: SecretStr | None = None
    #: A gap open this long (the oldest delivery waiting behind it arrived that long ago) is fetched from the
    #: export stream; a dead-lettered delivery's stream is fetched at once.
    gap_fetch_after_seconds: int = Field(default=30, ge=0)
    #: A long-running consumer (``prw worker``) asks the resolver for each stream's head this often, so that a
    #: lost delivery at the tail of a stream is fetched too.
    gap_head_check_seconds: int = Field(default=300, ge=1)
    #: The ``product_gaps`` asset check fails when a stream's gap has been open longer than this.
    gap_alert_after_seconds: int = Field(default=600, ge=0)
    #: A product rebuild's replaced generation (or a failed rebuild's own) is dropped this long after it finished
    #: (the ``rebuild-cleanup`` stage), so an operator can still compare it meanwhile.
    rebuild_cleanup_after_seconds: int = Field(default=3600, ge=0)
    #: The rebuild cleanup drops a generation in transactions of at most this many rows per table.
    rebuild_cleanup_chunk_rows: int = Field(default=5_000, ge=1)
    #: A running rebuild renews its heartbeat with its export lease (every minute); one whose heartbeat is older
    #: than this is stale, and ``prw product rebuild --abandon`` may abandon it (its process died).
    rebuild_stale_after_seconds: int = Field(default=600, ge=1)
    #: Retention (AW-03 "Prune"): a published event stays at least this long (then only while a live
    #: consumer or a rebuild lease still needs it).
    retention_age_seconds: int = Field(default=7 * 86_400, ge=0)
    #: A rebuild lease lives this long unless renewed (if_projection_bootstrap "Renew the lease throughout").
    retention_lease_ttl_seconds: int = Field(default=1_800, ge=1)
    #: The ``retention`` asset check fails when retention has been blocked this long by a consumer or a lease.
    retention_blocked_alert_seconds: int = Field(default=6 * 3_600, ge=0)
    #: ... and warns when a live lease expires within this many seconds.
    retention_lease_warn_seconds: int = Field(default=300, ge=0)

    #: The LLM provider (``PRW_LLM__PROVIDER``, ...): disabled by default, so no page text leaves the platform.
    llm: LlmSettings = Field(default_factory=LlmSettings)

    @property
    def object_store_root(self) -> Path:
        return self.data_dir / "objects"

    @property
    def embedded_pg_dir(self) -> Path:
        return self.data_dir / "pg"
