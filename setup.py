"""Build hook: the wheel carries the notebooks, parameter sets and demo data as package data.

They stay where they live in the repository (``notebooks/``, ``params/``, ``data/``); building
copies them into ``judgekit/_shipped/``, which :func:`judgekit.config.shipped` reads when
judgekit is not run from a checkout. An editable install reads the checkout and copies nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
#: Each shipped folder and the files of it the wheel carries (MANIFEST.in lists the same).
SHIPPED = {
    "notebooks": ("*.ipynb",),
    "params": ("README.md", "*/*.yaml"),
    "data": ("README.md", "riddles_v2_scores.csv", "demo/*.csv", "demo/README.md"),
}


class BuildWithShipped(build_py):
    """``build_py`` that also copies :data:`SHIPPED` into ``judgekit/_shipped``."""

    def run(self) -> None:
        """Build the package, then copy the shipped files beside it."""
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "judgekit" / "_shipped"
        for folder, patterns in SHIPPED.items():
            files = [f for pattern in patterns for f in sorted((HERE / folder).glob(pattern))]
            if not files:
                raise SystemExit(f"setup.py: nothing to ship in {HERE / folder}")
            for source in files:
                copy = target / folder / source.relative_to(HERE / folder)
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, copy)


setup(cmdclass={"build_py": BuildWithShipped})
