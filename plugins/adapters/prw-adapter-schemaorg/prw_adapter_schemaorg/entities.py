"""One shape for schema.org entities, whatever syntax carried them (JSON-LD, microdata, RDFa).

Every value keeps the evidence locator a reviewer follows to find it again:

- JSON-LD: ``jsonld[<block>]`` then the JSON path as written (``jsonld[0].@graph[2].offers.price``); a
  reference (``{"@id": "#offer"}``) resolves to the node that defines it, and the locator is that node's path.
- microdata: extruct's item list, ``microdata[<item>].properties.offers.properties.price``.
- RDFa: an RDF graph has no document order (extruct's node order changes between runs), so top-level
  schema.org entities are numbered in a canonical order (by content) and values are paths from them:
  ``rdfa[0].offers.price``; a property with several values is numbered the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from prw_adapter_schemaorg.jsonld import JsonLdBlock

Syntax = Literal["jsonld", "microdata", "rdfa"]
Scalar = str | int | float | bool

_SCHEMA_PREFIXES = (
    "http://schema.org/",
    "https://schema.org/",
    "http://www.schema.org/",
    "https://www.schema.org/",
    # Google's retired vocabulary, still on old microdata pages; its Product/Offer terms match schema.org's.
    "http://data-vocabulary.org/",
    "https://data-vocabulary.org/",
    "schema:",
)
_MAX_DEPTH = 16
# A page whose references fan out (every node pointing at every other) must not expand without bound.
_MAX_ENTITIES = 20_000


def local_name(term: str) -> str | None:
    """``Product`` for ``http://schema.org/Product``, ``schema:Product`` or ``Product``; None for a term of
    another vocabulary (``og:title``, ``http://ogp.me/ns#title``)."""
    for prefix in _SCHEMA_PREFIXES:
        if term.startswith(prefix):
            term = term[len(prefix) :]
            break
    if not term or any(mark in term for mark in ":/#"):
        return None
    return term


@dataclass(frozen=True, slots=True)
class Value:
    data: Scalar | Entity
    locator: str

    @property
    def entity(self) -> Entity | None:
        return self.data if isinstance(self.data, Entity) else None


@dataclass(frozen=True, slots=True)
class Entity:
    syntax: Syntax
    types: tuple[str, ...]
    locator: str
    properties: Mapping[str, tuple[Value, ...]]

    def values(self, name: str) -> tuple[Value, ...]:
        return self.properties.get(name, ())

    def first(self, *names: str) -> Value | None:
        return next((value for name in names for value in self.values(name)), None)

    def is_a(self, types: Iterable[str]) -> bool:
        return any(t in self.types for t in types)

    def entities(self, name: str) -> tuple[Entity, ...]:
        return tuple(value.data for value in self.values(name) if isinstance(value.data, Entity))


def _types(raw: object) -> tuple[str, ...]:
    items = raw if isinstance(raw, list) else [raw]
    names = (local_name(item) for item in items if isinstance(item, str))
    return tuple(name for name in names if name)


def _scalar(raw: object) -> Scalar | None:
    return raw if isinstance(raw, str | int | float | bool) else None


class _JsonLdReader:
    def __init__(self, blocks: Sequence[JsonLdBlock]) -> None:
        self._definitions: dict[str, tuple[dict[str, object], str]] = {}
        self._budget = _MAX_ENTITIES
        for block in blocks:
            if block.data is not None:
                self._index(block.data, f"jsonld[{block.index}]")

    def _index(self, node: object, path: str) -> None:
        if isinstance(node, dict):
            node_id = node.get("@id")
            if isinstance(node_id, str) and any(not key.startswith("@") for key in node):
                self._definitions.setdefault(node_id, (node, path))
            for key, value in node.items():
                self._index(value, f"{path}.{key}")
        elif isinstance(node, list):
            for i, item in enumerate(node):
                self._index(item, f"{path}[{i}]")

    def roots(self, data: object, path: str) -> list[Entity]:
        if isinstance(data, list):
            return [root for i, item in enumerate(data) for root in self.roots(item, f"{path}[{i}]")]
        if not isinstance(data, dict):
            return []
        if "@graph" in data:
            graph_roots = self.roots(data["@graph"], f"{path}.@graph")
            return ([self._entity(data, path, frozenset(), 0)] if "@type" in data else []) + graph_roots
        return [self._entity(data, path, frozenset(), 0)]

    def _entity(self, node: dict[str, object], path: str, stack: frozenset[str], depth: int) -> Entity:
        self._budget -= 1
        node_id = node.get("@id")
        inner_stack = stack | {node_id} if isinstance(node_id, str) else stack
        properties: dict[str, tuple[Value, ...]] = {}
        for key, raw in node.items():
            name = None if key.startswith("@") else local_name(key)
            if name is None:
                continue
            values = self._values(raw, f"{path}.{key}", inner_stack, depth + 1)
            if values:
                properties[name] = properties.get(name, ()) + values
        return Entity("jsonld", _types(node.get("@type")), path, properties)

    def _values(self, raw: object, path: str, stack: frozenset[str], depth: int) -> tuple[Value, ...]:
        if isinstance(raw, list):
            return tuple(
                v for i, item in enumerate(raw) for v in self._values(item, f"{path}[{i}]", stack, depth)
            )
        value = self._value(raw, path, stack, depth)
        return (value,) if value is not None else ()

    def _value(self, raw: object, path: str, stack: frozenset[str], depth: int) -> Value | None:
        scalar = _scalar(raw)
        if scalar is not None:
            return Value(scalar, path)
        if not isinstance(raw, dict):
            return None
        if "@value" in raw:
            inner = _scalar(raw["@value"])
            return Value(inner, path) if inner is not None else None
        node_id = raw.get("@id")
        if isinstance(node_id, str) and all(key.startswith("@") for key in raw):
            definition = self._definitions.get(node_id)
            if definition is None or node_id in stack or depth > _MAX_DEPTH or self._budget <= 0:
                return Value(node_id, path)
            node, definition_path = definition
            return Value(self._entity(node, definition_path, stack, depth), definition_path)
        if depth > _MAX_DEPTH or self._budget <= 0 or not raw:
            return None
        return Value(self._entity(raw, path, stack, depth), path)


def jsonld_entities(blocks: Sequence[JsonLdBlock]) -> list[Entity]:
    """The top-level entities of every readable block (a block's array items and ``@graph`` members are
    top-level too), in document order."""
    reader = _JsonLdReader(blocks)
    return [
        root
        for block in blocks
        if block.data is not None
        for root in reader.roots(block.data, f"jsonld[{block.index}]")
    ]


def microdata_entities(items: Sequence[Mapping[str, object]]) -> list[Entity]:
    """Entities from extruct's (non-uniform) microdata items: ``{"type": ..., "properties": {...}}``."""
    return [_microdata_entity(item, f"microdata[{i}]", 0) for i, item in enumerate(items)]


def _microdata_entity(item: Mapping[str, object], path: str, depth: int) -> Entity:
    properties: dict[str, tuple[Value, ...]] = {}
    raw_properties = item.get("properties")
    if isinstance(raw_properties, dict):
        for key, raw in raw_properties.items():
            name = local_name(key)
            if name is not None:
                values = _microdata_values(raw, f"{path}.properties.{key}", depth + 1)
                if values:
                    properties[name] = properties.get(name, ()) + values
    return Entity("microdata", _types(item.get("type")), path, properties)


def _microdata_values(raw: object, path: str, depth: int) -> tuple[Value, ...]:
    if isinstance(raw, list):
        return tuple(v for i, item in enumerate(raw) for v in _microdata_values(item, f"{path}[{i}]", depth))
    scalar = _scalar(raw)
    if scalar is not None:
        return (Value(scalar, path),)
    if isinstance(raw, dict) and depth <= _MAX_DEPTH and ("properties" in raw or "type" in raw):
        return (Value(_microdata_entity(raw, path, depth), path),)
    return ()


Canonical = dict[str, object]


def rdfa_entities(nodes: Sequence[Mapping[str, object]]) -> list[Entity]:
    """Entities from extruct's RDFa output (expanded JSON-LD nodes), with a run-independent order."""
    index = {node["@id"]: node for node in nodes if isinstance(node.get("@id"), str)}
    referenced = {
        target["@id"]
        for node in nodes
        for key, values in node.items()
        if not key.startswith("@") and local_name(key) and isinstance(values, list)
        for target in values
        if isinstance(target, dict) and isinstance(target.get("@id"), str)
    }
    roots = [
        _canonical(node, index, frozenset(), 0)
        for node in nodes
        if _types(node.get("@type")) and node.get("@id") not in referenced
    ]
    roots.sort(key=_canonical_key)
    return [_canonical_entity(root, f"rdfa[{i}]") for i, root in enumerate(roots)]


def _canonical_key(item: object) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False)


