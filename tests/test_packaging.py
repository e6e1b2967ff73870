"""The conda environment and the pip metadata must describe the same dependencies."""

from __future__ import annotations

import re
import tomllib

import yaml

from judgekit import config

# conda-forge spells a few packages differently from PyPI.
CONDA_TO_PYPI = {"types-pyyaml": "types-PyYAML"}


def _name(spec: str) -> str:
    return re.split(r"[<>=!\[ ]", spec.strip(), maxsplit=1)[0].lower()


def _pyproject_specs() -> dict[str, str]:
    meta = tomllib.loads((config.ROOT / "pyproject.toml").read_text())["project"]
    specs = list(meta["dependencies"])
    for extra in meta["optional-dependencies"].values():
        specs += extra
    return {_name(s): s.replace(" ", "") for s in specs}


def _environment_specs() -> dict[str, str]:
    env = yaml.safe_load((config.ROOT / "environment.yml").read_text())
    specs: list[str] = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            specs += [d for d in dep["pip"] if not d.startswith("-e")]
        elif _name(dep) not in {"python", "pip"}:
            specs.append(dep)
    out = {}
    for spec in specs:
        name = _name(spec)
        name = CONDA_TO_PYPI.get(name, name).lower()
        out[name] = spec.replace(" ", "")
    return out


def test_environment_yml_names_the_same_dependencies_as_pyproject() -> None:
    py, env = _pyproject_specs(), _environment_specs()
    assert sorted(py) == sorted(env)


def test_lower_bounds_agree() -> None:
    py, env = _pyproject_specs(), _environment_specs()
    bound = re.compile(r">=([\w.]+)")
    for name, spec in py.items():
        assert bound.findall(spec) == bound.findall(env[name]), name
