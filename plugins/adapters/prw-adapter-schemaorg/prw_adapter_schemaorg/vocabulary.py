"""Spec attribute names: ``additionalProperty`` names as ``spec:<lower_snake_name>``.

(Availability words are read with the platform's shared ``availability_from_text``, so adapters and profiles
read them the same way.)"""

from __future__ import annotations

import re


def spec_attribute(name: str) -> str | None:
    """``spec:<lower_snake_name>`` for an additionalProperty name: ``screenSize`` and ``Screen size (in)``
    give ``spec:screen_size`` and ``spec:screen_size_in``; None when nothing is left of the name."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[0-9])(?=[A-Z][a-z])", "_", name.strip())
    spaced = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", spaced)
    snake = re.sub(r"[\W_]+", "_", spaced.lower()).strip("_")
    return f"spec:{snake}" if snake else None
