"""Building blocks of the reply schemas (strict-mode compatible).

Every object lists all its properties as required and forbids extra ones, so the schemas can
be sent with OpenAI's ``"strict": true``. IDs and scores are enums, so a schema-enforcing
endpoint cannot invent an ID or an off-scale score; it can still repeat an ID (strict mode has
no ``uniqueItems``), which the parser reports as DUPLICATE. Each format module builds its own
schema from these.
"""

from __future__ import annotations

from typing import Any


def closed_object(properties: dict[str, Any]) -> dict[str, Any]:
    """A closed object whose properties are all required (in the given order)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def string_list() -> dict[str, Any]:
    """An array of strings."""
    return {"type": "array", "items": {"type": "string"}}
