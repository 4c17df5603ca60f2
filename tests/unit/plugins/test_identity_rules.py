"""Identity rules as plugins: pins, the registry's order, the built-in strong identifier rule,
and how the identity stage asks them (``ask_rules``)."""

from __future__ import annotations

import pytest

from prw_platform.plugins import (
    DuplicatePin,
    IdentityCandidate,
    IdentityEvidence,
    IdentityVerdict,
    InvalidPin,
    InvalidPluginResult,
    PluginRegistry,
    get_plugin_manager,
    register_plugin,
)
from prw_platform.plugins.builtin.strong_identifier import StrongIdentifierMatch
from prw_platform.resolver.resolution.identity import ask_rules, rule_actor
from tests.unit.plugins.fakes import FakeRule, RulePlugin


def _evidence(*candidates: IdentityCandidate) -> IdentityEvidence:
    return IdentityEvidence("sony turntable pslx350h", "sony", None, None, candidates)


def _registry(*plugins: RulePlugin) -> PluginRegistry:
    pm = get_plugin_manager(load_entrypoints=False)
    for n, plugin in enumerate(plugins):
        register_plugin(pm, plugin, name=f"rules_{n}")
    return PluginRegistry.from_manager(pm)


def test_the_built_in_strong_identifier_rule_is_installed_and_recorded_as_the_old_actor() -> None:
    (rule,) = _registry().identity_rules
    assert rule_actor(rule) == "rule:strong_identifier_match@1"


def test_the_strong_identifier_rule_maps_only_an_item_its_identifiers_alone_name() -> None:
    rule = StrongIdentifierMatch()
    named = IdentityCandidate("itm_a", 1.0, "gtin names this item", matched_on=("gtin",))
    ranked = IdentityCandidate("itm_b", 0.95, "title trigram similarity 0.90")
    assert rule.decide(_evidence(named, ranked)) == IdentityVerdict(
        "itm_a", "gtin of the listing name item itm_a"
    )
    assert rule.decide(_evidence(ranked)) is None
    other = IdentityCandidate("itm_c", 1.0, "brand_mpn names this item", matched_on=("brand_mpn",))
    assert rule.decide(_evidence(named, other)) is None


def test_the_newest_version_of_each_rule_is_asked_in_name_order() -> None:
    registry = _registry(RulePlugin([FakeRule("top_score", "1"), FakeRule("top_score", "10")]))
    assert [rule_actor(r) for r in registry.identity_rules] == [
        "rule:strong_identifier_match@1",
        "rule:top_score@10",
    ]


def test_the_first_verdict_naming_an_offered_item_wins() -> None:
    lenient, strict = FakeRule("lenient", "1", threshold=0.5), FakeRule("strict", "1", threshold=0.99)
    top = IdentityCandidate("itm_top", 0.8, "title trigram similarity 0.80")
    ruled = ask_rules((strict, lenient), _evidence(top))
    assert ruled == (lenient, IdentityVerdict("itm_top", "top candidate scores 0.8 >= 0.5"), top)
    assert ask_rules((strict,), _evidence(top)) is None


def test_a_verdict_on_an_item_that_was_not_offered_is_ignored() -> None:
    class Rogue:
        name, version = "rogue", "1"

        def decide(self, evidence: IdentityEvidence) -> IdentityVerdict | None:
            return IdentityVerdict("itm_elsewhere", "a guess")

    assert ask_rules((Rogue(),), _evidence(IdentityCandidate("itm_top", 0.8, "x"))) is None


def test_a_rule_pin_has_an_integer_version() -> None:
    with pytest.raises(InvalidPin, match="a rule pin is <name>@N") as raised:
        _registry(RulePlugin([FakeRule("top_score", "1.0.0")]))
    assert raised.value.code == "INVALID_PIN"


def test_two_plugins_may_not_offer_the_same_rule_pin() -> None:
    with pytest.raises(DuplicatePin, match="top_score@1 is offered by both") as raised:
        _registry(RulePlugin([FakeRule("top_score", "1")]), RulePlugin([FakeRule("top_score", "1")]))
    assert raised.value.code == "DUPLICATE_PIN"


def test_a_rule_hook_must_return_identity_rules() -> None:
    with pytest.raises(InvalidPluginResult, match="is not an IdentityRule") as raised:
        _registry(RulePlugin(["strong"]))
    assert raised.value.code == "INVALID_PLUGIN_RESULT"
