"""The offline judge's server: llama.cpp with a small bundled model (a plumbing check).

Choosing between it and a remote endpoint is a workflow: :mod:`judgekit.judging.clients`.
"""

from judgekit.local.model import (
    LOCAL_MODEL_ENV,
    LocalJudgeUnavailable,
    bundled_model_path,
    find_local_model,
    missing_server_modules,
    require_local_extra,
)
from judgekit.local.server import (
    DEFAULT_MODEL_ALIAS,
    DEFAULT_N_CTX,
    LocalJudgeServer,
    LocalServerConfig,
    LocalServerError,
    free_port,
)

__all__ = [
    "DEFAULT_MODEL_ALIAS",
    "DEFAULT_N_CTX",
    "LOCAL_MODEL_ENV",
    "LocalJudgeServer",
    "LocalJudgeUnavailable",
    "LocalServerConfig",
    "LocalServerError",
    "bundled_model_path",
    "find_local_model",
    "free_port",
    "missing_server_modules",
    "require_local_extra",
]
