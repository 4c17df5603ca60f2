"""Absolute http(s) URLs, as RFC 3986 parses them.

A URL a collector reports is published verbatim (the public listing's ``url``), so it must be exactly a URI:
only the characters RFC 3986 allows (no space, no control character, no CR/LF, no ``"``, ``<``, ``>``, ``\\``,
``{``, ``}``, ``|``, ``^`` or backtick, no non-ASCII: an IRI is sent in its percent-encoded URI form, RFC 3987
3.1), the scheme ``http`` or ``https`` with a non-empty host (RFC 9110 4.2.1), and a port up to 65535. Userinfo
(``user:password@``) is refused too: a page's public address never carries credentials.
"""

from __future__ import annotations

import ipaddress
import re

from prw_platform.inputs.errors import InvalidInput

# RFC 3986 2.1-2.3 and appendix A.
_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT_ENCODED = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT_ENCODED})"
_REG_NAME = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT_ENCODED})+"
_USERINFO = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT_ENCODED})*"
_URI = re.compile(
    rf"(?P<scheme>[A-Za-z][A-Za-z0-9+\-.]*)://"
    rf"(?:(?P<userinfo>{_USERINFO})@)?"
    rf"(?P<host>\[(?P<ip_literal>[0-9A-Fa-f:.]+)\]|{_REG_NAME})"
    rf"(?::(?P<port>[0-9]*))?"
    rf"(?P<path>(?:/{_PCHAR}*)*)"
    rf"(?:\?(?P<query>(?:{_PCHAR}|[/?])*))?"
    rf"(?:#(?P<fragment>(?:{_PCHAR}|[/?])*))?"
)
_SCHEMES = frozenset({"http", "https"})
_MAX_PORT = 65_535


def check_http_url(url: str) -> str:
    """``url`` if it is an absolute http(s) URL with a host (see the module docstring)."""
    match = _URI.fullmatch(url)
    if match is None:
        raise InvalidInput(
            "url must be an absolute http(s) URL as RFC 3986 parses it (no spaces, quotes, control or "
            "non-ASCII characters: percent-encode them)"
        )
    if match["scheme"].lower() not in _SCHEMES:
        raise InvalidInput(f"url scheme {match['scheme']!r} is not http or https")
    if match["userinfo"] is not None:
        raise InvalidInput("url must not carry userinfo (user:password@)")
    if match["ip_literal"] is not None:
        try:
            ipaddress.IPv6Address(match["ip_literal"])
        except ValueError as error:
            raise InvalidInput(f"url host [{match['ip_literal']}] is not an IPv6 address") from error
    if match["port"] and int(match["port"]) > _MAX_PORT:
        raise InvalidInput(f"url port {match['port']} is above {_MAX_PORT}")
    return url
