"""An ``LlmProvider`` for any OpenAI-compatible chat completions API (``POST {base_url}/chat/completions``).

Structured output: the request carries ``response_format = {"type": "json_schema", "json_schema": {"name",
"schema", "strict": true}}`` and temperature 0; the answer is ``choices[0].message.content`` parsed as JSON.

if_llm_extract / if_llm_review: "Retry 429/5xx with backoff, up to 3 times" and "60 s per call". A 429 waits what
its ``Retry-After`` says (seconds or an HTTP date, at most ``max_backoff_seconds``), anything else retryable (5xx,
a timeout, a transport failure) waits ``backoff_seconds * 2**attempt``. A 4xx other than 429 is the request's
fault and is not retried. The API key goes in the Authorization header only; it never appears in an error.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from prw_platform.llm.port import LlmAnswer, LlmProviderError, LlmRateLimited, LlmRequest


class OpenAICompatibleProvider:
    enabled = True

    def __init__(
        self,
        base_url: str,
        model_id: str,
        api_key: str | None = None,
        *,
        timeout_seconds: float = 60.0,
        max_retries: int = 3,
        backoff_seconds: float = 1.0,
        max_backoff_seconds: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.model_id = model_id
        self._url = base_url.rstrip("/") + "/chat/completions"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(headers=headers, timeout=timeout_seconds, transport=transport)
        self._max_retries = max_retries
        self._backoff = backoff_seconds
        self._max_backoff = max_backoff_seconds
        self._sleep = sleep

    def close(self) -> None:
        self._client.close()

    def complete(self, request: LlmRequest) -> LlmAnswer:
        body = {
            "model": self.model_id,
            "temperature": 0,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": request.schema_name, "schema": dict(request.schema), "strict": True},
            },
        }
        attempt = 0
        while True:
            try:
                response = self._client.post(self._url, json=body)
            except httpx.TransportError as error:  # timeouts included
                failure: LlmRateLimited | LlmProviderError = LlmProviderError(
                    f"{request.prompt_version}: {type(error).__name__} calling the provider"
                )
                wait = self._exponential(attempt)
            else:
                if response.status_code == 429:
                    retry_after = _retry_after(response.headers.get("retry-after"))
                    failure = LlmRateLimited(f"{request.prompt_version}: provider answered 429", retry_after)
                    wait = (
                        min(retry_after, self._max_backoff)
                        if retry_after is not None
                        else self._exponential(attempt)
                    )
                elif response.status_code >= 500:
                    failure = LlmProviderError(
                        f"{request.prompt_version}: provider answered {response.status_code}"
                    )
                    wait = self._exponential(attempt)
                elif response.status_code >= 400:
                    raise LlmProviderError(
                        f"{request.prompt_version}: provider refused the request ({response.status_code})"
                    )
                else:
                    return _answer(response, self.model_id)
            if attempt >= self._max_retries:
                raise failure
            self._sleep(wait)
            attempt += 1

    def _exponential(self, attempt: int) -> float:
        return float(min(self._backoff * 2**attempt, self._max_backoff))


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _answer(response: httpx.Response, requested_model: str) -> LlmAnswer:
    try:
        payload: Any = response.json()
        message = payload["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise LlmProviderError("the provider's answer is not a chat completion") from error
    raw = message.get("content") if isinstance(message, dict) else None
    if not isinstance(raw, str):  # a refusal, or no content at all: nothing that can follow the schema
        refusal = message.get("refusal") if isinstance(message, dict) else None
        raw = "" if refusal is None else str(refusal)
        content: Any = None
    else:
        try:
            content = json.loads(raw)
        except ValueError:
            content = None
    usage = payload.get("usage") if isinstance(payload, dict) else None
    return LlmAnswer(
        model_id=str(payload.get("model") or requested_model),
        content=content,
        raw=raw,
        usage={k: v for k, v in (usage or {}).items() if isinstance(v, int)},
    )
