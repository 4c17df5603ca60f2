"""No import cycle among the core's modules, counting the imports made only for type checking: a cycle there
still means neither module can be read (or moved) without the other. The composition root depends on the
stage registry, the registry on the platform type, and the runtime on neither (it knows a ``StageHost``).
"""

from __future__ import annotations

import grimp
import pytest


@pytest.fixture
def graph() -> grimp.ImportGraph:
    # grimp keeps imports under ``if TYPE_CHECKING:`` unless told otherwise.
    return grimp.build_graph("prw_platform", cache_dir=None)


def cycles(graph: grimp.ImportGraph) -> list[str]:
    """Each cycle once, as ``a -> b -> ... -> a`` (the shortest way back from an import that closes one)."""
    found: dict[frozenset[str], str] = {}
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None and frozenset(back) not in found:
                found[frozenset(back)] = " -> ".join((importer, *back))
    return sorted(found.values())


def test_the_core_has_no_import_cycle(graph: grimp.ImportGraph) -> None:
    assert cycles(graph) == []


def test_the_runtime_knows_no_platform(graph: grimp.ImportGraph) -> None:
    runtime = graph.find_descendants("prw_platform.runtime") | {"prw_platform.runtime"}
    for module in runtime:
        assert not graph.find_modules_directly_imported_by(module) - runtime, (
            f"{module} imports outside the runtime"
        )


def test_a_type_import_back_to_the_composition_root_is_a_cycle(graph: grimp.ImportGraph) -> None:
    graph.add_import(
        importer="prw_platform.runtime.stages",
        imported="prw_platform.bootstrap",
        line_number=1,
        line_contents="from prw_platform.bootstrap import Platform",
    )

    assert (
        "prw_platform.bootstrap -> prw_platform.pipeline -> prw_platform.runtime.stages -> prw_platform.bootstrap"
        in cycles(graph)
    )
