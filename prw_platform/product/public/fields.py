"""The public field whitelists (docs/events.md: "Public item fields", "Public listing fields").

Applied twice: when a release snapshot is stored in ``public_item`` / ``public_listing``, and again by the public
serializer. if_product_query: "never emit private evidence, capture/review/decision references or internal
tags"; whitelisting, not blacklisting, keeps a key the resolver adds later private until it is named here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

PUBLIC_ITEM_FIELDS: Final = ("item", "profile", "title", "brand", "identifiers", "attributes")
PUBLIC_IDENTIFIERS: Final = ("gtin", "mpn")
PUBLIC_ATTRIBUTE_KEYS: Final = ("value", "unit", "definition_version")
PUBLIC_LISTING_FIELDS: Final = (
    "listing",
    "source_id",
    "url",
    "title",
    "price",
    "currency",
    "availability",
    "observed_at",
)
PUBLIC_MERCHANT_FIELDS: Final = ("merchant", "name", "url")
PUBLIC_POLICY_FIELDS: Final = ("currency", "free_shipping_threshold")
PUBLIC_RATE_FIELDS: Final = ("destination", "rate")
#: What a released picture keeps (seed 004): the content address the product serves the bytes by (never
#: serialized: the public document carries a signed link instead), the media type, the size and the dimensions.
PUBLIC_PICTURE_FIELDS: Final = ("sha256", "media_type", "size_bytes", "width", "height")
PUBLIC_CLASS_FIELDS: Final = ("class", "name")

_Scalar = str | int | float | bool | None


def public_item_fields(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key in PUBLIC_ITEM_FIELDS:
        value = snapshot.get(key)
        if key == "identifiers":
            fields[key] = _identifiers(value)
        elif key == "attributes":
            fields[key] = _attributes(value)
        else:
            fields[key] = value if _is_scalar(value) else None
    return fields


def public_listing_fields(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _scalar_or_none(snapshot.get(key)) for key in PUBLIC_LISTING_FIELDS}


def public_merchant_fields(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _scalar_or_none(snapshot.get(key)) for key in PUBLIC_MERCHANT_FIELDS}


def public_policy_fields(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """A shipping policy's public fields: currency, threshold and the rates (destination, rate) only."""
    fields: dict[str, Any] = {key: _scalar_or_none(snapshot.get(key)) for key in PUBLIC_POLICY_FIELDS}
    rates = snapshot.get("rates")
    fields["rates"] = [
        {key: _scalar_or_none(rate.get(key)) for key in PUBLIC_RATE_FIELDS}
        for rate in (rates if isinstance(rates, list) else [])
        if isinstance(rate, Mapping)
    ]
    return fields


def public_picture_fields(snapshot: object) -> dict[str, Any] | None:
    """A picture of a release snapshot, whitelisted; None when it is not one (no content address)."""
    if not isinstance(snapshot, Mapping) or not isinstance(snapshot.get("sha256"), str):
        return None
    return {key: _scalar_or_none(snapshot.get(key)) for key in PUBLIC_PICTURE_FIELDS if key in snapshot}


def public_pictures_fields(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """An item's released pictures: ``{"main": picture or None, "gallery": [picture, ...]}``."""
    gallery = snapshot.get("gallery")
    pictures = [public_picture_fields(p) for p in (gallery if isinstance(gallery, list) else [])]
    return {
        "main": public_picture_fields(snapshot.get("main")),
        "gallery": [p for p in pictures if p is not None],
    }


def public_class_fields(snapshot: Mapping[str, Any]) -> dict[str, Any]:
    """A released class: name, picture and the member item ids (kept to count the released ones, never listed)."""
    fields: dict[str, Any] = {key: _scalar_or_none(snapshot.get(key)) for key in PUBLIC_CLASS_FIELDS}
    fields["picture"] = public_picture_fields(snapshot.get("picture"))
    members = snapshot.get("members")
    fields["members"] = [m for m in (members if isinstance(members, list) else []) if isinstance(m, str)]
    return fields


def _identifiers(value: object) -> dict[str, Any]:
    source = value if isinstance(value, Mapping) else {}
    return {key: _scalar_or_none(source.get(key)) for key in PUBLIC_IDENTIFIERS if key in source}


def _attributes(value: object) -> dict[str, dict[str, Any]]:
    if not isinstance(value, Mapping):
        return {}
    attributes: dict[str, dict[str, Any]] = {}
    for name, attribute in value.items():
        if not isinstance(name, str) or not isinstance(attribute, Mapping):
            continue
        attributes[name] = {
            key: _attribute_value(attribute.get(key)) for key in PUBLIC_ATTRIBUTE_KEYS if key in attribute
        }
    return attributes


def _attribute_value(value: object) -> Any:
    # An attribute value is a scalar or a list of scalars (INV-02 definitions); nothing nested is public.
    if isinstance(value, list):
        return [item for item in value if _is_scalar(item)]
    return _scalar_or_none(value)


def _scalar_or_none(value: object) -> _Scalar:
    return value if _is_scalar(value) else None  # type: ignore[return-value]


_SCALAR_TYPES: Final = frozenset({type(None), str, int, float, bool})


def _is_scalar(value: object) -> bool:
    # JSON decoded from the snapshot holds exactly these types (no subclasses): a set lookup, not isinstance.
    return type(value) in _SCALAR_TYPES
