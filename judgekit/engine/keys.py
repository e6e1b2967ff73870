"""The identity of a judge request: what the store's rows are keyed by."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from judgekit.types import ChatRequest


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: the same value always gives the same text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class RequestKey:
    """Everything that identifies one judge request.

    Attributes:
        endpoint: Normalised base URL of the endpoint (``""``: unknown, as in schema 1).
        reask_hint: The hint a re-ask carries (``""``: none). Recorded, not hashed: it is
            part of the request's messages already.
    """

    model: str
    rubric: str
    variant: str
    run: int
    attempt: int
    request: ChatRequest
    endpoint: str = ""
    reask_hint: str = ""

    @functools.cached_property
    def _fields(self) -> dict[str, str]:
        """Each hashed field's canonical JSON (the messages are serialised once for both hashes)."""
        fields = {
            "model": self.model,
            "messages": [dict(m) for m in self.request.messages],
            "options": dict(self.request.options),
            "run": self.run,
            "variant": self.variant,
            "rubric": self.rubric,
            "attempt": self.attempt,
        }
        if self.endpoint:
            fields["endpoint"] = self.endpoint
        return {name: canonical_json(value) for name, value in fields.items()}

    def _digest(self, *, with_endpoint: bool) -> str:
        """sha256 of ``canonical_json`` of the fields (the object written out member by member)."""
        members = sorted(
            (name, text)
            for name, text in self._fields.items()
            if with_endpoint or name != "endpoint"
        )
        payload = "{" + ",".join(f'"{name}":{text}' for name, text in members) + "}"
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @functools.cached_property
    def hash(self) -> str:
        """sha256 of the canonical JSON of the key (endpoint, run and attempt included)."""
        return self._digest(with_endpoint=True)

    @functools.cached_property
    def base_hash(self) -> str:
        """The hash without the endpoint (what schema 1 used as the whole key)."""
        return self._digest(with_endpoint=False)
