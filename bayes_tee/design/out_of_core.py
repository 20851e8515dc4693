"""Designs from data larger than memory: a dask DataFrame or a parquet dataset.

Every Gaussian and binomial likelihood reads only per-cell sufficient statistics (call count,
mean and within-cell sum of squares; :class:`~bayes_tee.design.design.Design`), so the rows never
need to be in memory at once. :func:`validate_dask` computes, with dask, what
:func:`~bayes_tee.design.roles.validate_design` computes with pandas: the rows dropped and why,
the outcome's mean and SD, whether it is 0/1, duplicated (cell, replicate) labels, and one row
per cell; the design is then assembled exactly as for a pandas frame. Two passes over the data:
the first for the counts and the grand mean, the second for the cells (scores centred on that
mean, so sums of squares keep their digits).

Cost model: two reads of the columns the roles name, and memory for one row per cell (plus
one per (cell, replicate) label while duplicates are checked, per partition).

What needs the rows stays with pandas: ``method="rows"`` and pairwise verdict labels
(``position=``) raise one clear error here.

>>> import bayes_tee as bt, dask.dataframe as dd  # doctest: +SKIP
>>> ddf = dd.read_parquet("calls/")  # doctest: +SKIP
>>> post = bt.fit_posterior(ddf, outcome="score", item="item", prompt="prompt")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError, FileError, MissingFileError, first_line
from .checks import MAX_OUTCOME
from .design import Design, Roles
from .losses import dropped_notes
from .roles import assemble_design, categories_of, check_roles, facet_codes

#: What ``fit_posterior`` and ``validate_dask`` take as out-of-core data.
OutOfCore = Any  # a dask DataFrame, or a path to a parquet file or dataset


def is_out_of_core(data: object) -> bool:
    """True for a dask DataFrame or a path (str or ``os.PathLike``) to parquet data.

    >>> is_out_of_core("calls.parquet"), is_out_of_core(pd.DataFrame())
    (True, False)
    """
    if isinstance(data, (str, os.PathLike)):
        return True
    return type(data).__module__.split(".")[0] == "dask" and hasattr(data, "npartitions")


def _dask():
    """``(dask, dask.dataframe)``: optional, and a second or more to import, so loaded on use."""
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as err:
        raise DesignError(
            "Reading a parquet path or a dask DataFrame needs dask: pip install 'bayes_tee[dask]' "
            "(or pass a pandas DataFrame)."
        ) from err
    return dask, dd


def cluster_scheduler(client: object):
    """What ``dask.compute(scheduler=...)`` takes for ``client``: the client itself, or ``None``
    (dask's default) without one.

    >>> cluster_scheduler(None) is None
    True
    """
    if client is None:
        return None
    if not ("Client" in type(client).__name__ and hasattr(client, "get")):
        raise DesignError(
            f"client= takes a dask.distributed Client, got {type(client).__name__}. Start one with "
            "distributed.Client(...) (pip install 'bayes_tee[cluster]'), or leave client=None."
        )
    if getattr(client, "status", "running") != "running":
        raise DesignError(f"The dask client passed as client= is {client.status!r}, not running.")
    return client


#: The file names ``dask.dataframe.read_parquet`` reads in a dataset folder.
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")


def _parquet_parts(path: str) -> list[str]:
    """The parquet files of a dataset folder (hidden and ``_metadata`` files aside)."""
    return sorted(
        os.path.join(root, name)
        for root, _, names in os.walk(path)
        for name in names
        if name.endswith(PARQUET_SUFFIXES) and not name.startswith(("_", "."))
    )


def _check_parts(path: str, columns: list[str]) -> None:
    """Each part of a parquet dataset is parquet and holds every column asked for; the error
    names the first file that is not or does not (dask would fail in the middle of a pass).
    """
    import pyarrow.parquet as pq  # the dask extra's dependency: loaded with dask

    parts = _parquet_parts(path) if os.path.isdir(path) else [path]
    if not parts:
        raise FileError(
            f"No parquet files in the folder {path!r} (looked for {', '.join(PARQUET_SUFFIXES)}). "
            "Write the data with df.to_parquet(...) or pass a pandas DataFrame."
        )
    for part in parts:
        try:
            names = set(pq.read_schema(part).names)
        except Exception as err:  # pyarrow raises ArrowInvalid, OSError... on a foreign file
            raise FileError(
                f"{part!r} is not a parquet file ({type(err).__name__}: {first_line(err)}). "
                "Pass a parquet file or dataset folder; read a CSV with pandas.read_csv first."
            ) from None
        lacking = [c for c in columns if c not in names]
        if lacking and len(parts) > 1:
            raise FileError(
                f"Part {part!r} of the parquet dataset {path!r} has no column(s) {lacking}, which "
                "other parts have. Rewrite that part with every column, or remove it."
            )


def _compute(work: object, scheduler: object) -> object:
    """``dask.compute(work)``, with a failure reading the data as one package error."""
    dask, _ = _dask()
    try:
        (done,) = dask.compute(work, scheduler=scheduler)
    except (KeyError, OSError, ValueError, TypeError) as err:
        if isinstance(err, DesignError):
            raise
        first = first_line(err)
        raise FileError(
            f"The data could not be read out of core ({type(err).__name__}: {first}). Check that every "
            "part of the dataset holds the role columns with one type."
        ) from None
    return done


def _dask_frame(data: OutOfCore, columns: list[str]):
    _, dd = _dask()
    if isinstance(data, (str, os.PathLike)):
        path = os.fspath(data)
        if not os.path.exists(path):
            raise MissingFileError(f"No parquet file or dataset at {path!r}. Pass an existing path.")
        _check_parts(path, columns)
        try:
            data = dd.read_parquet(path)
        except Exception as err:  # dask wraps the engine's error in its own
            raise FileError(
                f"{path!r} could not be read as parquet ({type(err).__name__}: "
                f"{str(err).strip().splitlines()[-1]})."
            ) from None
    missing = [c for c in columns if c not in data.columns]
    if missing:
        return data  # check_roles names them with the available columns
    return data[columns]


def validate_dask(
    data: OutOfCore,
    *,
    outcome: str,
    item: str,
    prompt: str | None = None,
    judge: str | None = None,
    temperature: str | None = None,
    replicate: str | None = None,
    category: str | None = None,
    judge_effect: Literal["fixed", "random"] = "fixed",
    family: Literal["gaussian", "binomial"] = "gaussian",
    overdispersion: bool | None = None,
    warn: bool = True,
    client: object = None,
) -> Design:
    """:func:`~bayes_tee.design.roles.validate_design` for a dask DataFrame or a parquet path.

    Parameters
    ----------
    data : dask.dataframe.DataFrame or str or os.PathLike
        Long data, one row per scored call; a path is read with ``dask.dataframe.read_parquet``
        (a file or a dataset directory).
    outcome, item, prompt, judge, temperature, replicate, category, judge_effect, family, overdispersion, warn
        As for :func:`~bayes_tee.design.roles.validate_design`.
    client : distributed.Client, optional
        A ``dask.distributed`` client: both passes run on its cluster (a path is read by the
        workers), and this process receives only the per-cell table, the counts and any
        repeated labels, never the rows. Without it, dask's default scheduler (a client made
        current with ``Client(...).as_current()`` or ``set_as_default``, else local threads).

    Returns
    -------
    Design
        With the per-cell statistics; no per-row arrays.

    Raises
    ------
    DesignError
        As for pandas input, naming the column and the fix.
    """
    roles = Roles(outcome, item, prompt, judge, temperature, replicate, category, None)
    scheduler = cluster_scheduler(client)
    given = [c for c in roles.as_dict().values() if c is not None]
    ddf = _dask_frame(data, given)
    check_roles(pd.DataFrame(columns=list(ddf.columns)), roles)
    dtype = ddf[outcome].dtype
    if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)):
        raise DesignError(
            f"Outcome column {outcome!r} is not numeric (dtype {dtype}). Convert it to numbers "
            "before writing the parquet data; verdict labels (position=) need a pandas frame."
        )
    facet_cols = [c for c in (item, prompt, judge, temperature) if c is not None]
    y = ddf[outcome].astype(float)
    # pass 1: what is dropped and why, and the outcome's count, mean, range and 0/1-ness
    missing = {f"{outcome} is NaN": y.isna()}
    keep = ~y.isna()
    for role, col in roles.as_dict().items():
        if role == "outcome" or col is None:
            continue
        miss = ddf[col].isna() & keep
        missing[f"{col} ({role}) is missing"] = miss
        keep = keep & ~ddf[col].isna()
    yk = y[keep]
    stats = {
        "n_all": y.size,
        "n": yk.count(),
        "sum": yk.sum(),
        "inf": np.isinf(yk).sum(),
        "largest": yk.abs().max(),
        "non_binary": (~yk.isin([0.0, 1.0])).sum(),
        **{k: v.sum() for k, v in missing.items()},
    }
    stats = _compute(stats, scheduler)
    if stats["inf"]:
        raise DesignError(
            f"Outcome column {outcome!r} has {int(stats['inf'])} infinite value(s). "
            "Replace them with NaN (they are then dropped and counted) or fix the scores."
        )
    largest = float(stats["largest"]) if int(stats["n"]) else 0.0
    if largest > MAX_OUTCOME:
        raise DesignError(
            f"Outcome column {outcome!r} holds values as large as {largest:.3g}: the model works with "
            f"squared scores, which overflow in floating point beyond {MAX_OUTCOME:.0e}. Rescale it "
            "before writing the data."
        )
    dropped = {k: int(stats[k]) for k in missing if int(stats[k])}
    n = int(stats["n"])
    if n == 0:
        raise DesignError(f"No rows left after dropping {dropped}. Check that {outcome!r} holds the scores.")
    y_mean = float(stats["sum"]) / n
    # pass 2: one row per cell (scores centred on the mean), and duplicated replicate labels
    kept = ddf[keep].assign(_y=yk - y_mean)
    keys = facet_cols + ([category] if category is not None else [])
    kept = kept.assign(_y2=kept["_y"] ** 2)
    agg = kept.groupby(keys, dropna=False, observed=True).agg({"_y": ["count", "sum"], "_y2": "sum"})
    work = {"cells": agg}
    if replicate is not None:
        # one count per (cell, label), spread over as many partitions as the data: only the
        # repeated labels are ever gathered
        per_label = kept.groupby(keys + [replicate], dropna=False, observed=True).size(
            split_out=max(1, kept.npartitions)
        )
        work["dup"] = per_label[per_label > 1]
    done = _compute(work, scheduler)
    cell_table = done["cells"]
    cell_table.columns = ["n", "sum", "sum2"]
    cell_table = cell_table.reset_index()
    if replicate is not None:
        dup = done["dup"]
        if len(dup):
            example = {
                k: getattr(v, "item", lambda v=v: v)() for k, v in zip(keys + [replicate], dup.index[0])
            }
            raise DesignError(
                f"{int((dup - 1).sum())} row(s) repeat a (cell, {replicate!r}) combination, e.g. "
                f"{example}. Remove duplicated calls, or leave replicate=None to count every row "
                "of a cell as a replicate."
            )
    counts = dict(n_all=int(stats["n_all"]), n=n, y_mean=y_mean, binary=int(stats["non_binary"]) == 0)
    options = dict(judge_effect=judge_effect, family=family, overdispersion=overdispersion)
    return _design(cell_table, roles, dropped, counts, options, warn)


def _design(cell_table: pd.DataFrame, roles: Roles, dropped: dict, counts: dict, options: dict, warn: bool):
    """Assemble the design from the per-cell sums (centred on the grand mean)."""
    n, y_mean = counts["n"], counts["y_mean"]
    notes = dropped_notes(dropped, n, counts["n_all"])
    codes, levels, facets = facet_codes(cell_table, roles, notes)
    categories, item_category = categories_of(cell_table, roles, codes["item"], levels["item"], notes)
    # collapse facets with a single level (and the category column) into the cells of the model
    frame = pd.DataFrame({f: codes[f] for f in facets})
    frame[["n", "sum", "sum2"]] = cell_table[["n", "sum", "sum2"]].to_numpy()
    frame = frame.groupby(facets, sort=True).sum().reset_index()
    cnt = frame["n"].to_numpy(float)
    centred_mean = frame["sum"].to_numpy() / cnt
    cells = frame[facets].copy()
    cells["n"] = frame["n"].astype(np.int64)
    cells["mean"] = centred_mean + y_mean
    cells["ss"] = np.maximum(frame["sum2"].to_numpy() - cnt * centred_mean**2, 0.0)
    total_ss = float(frame["sum2"].sum())
    y_sd = float(np.sqrt(total_ss / (n - 1))) if n > 1 else 0.0
    return assemble_design(
        roles,
        facets,
        levels,
        categories,
        item_category,
        cells,
        notes,
        summary=dict(n_rows=n, dropped=dropped, y_mean=y_mean, y_sd=y_sd),
        non_binary=[] if counts["binary"] else ["values other than 0 and 1"],
        options=options,
        warn=warn,
    )
