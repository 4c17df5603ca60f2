"""The generated sections of docs/events.md: the vocabulary table and one field table per payload model.

Rendered from ``VOCABULARY`` and from the generated JSON Schema (not from the models directly), so the docs say
exactly what the schema checks. Each section sits between ``<!-- generated: NAME ... -->`` and
``<!-- end generated: NAME -->``; the prose around them is written by hand.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from prw_platform.contracts.vocabulary import VOCABULARY, EventType, payload_models

BEGIN: Final = (
    "<!-- generated: {name} (python -m prw_platform.contracts.generate): edit prw_platform/contracts -->"
)
END: Final = "<!-- end generated: {name} -->"
TOLERANT_READER: Final = (
    "Every payload object accepts keys it does not declare: a consumer keeps them in its internal projection and "
    "never serves them (public serializers whitelist). The resolver sends none (`EventType.document` refuses them)."
)


def render_events_doc(text: str, schema: Mapping[str, Any]) -> str:
    sections: dict[str, Callable[[], str]] = {
        "vocabulary": vocabulary_table,
        "payloads": lambda: payload_tables(schema["$defs"]),
    }
    for name, render in sections.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.DOTALL)
        found = list(pattern.finditer(text))
        if len(found) != 1:
            raise ValueError(f"docs/events.md needs exactly one generated section {name!r} ({begin} … {end})")
        start, stop = found[0].span()
        text = f"{text[:start]}{begin}\n{render()}{end}{text[stop:]}"
    return text


def vocabulary_table() -> str:
    lines = [
        "| type | aggregate | revision | dependencies | payload |",
        "|---|---|---|---|---|",
    ]
    for entry in VOCABULARY.values():
        lines.append(
            f"| `{entry.name}` | `{entry.aggregate_type}`, `id` = payload `{entry.id_key}` "
            f"| {_revision_text(entry)} | {_dependency_text(entry)} | {_link(entry.payload.__name__)} |"
        )
    lines += ["", *(f"- `{entry.name}`: {entry.summary}" for entry in VOCABULARY.values())]
    return "\n".join(lines) + "\n"


def payload_tables(definitions: Mapping[str, Any]) -> str:
    blocks = []
    for name in _documented_models(definitions):
        definition = definitions[name]
        required = set(definition.get("required", ()))
        lines = [
            f"### {name}",
            "",
            definition.get("description", ""),
            "",
            "| field | type | required | description |",
            "|---|---|---|---|",
        ]
        for field, schema in definition["properties"].items():
            lines.append(
                f"| `{field}` | {_type_text(schema)} | {'yes' if field in required else 'no'} "
                f"| {_cell(schema.get('description', ''))} |"
            )
        blocks.append("\n".join(lines) + "\n")
    names = _documented_models(definitions)
    if all(definitions[name].get("additionalProperties") is True for name in names):
        blocks.insert(0, TOLERANT_READER + "\n")
    return "\n".join(blocks)


def _documented_models(definitions: Mapping[str, Any]) -> list[str]:
    """Payload models in vocabulary order, each followed by the models it refers to that are not listed yet."""
    ordered: list[str] = []

    def visit(name: str) -> None:
        if name in ordered:
            return
        ordered.append(name)
        for ref in re.findall(r'"\$ref": "#/\$defs/([^"]+)"', json.dumps(definitions[name])):
            visit(ref)

    for model in payload_models():
        visit(model.__name__)
    return ordered


def _revision_text(entry: EventType) -> str:
    text = entry.revisions.value
    if entry.revision_key is not None:
        text += f", = payload `{entry.revision_key}`"
    return text


def _dependency_text(entry: EventType) -> str:
    text = entry.dependency_rule
    if entry.serial:
        text += (
            f"; and, implicitly, revision *n* - 1 of the same `{entry.aggregate_type}` (the consumer applies "
            "revisions in order, INV-08)"
        )
    return text


def _type_text(schema: Mapping[str, Any]) -> str:
    if "$ref" in schema:
        return _link(schema["$ref"].rsplit("/", 1)[-1])
    if "enum" in schema:
        return " or ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    if "anyOf" in schema:
        return " or ".join(_type_text(branch) for branch in schema["anyOf"])
    types = schema.get("type")
    return " or ".join(_one_type(t, schema) for t in (types if isinstance(types, list) else [types]))


def _one_type(name: str | None, schema: Mapping[str, Any]) -> str:
    if name == "array":
        items = _type_text(schema["items"])
        return f"array of ({items})" if " or " in items else f"array of {items}"
    if name == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"map of string to {_type_text(schema['additionalProperties'])}"
    if name == "string" and "format" in schema:
        return f"string ({schema['format']})"
    if name == "string" and "pattern" in schema:
        return f"string matching `{schema['pattern']}`"
    if name == "integer" and "minimum" in schema:
        return f"integer ≥ {schema['minimum']}"
    return str(name)


def _link(model: str) -> str:
    return f"[`{model}`](#{model.lower()})"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
