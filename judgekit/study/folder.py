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
    settings.json         study settings every notebook reads (own_models: judge -> its family)
    scores/               one seed-style ID,score file per (rubric, variant, judge, run) + status
                          sidecar
    responses.sqlite      the response store: every paid reply, replayed on a rerun
    report/               executed notebooks 02-07, their tables/ and figures/

``judgekit judge --study`` adds to the folder and never replaces it
(:mod:`judgekit.study.accumulate`); its items come from :mod:`judgekit.study.items`.
The functions here are the one way to load a study for the report notebooks
(:func:`load_study`, :func:`open_report`) and to read or change its settings.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from judgekit import config
from judgekit.data import DataError, read_frame
from judgekit.data.atomic import atomic_write_text
from judgekit.data.tidy import JUDGE, LABEL_COLUMNS, final_verdicts, rater_table, read_judgments
from judgekit.types import Status, UsageError

if TYPE_CHECKING:
    from judgekit.rubrics import JinjaRubric

#: The study's cluster column: answers to the same question are alike (named here only).
CLUSTER_COLUMN = "question"


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
    settings = _InFolder("settings.json")  # the researcher's study settings (own_models, ...)
    scores = _InFolder("scores")
    store = _InFolder("responses.sqlite")
    report = _InFolder("report")


def reference_labels(human: pd.DataFrame, verdicts: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The human rater each rubric's judges are compared with, from the one table of labels.

    Per rubric, the items file's label column when it has scores (it was delivered with the
    items and usually covers them all), else the labelling tool's first labeller by name. The
    other raters are compared with it and with each other (inter-human agreement), never
    merged. Pairwise verdicts are no scores (:meth:`Study.pair_labels` reads them).

    Returns:
        ``item_id, rubric, answer_model, score`` and one line naming each rater and its count.
    """
    from judgekit.labels.table import ITEMS_FILE

    ok = human["status"].astype(str) == Status.OK.value
    scored = human[ok & human["score"].notna()].assign(tool=lambda f: f["source"] != ITEMS_FILE)
    firsts = scored.sort_values(["tool", "labeller"], kind="stable").drop_duplicates("rubric")
    if firsts.empty:
        return pd.DataFrame(columns=list(LABEL_COLUMNS)), ""
    usable = scored.merge(firsts[["rubric", "labeller"]], on=["rubric", "labeller"])
    keys = ["rubric", "item_id"]
    answer_model = pd.Series("", index=usable.index)
    if "answer_model" in verdicts.columns:
        models = verdicts.astype({"rubric": str, "item_id": str}).drop_duplicates(keys)
        answer_model = usable[keys].astype(str).merge(
            models[[*keys, "answer_model"]], on=keys, how="left"
        )["answer_model"]  # fmt: skip
    labels = pd.DataFrame(
        {
            "item_id": usable["item_id"].astype(str),
            "rubric": usable["rubric"].astype(str),
            "answer_model": answer_model.fillna("").astype(str).to_numpy(),
            "score": usable["score"].astype(float),
        },
        columns=list(LABEL_COLUMNS),
    ).reset_index(drop=True)
    named = labels.merge(firsts[["rubric", "labeller", "source"]], on="rubric")
    counts = named.groupby(["labeller", "source"], sort=False).size().reset_index(name="n")
    found = "; ".join(f"{r.labeller} ({r.source}, {r.n} labels)" for r in counts.itertuples())
    return labels, found


@dataclass(frozen=True)
class Study:
    """What the report notebooks read from a study folder.

    Attributes:
        folder: The folder's layout.
        judgments: The judgments table (final verdicts and foreign-ID rows); without the
            reply texts when loaded with ``replies=False``.
        verdicts: The final verdict per (rubric, variant, model, run, item).
        labels: The reference human labels (``item_id, rubric, answer_model, score``) the
            judge is compared with, possibly empty (:func:`reference_labels`).
        labels_source: Which rater and source they are, with their count (``""``: none);
            every notebook prints it and writes it beside the figures computed from them.
        human: Every human label, from the items file and the labelling tool
            (:func:`~judgekit.labels.table.human_label_table`).
        settings: The study's ``settings.json`` (:func:`read_settings`).
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
    human: pd.DataFrame
    settings: dict[str, Any]
    judges: tuple[Mapping[str, Any], ...] = ()
    _rubrics: dict[str, JinjaRubric] = field(default_factory=dict, compare=False, repr=False)

    def rubric(self, name: str) -> JinjaRubric:
        """The rubric ``name`` was judged with: packaged, or the study's checked copy of the user's.

        Every notebook and ``judgekit label`` take the rubric from here, never by name alone, so
        an own prompt file or rubric folder is found wherever the study goes
        (:func:`study_rubric`).

        Raises:
            UsageError: One line, for a rubric the study neither records nor judgekit packages,
                or a copy changed since it was judged.
        """
        from judgekit.study.rubrics import study_rubric

        if name not in self._rubrics:
            self._rubrics[name] = study_rubric(self.folder, name)
        return self._rubrics[name]

    def is_pairwise(self, rubric: str) -> bool:
        """Whether ``rubric`` compares two answers (:func:`judgekit.study.pairwise.is_pairwise`)."""
        from judgekit.study import pairwise

        return pairwise.is_pairwise(self, rubric)

    def pairwise_rubrics(self) -> list[str]:
        """The study's judged rubrics that are pairwise, sorted."""
        return [name for name in sorted(set(self.judgments["rubric"].astype(str)))
                if self.is_pairwise(name)]  # fmt: skip

    def comparisons(self, rubric: str | None = None) -> pd.DataFrame:
        """The comparison long table of a pairwise rubric (``data.pairwise.COMPARISON_COLUMNS``).

        See :func:`judgekit.study.pairwise.comparisons`.
        """
        from judgekit.study import pairwise

        return pairwise.comparisons(self, rubric)

    def pair_labels(self, rubric: str | None = None) -> pd.DataFrame:
        """Human pairwise labels, ``pair_id, rater, verdict``.

        See :func:`judgekit.study.pairwise.pair_labels`.
        """
        from judgekit.study import pairwise

        return pairwise.pair_labels(self, rubric)

    @property
    def cluster(self) -> str | None:
        """The column grouping items that are not independent (their question), if judged."""
        column = self.judgments.get(CLUSTER_COLUMN)
        if column is None:
            return None
        given = column.notna() & (column.astype(str).str.strip() != "")  # "" is no question
        return CLUSTER_COLUMN if given.any() else None

    def raters(self, rubric: str = "", *, rater: str = JUDGE) -> pd.DataFrame:
        """The long rater table of one rubric, ready for :mod:`judgekit.stats`.

        One row per item, rater and score (``item, rater, score, status, run, variant`` and
        the item context), the reference human labels as rater ``human``
        (:func:`~judgekit.data.tidy.rater_table`).

        Args:
            rubric: The rubric; may be left empty when the study judged only one.
            rater: The verdict column whose values are the raters (``judge``, ``variant``,
                ``run``).

        Raises:
            UsageError: If the rubric is left empty in a study of several, or not judged.
        """
        judged = sorted(set(self.verdicts["rubric"]))
        if not rubric and len(judged) != 1:
            raise UsageError(f"say which rubric: the study judged {', '.join(judged) or 'none'}")
        if (rubric or judged[0]) not in judged:
            raise UsageError(f"rubric {rubric!r} was not judged; judged: {', '.join(judged)}")
        chosen = rubric or judged[0]
        return rater_table(self.verdicts, self.labels, rubric=chosen, rater=rater)


