"""The LLM provider port (if_llm_extract, if_llm_review): one structured-output request, one validated answer.

The platform asks a model for *proposals* only. A provider turns an ``LlmRequest`` (a versioned prompt, the
untrusted input, the JSON schema the answer must follow) into an ``LlmAnswer`` whose ``content`` is already
parsed JSON; checking that content against the schema, and repairing it once, is the caller's job
(``prw_platform.llm.assist``), so every provider behaves the same.

Errors, as the seeds' tables name them:

* ``LlmRateLimited`` (429 RATE_LIMITED) and ``LlmProviderError`` (5xx PROVIDER_ERROR, a timeout, a connection
  failure): retryable. A provider has already retried them ``max_retries`` times with backoff before raising.
* ``LlmOutputSchemaInvalid`` (OUTPUT_SCHEMA_INVALID): the answer is not the JSON the schema asks for, after the
  one repair attempt. Not retryable: recorded, and a human reviews.
* ``LlmDisabled``: no provider is configured (the default). Callers check ``enabled`` first and never call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from prw_platform.coded_error import CodedError

RATE_LIMITED = "RATE_LIMITED"
PROVIDER_ERROR = "PROVIDER_ERROR"
OUTPUT_SCHEMA_INVALID = "OUTPUT_SCHEMA_INVALID"


class LlmError(CodedError):
    code = PROVIDER_ERROR
    retryable = True


class LlmRateLimited(LlmError):
    """429 from the provider after every retry; ``retry_after`` is the provider's last Retry-After, if any."""

    code = RATE_LIMITED

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class LlmProviderError(LlmError):
    """5xx, a timeout or a transport failure after every retry, or an answer that is not a chat completion."""

    code = PROVIDER_ERROR


class LlmOutputSchemaInvalid(LlmError):
    """The model's answer does not follow the schema, even after the repair attempt."""

    code = OUTPUT_SCHEMA_INVALID
    retryable = False


class LlmDisabled(LlmError):
    code = "LLM_DISABLED"
    retryable = False


@dataclass(frozen=True, slots=True)
class Message:
    role: str  # "system" | "user" | "assistant"
    content: str


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """One structured-output request. ``schema_name`` and ``schema`` go to the provider as the response format;
    ``messages`` hold the versioned prompt (system) and the delimited, untrusted input (user)."""

    prompt_version: str
    schema_name: str
    schema: Mapping[str, Any]
    messages: tuple[Message, ...]


@dataclass(frozen=True, slots=True)
class LlmAnswer:
    """The parsed JSON the model returned (``content`` is None when it was not JSON at all: ``raw`` has the
    text) and the model that answered, as the provider names it."""

    model_id: str
    content: Any
    raw: str
    usage: Mapping[str, int] = field(default_factory=dict)


@runtime_checkable
class LlmProvider(Protocol):
    #: False for the disabled provider: callers skip the LLM path altogether.
    enabled: bool
    #: The model asked for; with the prompt version it keys every cached result.
    model_id: str

    def complete(self, request: LlmRequest) -> LlmAnswer: ...


class DisabledProvider:
    """The default: no model is configured, so no page text ever leaves the platform."""

    enabled = False
    model_id = "disabled"

    def complete(self, request: LlmRequest) -> LlmAnswer:
        raise LlmDisabled("no LLM provider is configured (PRW_LLM__PROVIDER)")
