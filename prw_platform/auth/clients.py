"""Collector clients: operator provisioning, client-credentials authentication, revocation (table
``resolver.collector_client``, migration 0005; this module is its only writer).

if_collector_bootstrap: "The operator creates a client ... and gets client_id and secret". The secret is
returned once by ``create_client`` and stored only as an scrypt hash. A client is bound for good to one tenant,
catalog, worker, stable instance and set of granted sources; rotating a credential means creating a new client
for the same instance (``supersede=True`` revokes the old ones: "Revoked or superseded client").
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from psycopg.rows import class_row, scalar_row

from prw_platform.auth.errors import ClientProvisioningError, CredentialRevoked, InvalidToken
from prw_platform.auth.principal import CollectorPrincipal
from prw_platform.auth.scopes import COLLECTOR_SCOPES, PRODUCT_SCOPES
from prw_platform.auth.secret_hash import decoy_hash, hash_secret, new_client_secret, verify_secret
from prw_platform.auth.tokens import TokenBinding
from prw_platform.clock import Clock, utc_now
from prw_platform.db.database import Connection, Database
from prw_platform.resolver import catalogs


@dataclass(frozen=True, slots=True)
class ClientSpec:
    tenant_id: str
    catalog_id: str
    worker_id: str
    instance_id: str
    sources: tuple[str, ...]
    scopes: tuple[str, ...] = COLLECTOR_SCOPES


@dataclass(frozen=True, slots=True)
class ProvisionedClient:
    client_id: str
    #: Shown once; only its hash is stored.
    client_secret: str
    binding: TokenBinding
    superseded: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CollectorClient:
    binding: TokenBinding
    revoked_at: datetime | None

    @property
    def client_id(self) -> str:
        return self.binding.client_id


def create_client(
    db: Database, spec: ClientSpec, *, supersede: bool = False, clock: Clock = utc_now
) -> ProvisionedClient:
    """Provision a client for one collector instance. Every source must be a source of the catalog."""
    _check_spec(spec)
    client_id = f"cc_{secrets.token_hex(12)}"
    secret = new_client_secret()
    secret_hash = hash_secret(secret)

    def work(conn: Connection) -> tuple[str, ...]:
        missing = set(spec.sources) - catalogs.sources_in_catalog(
            conn, spec.tenant_id, spec.catalog_id, spec.sources
        )
        if missing:
            raise ClientProvisioningError(
                f"not sources of {spec.tenant_id}/{spec.catalog_id}: {', '.join(sorted(missing))}"
            )
        superseded: tuple[str, ...] = ()
        if supersede:
            revoked: list[str] = (
                conn.cursor(row_factory=scalar_row)
                .execute(
                    """UPDATE resolver.collector_client SET revoked_at = %s
                       WHERE tenant_id = %s AND instance_id = %s AND revoked_at IS NULL RETURNING client_id""",
                    (clock(), spec.tenant_id, spec.instance_id),
                )
                .fetchall()
            )
            superseded = tuple(sorted(revoked))
        conn.execute(
            """INSERT INTO resolver.collector_client
                   (client_id, tenant_id, catalog_id, worker_id, instance_id, scopes, secret_hash, created_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
            (
                client_id,
                spec.tenant_id,
                spec.catalog_id,
                spec.worker_id,
                spec.instance_id,
                sorted(spec.scopes),
                secret_hash,
                clock(),
            ),
        )
        with conn.cursor() as cur:
            # A product service client (exports:read) has no source grant.
            cur.executemany(
                "INSERT INTO resolver.collector_client_source (tenant_id, client_id, source_id) VALUES (%s, %s, %s)",
                [(spec.tenant_id, client_id, source) for source in sorted(spec.sources)],
            )
        return superseded

    superseded = db.run(work, tenant_id=spec.tenant_id)
    binding = TokenBinding(
        client_id=client_id,
        tenant_id=spec.tenant_id,
        catalog_id=spec.catalog_id,
        worker_id=spec.worker_id,
        instance_id=spec.instance_id,
        sources=tuple(sorted(spec.sources)),
        scopes=tuple(sorted(spec.scopes)),
    )
    return ProvisionedClient(client_id, secret, binding, superseded)


def authenticate_client(db: Database, client_id: str, client_secret: str) -> CollectorClient | None:
    """The client whose id and secret match, revoked or not; None for an unknown id or a wrong secret (the two
    cost the same, so the answer time does not tell which ids exist)."""
    client, secret_hash = db.run(lambda conn: _client_by_id(conn, client_id), read_only=True)
    valid = verify_secret(client_secret, secret_hash or decoy_hash())
    return client if valid and client is not None else None


def find_client(db: Database, tenant_id: str, client_id: str) -> CollectorClient | None:
    """The client within ``tenant_id`` (a bearer token names both), for the per-request revocation check."""
    client, _ = db.run(lambda conn: _client_by_id(conn, client_id), tenant_id=tenant_id, read_only=True)
    return client if client is not None and client.binding.tenant_id == tenant_id else None


def check_credential(conn: Connection, principal: CollectorPrincipal) -> None:
    """The per-request revocation check of a verified token, in the caller's transaction (whose tenant is the
    token's: the tenant policy shows the client row). Unknown or bound differently: INVALID_TOKEN; revoked or
    superseded: CREDENTIAL_REVOKED, effective from the revocation's commit (no cache)."""
    send_credential_check(conn, principal)()


