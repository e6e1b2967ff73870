"""The study folder: one layout shared by ``judgekit judge --study``, notebook 01 and the report.

A study folder holds::

    study.json            the judges, every (rubric, variant, judge, run) judged and the command
                          that judged it, every command, the files judgekit wrote (their hashes)
    items.csv             the items as read (canonical headers, labels and metadata included)
    judgments.parquet     the verdict of every item per variant, judge and run, from the attempt
                          that settled it (JUDGMENT_COLUMNS + context + ``judge``, the panel
                          member's label); earlier attempts are in the store
                          (judgekit.engine.history.attempt_history)
    judgments.csv         the same, comma-separated UTF-8 (data.frames convention)
    human_labels.parquet  item_id, rubric, answer_model, score (from the items' label column)
    labels.csv            long human labels written by the labelling tool (optional)
    labelling_plan.csv    the items to label, with strata and judge scores (not for the labeller)
    scores/               one seed-style ID,score file per (rubric, variant, judge, run) + status
                          sidecar
    responses.sqlite      the response store: every paid reply, replayed on a rerun
    report/               executed notebooks 02-07, their tables/ and figures/

``judgekit judge --study`` adds to the folder and never replaces it
(:mod:`judgekit.workflows.accumulate`). The functions here are the one way to turn a table
into items (:func:`study_items`), to attach what the analysis needs to know about each item
(:func:`with_context`) and to load a study for the report notebooks (:func:`load_study`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from judgekit import config
from judgekit.data import DataError, Table, items_from_frame, read_frame
from judgekit.data.tidy import LABEL_COLUMNS, final_verdicts, labels_from_items, read_judgments
from judgekit.types import Item, Rubric, Status

#: Item columns that give the analysis its context, when the items file has them.
#: The study's cluster column: answers to the same question are alike (named here only).
CLUSTER_COLUMN = "question"
CONTEXT_SOURCES: dict[str, str] = {
    "answer_model": "Model",  # the model whose answer is judged (self-preference, per model)
    CLUSTER_COLUMN: "Question",
    "answer_chars": "Answer",  # answer length in characters (length bias)
}


class _InFolder:
    """A fixed file or folder below a study's root, read as an attribute of the folder."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, folder: StudyFolder, owner: type[StudyFolder]) -> Path:
        return folder.root / self.name


@dataclass(frozen=True)
class StudyFolder:
    """Where each file of a study lives (see the module docstring for what each one holds)."""

    root: Path

    manifest = _InFolder("study.json")
    items = _InFolder("items.csv")
    judgments = _InFolder("judgments.parquet")
    judgments_csv = _InFolder("judgments.csv")
    human_labels = _InFolder("human_labels.parquet")
    long_labels = _InFolder("labels.csv")  # written by the labelling tool
    labelling_plan = _InFolder("labelling_plan.csv")  # what to label (the labeller never sees it)
    scores = _InFolder("scores")
    store = _InFolder("responses.sqlite")
    report = _InFolder("report")


def study_items(
    table: Table, rubric: Rubric, *, id_column: str = "ID", label_column: str | None = None
) -> tuple[list[Item], list[str]]:
    """Turn an items table into the rubric's items; the one path for the CLI and notebook 01.

    Every input column the rubric uses is sent, the optional ones (e.g. ``Ref_Answer``) whenever
    the table has them; the other columns stay in ``Item.meta``.

    Args:
        table: The table read by :func:`judgekit.data.read_table`.
        rubric: The rubric.
        id_column: Column holding the item IDs.
        label_column: The human label column (default: the rubric's ``label_column``), named
            so that it is not reported as unused.

    Returns:
        The items, and the columns neither sent nor used as labels or context (to list once).

    Raises:
        DataError: For a missing required column or cell (names file, row and column).
    """
    items = items_from_frame(
        table.frame,
        rubric.input_columns,
        id_column=id_column,
        optional=rubric.optional_columns,
        source=str(table.path),
    )
    used = {id_column, *rubric.input_columns, label_column or rubric.label_column}
    used |= set(CONTEXT_SOURCES.values())
    unused = [str(c) for c in table.frame.columns if c not in used]
    return items, unused


def check_label_column(table: Table, column: str) -> None:
    """Refuse a ``--labels-column`` the items file does not have (one line).

    Raises:
        DataError: Naming the file, the column and the headers it has.
    """
    if column not in table.frame.columns:
        headers = ", ".join(str(c) for c in table.frame.columns)
        raise DataError(table.path, f"no label column '{column}'; the headers are: {headers}")


