"""The posterior file: DataTree netCDF (h5netcdf, compressed) with the design, priors, method
and package version in the attributes, and the per-cell sufficient statistics beside the draws.

No pickle: a file is readable without bayes_tee. :func:`read` refuses a file it cannot
interpret, naming the version that wrote it and the command that rewrites it.
:meth:`bayes_tee.Posterior.save` and :func:`bayes_tee.load` are the public doors.

>>> path = write("fit.nc", post_draws, idata, meta, cells)  # doctest: +SKIP
>>> idata, meta, cells = read(path)                       # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import xarray as xr

from .._core.exceptions import FileError, MissingFileError
from .._core.files import writable_file
from .._core.trees import draws_tree, group
from .._core.version import __version__

#: The layout of a posterior file; a new layout gets a new string.
FORMAT = "bayes_tee-posterior-1"


def save(post, path: str | Path, *, keep_effects: bool = False) -> Path:
    """Write a :class:`~bayes_tee.Posterior`: its SDs, grand mean, fixed effects (and
    ``p_panel``; an ordinal fit's cutpoints, their gaps and ``score_panel``), sampler
    statistics, design, priors, method, info and per-cell statistics (the covariates' among
    them), every slope (a random slope's SD and level coordinates); the random-effect vectors
    only with ``keep_effects``.
    """
    draws = group(post.idata, "posterior")
    extra = ("p_panel", "score_panel", "cutpoints", "cutpoint_gaps", "judge_log_spread")
    names = [t.var_name for t in post.terms] + ["mu"] + [v for v in extra if v in draws]
    cov = post.design.covariates
    if cov is not None:
        names += [s.var_name for s in cov.slopes] + [s.level_name for s in cov.slopes if s.level_name]
    meta = {
        "design": post.design.to_dict(),
        "priors": post.priors.to_dict(),
        "method": post.method,
        "info": post.info,
    }
    return write(path, draws if keep_effects else draws[names], post.idata, meta, post.design.cells)


def write(
    path: str | Path, posterior: xr.Dataset, sampled: xr.DataTree, meta: dict, cells: pd.DataFrame
) -> Path:
    """Write ``posterior`` (the draws to keep), the sampler statistics of ``sampled``, ``meta``
    and the per-cell statistics ``cells`` to ``path``; returns the path.
    """
    path = writable_file(path)
    meta = {"format": FORMAT, "version": __version__, **meta}
    post = posterior.assign_attrs(bayes_tee=json.dumps(meta))
    constant = xr.Dataset({c: ("cell", cells[c].to_numpy()) for c in cells.columns})
    tree = draws_tree(post, sampled, constant_data=constant)
    # compressed, as ArviZ 0.x wrote them: draws of SDs compress about twofold
    encoding = {
        f"/{name}": {v: {"zlib": True, "complevel": 4} for v in node.data_vars}
        for name, node in tree.children.items()
    }
    tree.to_netcdf(str(path), engine="h5netcdf", encoding=encoding)
    return path


def read(path: str | Path) -> tuple[xr.DataTree, dict, pd.DataFrame]:
    """The draws, the metadata and the per-cell statistics of a file written by :func:`write`.

    Raises
    ------
    MissingFileError
        No such file (also a ``FileNotFoundError``).
    FileError
        Not a bayes_tee posterior, a damaged one, or one in a format this version does not read.
    """
    path = Path(path)
    if not path.exists():
        raise MissingFileError(f"No file {str(path)!r}.")
    try:
        with xr.open_datatree(str(path), engine="h5netcdf") as opened:
            idata = opened.load()
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise FileError(
            f"{str(path)!r} is not a bayes_tee posterior (cannot read it as netCDF: {err}); "
            "write one with Posterior.save() or `bayes-tee fit`."
        ) from None
    raw = idata["posterior"].attrs.get("bayes_tee") if "posterior" in idata.children else None
    if raw is None:
        raise FileError(
            f"{str(path)!r} is not a bayes_tee posterior (no 'bayes_tee' attribute); "
            "write it with Posterior.save()."
        )
    try:
        meta = json.loads(raw)
    except (json.JSONDecodeError, TypeError) as err:
        raise FileError(
            f"{str(path)!r} is a damaged bayes_tee posterior (its metadata: {err}); save it again."
        ) from None
    missing = [
        k for k in ("format", "design", "priors", "method") if not isinstance(meta, dict) or k not in meta
    ]
    if missing:
        raise FileError(
            f"{str(path)!r} is a damaged bayes_tee posterior (its metadata lacks {missing}); save it again."
        )
    if meta.get("format") != FORMAT:
        raise FileError(
            f"{str(path)!r} was written by bayes_tee {meta.get('version', '?')} in format "
            f"{meta.get('format')!r}; bayes_tee {__version__} reads {FORMAT!r}. Load it with the version "
            "that wrote it, or refit the data and save again with this one "
            "(`bayes-tee fit data.csv ... --out file.nc`, or Posterior.save)."
        )
    cells = group(idata, "constant_data").to_dataframe().reset_index(drop=True)
    return idata, meta, cells
