"""Identity rules are plugins: the resolution consumer asks the installed rules, records the
deciding rule as the decision's actor, and without a rule that maps them, identifiers naming an item go to
review rather than to a second item."""

from __future__ import annotations

import pytest

from prw_platform.plugins import PluginRegistry, get_plugin_manager, register_plugin
from prw_platform.resolver.resolution import REVIEW_CASE_OPENED, STAGE_COMPLETED
from tests.integration.resolution.pipeline import ANVIL_MICRODATA, RACING_BIKE, Collector, Resolution, page
from tests.unit.plugins.fakes import FakeRule, RulePlugin


@pytest.fixture
def registry(request: pytest.FixtureRequest) -> PluginRegistry:
    """Overrides conftest's: the installed plugins plus the rules given (indirect parameter); None instead of
    rules: the installed plugins without the built-in strong identifier rule."""
    pm = get_plugin_manager()
    rules: tuple[FakeRule, ...] | None = request.param
    if rules is None:
        pm.unregister(name="prw_builtin_strong_identifier")
    else:
        register_plugin(pm, RulePlugin(rules), name="test_rules")
    return PluginRegistry.from_manager(pm)


def _with(rules: tuple[FakeRule, ...] | None) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("registry", [rules], indirect=True, ids=["rules"])


@_with((FakeRule("top_candidate", "1", threshold=0.1),))
def test_an_installed_rule_maps_a_listing_to_its_top_candidate(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    (anvil,) = resolution.run().outcomes
    collector.submit(page(RACING_BIKE), record="acme-racing-bike")

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision, outcome.item_id) == (
        STAGE_COMPLETED,
        "map_listing",
        anvil.item_id,
    )
    decision = resolution.one("SELECT * FROM resolver.decision ORDER BY created_at DESC, decision_id LIMIT 1")
    assert (decision["actor"], decision["rationale"]) == (
        "rule:top_candidate@1",
        "top candidate scores 0.1133 >= 0.1",
    )


@_with((FakeRule("top_candidate", "1", threshold=0.5),))
def test_a_rule_that_declines_leaves_the_case_to_a_reviewer(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    resolution.run()
    collector.submit(page(RACING_BIKE), record="acme-racing-bike")

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision) == (REVIEW_CASE_OPENED, "open_review_case")


@_with(None)
def test_without_the_strong_identifier_rule_a_named_item_goes_to_review(
    collector: Collector, resolution: Resolution
) -> None:
    collector.submit(page(ANVIL_MICRODATA), record="anvil-1")
    (anvil,) = resolution.run().outcomes
    collector.submit(page(ANVIL_MICRODATA), record="anvil-2")

    (outcome,) = resolution.run().outcomes

    assert (outcome.status, outcome.decision) == (REVIEW_CASE_OPENED, "open_review_case")
    case = resolution.one("SELECT * FROM resolver.review_case")
    assert case["kind"] == "no_rule_decided"
    assert case["candidates"] == [
        {"item_id": anvil.item_id, "score": 1.0, "reason": "brand_mpn name this item"}
    ]
    assert resolution.one("SELECT count(*) AS n FROM resolver.catalog_item")["n"] == 1
