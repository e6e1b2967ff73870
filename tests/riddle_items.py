"""An items file of Hungarian riddle rows, as the CLI study tests write it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd


def write_riddle_items(
    path: Path, ids: Sequence[str], models: Sequence[str], **labels: Sequence[int]
) -> Path:
    """Write rows of every canonical column for ``ids`` (answered by ``models``), with labels.

    ``labels`` are the human label columns (``Human_Accuracy=[...]``), one value per ID.
    """
    frame = pd.DataFrame(
        {
            "ID": list(ids),
            "Question": [f"Találós kérdés {i}?" for i in ids],
            "Answer": [f"Válasz {i}" for i in ids],
            "Ref_Answer": [f"Megoldás {i}" for i in ids],
            "Reasoning": [f"Indoklás {i}" for i in ids],
            "Ref_Reasoning": [f"Várt indoklás {i}" for i in ids],
            "Model": list(models),
            **{column: list(values) for column, values in labels.items()},
        }
    )
    frame.to_csv(path, index=False)
    return path
