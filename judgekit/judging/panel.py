"""A panel of judges on one study: who each judge is, how it is reached, and the checks of it.

A judge is a label (unique in the study, stable across commands: it names the judge's rows in
the ``judge`` column, its ``scores/`` files and its entry in ``study.json``), a provider
preset, a model, a base URL, the *name* of the variable holding its key (never a key), its own
limits and prices. On the command line: ``--judge [NAME=]PROVIDER:MODEL[@BASE_URL]``
(repeatable); in a panel file (``--panel panel.yaml``)::

    judges:
      - judge: openai:gpt-4.1          # the --judge syntax, or provider:, model:, base_url:
        label: gpt                     # default: PROVIDER:MODEL
        api_key_env: OPENAI_API_KEY    # default: the preset's own variable
        rpm: 500                       # also tpm, max_concurrency, timeout, max_retries
        prices: {input: 2.0, output: 8.0}   # USD per 1M tokens, for the estimate and summary
      - judge: vllm:Qwen/Qwen2.5-72B-Instruct@http://gpu:8000/v1

Judging with all of them at once is :mod:`judgekit.judging.panel_run`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from judgekit.judging.clients import (
    LIMIT_FLAGS,
    EndpointOptions,
    check_endpoint,
    probe_endpoint,
)
from judgekit.local.server import DEFAULT_MODEL_ALIAS
from judgekit.study.accumulate import label_slug
from judgekit.types import JudgeClient, UsageError

#: The column of a judgments table that names the panel member behind each row.
#: Panel-file keys of a judge's limits (its CLI flags, with ``_``) and the field each one sets.
LIMIT_KEYS: Mapping[str, str] = {flag.replace("-", "_"): f for flag, f in LIMIT_FLAGS.items()}
_JUDGE_KEYS = {"judge", "label", "provider", "model", "base_url", "api_key_env", "prices"}
_JUDGE_KEYS |= {"endpoint_name"}  # its identity in the store's keys (a server on a new port)
_SYNTAX = (
    "write [NAME=]PROVIDER:MODEL[@BASE_URL], e.g. openai:gpt-4.1 or vllm:qwen@http://gpu:8000/v1"
)


@dataclass(frozen=True)
class JudgeSpec:
    """One member of a panel (see the module docstring).

    Attributes:
        label: Unique, stable name of the judge in the study.
        endpoint: Model, provider preset, base URL, key variable and limits.
        prices: USD per 1M tokens, ``{"input": ..., "output": ...}``.
    """

    label: str
    endpoint: EndpointOptions = field(default_factory=EndpointOptions)
    prices: Mapping[str, float] | None = None

    def describe(self, client: JudgeClient | None = None) -> dict[str, Any]:
        """What ``study.json`` records of this judge: everything but a key."""
        from judgekit.engine import get_provider

        endpoint = self.endpoint
        preset = get_provider(endpoint.provider) if endpoint.remote else None
        limits = {key: getattr(endpoint, name) for key, name in LIMIT_KEYS.items()}
        return {
            "label": self.label,
            "provider": preset.name if preset else "local",
            "model": getattr(client, "model", None) or endpoint.model,
            "base_url": (getattr(client, "base_url", None) or endpoint.base_url)
            if preset
            else "judgekit-local",
            "api_key_env": endpoint.api_key_env or (preset.api_key_env if preset else None),
            "limits": {key: value for key, value in limits.items() if value is not None},
            "prices": dict(self.prices) if self.prices else None,
        }


def default_label(endpoint: EndpointOptions) -> str:
    """``PROVIDER:MODEL`` of the judge ``--model``/``--provider`` name (``local:...`` if local)."""
    if not endpoint.remote:
        return f"local:{DEFAULT_MODEL_ALIAS}"
    return f"{endpoint.provider or 'openai'}:{endpoint.judge_model()}"


def parse_judge(text: str, defaults: EndpointOptions | None = None) -> JudgeSpec:
    """A judge from ``[NAME=]PROVIDER:MODEL[@BASE_URL]``; limits from ``defaults``.

    Raises:
        UsageError: For text of another shape or an unknown provider.
    """
    from judgekit.engine import get_provider

    label, equals, rest = text.partition("=")
    if not equals or re.search(r"[:@/]", label):
        label, rest = "", text
    provider, colon, model_url = rest.partition(":")
    model, _, base_url = model_url.partition("@")
    if not colon or not provider.strip() or not model.strip():
        raise UsageError(f"--judge {text!r}: {_SYNTAX}")
    try:
        get_provider(provider.strip())
    except UsageError as error:
        raise UsageError(f"--judge {text!r}: {error}") from None
    endpoint = replace(
        defaults or EndpointOptions(),
        model=model.strip(),
        provider=provider.strip(),
        base_url=base_url.strip() or None,
    )
    return JudgeSpec(label.strip() or f"{provider.strip()}:{model.strip()}", endpoint)


def _judge_from_entry(entry: Any, where: str, defaults: EndpointOptions) -> JudgeSpec:
    if isinstance(entry, str):
        return parse_judge(entry, defaults)
    if not isinstance(entry, Mapping):
        raise UsageError(f"{where}: a judge is a mapping (judge:, label:, ...) or PROVIDER:MODEL")
    if "api_key" in entry:
        raise UsageError(f"{where}: never write a key here; name its variable with api_key_env")
    unknown = sorted(set(entry) - _JUDGE_KEYS - set(LIMIT_KEYS))
    if unknown:
        known = ", ".join(sorted(_JUDGE_KEYS | set(LIMIT_KEYS)))
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {known}")
    if "judge" in entry:
        spec = parse_judge(str(entry["judge"]), defaults)
    elif entry.get("provider") and entry.get("model"):
        spec = parse_judge(f"{entry['provider']}:{entry['model']}", defaults)
    else:
        raise UsageError(f"{where}: give judge: PROVIDER:MODEL (or provider: and model:)")
    limits = {name: entry[key] for key, name in LIMIT_KEYS.items() if entry.get(key) is not None}
    endpoint = replace(spec.endpoint, **limits)
    if entry.get("base_url"):
        endpoint = replace(endpoint, base_url=str(entry["base_url"]))
    if entry.get("endpoint_name"):
        endpoint = replace(endpoint, endpoint_name=str(entry["endpoint_name"]))
    if entry.get("api_key_env"):
        endpoint = replace(endpoint, api_key_env=str(entry["api_key_env"]))
    prices = entry.get("prices")
    if prices is not None and (
        not isinstance(prices, Mapping) or set(prices) != {"input", "output"}
    ):
        raise UsageError(f"{where}: prices: give USD per 1M tokens as {{input: X, output: Y}}")
    return JudgeSpec(
        str(entry.get("label") or spec.label),
        endpoint,
        {k: float(v) for k, v in prices.items()} if prices else None,
    )


def read_panel(path: Path, defaults: EndpointOptions | None = None) -> list[JudgeSpec]:
    """The judges of a panel file (see the module docstring).

    Raises:
        UsageError: For a missing or malformed file (one line naming the file and entry).
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise UsageError(f"--panel {path}: cannot read it ({first})") from None
    entries = data.get("judges") if isinstance(data, Mapping) else None
    if not isinstance(entries, list) or not entries or set(data) != {"judges"}:
        raise UsageError(f"--panel {path}: expected one key, judges:, holding a list of judges")
    return panel_from_entries(entries, defaults or EndpointOptions(), where=f"--panel {path}")