def output_folders(
    figures_dir: str, output_dir: str, name: str, report: Path | None = None
) -> tuple[Path, Path]:
    """A notebook's figure and table folders; the tables one exists.

    Args:
        figures_dir: The notebook's ``figures_dir`` parameter (empty: ``report/figures``, or
            ``config.FIGURES_DIR`` without a study).
        output_dir: Its ``output_dir`` parameter (empty: ``report/tables/name``, or
            ``config.RUNS_DIR / name`` without a study).
        name: The notebook's default table folder name.
        report: The study's report folder, where a study's outputs go by default (never
            into the checkout).
    """
    figures_default = report / "figures" if report else config.FIGURES_DIR
    tables_default = report / "tables" / name if report else config.RUNS_DIR / name
    figures = Path(figures_dir) if figures_dir else figures_default
    tables = Path(output_dir) if output_dir else tables_default
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
        labels_path: A human labels table to compare the judges with instead of the
            reference rater (:func:`reference_labels`); every label of the folder stays in
            ``Study.human`` either way.
        replies: Load the reply texts, each held once (:func:`judgekit.data.tidy.read_judgments`);
            the report notebooks need none and load without them.

    Raises:
        DataError: If the judgments or a named labels file cannot be read.
    """
    source = _judgments_file(Path(path))
    folder = StudyFolder(source.parent)
    judgments = read_judgments(source, replies=replies)
    if JUDGE not in judgments.columns:  # judged before panels: the model names the judge
        judgments[JUDGE] = judgments["model"]
    verdicts = final_verdicts(judgments)
    human = study_human_labels(folder)
    labels, found = reference_labels(human, verdicts)
    if labels_path:
        labels = read_frame(labels_path, required=LABEL_COLUMNS, what="human labels table")
        found = f"{labels_path} ({len(labels)} labels)"
    labels["item_id"] = labels["item_id"].astype(str)
    found = found if len(labels) else ""
    judges: tuple[Mapping[str, Any], ...] = ()
    if folder.manifest.is_file():
        try:
            judges = tuple(
                json.loads(folder.manifest.read_text(encoding="utf-8")).get("judges", ())
            )
        except (OSError, ValueError, AttributeError):
            raise DataError(folder.manifest, "not a study.json judgekit wrote") from None
    return Study(folder, judgments, verdicts, labels, found, human, read_settings(folder), judges)


def study_human_labels(folder: StudyFolder) -> pd.DataFrame:
    """Every human label of the study, from the items file and the labelling tool, one table.

    See :func:`~judgekit.labels.table.human_label_table`; it reads no judgments.
    """
    from judgekit.labels.table import human_label_table, read_labels_table  # judging needs none

    column = pd.DataFrame(columns=list(LABEL_COLUMNS))
    if folder.human_labels.is_file():
        column = read_frame(folder.human_labels, required=LABEL_COLUMNS, what="human labels")
    named = _label_column(folder, set(column["rubric"].astype(str)))
    return human_label_table(column, named, read_labels_table(folder.long_labels))


def read_settings(folder: StudyFolder) -> dict[str, Any]:
    """The study's ``settings.json`` (``{}`` when it has none).

    ``own_models`` maps a judge model to the answering model of its family (self-preference).

    Raises:
        DataError: If the file is not a JSON object.
    """
    if not folder.settings.is_file():
        return {}
    try:
        settings = json.loads(folder.settings.read_text(encoding="utf-8-sig"))
    except ValueError as error:
        raise DataError(folder.settings, f"not valid JSON ({error})") from None
    if not isinstance(settings, dict):
        raise DataError(folder.settings, "must hold a JSON object of settings")
    return settings


def own_models_setting(
    folder: StudyFolder, judges: Collection[str], models: Collection[str], pairs: Sequence[str]
) -> dict[str, str]:
    """Check ``JUDGE=MODEL`` pairs against the study and merge them into its settings.

    Args:
        folder: The study.
        judges: Its judges' labels (the judgments' ``judge`` column).
        models: The answering models of its items (the ``answer_model`` column).
        pairs: ``JUDGE=ANSWERING_MODEL`` pairs.

    Returns:
        The study's ``own_models`` after the merge (saved to ``settings.json`` when changed).

    Raises:
        UsageError: For a pair without ``=``, or a judge or answering model the study does
            not have (one line, with the closest name).
    """
    from judgekit.study.parameters import close_match

    settings = read_settings(folder)
    own = dict(settings.get("own_models", {}))
    for pair in pairs:
        judge, sep, model = (part.strip() for part in pair.partition("="))
        if not sep or not judge or not model:
            raise UsageError(f"--own-model {pair!r}: write JUDGE=ANSWERING_MODEL")
        if judge not in judges:
            raise UsageError(
                f"--own-model {pair}: no judge {judge!r} in the study{close_match(judge, judges)}"
            )
        if model not in models:
            raise UsageError(
                f"--own-model {pair}: no answering model {model!r} in the study"
                f"{close_match(model, models)} (the items' Model column)"
            )
        own[judge] = model
    if own != settings.get("own_models", {}):
        text = json.dumps({**settings, "own_models": own}, indent=1) + "\n"
        atomic_write_text(folder.settings, text)
    return own


def _label_column(folder: StudyFolder, rubrics: Collection[str]) -> dict[str, str]:
    """Each rubric's items-file label column, as ``study.json``'s latest command of it names it.

    A rubric no command names gets the manifest's ``label_column``, else ``label``.
    """
    try:
        manifest = json.loads(folder.manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    manifest = manifest if isinstance(manifest, dict) else {}
    named = {}
    for command in manifest.get("commands", []):
        if isinstance(command, dict) and command.get("label_column"):
            named[str(command.get("rubric", ""))] = str(command["label_column"])
    fallback = str(manifest.get("label_column") or "label")
    return {rubric: named.get(rubric, fallback) for rubric in rubrics}


def open_report(
    name: str,
    judgments_path: str = "",
    labels_path: str = "",
    *,
    figures_dir: str = "",
    output_dir: str = "",
    replies: bool = False,
    pairwise: bool = False,
) -> tuple[Study, Path, Path]:
    """The opening of a report notebook: the plot style, its study and its output folders.

    A step that scores single answers (``pairwise=False``) gets the study without its pairwise
    rubrics and those it knows no scale of, and prints one ``skipped`` line for each
    (:func:`judgekit.study.scored.scored_study`).

    Args:
        name: The notebook's default table folder under ``config.RUNS_DIR``.
        judgments_path: Its ``judgments_path`` parameter (empty: ``RUNS_DIR / "judging"``).
        labels_path: Its ``labels_path`` parameter (see :func:`load_study`).
        figures_dir: Its ``figures_dir`` parameter (see :func:`output_folders`).
        output_dir: Its ``output_dir`` parameter (see :func:`output_folders`).
        replies: Load the judge's reasons and raw replies too (a review of disagreements).
        pairwise: Keep the pairwise rubrics (the pairwise step).

    Returns:
        The study, the figure folder and the table folder (created).
    """
    from judgekit import plots  # here: `judgekit judge` imports no plotting library

    plots.apply_style()
    study = load_study(judgments_path or config.RUNS_DIR / "judging", labels_path, replies=replies)
    if not pairwise:
        from judgekit.study.scored import scored_study

        study, left_out = scored_study(study)
        for line in left_out:
            print(line)
    figures, tables = output_folders(figures_dir, output_dir, name, study.folder.report)
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
