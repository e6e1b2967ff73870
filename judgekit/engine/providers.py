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

from dataclasses import dataclass
from typing import Any

from judgekit.types import StructuredMode


@dataclass(frozen=True)
class ProviderPreset:
    """What the engine assumes about one kind of endpoint.

    Attributes:
        name: Preset key (``"openai"``, ``"vllm"``, ...).
        base_url: Default base URL; ``None`` when it depends on the deployment.
        api_key_env: Environment variable holding the key.
        key_required: False for local servers that accept any key.
        structured_mode: How a JSON schema is enforced (see module docstring).
        supports_seed: The ``seed`` option is honoured (best effort on every provider).
        supports_logprobs: ``logprobs``/``top_logprobs`` are returned on chat completions.
        supports_batch_api: The OpenAI-style ``/v1/batches`` + ``/v1/files`` API exists.
        max_tokens_param: Name of the output-length option this endpoint expects.
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
    notes: str = ""


PROVIDERS: dict[str, ProviderPreset] = {
    preset.name: preset
    for preset in (
        ProviderPreset(
            name="openai",
            base_url="https://api.openai.com/v1",
            api_key_env="OPENAI_API_KEY",
            key_required=True,
            structured_mode="json_schema",
            supports_seed=True,
            supports_logprobs=True,
            supports_batch_api=True,
            max_tokens_param="max_completion_tokens",
            notes="Chat Completions with strict JSON-schema outputs; reasoning models reject "
            "temperature and logprobs, so use a non-reasoning judge or override the preset.",
        ),
        ProviderPreset(
            name="azure",
            base_url=None,
            api_key_env="AZURE_OPENAI_API_KEY",
            key_required=True,
            structured_mode="json_schema",
            supports_seed=True,
            supports_logprobs=True,
            supports_batch_api=True,
            max_tokens_param="max_completion_tokens",
            notes="Azure OpenAI's v1 API: pass base_url='https://<resource>.openai.azure.com/"
            "openai/v1/' and the deployment name as the model.",
        ),
        ProviderPreset(
            name="gemini",
            base_url="https://generativelanguage.googleapis.com/v1beta/openai/",
            api_key_env="GEMINI_API_KEY",
            key_required=True,
            structured_mode="json_schema",
            supports_seed=False,
            supports_logprobs=False,
            supports_batch_api=False,
            notes="Gemini's OpenAI-compatible endpoint accepts response_format JSON schemas; "
            "seed and logprobs are not assumed to be honoured there.",
        ),
        ProviderPreset(
            name="anthropic",
            base_url="https://api.anthropic.com/v1/",
            api_key_env="ANTHROPIC_API_KEY",
            key_required=True,
            structured_mode="none",
            supports_seed=False,
            supports_logprobs=False,
            supports_batch_api=False,
            notes="Anthropic's OpenAI SDK compatibility layer ignores response_format, seed "
            "and logprobs, and clamps temperature to [0, 1]; plain prompting only.",
        ),
        ProviderPreset(
            name="openrouter",
            base_url="https://openrouter.ai/api/v1",
            api_key_env="OPENROUTER_API_KEY",
            key_required=True,
            structured_mode="json_schema",
            supports_seed=True,
            supports_logprobs=True,
            supports_batch_api=False,
            notes="A router: JSON schema, seed and logprobs are forwarded but only honoured "
            "when the upstream model supports them.",
        ),
        ProviderPreset(
            name="perplexity",
            base_url="https://api.perplexity.ai",
            api_key_env="PERPLEXITY_API_KEY",
            key_required=True,
            structured_mode="json_schema",
            supports_seed=False,
            supports_logprobs=False,
            supports_batch_api=False,
            notes="Sonar models accept JSON-schema response_format; no seed, no logprobs.",
        ),
        ProviderPreset(
            name="vllm",
            base_url="http://localhost:8000/v1",
            api_key_env="VLLM_API_KEY",
            key_required=False,
            structured_mode="guided_json",
            supports_seed=True,
            supports_logprobs=True,
            supports_batch_api=False,
            notes="vLLM's OpenAI server with guided decoding via extra_body guided_json; "
            "the key is only checked when the server was started with --api-key.",
        ),
        ProviderPreset(
            name="ollama",
            base_url="http://localhost:11434/v1",
            api_key_env="OLLAMA_API_KEY",
            key_required=False,
            structured_mode="json_schema",
            supports_seed=True,
            supports_logprobs=False,
            supports_batch_api=False,
            notes="Ollama's /v1 compatibility endpoint (structured outputs since 0.5); "
            "logprobs are not assumed.",
        ),
        ProviderPreset(
            name="llamacpp",
            base_url="http://localhost:8080/v1",
            api_key_env="LLAMA_API_KEY",
            key_required=False,
            structured_mode="json_object_schema",
            supports_seed=True,
            supports_logprobs=True,
            supports_batch_api=False,
            notes="llama.cpp server or llama-cpp-python[server]: JSON object mode with a "
            "schema compiled to a grammar; logprobs on chat completions.",
        ),
        ProviderPreset(
            name="simulator",
            base_url=None,
            api_key_env="JUDGEKIT_SIMULATOR_API_KEY",
            key_required=False,
            structured_mode="json_schema",
            supports_seed=True,
            supports_logprobs=True,
            supports_batch_api=True,
            notes="judgekit.simulator: pass its handle's base_url; any key is accepted.",
        ),
    )
}

#: A preset for an unnamed OpenAI-compatible endpoint: plain prompting, nothing assumed.
GENERIC = ProviderPreset(
    name="generic",
    base_url=None,
    api_key_env="OPENAI_API_KEY",
    key_required=False,
    structured_mode="none",
    supports_seed=True,
    supports_logprobs=False,
    supports_batch_api=False,
    notes="Any OpenAI-compatible server: the seed is sent, JSON schemas and logprobs are not.",
)


def get_provider(name: str | None) -> ProviderPreset:
    """Return the preset called ``name`` (``None`` means OpenAI).

    Args:
        name: A key of :data:`PROVIDERS`, ``"generic"``, or ``None``.

    Raises:
        ValueError: If the name is unknown.
    """
    if name is None:
        return PROVIDERS["openai"]
    if name == GENERIC.name:
        return GENERIC
    try:
        return PROVIDERS[name]
    except KeyError:
        known = ", ".join([*PROVIDERS, GENERIC.name])
        raise ValueError(f"unknown provider {name!r}; known providers: {known}") from None


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