def panel_from_entries(
    entries: Sequence[Any], limits: EndpointOptions, *, where: str = "judges"
) -> list[JudgeSpec]:
    """The judges of a panel file's ``judges:`` list.

    Args:
        entries: Each judge as a mapping (see the module docstring) or ``PROVIDER:MODEL`` text.
        limits: The limits every judge has unless it sets its own.
        where: What the entries are, for messages.

    Raises:
        UsageError: One line naming the entry and what to fix.
    """
    shared = replace(limits, model=None, base_url=None, provider=None)
    return [
        _judge_from_entry(entry, f"{where}, judge {number}", shared)
        for number, entry in enumerate(entries, start=1)
    ]


def command_judges(
    judges: Sequence[str], panel: Path | None, endpoint: EndpointOptions
) -> tuple[JudgeSpec, ...]:
    """The judges of ``judgekit judge``: ``--panel`` then ``--judge`` ones, else the one endpoint.

    Raises:
        UsageError: For a malformed judge or panel file, or a mix of both ways to name one.
    """
    if not (judges or panel):
        return (JudgeSpec(default_label(endpoint), endpoint),)
    if endpoint.model or endpoint.base_url or endpoint.provider:
        raise UsageError(
            "--judge/--panel name every judge: drop --model, --provider and --base-url "
            "(write them as --judge PROVIDER:MODEL@BASE_URL)"
        )
    if endpoint.endpoint_name:
        raise UsageError(
            "--endpoint-name names one endpoint: with --judge/--panel give each judge its "
            "endpoint_name: in the panel file"
        )
    listed = read_panel(panel, endpoint) if panel else []
    return (*listed, *(parse_judge(text, endpoint) for text in judges))


def check_panel(judges: Sequence[JudgeSpec]) -> None:
    """Refuse a panel that cannot run, before any call: labels, endpoints, keys, limits.

    Raises:
        UsageError: One line naming the judge and what to fix.
    """
    seen: dict[str, str] = {}
    for spec in judges:
        slug = label_slug(spec.label)
        if slug in seen:
            raise UsageError(
                f"two judges are labelled {seen[slug]!r} and {spec.label!r} (the same in file "
                "names); give one another label with NAME=PROVIDER:MODEL or label: in the panel"
            )
        seen[slug] = spec.label
        prefix = f"judge {spec.label}: " if len(judges) > 1 else ""
        try:
            check_endpoint(spec.endpoint)
        except UsageError as error:
            raise UsageError(f"{prefix}{error}") from None


def probe_panel(judges: Sequence[JudgeSpec]) -> None:
    """Connect once to each remote judge's endpoint (one line naming the judge that fails)."""
    for spec in judges:
        if spec.endpoint.remote:
            try:
                probe_endpoint(spec.endpoint)
            except UsageError as error:
                prefix = f"judge {spec.label}: " if len(judges) > 1 else ""
                raise UsageError(f"{prefix}{error}") from None
