"""Token service settings (``PRW_TOKEN_*``), read by the composition root like ``prw_platform.config``."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from prw_platform.config import Settings


class TokenSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PRW_TOKEN_", extra="ignore")

    issuer: str = "prw-intake"
    audience: str = "prw-intake"
    #: Access tokens are short-lived; a collector fetches a new one with its client credentials.
    ttl_seconds: int = 900
    #: Clock skew tolerated on exp/iat between the token service and a verifier.
    leeway_seconds: int = 30
    #: An Ed25519 private key (PEM, PKCS#8). Without it the key lives in ``signing_key_file``.
    signing_key_pem: SecretStr | None = None
    #: Where the generated key is kept; default ``<data_dir>/keys/token-signing-ed25519.pem``.
    signing_key_file: Path | None = None

    def key_file(self, settings: Settings) -> Path:
        return self.signing_key_file or settings.data_dir / "keys" / "token-signing-ed25519.pem"
