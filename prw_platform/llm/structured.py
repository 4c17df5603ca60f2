"""Ask for structured output and get it validated, with the seed's one repair attempt.

if_llm_extract: a schema-invalid output is retried once with a repair prompt, then recorded as a failure.
``ask`` sends the request; an answer that is not JSON or does not follow the schema is sent back once, with
what was wrong, as a follow-up turn; a second bad answer raises ``LlmOutputSchemaInvalid``. Retries of 429/5xx
happen inside the provider and are not repairs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from jsonschema import Draft202012Validator

from prw_platform.llm.port import LlmAnswer, LlmOutputSchemaInvalid, LlmProvider, LlmRequest, Message


@dataclass(frozen=True, slots=True)
class Structured:
    """A validated answer: ``content`` follows the request's schema; ``repaired`` says it took the second turn."""

    content: dict[str, Any]
    answer: LlmAnswer
    repaired: bool


def problems(content: Any, schema: dict[str, Any], limit: int = 5) -> list[str]:
    if content is None:
        return ["the answer is not JSON"]
    errors = sorted(Draft202012Validator(schema).iter_errors(content), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"[:300] for e in errors[:limit]]


def ask(provider: LlmProvider, request: LlmRequest) -> Structured:
    schema = dict(request.schema)
    answer = provider.complete(request)
    wrong = problems(answer.content, schema)
    if not wrong:
        return Structured(answer.content, answer, repaired=False)
    repair = replace(
        request,
        messages=(
            *request.messages,
            Message("assistant", answer.raw[:8_000]),
            Message(
                "user",
                f"That answer does not follow the schema {request.schema_name}: "
                + "; ".join(wrong)
                + ". Answer again with only the JSON object the schema describes.",
            ),
        ),
    )
    second = provider.complete(repair)
    still_wrong = problems(second.content, schema)
    if still_wrong:
        raise LlmOutputSchemaInvalid(
            f"{request.prompt_version}: the answer does not follow {request.schema_name} after one repair: "
            + "; ".join(still_wrong)
        )
    return Structured(second.content, second, repaired=True)
