"""One options path from the CLI (and notebook 01, and a panel file) to the client.

Every flag of ``judgekit judge`` is a field of exactly one object (the engine's JudgeOptions,
the EndpointOptions, the JudgeCommand) and reaches it with the value typed; every field of the
EndpointOptions reaches the client built from it. A flag or field added on one side only fails
here, found by introspection rather than by a list kept beside the code.
"""

from __future__ import annotations

import shlex
import typing
from dataclasses import fields, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import typer

from judgekit.cli import judge_options as cli_judge_options
from judgekit.cli.main import app, main
from judgekit.engine import JudgeOptions
from judgekit.judging import judge_study as judge_study_module
from judgekit.judging.clients import (
    LIMIT_FLAGS,
    EndpointOptions,
    local_judge_client,
    planning_client,
)
from judgekit.judging.command import JudgeCommand
from judgekit.judging.judge_study import FLAG_SETTINGS, flag, judge_study
from judgekit.judging.panel import LIMIT_KEYS, panel_from_entries
from judgekit.types import UsageError

OBJECTS = {"judging": JudgeOptions, "endpoint": EndpointOptions, "command": JudgeCommand}
#: JudgeCommand fields that hold the other two objects, or are not typed by the user.
HOLDERS = {"endpoint", "judging", "command_line"}


def judge_parameters() -> dict[str, Any]:
    """The ``judge`` command's parameters by name (their flags: ``opts``, ``is_flag``, ...)."""
    group: Any = typer.main.get_command(app)
    return {str(p.name): p for p in group.commands["judge"].params}


def declared_type(name: str) -> Any:
    """The type a flag is declared with, ``None`` taken away (``int | None`` -> ``int``)."""
    hint = typing.get_type_hints(cli_judge_options.judge)[name]
    kinds = [kind for kind in typing.get_args(hint) if kind is not type(None)] or [hint]
    return kinds[0]


def owner(name: str) -> str:
    (found,) = [key for key, cls in OBJECTS.items() if name in {f.name for f in fields(cls)}]
    return found


def test_every_flag_is_a_field_of_exactly_one_object() -> None:
    names = [{f.name for f in fields(cls)} - HOLDERS for cls in OBJECTS.values()]
    assert not (names[0] & names[1] or names[0] & names[2] or names[1] & names[2])
    for name in judge_parameters():
        assert owner(name), name  # one object, and only one, has a field of the flag's name
    command_fields = {f.name for f in fields(JudgeCommand)} - HOLDERS
    assert command_fields <= set(judge_parameters()), "a command field no flag sets"


def _typed(name: str, parameter: Any) -> tuple[list[str], Any]:
    """Arguments setting a flag to a value unlike its default, and the value expected."""
    flag = parameter.opts[0]
    if name == "prices":
        return [flag, "1.5,2.5"], {"input": 1.5, "output": 2.5}
    if getattr(parameter, "is_flag", False):
        return [flag], True
    kind = declared_type(name)
    raw, value = {int: ("7", 7), float: ("7.5", 7.5), Path: ("given7.csv", Path("given7.csv"))}.get(
        kind, ("given7", "given7")
    )
    if typing.get_origin(kind) is list:
        return [flag, raw, flag, raw + "b"], (value, f"{raw}b")
    if not flag.startswith("-"):  # the items argument
        return [raw], value
    return [flag, raw], value


def test_every_flag_reaches_its_object_with_the_value_typed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    captured: list[JudgeCommand] = []
    monkeypatch.setattr(judge_study_module, "execute", lambda c, *_: captured.append(c))
    argv, expected = ["judge"], {}
    for name, parameter in judge_parameters().items():
        arguments, expected[name] = _typed(name, parameter)
        argv += arguments
    assert main(argv) == 0
    (command,) = captured
    for name, value in expected.items():
        holder = {"judging": command.judging, "endpoint": command.endpoint}.get(owner(name))
        assert getattr(holder or command, name) == value, name
    assert command.command_line.startswith("judgekit judge ")


def _key_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OWN_KEY", "canary-own")


