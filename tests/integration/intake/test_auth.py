"""Collector credentials (if_collector_bootstrap): provisioning, the client-credentials grant, and bearer token
verification (INVALID_TOKEN, CREDENTIAL_REVOKED, MISSING_SCOPE)."""

from __future__ import annotations

import os
import stat
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from prw_platform.auth import (
    ClientProvisioningError,
    ClientSpec,
    CollectorAuthService,
    CredentialRevoked,
    InvalidToken,
    OAuthError,
    ProvisionedClient,
    SigningKey,
    TokenService,
    create_client,
    load_or_create_signing_key,
    revoke_client,
)
from prw_platform.auth.scopes import ARTIFACTS_WRITE, CAPTURES_WRITE, COLLECTOR_SCOPES
from prw_platform.auth.tokens import TokenBinding
from prw_platform.db.database import Database
from tests.integration.intake.helpers import (
    CATALOG,
    INSTANCE,
    OTHER_TENANT_SOURCE,
    SOURCE,
    UNGRANTED_SOURCE,
    WORKER,
    World,
)


def token_service(key: SigningKey) -> TokenService:
    return TokenService(key, issuer="prw-intake", audience="prw-intake", ttl=timedelta(minutes=15))


@pytest.fixture(scope="module")
def signing_key(tmp_path_factory: pytest.TempPathFactory) -> SigningKey:
    return load_or_create_signing_key(tmp_path_factory.mktemp("keys") / "token.pem")


@pytest.fixture
def auth(resolver_db: Database, signing_key: SigningKey) -> CollectorAuthService:
    return CollectorAuthService(resolver_db, token_service(signing_key))


@pytest.fixture
def client(world: World, resolver_db: Database) -> ProvisionedClient:
    return create_client(resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, (SOURCE,)))


def test_a_provisioned_client_gets_a_token_binding_tenant_worker_instance_and_sources(
    world: World, auth: CollectorAuthService, client: ProvisionedClient, signing_key: SigningKey
) -> None:
    issued = auth.client_credentials_grant(client.client_id, client.client_secret, None)

    claims = jwt.decode(
        issued.access_token, signing_key.public_key, algorithms=["EdDSA"], audience="prw-intake"
    )
    assert claims["sub"] == INSTANCE
    assert (claims["tenant"], claims["catalog"], claims["worker"]) == (world.tenant, CATALOG, WORKER)
    assert claims["sources"] == [SOURCE]
    assert claims["client_id"] == client.client_id
    assert sorted(claims["scope"].split()) == sorted(COLLECTOR_SCOPES)
    assert {"iss", "aud", "exp", "iat", "jti"} <= claims.keys()
    assert jwt.get_unverified_header(issued.access_token)["alg"] == "EdDSA"
    assert issued.token_type == "Bearer"
    principal = auth.authenticate(issued.access_token)
    assert (principal.tenant_id, principal.instance_id, principal.client_id) == (
        world.tenant,
        INSTANCE,
        client.client_id,
    )


def test_the_secret_is_stored_only_as_a_hash(client: ProvisionedClient, owner_db: Database) -> None:
    with owner_db.transaction(read_only=True) as conn:
        row = conn.execute(
            "SELECT secret_hash FROM resolver.collector_client WHERE client_id = %s", (client.client_id,)
        ).fetchone()
    assert row is not None
    assert client.client_secret not in str(row["secret_hash"])
    assert str(row["secret_hash"]).startswith("scrypt$")


def test_a_wrong_secret_or_an_unknown_client_is_invalid_client(
    auth: CollectorAuthService, client: ProvisionedClient
) -> None:
    for client_id, secret in (
        (client.client_id, "wrong"),
        ("cc_000000000000000000000000", client.client_secret),
    ):
        with pytest.raises(OAuthError) as raised:
            auth.client_credentials_grant(client_id, secret, None)
        assert (raised.value.code, raised.value.status) == ("invalid_client", 401)


def test_a_token_may_ask_for_fewer_scopes_but_not_more(
    world: World, resolver_db: Database, auth: CollectorAuthService
) -> None:
    narrow = create_client(
        resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, (SOURCE,), scopes=(ARTIFACTS_WRITE,))
    )
    assert auth.client_credentials_grant(narrow.client_id, narrow.client_secret, ARTIFACTS_WRITE).scope == (
        ARTIFACTS_WRITE
    )

    with pytest.raises(OAuthError) as raised:
        auth.client_credentials_grant(
            narrow.client_id, narrow.client_secret, f"{ARTIFACTS_WRITE} {CAPTURES_WRITE}"
        )

    assert raised.value.code == "invalid_scope"


def test_a_revoked_client_gets_no_token_and_its_tokens_are_credential_revoked(
    world: World, auth: CollectorAuthService, client: ProvisionedClient, resolver_db: Database
) -> None:
    issued = auth.client_credentials_grant(client.client_id, client.client_secret, None)

    assert revoke_client(resolver_db, world.tenant, client.client_id)

    with pytest.raises(CredentialRevoked):
        auth.authenticate(issued.access_token)
    with pytest.raises(OAuthError, match="revoked"):
        auth.client_credentials_grant(client.client_id, client.client_secret, None)
    assert not revoke_client(resolver_db, world.tenant, client.client_id)