def send_credential_check(conn: Connection, principal: CollectorPrincipal) -> Callable[[], None]:
    """``check_credential`` in two steps: send the query now, judge its row when the returned function is
    called. In pipeline mode every statement sent in between travels to the server in the same round trip."""
    cur = conn.cursor(row_factory=class_row(_Credential))
    cur.execute(
        """SELECT c.catalog_id, c.worker_id, c.instance_id, c.scopes, c.revoked_at,
                  array(SELECT s.source_id FROM resolver.collector_client_source s
                        WHERE s.tenant_id = c.tenant_id AND s.client_id = c.client_id) AS sources
           FROM resolver.collector_client c WHERE c.tenant_id = %s AND c.client_id = %s""",
        (principal.tenant_id, principal.client_id),
    )

    def judge() -> None:
        with cur:
            row = cur.fetchone()
        if row is None or not (
            principal.catalog_id == row.catalog_id
            and principal.worker_id == row.worker_id
            and principal.instance_id == row.instance_id
            and principal.sources <= frozenset(row.sources)
            and principal.scopes <= frozenset(row.scopes)
        ):
            raise InvalidToken("the token's client is unknown or bound differently")
        if row.revoked_at is not None:
            raise CredentialRevoked("the token's client is revoked or superseded")

    return judge


@dataclass(frozen=True, slots=True)
class _Credential:
    catalog_id: str
    worker_id: str
    instance_id: str
    scopes: list[str]
    revoked_at: datetime | None
    sources: list[str]


def instance_is_provisioned(conn: Connection, tenant_id: str, instance_id: str) -> bool:
    """if_collector_bootstrap 404 NOT_FOUND "Unknown server-side instance": an operator provisioned a client for
    this stable instance of the tenant (revoked or not: a rotated credential keeps its instance)."""
    found = (
        conn.cursor(row_factory=scalar_row)
        .execute(
            """SELECT EXISTS (SELECT 1 FROM resolver.collector_client
                              WHERE tenant_id = %s AND instance_id = %s)""",
            (tenant_id, instance_id),
        )
        .fetchone()
    )
    return bool(found)


def revoke_client(db: Database, tenant_id: str, client_id: str, *, clock: Clock = utc_now) -> bool:
    """Revoke a client: every token it was issued fails with CREDENTIAL_REVOKED from now on. True when this call
    revoked it, False when it was already revoked or is unknown in the tenant."""

    def work(conn: Connection) -> int:
        return conn.execute(
            """UPDATE resolver.collector_client SET revoked_at = %s
               WHERE tenant_id = %s AND client_id = %s AND revoked_at IS NULL""",
            (clock(), tenant_id, client_id),
        ).rowcount

    return db.run(work, tenant_id=tenant_id) == 1


@dataclass(frozen=True, slots=True)
class _ClientRow:
    client_id: str
    tenant_id: str
    catalog_id: str
    worker_id: str
    instance_id: str
    sources: list[str]
    scopes: list[str]
    secret_hash: str
    revoked_at: datetime | None


def _client_by_id(conn: Connection, client_id: str) -> tuple[CollectorClient | None, str | None]:
    # Migration 0005: the client_by_id policy lets this transaction read the one client it names.
    conn.execute("SELECT set_config('app.client_id', %s, true)", (client_id,))
    row = (
        conn.cursor(row_factory=class_row(_ClientRow))
        .execute(
            """SELECT c.client_id, c.tenant_id, c.catalog_id, c.worker_id, c.instance_id,
                      coalesce(array_agg(s.source_id ORDER BY s.source_id)
                               FILTER (WHERE s.source_id IS NOT NULL), '{}') AS sources,
                      c.scopes, c.secret_hash, c.revoked_at
               FROM resolver.collector_client c
               LEFT JOIN resolver.collector_client_source s USING (client_id)
               WHERE c.client_id = %s
               GROUP BY c.client_id""",
            (client_id,),
        )
        .fetchone()
    )
    if row is None:
        return None, None
    binding = TokenBinding(
        client_id=row.client_id,
        tenant_id=row.tenant_id,
        catalog_id=row.catalog_id,
        worker_id=row.worker_id,
        instance_id=row.instance_id,
        sources=tuple(row.sources),
        scopes=tuple(row.scopes),
    )
    return CollectorClient(binding, row.revoked_at), row.secret_hash


def _check_spec(spec: ClientSpec) -> None:
    if set(spec.scopes) == set(PRODUCT_SCOPES):
        # The product service principal (if_projection_bootstrap): its catalog's export stream, nothing else.
        if spec.sources:
            raise ClientProvisioningError("a product service client (exports:read) has no source grant")
        return
    if not spec.sources:
        raise ClientProvisioningError("a collector client needs at least one source grant")
    unknown = set(spec.scopes) - set(COLLECTOR_SCOPES)
    if unknown or not spec.scopes:
        raise ClientProvisioningError(f"unknown or missing scopes: {', '.join(sorted(unknown)) or '(none)'}")


class CollectorClients:
    """Provisioning of collector clients (if_collector_bootstrap step 1) as the operator's service: the
    resolver database and the platform's clock, from the composition root."""

    def __init__(self, db: Database, *, clock: Clock = utc_now) -> None:
        self._db = db
        self._clock = clock

    def create(self, spec: ClientSpec, *, supersede: bool = False) -> ProvisionedClient:
        return create_client(self._db, spec, supersede=supersede, clock=self._clock)

    def revoke(self, tenant_id: str, client_id: str) -> bool:
        return revoke_client(self._db, tenant_id, client_id, clock=self._clock)
