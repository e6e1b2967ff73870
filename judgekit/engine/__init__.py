"""The judging engine: endpoint presets, a retrying client, a response store and ``judge()``."""

from judgekit.engine.client import JudgeCallError, OpenAIJudge
from judgekit.engine.conversation import ContextBudgetError, run_conversation
from judgekit.engine.ordering import order_items, position_spread
from judgekit.engine.providers import (
    GENERIC,
    PROVIDERS,
    MissingAPIKeyError,
    ProviderPreset,
    get_provider,
)
from judgekit.engine.rows import ALL_COLUMNS, EXTRA_COLUMNS, REASK_STATUSES
from judgekit.engine.runner import MODES, RunPlan, ajudge, judge, register_mode
from judgekit.engine.session import JudgeSession, JudgeSettings, OfflineStoreMissError
from judgekit.engine.store import RequestKey, ResponseStore

register_mode("conversation", run_conversation)

__all__ = [
    "ALL_COLUMNS",
    "EXTRA_COLUMNS",
    "GENERIC",
    "MODES",
    "PROVIDERS",
    "REASK_STATUSES",
    "ContextBudgetError",
    "JudgeCallError",
    "JudgeSession",
    "JudgeSettings",
    "MissingAPIKeyError",
    "OfflineStoreMissError",
    "OpenAIJudge",
    "ProviderPreset",
    "RequestKey",
    "ResponseStore",
    "RunPlan",
    "ajudge",
    "get_provider",
    "judge",
    "order_items",
    "position_spread",
    "register_mode",
]
