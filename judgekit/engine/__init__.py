"""The judging engine: endpoint presets, a retrying client, a response store and ``judge()``."""

from judgekit.engine.client import JudgeCallError, OpenAIJudge
from judgekit.engine.conversation import ContextBudgetError
from judgekit.engine.modes import MODES, Mode, register_mode
from judgekit.engine.options import JudgeOptions
from judgekit.engine.ordering import order_items
from judgekit.engine.plan import RunPlan
from judgekit.engine.providers import (
    GENERIC,
    PLACEHOLDER_KEY,
    PROVIDERS,
    MissingAPIKeyError,
    ProviderPreset,
    get_provider,
    resolve_api_key,
    resolve_base_url,
)
from judgekit.engine.rows import ALL_COLUMNS, EXTRA_COLUMNS, REASK_STATUSES
from judgekit.engine.runner import ajudge, judge, preview, run_sync
from judgekit.engine.session import JudgeSession, JudgeSettings, OfflineStoreMissError
from judgekit.engine.store import RequestKey, ResponseStore, StoreWriteError

__all__ = [
    "ALL_COLUMNS",
    "EXTRA_COLUMNS",
    "GENERIC",
    "MODES",
    "PLACEHOLDER_KEY",
    "PROVIDERS",
    "REASK_STATUSES",
    "ContextBudgetError",
    "JudgeCallError",
    "JudgeOptions",
    "JudgeSession",
    "JudgeSettings",
    "MissingAPIKeyError",
    "Mode",
    "OfflineStoreMissError",
    "OpenAIJudge",
    "ProviderPreset",
    "RequestKey",
    "ResponseStore",
    "RunPlan",
    "StoreWriteError",
    "ajudge",
    "get_provider",
    "judge",
    "order_items",
    "preview",
    "register_mode",
    "resolve_api_key",
    "resolve_base_url",
    "run_sync",
]
