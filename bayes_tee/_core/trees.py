"""The ``xarray.DataTree`` a fit keeps, and plain-Dataset views of its groups.

Every posterior in bayes_tee is an ArviZ 1 ``DataTree`` with a ``posterior`` group (the draws,
dims ``chain, draw, ...``), the sampler's ``sample_stats`` and, once saved, ``constant_data``
(the per-cell sufficient statistics).

>>> import numpy as np, xarray as xr
>>> post = xr.Dataset({"mu": (("chain", "draw"), np.zeros((2, 5)))})
>>> tree = draws_tree(post)
>>> sorted(tree.children)
['posterior']
>>> group(tree, "posterior")["mu"].shape
(2, 5)
"""

from __future__ import annotations

import xarray as xr

from .exceptions import UnknownNameError


def draws_tree(
    posterior: xr.Dataset, sampled: xr.DataTree | None = None, **groups: xr.Dataset
) -> xr.DataTree:
    """Build the ``DataTree`` a fit keeps.

    ``posterior``, the numeric ``sample_stats`` of ``sampled`` (when it has them) and any
    further ``groups`` (name -> Dataset).

    Parameters
    ----------
    posterior : xarray.Dataset
        Draws with dims ``chain, draw, ...``.
    sampled : xarray.DataTree, optional
        The sampler's output, whose numeric ``sample_stats`` are kept (divergences, step
        sizes, tree depths, energies).
    **groups : xarray.Dataset
        Further groups, e.g. ``constant_data``.

    Returns
    -------
    xarray.DataTree
    """
    nodes = {"posterior": posterior}
    if sampled is not None and "sample_stats" in sampled.children:
        stats = sampled["sample_stats"].to_dataset()
        # numeric statistics only: nutpie's per-draw divergence messages are strings that
        # would double a saved posterior's size (whether a draw diverged is kept)
        nodes["sample_stats"] = stats[[v for v in stats.data_vars if stats[v].dtype.kind in "biuf"]]
    nodes.update(groups)
    return xr.DataTree.from_dict(nodes)


def group(tree: xr.DataTree, name: str = "posterior") -> xr.Dataset:
    """Group ``name`` of ``tree`` as an ``xarray.Dataset`` (a view: cheap, read-only).

    Raises
    ------
    KeyError
        When the tree has no such group.
    """
    if name not in tree.children:
        raise UnknownNameError(f"The posterior has no group {name!r}; it has {sorted(tree.children)}.")
    return tree[name].dataset
