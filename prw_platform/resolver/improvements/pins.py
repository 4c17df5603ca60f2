"""What an improvement and its replays may pin (if_replay_job "pins the adapter, profile, identity rules
and definition versions"), checked against the installed plugins before anything is written or sent."""

from __future__ import annotations

from typing import Final

from prw_platform.plugins import PluginRegistry, UnknownAdapterVersion, UnknownProfileVersion
from prw_platform.resolver.improvements.errors import UnknownDefinitionVersion

#: The identity rules' generation a replay pins when its improvement proposes none: the installed rule plugins
#: as they ship (catalog generations from 2 are checked against the catalog, ``generations.check_generation``).
IDENTITY_GENERATION: Final = 1


def check_pins(
    registry: PluginRegistry,
    adapter: str | None,
    profile: str | None,
    definitions: dict[str, int] | None,
) -> None:
    """Every pinned version is installed: the adapter, the profile, each attribute definition at its version in
    the pinned profile (422 UNKNOWN_ADAPTER_VERSION / UNKNOWN_PROFILE_VERSION / UNKNOWN_DEFINITION_VERSION)."""
    if adapter is not None and adapter not in registry.adapter_pins:
        raise UnknownAdapterVersion(
            f"adapter {adapter} is not installed; installed: {', '.join(registry.adapter_pins)}"
        )
    if profile is not None and profile not in registry.profile_pins:
        raise UnknownProfileVersion(
            f"profile {profile} is not installed; installed: {', '.join(registry.profile_pins)}"
        )
    if definitions:
        if profile is None:
            raise UnknownDefinitionVersion(
                "definition versions are pinned through a profile: pin profile_version too"
            )
        defined = registry.profile(profile).definitions
        for key, version in sorted(definitions.items()):
            found = defined.get(key)
            if found is None or found.version != version:
                have = f"version {found.version}" if found is not None else "no such definition"
                raise UnknownDefinitionVersion(f"{profile} defines {key} with {have}, not version {version}")


def definition_versions(text: str | None) -> dict[str, int] | None:
    """``storage:heatsink@1,storage:capacity@2`` → ``{"storage:heatsink": 1, ...}``; anything else is not a pin."""
    if not text:
        return None
    out: dict[str, int] = {}
    for part in text.split(","):
        key, _, version = part.strip().rpartition("@")
        if not key or not version.isdigit():
            return None
        out[key] = int(version)
    return out
