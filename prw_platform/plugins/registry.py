"""Adapters and profiles by ``name@version``, built from a plugin manager.

One distribution may offer several versions of the same adapter or profile (a replay pins the version it ran
with, if_replay_job); two plugins may never offer the same pin (DUPLICATE_PIN names both).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import pluggy

from prw_platform.plugins.contributions import collect_contributions
from prw_platform.plugins.identity import IdentityRule
from prw_platform.plugins.pins import (
    ADAPTER_PIN_SHAPE,
    PROFILE_PIN_SHAPE,
    adapter_version_key,
    is_adapter_pin,
    is_profile_pin,
    pin,
    profile_version_key,
)
from prw_platform.plugins.types import (
    CaptureView,
    DuplicatePin,
    NormalizationProfile,
    SourceAdapter,
    UnknownAdapterVersion,
    UnknownProfileVersion,
)

log = logging.getLogger(__name__)


def adapter_priority(adapter: SourceAdapter) -> int:
    """The adapter's optional ``priority`` attribute (default 0; higher is tried first)."""
    priority = getattr(adapter, "priority", 0)
    return priority if isinstance(priority, int) and not isinstance(priority, bool) else 0


def _selection_key(adapter: SourceAdapter) -> tuple[int, str, tuple[int, int, int]]:
    major, minor, patch = adapter_version_key(adapter.version)
    return (-adapter_priority(adapter), adapter.name, (-major, -minor, -patch))


