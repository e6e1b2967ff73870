"""The human side of validation: choose what to label, label blind, compare, correct, record.

Layer: above :mod:`judgekit.stats` and :mod:`judgekit.plots`, below :mod:`judgekit.study`. The
widget (:class:`~judgekit.labels.widget.LabelWidget`) is imported from its module so that the rest
runs without a front end.
"""

from judgekit.labels.calibration import (
    calibration_changes,
    calibration_record,
    describe_calibration,
    prompt_hash,
    read_calibration,
    write_calibration,
)
from judgekit.labels.compare import consensus, disagreements, inter_human_agreement
from judgekit.labels.select import LabellingPlan, select_for_labelling
from judgekit.labels.table import (
    LABEL_STATUSES,
    LABEL_TABLE_COLUMNS,
    read_labels_table,
    record_label,
    rubric_version,
    write_labels_table,
)

__all__ = [
    "LABEL_STATUSES",
    "LABEL_TABLE_COLUMNS",
    "LabellingPlan",
    "calibration_changes",
    "calibration_record",
    "consensus",
    "describe_calibration",
    "disagreements",
    "inter_human_agreement",
    "prompt_hash",
    "read_calibration",
    "read_labels_table",
    "record_label",
    "rubric_version",
    "select_for_labelling",
    "write_calibration",
    "write_labels_table",
]