def check_labels(table: Table, column: str, rubric: Rubric) -> int:
    """Refuse label cells that are not scores on the rubric's scale; return how many there are.

    Empty cells mean "not labelled".

    Raises:
        DataError: For the first cell that is not a number on the scale (row and column named).
    """
    allowed = {float(value) for value in (*rubric.scale.allowed, *rubric.scale.abstain)}
    labelled = 0
    for row, value in table.frame[column].items():
        text = "" if value is None else str(value).strip()
        if text in ("", "nan"):
            continue
        try:
            number = float(text.replace(",", "."))
        except ValueError:
            number = float("nan")
        if number not in allowed:
            scale = ", ".join(str(v) for v in rubric.scale.allowed)
            raise DataError(
                table.path, f"label '{text}' is not on the {rubric.name} scale ({scale}); map "
                "labels onto it with --label-map OLD=NEW or leave them out with --no-labels",
                row=int(str(row)) if table.frame.index.name == "row" else None, column=column,
                position=list(table.frame.columns).index(column),
            )  # fmt: skip
        labelled += 1
    return labelled


def item_context(
    items: Sequence[Item], sources: Mapping[str, str] = CONTEXT_SOURCES
) -> pd.DataFrame:
    """Answering model, question and answer length of each item, where the items carry them.

    Args:
        items: The judged items.
        sources: Item column of each context column (default :data:`CONTEXT_SOURCES`).

    Returns:
        Indexed by item ID; only the context columns the items have.
    """
    records = {}
    for item in items:
        text = {**item.meta, **item.fields}
        record: dict[str, object] = {}
        for name, source in sources.items():
            value = text.get(source)
            if value is None or str(value).strip() == "":
                continue
            record[name] = len(str(value)) if name == "answer_chars" else str(value)
        records[item.id] = record
    return pd.DataFrame.from_dict(records, orient="index")


def with_context(
    judgments: pd.DataFrame, items: Sequence[Item], sources: Mapping[str, str] = CONTEXT_SOURCES
) -> pd.DataFrame:
    """``judgments`` with the :func:`item_context` columns mapped onto every row."""
    context = item_context(items, sources)
    result = judgments.copy()
    for column in context.columns:
        result[column] = result["item_id"].map(context[column])
    return result


def human_labels(
    items: Sequence[Item],
    rubric: Rubric,
    label_column: str | None = None,
    answer_model_column: str = CONTEXT_SOURCES["answer_model"],
) -> pd.DataFrame:
    """The human labels the items carry (``item_id, rubric, answer_model, score``)."""
    column = label_column or rubric.label_column
    return labels_from_items(items, rubric.name, answer_model_column, column)


