"""The offline judge: a llama.cpp server with a small bundled model (a plumbing check)."""

from judgekit.local.judge import (
    JUDGE_MODEL_ENV,
    default_judge_client,
    local_judge_client,
    remote_endpoint_configured,
    serve_local_command,
)
from judgekit.local.server import (
    DEFAULT_MODEL_ALIAS,
    DEFAULT_N_CTX,
    LOCAL_MODEL_ENV,
    LocalJudgeServer,
    LocalJudgeUnavailable,
    LocalServerConfig,
    LocalServerError,
    bundled_model_path,
    find_local_model,
    free_port,
    missing_server_modules,
    require_local_extra,
    start_local_server,
)

__all__ = [
    "DEFAULT_MODEL_ALIAS",
    "DEFAULT_N_CTX",
    "JUDGE_MODEL_ENV",
    "LOCAL_MODEL_ENV",
    "LocalJudgeServer",
    "LocalJudgeUnavailable",
    "LocalServerConfig",
    "LocalServerError",
    "bundled_model_path",
    "default_judge_client",
    "find_local_model",
    "free_port",
    "local_judge_client",
    "missing_server_modules",
    "remote_endpoint_configured",
    "require_local_extra",
    "serve_local_command",
    "start_local_server",
]