class PluginRegistry:
    """The installed adapters, profiles and identity rules, keyed by pin. Build one per manager with
    ``from_manager``."""

    def __init__(
        self,
        adapters: Mapping[str, SourceAdapter],
        profiles: Mapping[str, NormalizationProfile],
        providers: Mapping[str, str],
        rules: Mapping[str, IdentityRule] | None = None,
    ) -> None:
        self._adapters = dict(adapters)
        self._profiles = dict(profiles)
        self._providers = dict(providers)
        self._rules = dict(rules or {})

    @classmethod
    def from_manager(cls, pm: pluggy.PluginManager) -> PluginRegistry:
        adapters: dict[str, SourceAdapter] = {}
        profiles: dict[str, NormalizationProfile] = {}
        rules: dict[str, IdentityRule] = {}
        providers: dict[str, str] = {}

        def claim(offered: str, plugin_name: str) -> None:
            if offered in providers:
                first = providers[offered]
                raise DuplicatePin(
                    f"{offered} is offered twice by plugin {first!r}"
                    if first == plugin_name
                    else f"{offered} is offered by both plugin {first!r} and plugin {plugin_name!r}"
                )
            providers[offered] = plugin_name

        for contribution in collect_contributions(pm):
            for adapter in contribution.adapters:
                offered = pin(adapter.name, adapter.version)
                claim(offered, contribution.plugin_name)
                adapters[offered] = adapter
            for profile in contribution.profiles:
                offered = pin(profile.name, profile.version)
                claim(offered, contribution.plugin_name)
                profiles[offered] = profile
            for rule in contribution.rules:
                offered = pin(rule.name, rule.version)
                claim(offered, contribution.plugin_name)
                rules[offered] = rule
        return cls(adapters, profiles, providers, rules)

    @property
    def identity_rules(self) -> tuple[IdentityRule, ...]:
        """The newest installed version of each identity rule, in name order: the order they are asked in."""
        newest: dict[str, IdentityRule] = {}
        for rule in self._rules.values():
            known = newest.get(rule.name)
            if known is None or profile_version_key(rule.version) > profile_version_key(known.version):
                newest[rule.name] = rule
        return tuple(newest[name] for name in sorted(newest))

    @property
    def adapter_pins(self) -> tuple[str, ...]:
        """Installed adapter pins in selection order (see ``select_adapter``)."""
        return tuple(pin(a.name, a.version) for a in self.adapters_in_selection_order())

    @property
    def profile_pins(self) -> tuple[str, ...]:
        """Installed profile pins by name, newest version first."""
        ordered = sorted(self._profiles.values(), key=lambda p: (p.name, -profile_version_key(p.version)))
        return tuple(pin(p.name, p.version) for p in ordered)

    def provider_of(self, offered: str) -> str:
        """The registered plugin name that offers this pin."""
        try:
            return self._providers[offered]
        except KeyError:
            if offered in self._profiles or is_profile_pin(offered):
                raise self._unknown_profile(offered) from None
            raise self._unknown_adapter(offered) from None

    def adapter(self, wanted: str) -> SourceAdapter:
        """The adapter with exactly this pin; UNKNOWN_ADAPTER_VERSION (listing what is installed) otherwise."""
        try:
            return self._adapters[wanted]
        except KeyError:
            raise self._unknown_adapter(wanted) from None

    def profile(self, wanted: str) -> NormalizationProfile:
        """The profile with exactly this pin; UNKNOWN_PROFILE_VERSION (listing what is installed) otherwise."""
        try:
            return self._profiles[wanted]
        except KeyError:
            raise self._unknown_profile(wanted) from None

    def latest_adapter(self, name: str) -> SourceAdapter:
        """The newest installed version of adapter ``name`` by semantic version (``1.10.0`` > ``1.9.3``)."""
        versions = [a for a in self._adapters.values() if a.name == name]
        if not versions:
            installed = ", ".join(sorted(self._adapters)) or "none"
            raise UnknownAdapterVersion(
                f"no version of adapter {name} is installed; installed adapters: {installed}"
            )
        return max(versions, key=lambda a: adapter_version_key(a.version))

    def latest_profile(self, name: str) -> NormalizationProfile:
        """The newest installed version of profile ``name`` by integer version (``np_x@10`` > ``np_x@9``)."""
        versions = [p for p in self._profiles.values() if p.name == name]
        if not versions:
            installed = ", ".join(sorted(self._profiles)) or "none"
            raise UnknownProfileVersion(
                f"no version of profile {name} is installed; installed profiles: {installed}"
            )
        return max(versions, key=lambda p: profile_version_key(p.version))

    def latest(self, name: str) -> str:
        """The newest installed pin of the adapter (``pa_*``) or profile (``np_*``) called ``name``."""
        if name.startswith("np_"):
            newest_profile = self.latest_profile(name)
            return pin(newest_profile.name, newest_profile.version)
        newest_adapter = self.latest_adapter(name)
        return pin(newest_adapter.name, newest_adapter.version)

    def adapters_in_selection_order(self) -> tuple[SourceAdapter, ...]:
        """Priority (highest first), then name (ascending), then version (newest first)."""
        return tuple(sorted(self._adapters.values(), key=_selection_key))

    def select_adapter(self, capture: CaptureView) -> SourceAdapter | None:
        """The adapter for this capture, or None (the LLM fallback's case).

        1. ``capture.adapter_hint``: that pin must be installed (else UNKNOWN_ADAPTER_VERSION: silently running
           another adapter would give claims the collector did not ask for); it wins when it supports the
           capture, otherwise selection goes on with step 2.
        2. Every adapter in ``adapters_in_selection_order()``; the first whose ``supports`` is true wins. An
           adapter whose ``supports`` raises (a contract violation) is logged and skipped.
        """
        candidates = list(self.adapters_in_selection_order())
        if capture.adapter_hint is not None:
            hinted = self.adapter(capture.adapter_hint)
            candidates.remove(hinted)
            candidates.insert(0, hinted)
        for adapter in candidates:
            try:
                supported = adapter.supports(capture)
            except Exception:
                log.exception("adapter %s@%s raised in supports(); skipped", adapter.name, adapter.version)
                continue
            if supported is True:
                return adapter
        return None

    def _unknown_adapter(self, wanted: str) -> UnknownAdapterVersion:
        shape = "" if is_adapter_pin(wanted) else f" (an adapter pin is {ADAPTER_PIN_SHAPE})"
        installed = ", ".join(sorted(self._adapters)) or "none"
        return UnknownAdapterVersion(
            f"adapter {wanted} is not installed{shape}; installed adapters: {installed}"
        )

    def _unknown_profile(self, wanted: str) -> UnknownProfileVersion:
        shape = "" if is_profile_pin(wanted) else f" (a profile pin is {PROFILE_PIN_SHAPE})"
        installed = ", ".join(sorted(self._profiles)) or "none"
        return UnknownProfileVersion(
            f"profile {wanted} is not installed{shape}; installed profiles: {installed}"
        )
