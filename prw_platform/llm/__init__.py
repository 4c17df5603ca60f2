"""LLM ports (if_llm_extract, if_llm_review): a provider that only ever *proposes* (DEC-02).

``port`` (the ``LlmProvider`` protocol, its errors, the disabled default), ``openai_compatible`` (an HTTP client
for any OpenAI-compatible API), ``prompts`` (versioned prompt files and the ``claims/1`` / ``review-advice/1``
output schemas), ``structured`` (validation with one repair attempt), ``text`` (the bounded, delimited untrusted
input). What is asked when, caching, budgets and where answers go: ``prw_platform.resolver.assist``.
"""

from prw_platform.llm.port import (
    OUTPUT_SCHEMA_INVALID,
    PROVIDER_ERROR,
    RATE_LIMITED,
    DisabledProvider,
    LlmAnswer,
    LlmDisabled,
    LlmError,
    LlmOutputSchemaInvalid,
    LlmProvider,
    LlmProviderError,
    LlmRateLimited,
    LlmRequest,
    Message,
)

__all__ = [
    "OUTPUT_SCHEMA_INVALID",
    "PROVIDER_ERROR",
    "RATE_LIMITED",
    "DisabledProvider",
    "LlmAnswer",
    "LlmDisabled",
    "LlmError",
    "LlmOutputSchemaInvalid",
    "LlmProvider",
    "LlmProviderError",
    "LlmRateLimited",
    "LlmRequest",
    "Message",
]
