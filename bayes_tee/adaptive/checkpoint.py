"""An adaptive run's checkpoint: every scored call, the history, how the run ended and where the
last fit's chains were (the next step's warm start), in one file.

The file is a pickle of plain pandas and NumPy objects, written to a temporary file and moved into
place, so a run killed while writing leaves the previous checkpoint whole. Read only checkpoints you
wrote (a pickle runs code when read).

>>> write(Path("run.pkl"), scored, history, None)  # doctest: +SKIP
>>> read(Path("run.pkl")).bought  # the pool rows already bought  # doctest: +SKIP
"""

from __future__ import annotations

import os
import pickle
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from .._core.exceptions import FileError
from .._core.warm import SamplerState

#: The checkpoint format's version (a file of another version is refused, not misread); a
#: version-1 file (no sampler state) is read with none, its run's next step starting cold.
VERSION = 2


@dataclass(frozen=True)
class Checkpoint:
    """A run's state: ``data`` (every scored call, ``pool_index`` naming the pool rows bought),
    ``history`` (one row per step), ``stopped`` (``None`` while it runs) and ``state`` (the
    last fit's :class:`~bayes_tee._core.warm.SamplerState`, or ``None``).
    """

    data: pd.DataFrame
    history: pd.DataFrame
    stopped: str | None
    state: SamplerState | None = None

    @property
    def bought(self) -> list:
        """The pool index of every call bought."""
        if "pool_index" not in self.data.columns:
            return []
        return self.data["pool_index"].dropna().tolist()


def write(
    path: Path | None,
    data: pd.DataFrame,
    history: list[dict],
    stopped: str | None,
    state: SamplerState | None = None,
) -> None:
    """Write the run's state to ``path`` atomically (nothing without a path)."""
    if path is None:
        return
    warm = None if state is None else asdict(state)  # plain objects: read back by SamplerState(**warm)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        pickle.dump(
            {"version": VERSION, "data": data, "history": pd.DataFrame(history), "stopped": stopped,
             "state": warm},
            f,
        )  # fmt: skip
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
    if not isinstance(saved, dict) or saved.get("version") not in (1, VERSION):
        raise FileError(f"{path}: not a checkpoint of this version of bayes_tee; delete it to start afresh.")
    warm = saved.get("state")
    state = None if warm is None else SamplerState(**warm)
    return Checkpoint(saved["data"], saved["history"], saved["stopped"], state)
