"""Presets for OpenAI-compatible endpoints: where they live and what they honour.

Every preset records assumptions, not guarantees: providers change their compatibility layers,
and features such as seeds or logprobs are often model-dependent. The engine only sends an
option a preset says is honoured, so the options recorded next to a score are the options that
mattered. Override any field with :func:`dataclasses.replace` when an endpoint differs.

Structured modes (how a JSON schema is enforced):

* ``json_schema``: ``response_format={"type": "json_schema", "json_schema": {...}}`` (OpenAI);
* ``guided_json``: ``extra_body={"guided_json": schema}`` (vLLM's guided decoding);
* ``json_object_schema``: ``response_format={"type": "json_object", "schema": schema}``
  (llama.cpp / llama-cpp-python grammar-constrained JSON);
* ``none``: plain prompting, the parser does all the work.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from judgekit.types import StructuredMode, UsageError

#: Key sent to local servers that accept anything (not a secret).
PLACEHOLDER_KEY = "not-needed"
#: The presets to which ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` belong.
OPENAI_PRESETS = ("openai", "generic")
#: Hosts that are this machine: a server there gets the placeholder when its key is unset.
LOCAL_HOSTS = frozenset({"localhost", "::1", "0.0.0.0"})
#: ``scheme://user:password@`` or ``scheme://token@`` in any text: a credential in a URL.
_URL_CREDENTIALS = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://)[^/\s?#\"'<>]+@")


class MissingAPIKeyError(UsageError):
    """A provider that needs a key has none; the message names the variable to set."""


@dataclass(frozen=True)
class ProviderPreset:
    """What the engine assumes about one kind of endpoint.

    Attributes:
        name: Preset key (``"openai"``, ``"vllm"``, ...).
        base_url: Default base URL; ``None`` when it depends on the deployment.
        api_key_env: Environment variable holding the key; the only one read for it.
        key_required: False for local servers that accept any key.
        structured_mode: How a JSON schema is enforced (see module docstring).
        supports_seed: The ``seed`` option is honoured (best effort on every provider).
        supports_logprobs: ``logprobs``/``top_logprobs`` are returned on chat completions.
        supports_batch_api: The OpenAI-style ``/v1/batches`` + ``/v1/files`` API exists.
        max_tokens_param: Name of the output-length option this endpoint expects.
        batch_max_requests: Requests one Batch API input file may hold.
        batch_max_bytes: Bytes one Batch API input file may hold.
        batch_price_factor: Batch API price as a share of the online price.
        notes: The assumptions behind this preset, in one or two sentences.
    """

    name: str
    base_url: str | None
    api_key_env: str
    key_required: bool
    structured_mode: StructuredMode
    supports_seed: bool
    supports_logprobs: bool
    supports_batch_api: bool
    max_tokens_param: str = "max_tokens"
    batch_max_requests: int = 50_000
    batch_max_bytes: int = 200_000_000
    batch_price_factor: float = 0.5
    notes: str = ""


def _load_presets() -> dict[str, ProviderPreset]:
    """Read the preset table shipped beside this module (``providers.toml``)."""
    table = tomllib.loads(resources.files(__package__).joinpath("providers.toml").read_text())
    return {
        name: ProviderPreset(name=name, base_url=fields.pop("base_url", None), **fields)
        for name, fields in table.items()
    }


_PRESETS = _load_presets()
#: A preset for an unnamed OpenAI-compatible endpoint: plain prompting, nothing assumed.
GENERIC = _PRESETS.pop("generic")
#: The named presets, by name (the table lives in ``providers.toml``).
PROVIDERS: dict[str, ProviderPreset] = _PRESETS


def get_provider(name: str | None) -> ProviderPreset:
    """Return the preset called ``name`` (``None`` means OpenAI).

    Args:
        name: A key of :data:`PROVIDERS`, ``"generic"``, or ``None``.

    Raises:
        UsageError: If the name is unknown.
    """
    if name is None:
        return PROVIDERS["openai"]
    if name == GENERIC.name:
        return GENERIC
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join([*PROVIDERS, GENERIC.name])
        raise UsageError(f"unknown provider {name!r}; known providers: {known}") from None


def is_local_url(url: str) -> bool:
    """Whether ``url`` points at this machine (``localhost``, ``127.0.0.1``, ``::1``)."""
    host = (urlsplit(url).hostname or "").lower()
    return host in LOCAL_HOSTS or host.endswith(".localhost") or host.startswith("127.")


def resolve_base_url(preset: ProviderPreset, base_url: str | None) -> str:
    """The URL requests go to: the given one, else ``OPENAI_BASE_URL`` or the preset's own.

    ``OPENAI_BASE_URL`` applies to the OpenAI and generic presets and to presets without a URL
    of their own (Azure, the simulator); a hosted provider's preset keeps its own URL. The
    pre-flight check, the connection probe and the client all resolve the URL here.

    Raises:
        UsageError: If no URL is known, or the URL is not an http(s) URL with a host.
    """
    env_url = os.environ.get("OPENAI_BASE_URL")
    if base_url:
        url, source = base_url, "base URL"
    elif env_url and (preset.name in OPENAI_PRESETS or preset.base_url is None):
        url, source = env_url, "OPENAI_BASE_URL"
    elif preset.base_url:
        return preset.base_url
    else:
        raise UsageError(f"provider {preset.name!r} needs a base URL: pass --base-url")
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise UsageError(
            f"{source} {hide_url_credentials(url)!r} holds a user name or password, which "
            f"would be stored with the study: give the URL without 'user:password@' and put "
            f"the key in {preset.api_key_env}"
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"{source} {url!r} is not an http(s) URL such as http://host:8000/v1")
    return url


def url_credentials(text: str) -> list[str]:
    """Every ``scheme://user:password@`` (or ``scheme://token@``) in ``text``, as written.

    The secret scan of an export calls this on every text file it packs.

    >>> url_credentials("see http://u:SECRET@host/v1 and https://host/v1")
    ['http://u:SECRET@']
    """
    return [match.group(0) for match in _URL_CREDENTIALS.finditer(text)]


def hide_url_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``[credentials]``.

    >>> hide_url_credentials("http://u:SECRET@host/v1")
    'http://[credentials]@host/v1'
    """
    return _URL_CREDENTIALS.sub(r"\1[credentials]@", text)


