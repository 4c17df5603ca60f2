"""``name@version`` pins: their shape and their order.

Adapters are pinned by a semantic version (``pa_schemaorg@1.0.0``), profiles by an integer (``np_storage@4``),
identity rules by an integer too (``strong_identifier_match@1``, recorded as the actor ``rule:<pin>``);
a replay pins both (if_replay_job), so a pin must mean exactly one installed implementation.
"""

from __future__ import annotations

import re

from prw_platform.plugins.types import InvalidPin

_NAME = r"[a-z0-9]+(?:_[a-z0-9]+)*"
_NUMBER = r"(?:0|[1-9][0-9]*)"

ADAPTER_PIN_PATTERN = re.compile(rf"^(?P<name>pa_{_NAME})@(?P<version>{_NUMBER}\.{_NUMBER}\.{_NUMBER})$")
PROFILE_PIN_PATTERN = re.compile(rf"^(?P<name>np_{_NAME})@(?P<version>[1-9][0-9]*)$")
RULE_PIN_PATTERN = re.compile(rf"^(?P<name>{_NAME})@(?P<version>[1-9][0-9]*)$")

ADAPTER_PIN_SHAPE = "pa_<name>@MAJOR.MINOR.PATCH"
PROFILE_PIN_SHAPE = "np_<name>@N"
RULE_PIN_SHAPE = "<name>@N"


def pin(name: str, version: str) -> str:
    return f"{name}@{version}"


def is_adapter_pin(text: str) -> bool:
    return ADAPTER_PIN_PATTERN.fullmatch(text) is not None


def is_profile_pin(text: str) -> bool:
    return PROFILE_PIN_PATTERN.fullmatch(text) is not None


def check_adapter_pin(text: str, *, provider: str) -> None:
    if not is_adapter_pin(text):
        raise InvalidPin(
            f"plugin {provider!r} offers adapter {text!r}; an adapter pin is {ADAPTER_PIN_SHAPE}"
        )


def check_profile_pin(text: str, *, provider: str) -> None:
    if not is_profile_pin(text):
        raise InvalidPin(f"plugin {provider!r} offers profile {text!r}; a profile pin is {PROFILE_PIN_SHAPE}")


def is_rule_pin(text: str) -> bool:
    return RULE_PIN_PATTERN.fullmatch(text) is not None


def check_rule_pin(text: str, *, provider: str) -> None:
    if not is_rule_pin(text):
        raise InvalidPin(f"plugin {provider!r} offers identity rule {text!r}; a rule pin is {RULE_PIN_SHAPE}")


def adapter_version_key(version: str) -> tuple[int, int, int]:
    """Semantic-version order: ``1.10.0`` is newer than ``1.9.3`` (never string order)."""
    major, minor, patch = (int(part) for part in version.split("."))
    return (major, minor, patch)


def profile_version_key(version: str) -> int:
    return int(version)