#: How each EndpointOptions field shows on the client built from it.
READ_BACK = {
    "model": lambda c: c.model,
    "base_url": lambda c: c.base_url,
    "provider": lambda c: c.preset.name,
    "api_key_env": lambda c: c._api_key.reveal(),
    "max_concurrency": lambda c: c.max_concurrency,
    "requests_per_minute": lambda c: c.throttle.requests_per_minute,
    "tokens_per_minute": lambda c: c.throttle.tokens_per_minute,
    "timeout_s": lambda c: c.timeout_s,
    "max_retries": lambda c: c.max_retries,
    "endpoint_name": lambda c: c.endpoint,
}
GIVEN = EndpointOptions(
    model="m7",
    base_url="http://127.0.0.1:9/v1",
    provider="openai",
    api_key_env="OWN_KEY",
    max_concurrency=3,
    requests_per_minute=70.0,
    tokens_per_minute=7000.0,
    timeout_s=17.0,
    max_retries=1,
    endpoint_name="gpu",
)
SEEN = {"provider": "openai", "api_key_env": "canary-own", "endpoint_name": "name:gpu"}


def test_every_endpoint_field_reaches_the_remote_client(monkeypatch: pytest.MonkeyPatch) -> None:
    _key_env(monkeypatch)
    assert set(READ_BACK) == {f.name for f in fields(EndpointOptions)}
    client = planning_client(GIVEN)  # the same constructor as the run's client
    for name, read in READ_BACK.items():
        assert read(client) == SEEN.get(name, getattr(GIVEN, name)), name


def test_a_panel_entry_sets_every_endpoint_field_the_same_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _key_env(monkeypatch)
    assert set(LIMIT_KEYS.values()) == set(GIVEN.limits())  # every limit has a panel key
    limits = {key: getattr(GIVEN, name) for key, name in LIMIT_KEYS.items()}
    entry = {
        "judge": f"openai:{GIVEN.model}@{GIVEN.base_url}",
        "api_key_env": "OWN_KEY",
        "endpoint_name": "gpu",
        **limits,
    }
    (spec,) = panel_from_entries([entry], EndpointOptions())
    assert spec.endpoint == GIVEN


def test_the_local_client_keeps_the_endpoints_limits_and_name() -> None:
    server: Any = SimpleNamespace(
        base_url="http://127.0.0.1:9/v1",
        model_alias="local",
        settings=SimpleNamespace(logprobs=False),
    )
    limits = {name: getattr(GIVEN, name) for name in LIMIT_FLAGS.values()}
    client = local_judge_client(server, EndpointOptions(**limits, endpoint_name="gpu"))
    for name in (*LIMIT_FLAGS.values(), "endpoint_name"):
        assert READ_BACK[name](client) == SEEN.get(name, getattr(GIVEN, name)), name
    assert local_judge_client(server).endpoint == "judgekit-local"


def test_judge_study_has_the_flags_of_judgekit_judge_and_records_the_command_that_does_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parameters = judge_parameters()
    assert list(FLAG_SETTINGS) == [n for n in parameters if n not in ("items", "rubric")]
    for name in FLAG_SETTINGS:
        assert flag(name) == parameters[name].opts[0], name
    captured: list[JudgeCommand] = []
    monkeypatch.setattr(judge_study_module, "execute", lambda c, *_: captured.append(c))
    settings = {name: _typed(name, parameters[name])[1] for name in FLAG_SETTINGS}
    settings.update(format_reminder=False, no_labels=False, study="s")  # --no-X, a default
    judge_study("items.csv", "riddle_accuracy", progress=False, **settings)
    from_python = captured.pop()
    line = from_python.command_line
    assert line.endswith(" --no-format-reminder") and "--no-labels" not in line
    assert main(shlex.split(line)[1:]) == 0  # the recorded command, typed
    from_cli = captured.pop()
    assert from_cli.command_line == line
    assert from_cli == replace(from_python, judging=from_python.judging.updated(progress=True))
    with pytest.raises(UsageError, match=r"unknown setting\(s\) \['judge_model'\]"):
        judge_study("items.csv", "riddle_accuracy", judge_model="m")
