"""An adaptive run's checkpoint: every scored call, the history and how the run ended, in one file.

The file is a pickle of plain pandas objects, written to a temporary file and moved into place,
so a run killed while writing leaves the previous checkpoint whole. Read only checkpoints you
wrote (a pickle runs code when read).

>>> write(Path("run.pkl"), scored, history, None)  # doctest: +SKIP
>>> read(Path("run.pkl")).bought  # the pool rows already bought  # doctest: +SKIP
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .._core.exceptions import FileError

#: The checkpoint format's version (a file of another version is refused, not misread).
VERSION = 1


@dataclass(frozen=True)
class Checkpoint:
    """A run's state: ``data`` (every scored call, ``pool_index`` naming the pool rows bought),
    ``history`` (one row per step) and ``stopped`` (``None`` while it runs).
    """

    data: pd.DataFrame
    history: pd.DataFrame
    stopped: str | None

    @property
    def bought(self) -> list:
        """The pool index of every call bought."""
        if "pool_index" not in self.data.columns:
            return []
        return self.data["pool_index"].dropna().tolist()


def write(path: Path | None, data: pd.DataFrame, history: list[dict], stopped: str | None) -> None:
    """Write the run's state to ``path`` atomically (nothing without a path)."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        pickle.dump(
            {"version": VERSION, "data": data, "history": pd.DataFrame(history), "stopped": stopped}, f
        )
    os.replace(tmp, path)


def read(path: Path) -> Checkpoint:
    """The run's state written by :func:`write`, or one error naming the file."""
    try:
        with open(path, "rb") as f:
            saved = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as e:
        raise FileError(
            f"{path}: not an adaptive run's checkpoint ({e}); delete it to start afresh."
        ) from None
    if not isinstance(saved, dict) or saved.get("version") != VERSION:
        raise FileError(f"{path}: not a checkpoint of this version of bayes_tee; delete it to start afresh.")
    return Checkpoint(saved["data"], saved["history"], saved["stopped"])
