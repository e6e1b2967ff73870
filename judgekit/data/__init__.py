"""Tables in and out: item files, column aliases, validation, dataset loaders, batching, outputs."""

from judgekit.data.batching import STATUS_COLUMNS, Batch, make_batches, write_id_score_csv
from judgekit.data.columns import (
    DEFAULT_ALIASES,
    alias_key,
    canonical_headers,
    items_from_frame,
    validate_frame,
)
from judgekit.data.errors import DataError
from judgekit.data.evouna import EVOUNA_COLUMNS, EVOUNA_MODELS, load_evouna
from judgekit.data.frames import CSV_SEPARATOR, TABLE_SUFFIXES, read_frame, write_table
from judgekit.data.riddles import (
    RATER_ORDER,
    RIDDLE_LABEL_SCALES,
    V1_COLUMNS,
    V1_MODEL_NAMES,
    V2_LONG_COLUMNS,
    load_riddles_v1,
    load_riddles_v2_scores,
    off_scale_labels,
    riddles_v2_wide,
)
from judgekit.data.tables import SEPARATORS, Table, read_table

__all__ = [
    "CSV_SEPARATOR",
    "DEFAULT_ALIASES",
    "EVOUNA_COLUMNS",
    "EVOUNA_MODELS",
    "RATER_ORDER",
    "RIDDLE_LABEL_SCALES",
    "SEPARATORS",
    "STATUS_COLUMNS",
    "TABLE_SUFFIXES",
    "V1_COLUMNS",
    "V1_MODEL_NAMES",
    "V2_LONG_COLUMNS",
    "Batch",
    "DataError",
    "Table",
    "alias_key",
    "canonical_headers",
    "items_from_frame",
    "load_evouna",
    "load_riddles_v1",
    "load_riddles_v2_scores",
    "make_batches",
    "off_scale_labels",
    "read_frame",
    "read_table",
    "riddles_v2_wide",
    "validate_frame",
    "write_id_score_csv",
    "write_table",
]
