"""What a value from outside (a request, a file) must be before the platform stores or publishes it.

Domain rules, framework-free, shared by every edge: text PostgreSQL can hold, moments the platform can represent
and that are not in the future beyond the clock-skew tolerance, absolute http(s) URLs as RFC 3986 parses them,
RFC 9110 media types and ISO 3166-1 alpha-2 country codes (their form; ``countries``: the assigned ones). Each check raises ``InvalidInput`` (a ``ValueError``,
so a pydantic validator may call it and the request becomes a validation error); the caller maps it to its own
error code.
"""

from prw_platform.inputs.countries import is_country_code
from prw_platform.inputs.errors import InvalidInput
from prw_platform.inputs.media_types import check_media_type
from prw_platform.inputs.regions import check_country_code
from prw_platform.inputs.text import UnstorableText, find_unstorable_text, unstorable_character
from prw_platform.inputs.timestamps import check_not_in_future, check_representable
from prw_platform.inputs.urls import check_http_url

__all__ = [
    "InvalidInput",
    "UnstorableText",
    "check_country_code",
    "check_http_url",
    "check_media_type",
    "check_not_in_future",
    "check_representable",
    "find_unstorable_text",
    "is_country_code",
    "unstorable_character",
]
