"""Where an answer is written: a file name in a folder that can be written, checked before the
work that fills it (a report, a saved posterior), so a bad path costs nothing.

>>> writable_file("/tmp")
Traceback (most recent call last):
...
bayes_tee._core.exceptions.FileError: '/tmp' is a folder: give a file name, e.g. '/tmp/...'.
"""

from __future__ import annotations

import os
from pathlib import Path

from .exceptions import FileError


def writable_file(path: str | Path, example: str = "posterior.nc") -> Path:
    """``path`` as a ``Path``, after checking that it names a file that can be written (its
    folder is made when missing).

    Raises
    ------
    FileError
        For a folder, or a place that cannot be written, with the fix.
    """
    path = Path(path)
    if path.is_dir():
        raise FileError(f"{str(path)!r} is a folder: give a file name, e.g. {str(path / example)!r}.")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise FileError(f"Cannot write {str(path)!r} ({err.strerror}): choose a writable folder.") from None
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise FileError(f"Cannot write {str(path)!r} (permission denied): choose a writable folder.")
    return path