def _canonical(
    node: Mapping[str, object],
    index: Mapping[object, Mapping[str, object]],
    stack: frozenset[str],
    depth: int,
) -> Canonical:
    node_id = node.get("@id")
    inner_stack = stack | {node_id} if isinstance(node_id, str) else stack
    canonical: Canonical = {"@type": sorted(_types(node.get("@type")))}
    for key, raw_values in node.items():
        name = None if key.startswith("@") else local_name(key)
        if name is None or not isinstance(raw_values, list):
            continue
        values: list[object] = []
        for raw in raw_values:
            if not isinstance(raw, dict):
                continue
            literal = _scalar(raw.get("@value"))
            if literal is not None:
                values.append(literal)
                continue
            target_id = raw.get("@id")
            if not isinstance(target_id, str):
                continue
            target = index.get(target_id)
            if target is not None and target_id not in inner_stack and depth < _MAX_DEPTH:
                values.append(_canonical(target, index, inner_stack, depth + 1))
            elif not target_id.startswith("_:"):
                values.append(target_id)  # an IRI: schema.org/InStock, an image URL
        if values:
            canonical[name] = sorted(values, key=_canonical_key)
    return canonical


def _canonical_entity(canonical: Canonical, path: str) -> Entity:
    properties: dict[str, tuple[Value, ...]] = {}
    for name, raw_values in canonical.items():
        if name == "@type" or not isinstance(raw_values, list):
            continue
        many = len(raw_values) > 1
        values: list[Value] = []
        for i, raw in enumerate(raw_values):
            locator = f"{path}.{name}[{i}]" if many else f"{path}.{name}"
            if isinstance(raw, dict):
                values.append(Value(_canonical_entity(raw, locator), locator))
            elif (scalar := _scalar(raw)) is not None:
                values.append(Value(scalar, locator))
        properties[name] = tuple(values)
    types = canonical.get("@type")
    return Entity("rdfa", tuple(types) if isinstance(types, list) else (), path, properties)


@dataclass(frozen=True, slots=True)
class ProductView:
    """The primary product: one entity and, for a variant, the ProductGroup it belongs to, whose values fill
    in what the variant does not say (name, brand, description, ...)."""

    product: Entity
    group: Entity | None = None

    def values(self, name: str) -> tuple[Value, ...]:
        own = self.product.values(name)
        return own if own or self.group is None else self.group.values(name)

    def entities(self, name: str) -> tuple[Entity, ...]:
        return tuple(value.data for value in self.values(name) if isinstance(value.data, Entity))