def test_a_new_client_for_the_instance_supersedes_the_old_ones(
    world: World, auth: CollectorAuthService, client: ProvisionedClient, resolver_db: Database
) -> None:
    old_token = auth.client_credentials_grant(client.client_id, client.client_secret, None)

    rotated = create_client(
        resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, (SOURCE,)), supersede=True
    )

    assert rotated.superseded == (client.client_id,)
    with pytest.raises(CredentialRevoked):
        auth.authenticate(old_token.access_token)
    new_token = auth.client_credentials_grant(rotated.client_id, rotated.client_secret, None)
    assert auth.authenticate(new_token.access_token).instance_id == INSTANCE


def test_an_expired_token_is_invalid_token(
    auth: CollectorAuthService, client: ProvisionedClient, resolver_db: Database, signing_key: SigningKey
) -> None:
    past = TokenService(
        signing_key,
        issuer="prw-intake",
        audience="prw-intake",
        ttl=timedelta(minutes=5),
        leeway=timedelta(0),
        clock=lambda: datetime.now(UTC) - timedelta(hours=1),
    )
    stale = CollectorAuthService(resolver_db, past).client_credentials_grant(
        client.client_id, client.client_secret, None
    )

    with pytest.raises(InvalidToken, match="expired"):
        auth.authenticate(stale.access_token)


def test_a_verified_token_is_remembered_only_until_it_expires(signing_key: SigningKey) -> None:
    # TokenService remembers verified tokens (one signature check per token, not per request); expiry is
    # still checked on every use. The token below expires within a second (exp is in whole seconds).
    tokens = TokenService(
        signing_key,
        issuer="prw-intake",
        audience="prw-intake",
        ttl=timedelta(minutes=5),
        leeway=timedelta(0),
        clock=lambda: (
            datetime.fromtimestamp(time.time() // 1, UTC) - timedelta(minutes=5) + timedelta(seconds=1)
        ),
    )
    binding = TokenBinding(
        client_id="cc_x",
        tenant_id="ten_x",
        catalog_id="cat_x",
        worker_id="cw_x",
        instance_id="ci_x",
        sources=("src_x",),
        scopes=(CAPTURES_WRITE,),
    )
    token = tokens.issue(binding).access_token
    assert tokens.verify(token) == tokens.verify(token)  # the second one is the remembered verdict

    time.sleep(max(0.0, tokens.verify(token).expires_at.timestamp() - time.time()) + 0.05)

    with pytest.raises(InvalidToken, match="expired"):
        tokens.verify(token)


def test_a_token_signed_by_another_key_is_invalid_token(
    resolver_db: Database, auth: CollectorAuthService, client: ProvisionedClient
) -> None:
    key = Ed25519PrivateKey.generate()
    foreign = CollectorAuthService(resolver_db, token_service(SigningKey.of(key)))
    token = foreign.client_credentials_grant(client.client_id, client.client_secret, None).access_token

    with pytest.raises(InvalidToken):
        auth.authenticate(token)


def test_a_tampered_token_is_invalid_token(auth: CollectorAuthService, client: ProvisionedClient) -> None:
    token = auth.client_credentials_grant(client.client_id, client.client_secret, None).access_token
    header, payload, signature = token.split(".")
    forged_payload = payload[:-2] + ("AA" if payload[-2:] != "AA" else "BB")

    with pytest.raises(InvalidToken):
        auth.authenticate(f"{header}.{forged_payload}.{signature}")


def test_a_token_for_another_audience_is_invalid_token(
    resolver_db: Database, auth: CollectorAuthService, client: ProvisionedClient, signing_key: SigningKey
) -> None:
    other = TokenService(signing_key, issuer="prw-intake", audience="prw-admin", ttl=timedelta(minutes=5))
    token = CollectorAuthService(resolver_db, other).client_credentials_grant(
        client.client_id, client.client_secret, None
    )

    with pytest.raises(InvalidToken):
        auth.authenticate(token.access_token)


def test_garbage_is_invalid_token(auth: CollectorAuthService) -> None:
    with pytest.raises(InvalidToken):
        auth.authenticate("not-a-jwt")


def test_a_client_cannot_be_granted_a_source_outside_its_catalog(world: World, resolver_db: Database) -> None:
    with pytest.raises(ClientProvisioningError, match=OTHER_TENANT_SOURCE):
        create_client(
            resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, (SOURCE, OTHER_TENANT_SOURCE))
        )


def test_a_client_cannot_have_unknown_scopes_or_no_sources(world: World, resolver_db: Database) -> None:
    with pytest.raises(ClientProvisioningError):
        create_client(
            resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, (SOURCE,), scopes=("admin",))
        )
    with pytest.raises(ClientProvisioningError):
        create_client(resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, INSTANCE, ()))


def test_a_client_row_is_invisible_to_another_tenants_transaction_unless_named(
    world: World, client: ProvisionedClient, resolver_db: Database
) -> None:
    create_client(
        resolver_db, ClientSpec(world.tenant, CATALOG, WORKER, "ci_second", (SOURCE, UNGRANTED_SOURCE))
    )

    rows = resolver_db.run(
        lambda conn: conn.execute("SELECT client_id FROM resolver.collector_client").fetchall(),
        tenant_id=world.other_tenant,
    )

    assert rows == []


def test_the_signing_key_is_generated_once_private_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "token.pem"

    first = load_or_create_signing_key(path)
    second = load_or_create_signing_key(path)

    assert first.key_id == second.key_id
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["token.pem"]