def labels_from_long(long: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """Human labels in the report's form from the labelling tool's long ``labels.csv``.

    Only ``ok`` labels count. With several labellers the first by name is the reference
    rater (the inter-human comparison is notebook 02's own section).
    """
    usable = long[long["status"].astype(str) == Status.OK.value].copy()
    first = sorted(usable["labeller"].astype(str).unique())[:1]
    usable = usable[usable["labeller"].astype(str).isin(first)]
    models = verdicts.drop_duplicates("item_id").set_index("item_id")
    answer_model = pd.Series("", index=usable.index)
    if "answer_model" in models.columns:
        answer_model = usable["item_id"].astype(str).map(models["answer_model"].astype(str))
    return pd.DataFrame(
        {
            "item_id": usable["item_id"].astype(str),
            "rubric": usable["rubric"].astype(str),
            "answer_model": answer_model.fillna("").astype(str),
            "score": usable["score"].astype(float),
        },
        columns=list(LABEL_COLUMNS),
    ).reset_index(drop=True)


@dataclass(frozen=True)
class Study:
    """What the report notebooks read from a study folder.

    Attributes:
        folder: The folder's layout.
        judgments: The judgments table (final verdicts and foreign-ID rows); without the
            reply texts when loaded with ``replies=False``.
        verdicts: The final verdict per (rubric, variant, model, run, item).
        labels: Human labels (``item_id, rubric, answer_model, score``), possibly empty.
        labels_source: Which file the labels came from (``""`` when there are none).
        cluster: The cluster column (:data:`CLUSTER_COLUMN`) when the judgments carry it (an
            item without a value is then an error in every clustered statistic).
        judges: The panel as ``study.json`` lists it (label, provider, model, base URL, key
            variable, limits, prices), in the order judged; one entry per value of the
            judgments' ``judge`` column. Empty for a folder without a ``study.json``.
    """

    folder: StudyFolder
    judgments: pd.DataFrame
    verdicts: pd.DataFrame
    labels: pd.DataFrame
    labels_source: str
    judges: tuple[Mapping[str, Any], ...] = ()

    @property
    def cluster(self) -> str | None:
        """The column grouping items that are not independent (their question), if judged."""
        column = self.judgments.get(CLUSTER_COLUMN)
        return CLUSTER_COLUMN if column is not None and column.notna().any() else None


def output_folders(figures_dir: str, output_dir: str, name: str) -> tuple[Path, Path]:
    """A notebook's figure and table folders (defaults under ``config``); the tables one exists.

    Args:
        figures_dir: The notebook's ``figures_dir`` parameter (empty: ``config.FIGURES_DIR``).
        output_dir: Its ``output_dir`` parameter (empty: ``config.RUNS_DIR / name``).
        name: The notebook's default table folder name.
    """
    figures = Path(figures_dir) if figures_dir else config.FIGURES_DIR
    tables = Path(output_dir) if output_dir else config.RUNS_DIR / name
    tables.mkdir(parents=True, exist_ok=True)
    return figures, tables


def _judgments_file(path: Path) -> Path:
    if not path.exists():
        raise DataError(path, "no such study folder or judgments table; run `judgekit judge` first")
    if path.is_dir():
        folder = StudyFolder(path)
        for candidate in (folder.judgments, folder.judgments_csv):
            if candidate.is_file():
                return candidate
        raise DataError(path, "no judgments.parquet or judgments.csv; run `judgekit judge` first")
    return path


def load_study(path: str | Path, labels_path: str | Path = "", *, replies: bool = True) -> Study:
    """Load a study folder (or a judgments file) for the analysis notebooks.

    Args:
        path: A study folder, or a judgments table whose folder holds the labels.
        labels_path: A human labels table (default: ``human_labels.parquet``, then the
            labelling tool's ``labels.csv``, in the judgments' folder; none is fine).
        replies: Load the reply texts, each held once (:func:`judgekit.data.tidy.read_judgments`);
            the report notebooks need none and load without them.

    Raises:
        DataError: If the judgments or a named labels file cannot be read.
    """
    source = _judgments_file(Path(path))
    folder = StudyFolder(source.parent)
    judgments = read_judgments(source, replies=replies)
    verdicts = final_verdicts(judgments)
    labels = pd.DataFrame(columns=list(LABEL_COLUMNS))
    found = ""
    if labels_path:
        labels, found = read_frame(labels_path, required=LABEL_COLUMNS), str(labels_path)
    elif folder.human_labels.is_file():
        labels, found = read_frame(folder.human_labels, required=LABEL_COLUMNS), "human_labels"
    if labels.empty and folder.long_labels.is_file():
        from judgekit.labels.table import LABEL_TABLE_COLUMNS  # here: judging needs no labels

        long = read_frame(folder.long_labels, required=LABEL_TABLE_COLUMNS, what="labels file")
        labels, found = labels_from_long(long, verdicts), str(folder.long_labels)
    labels["item_id"] = labels["item_id"].astype(str)
    judges: tuple[Mapping[str, Any], ...] = ()
    if folder.manifest.is_file():
        try:
            judges = tuple(
                json.loads(folder.manifest.read_text(encoding="utf-8")).get("judges", ())
            )
        except (OSError, ValueError, AttributeError):
            raise DataError(folder.manifest, "not a study.json judgekit wrote") from None
    return Study(folder, judgments, verdicts, labels, found if len(labels) else "", judges)


def open_report(
    name: str,
    judgments_path: str = "",
    labels_path: str = "",
    *,
    figures_dir: str = "",
    output_dir: str = "",
) -> tuple[Study, Path, Path]:
    """The opening of a report notebook: the plot style, its study and its output folders.

    Args:
        name: The notebook's default table folder under ``config.RUNS_DIR``.
        judgments_path: Its ``judgments_path`` parameter (empty: ``RUNS_DIR / "judging"``).
        labels_path: Its ``labels_path`` parameter (see :func:`load_study`).
        figures_dir: Its ``figures_dir`` parameter (see :func:`output_folders`).
        output_dir: Its ``output_dir`` parameter (see :func:`output_folders`).

    Returns:
        The study, the figure folder and the table folder (created).
    """
    from judgekit import plots  # here: `judgekit judge` imports no plotting library

    plots.apply_style()
    study = load_study(judgments_path or config.RUNS_DIR / "judging", labels_path, replies=False)
    figures, tables = output_folders(figures_dir, output_dir, name)
    return study, figures, tables


def figure_notes(table: pd.DataFrame, label: Sequence[str], value: str = "estimate") -> list[str]:
    """One line per figure of a statistics table that carries a ``note``, naming it.

    The statistics say in ``note`` why a figure is undefined (NaN, e.g. a rater with one
    constant score) or its interval not shown; a notebook prints these lines beside the table.

    Args:
        table: A tidy statistics table (``estimate``, ``note`` and the ``label`` columns).
        label: Columns naming each figure, joined with `` · ``.
        value: The column holding the figure the note is about.
    """
    if table.empty or "note" not in table.columns:
        return []
    noted = table[table["note"].fillna("").astype(str) != ""]
    lines = []
    for _, row in noted.iterrows():
        name, note = " · ".join(str(row[c]) for c in label), str(row["note"])
        shown = "undefined" if pd.isna(row[value]) else f"{value} {row[value]:.3g}"
        lines.append(f"{name}: {note}" if note.startswith(shown) else f"{name}: {shown}; {note}")
    return lines
