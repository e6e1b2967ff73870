"""Notebook parameters checked before a notebook does anything, wherever it is run from.

Every notebook declares its parameters in one cell of typed assignments (``run: int = 1``);
Python records those in the namespace's ``__annotations__``. Whoever sets a parameter, papermill
(its injected cell, also under ``judgekit report``/``paper``) or a person editing the cell in
JupyterLab, writes a plain assignment. :func:`check_parameters`, the notebook's first call,
reads the cells run so far (IPython's ``In``), takes the names that cells made only of literal
assignments set, and stops at the first one the notebook does not declare, or whose value has
the wrong type, with one line naming it and the closest declared name. :func:`check_names` does
the same for a parameter file before anything runs, and :func:`check_declared` checks every
run's parameters (from a parameter file, a report plan or a bundle's ``steps.json``) by name and
type against the notebook's parameters cell before papermill writes anything: papermill writes
``NAME = VALUE`` into the notebook, so a name must be a plain identifier the cell declares.
"""

from __future__ import annotations

import ast
import difflib
import keyword
from collections.abc import Iterable, Mapping
from typing import Any

from judgekit.types import UsageError


class ParameterError(UsageError):
    """A parameter the notebook does not have, or a value of the wrong type (one line)."""

    def _render_traceback_(self) -> list[str]:
        """IPython and papermill show this one line instead of a traceback."""
        return [f"error: {self}"]


def close_match(name: str, known: Iterable[str]) -> str:
    """`` (did you mean `X`?)`` for the closest known name, or ``""``."""
    found = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean `{found[0]}`?)" if found else ""


def check_names(given: Iterable[str], declared: Iterable[str], where: str) -> None:
    """Refuse a parameter name the notebook does not declare.

    Raises:
        ParameterError: ``WHERE: unknown parameter `x` (did you mean `y`?)``.
    """
    known = set(declared)
    for name in sorted(set(given) - known):
        raise ParameterError(f"{where}: unknown parameter `{name}`{close_match(name, known)}")


#: Papermill's ``inferred_type_name`` of each annotation a parameters cell may use.
_DECLARED_TYPES: dict[str, type | tuple[type, ...]] = {
    "str": str,
    "int": int,
    "float": (int, float),
    "bool": bool,
    "list": list,
    "dict": dict,
}


def check_declared(
    parameters: Mapping[str, Any], declared: Mapping[str, Mapping[str, Any]], where: str
) -> None:
    """Refuse a parameter that is not an identifier the notebook declares, or of another type.

    Args:
        parameters: The values to inject, by name.
        declared: :func:`papermill.inspect_notebook`'s answer (name -> ``inferred_type_name``).
        where: What set them (a file, a bundle's steps), for the message.

    Raises:
        ParameterError: One line naming the parameter.
    """
    for name in parameters:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ParameterError(f"{where}: parameter name {name!r} is not a Python identifier")
    check_names(parameters, declared, where)
    for name, value in parameters.items():
        expected = _DECLARED_TYPES.get(str(declared[name].get("inferred_type_name")))
        if expected is None or value is None:
            continue
        if (isinstance(value, bool) and expected is not bool) or not isinstance(value, expected):
            wanted = str(declared[name]["inferred_type_name"])
            raise ParameterError(
                f"{where}: parameter `{name}` must be {wanted}, got {type(value).__name__} "
                f"{_short(value)}"
            )


def _short(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _literal_assignments(source: str) -> list[tuple[str, bool]]:
    """``(name, annotated)`` per assignment when a cell is only literal assignments, else []."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found.append((node.target.id, True))
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            try:
                ast.literal_eval(node.value)
            except ValueError:
                return []
            found += [(t.id, False) for t in node.targets if isinstance(t, ast.Name)]
        else:
            return []
    return found


def _type_ok(value: Any, expected: Any) -> bool:
    if not isinstance(expected, type):
        return True
    if expected is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, expected)


def check_parameters(namespace: Mapping[str, Any], notebook: str = "this notebook") -> None:
    """Stop the notebook on a parameter it does not declare or a value of the wrong type.

    Args:
        namespace: The notebook's ``globals()``.
        notebook: Its name, for the message.

    Raises:
        ParameterError: One line naming the parameter and the closest declared name.
    """
    declared = dict(namespace.get("__annotations__", {}))
    cells = namespace.get("In", [])
    assigned = [pair for source in cells for pair in _literal_assignments(source)]
    set_here = {name for name, annotated in assigned if not annotated}
    check_names(set_here, declared, notebook)
    for name, expected in declared.items():
        if name in namespace and not _type_ok(namespace[name], expected):
            value = namespace[name]
            raise ParameterError(
                f"{notebook}: parameter `{name}` must be {expected.__name__}, "
                f"got {type(value).__name__} {value!r}"
            )
