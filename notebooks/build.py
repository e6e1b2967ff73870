"""Build the notebooks from their percent-format sources in ``notebooks/src/``.

Each ``src/NN_name.py`` is plain Python that ruff lints and formats: ``# %%`` starts a code
cell, ``# %% [markdown]`` a markdown cell (its lines are comments, ``# `` stripped), and
``# %% tags=["parameters"]`` the one parameters cell papermill fills in. The built
``NN_name.ipynb`` files are committed with no outputs and stable cell ids.

Usage::

    python3 notebooks/build.py          # rewrite every notebook from its source
    python3 notebooks/build.py --check  # exit 1 if a committed notebook is out of date
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
CELL_MARK = re.compile(r"^# %%(?P<markdown> \[markdown\])?(?: tags=(?P<tags>\[.*\]))?\s*$")
HEADER_END = "# ---"


def _cell_blocks(text: str) -> list[tuple[bool, list[str], list[str]]]:
    """Split a source into (is_markdown, tags, lines) blocks, skipping the header."""
    lines = text.splitlines()
    if HEADER_END in lines:
        lines = lines[lines.index(HEADER_END) + 1 :]
    blocks: list[tuple[bool, list[str], list[str]]] = []
    for line in lines:
        mark = CELL_MARK.match(line)
        if mark:
            tags = json.loads(mark["tags"]) if mark["tags"] else []
            blocks.append((bool(mark["markdown"]), tags, []))
        elif blocks:
            blocks[-1][2].append(line)
    return blocks


def build(source: Path) -> nbformat.NotebookNode:
    """Return the notebook for one percent-format source file."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    for index, (markdown, tags, lines) in enumerate(_cell_blocks(source.read_text("utf-8"))):
        body = "\n".join(lines).strip("\n")
        if markdown:
            body = "\n".join(re.sub(r"^# ?", "", line) for line in body.splitlines())
            cell = nbformat.v4.new_markdown_cell(body)
        else:
            cell = nbformat.v4.new_code_cell(body)
        cell.id = str(index)  # the ids nbstripout writes, so stripping changes nothing
        if tags:
            cell.metadata["tags"] = tags
        notebook.cells.append(cell)
    nbformat.validate(notebook)
    return notebook


def main(argv: list[str]) -> int:
    """Write (or with ``--check`` compare) every notebook; return the exit status."""
    check = "--check" in argv
    stale = []
    for source in sorted(SOURCES.glob("[0-9][0-9]_*.py")):
        target = HERE / f"{source.stem}.ipynb"
        text = nbformat.writes(build(source)) + "\n"
        if check:
            if not target.is_file() or target.read_text("utf-8") != text:
                stale.append(target.name)
        else:
            target.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date (run python3 notebooks/build.py): {', '.join(stale)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