def resolve_api_key(preset: ProviderPreset, api_key: str | None, base_url: str) -> str:
    """The key for one preset: the one given, else the preset's own variable, never another's.

    ``OPENAI_API_KEY`` is the openai and generic presets' own variable, so it only reaches
    OpenAI or a base URL the user chose for those presets. A local server (``key_required``
    false, or any preset whose ``base_url`` is on this machine) gets :data:`PLACEHOLDER_KEY`
    when the variable is unset.

    Args:
        preset: The endpoint's preset.
        api_key: A key passed in by the caller, if any.
        base_url: The resolved base URL (:func:`resolve_base_url`).

    Raises:
        MissingAPIKeyError: A hosted provider's variable is unset.
    """
    key = api_key or os.environ.get(preset.api_key_env)
    if key:
        return key
    if not preset.key_required or is_local_url(base_url):
        return PLACEHOLDER_KEY
    keyless = (
        ""
        if base_url == preset.base_url
        else "; for a server that needs no key, use provider 'generic' (it sends the prompt "
        "unchanged, as plain text)"
    )
    raise MissingAPIKeyError(
        f"no API key for provider {preset.name!r} at {base_url}: set {preset.api_key_env} "
        f"(keys of other providers are never sent to it){keyless}"
    )


def endpoint_id(base_url: str) -> str:
    """A base URL normalised for request keys: lower-case scheme and host, no trailing slash.

    ``https://API.openai.com/v1/`` and ``https://api.openai.com/v1`` are one endpoint; another
    host, port or path is another endpoint.
    """
    parts = urlsplit(base_url.strip())
    netloc = parts.netloc.lower()
    return f"{parts.scheme.lower()}://{netloc}{parts.path.rstrip('/')}"


def _is_strict_compatible(schema: Any) -> bool:
    """True if every object in ``schema`` forbids extra keys and requires all its properties."""
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            properties = schema.get("properties", {})
            if schema.get("additionalProperties") is not False:
                return False
            if set(schema.get("required", ())) != set(properties):
                return False
        return all(_is_strict_compatible(value) for value in schema.values())
    if isinstance(schema, list):
        return all(_is_strict_compatible(value) for value in schema)
    return True


def one_slot_per_id(schema: dict[str, Any]) -> dict[str, Any]:
    """Pin a batch schema's records to the batch's IDs, one fixed ID per position.

    A batched rubric's schema lets every record take any of the batch's IDs, so a grammar can
    still produce the same ID twice (small local models do, from about 20 rows on). llama.cpp
    compiles ``prefixItems`` into a grammar, so for that backend each position gets a ``const``
    ID in the batch's order; the judge then only chooses scores. Hosted strict modes do not
    accept ``prefixItems``, so they keep the enum form and duplicates stay a parser status.
    Schemas of other shapes are returned unchanged.
    """
    records = schema.get("properties", {}).get("scores", {})
    record = records.get("items", {})
    ids = record.get("properties", {}).get("id", {}).get("enum")
    if not ids or records.get("minItems") != len(ids) or records.get("maxItems") != len(ids):
        return schema
    slots = [
        {**record, "properties": {**record["properties"], "id": {"type": "string", "const": i}}}
        for i in ids
    ]
    pinned = {**records, "prefixItems": slots, "items": False}
    return {**schema, "properties": {**schema["properties"], "scores": pinned}}


def structured_options(
    mode: StructuredMode, schema: dict[str, Any], name: str = "judgement"
) -> dict[str, Any]:
    """Request options that enforce ``schema`` on an endpoint of the given structured mode.

    OpenAI's ``strict`` flag is set only when the schema meets strict mode's rules (closed
    objects, every property required), since a strict request with any other schema is refused.

    Args:
        mode: The endpoint's structured mode.
        schema: JSON schema of a valid reply.
        name: Schema name for ``json_schema`` mode.

    Raises:
        ValueError: For mode ``"none"``, which cannot carry a schema.
    """
    if mode == "json_schema":
        json_schema = {"name": name, "schema": schema, "strict": _is_strict_compatible(schema)}
        return {"response_format": {"type": "json_schema", "json_schema": json_schema}}
    if mode == "guided_json":
        return {"extra_body": {"guided_json": schema}}
    if mode == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": one_slot_per_id(schema)}}
    raise ValueError("structured_mode 'none' cannot enforce a schema")
