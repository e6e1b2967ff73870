"""The one all-or-nothing file writer: stage a sibling temporary file, then rename it.

Readers see either the old file or the whole new one. A file that is replaced keeps its mode
(a study chmod-ed 600 stays private whatever the umask of the rerun); a new file gets the mode a
plain ``open()`` would create (``0o666`` minus the umask), not ``mkstemp``'s private ``0o600``,
so a shared study folder stays shared.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _mode_for(target: Path) -> int:
    """The existing file's permission bits, else those of a new file under the umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Create or replace ``path`` with what ``write`` puts in a staged file, all or nothing.

    Args:
        path: Destination file; its folder is created if needed.
        write: Called with the staged file's path; writes the full content there (e.g.
            ``frame.to_parquet``, ``figure.savefig``). If it raises, ``path`` is untouched.

    Returns:
        The destination path.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=f".tmp{target.suffix}", dir=target.parent
    )
    os.close(handle)
    staged = Path(temp_name)
    try:
        write(staged)
        with staged.open("rb") as stream:
            os.fsync(stream.fileno())
        staged.chmod(_mode_for(target))
        os.replace(staged, target)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return target


def atomic_write_text(path: str | Path, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically; newlines are written exactly as given.

    Args:
        path: Destination file; its folder is created if needed.
        text: Full content.
        encoding: Text encoding of the file.

    Returns:
        The destination path.
    """
    return atomic_write(path, lambda staged: staged.write_bytes(text.encode(encoding)))


def atomic_copy(source: str | Path, path: str | Path) -> Path:
    """Copy ``source`` to ``path`` atomically (keeping ``path``'s mode, not the source's)."""
    return atomic_write(path, lambda staged: staged.write_bytes(Path(source).read_bytes()))
