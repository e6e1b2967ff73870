"""Item tables: reading, column aliases, validation, loaders, batching, result files.

The riddles study's loaders live beside its measures in :mod:`judgekit.riddles`.
"""

from judgekit.data.batching import STATUS_COLUMNS, Batch, make_batches, write_id_score_csv
from judgekit.data.columns import (
    DEFAULT_ALIASES,
    alias_key,
    canonical_headers,
    items_from_frame,
    require_columns,
    validate_frame,
)
from judgekit.data.errors import DataError
from judgekit.data.evouna import EVOUNA_COLUMNS, EVOUNA_MODELS, load_evouna
from judgekit.data.frames import CSV_SEPARATOR, TABLE_SUFFIXES, read_frame, write_table
from judgekit.data.tables import SEPARATORS, Table, read_table, read_text_table

__all__ = [
    "CSV_SEPARATOR",
    "DEFAULT_ALIASES",
    "EVOUNA_COLUMNS",
    "EVOUNA_MODELS",
    "SEPARATORS",
    "STATUS_COLUMNS",
    "TABLE_SUFFIXES",
    "Batch",
    "DataError",
    "Table",
    "alias_key",
    "canonical_headers",
    "items_from_frame",
    "load_evouna",
    "make_batches",
    "read_frame",
    "read_table",
    "read_text_table",
    "require_columns",
    "validate_frame",
    "write_id_score_csv",
    "write_table",
]
