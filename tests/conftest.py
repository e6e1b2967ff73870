"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from judgekit import config


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """The read-only shared datasets; tests that need them skip with a reason when absent."""
    if not config.RIDDLES_DIR.is_dir():
        pytest.skip(f"shared datasets not found at {config.DATASETS_DIR} (set JUDGEKIT_SHARED)")
    return config.DATASETS_DIR
