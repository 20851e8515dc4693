"""Pad a nearly balanced design to the complete one it came from, for the augmented model.

Real factorials lose a few calls (unparseable judge replies), a few cells, or an item or two
from a category. The data are then no longer balanced, and the exact balanced shortcut
(:mod:`bayes_tee.likelihoods.anova`) no longer applies as it stands. It applies again after *data
augmentation*: add, for each cell short of the full replicate count ``R``, one latent value
``z_c``, the mean of its ``k_c = R - n_c`` missing calls. Given the model, ``z_c`` is Normal
around the cell's location with variance ``sigma_rho^2 / k_c``, independent of the observed
calls. Writing the observed mean and ``z_c`` as the completed cell mean
``w_c = (n_c ybar_c + k_c z_c) / R`` and the contrast ``d_c = ybar_c - z_c``:

- ``w`` has the balanced design's distribution, so the stratum sums of squares of the
  completed cell-mean array carry the likelihood, computed from the latent array in the graph;
- ``d_c ~ N(0, sigma_rho^2 (1/n_c + 1/k_c))``, independent of ``w``, joins the within-cell
  sums of squares of the observed calls;
- the map ``(ybar, z) -> (w, d)`` is linear with a constant Jacobian.

Integrating the ``z`` out returns the likelihood of the observed data exactly (the model is
consistent under marginalisation), so the posterior of every variance component, fixed effect
and mean is the exact one; the sampler only carries the latent values alongside. Cells with no
calls (``n_c = 0``) have ``w_c = z_c`` and no contrast term. Categories of unequal size need no
completion: the strata likelihood takes any sizes
(:class:`~bayes_tee.likelihoods.anova.CategoryMeans`).

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> d = bt.validate_design(df.iloc[3:], outcome="score", item="item", prompt="prompt",
...                        judge="judge", temperature="temperature", replicate="replicate")
>>> aug = augment_layout(d)
>>> aug.design.complete, aug.n_latent
(True, 1)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...design.design import Design

#: ``auto`` takes the item blocks (:mod:`bayes_tee.likelihoods.blocks.density`) when at most
#: this share of the cells of the full cross is short or empty. Their cost per evaluation is
#: ``sum_i s_i^3 / 2`` for ``s_i`` short cells in item ``i`` (a third of the item's cells at
#: 5% of calls lost with 8 replicates, 57% at 10%); beyond this share the full cross is
#: mostly invented (sparse, incomplete-block layouts) and the marginal or cell model is the
#: better form. The augmented model (a latent value per short cell) shared the threshold.
MAX_LATENT_SHARE = 0.6


@dataclass(frozen=True)
class Augmentation:
    """A design padded to balance, with the bookkeeping of what is latent.

    Attributes
    ----------
    design : Design
        The completed design: every cell present with ``R`` calls.
    replicates : int
        ``R``, the replicate count of every completed cell.
    shape : tuple of int
        Shape of the completed cell-mean array (facets in ``design.facets`` order).
    observed_sum : numpy.ndarray
        ``n_c * ybar_c / R`` per completed cell (flat, zero where no call was observed).
    latent_index : numpy.ndarray
        Flat positions of the cells with fewer than ``R`` calls.
    latent_k, latent_n, latent_mean : numpy.ndarray
        Missing and observed call counts and the observed mean (0 when none) of those cells.
    within_df, within_ss : float
        Degrees of freedom and sum of squares within the observed cells.
    """

    design: Design
    replicates: int
    shape: tuple[int, ...]
    observed_sum: np.ndarray
    latent_index: np.ndarray
    latent_k: np.ndarray
    latent_n: np.ndarray
    latent_mean: np.ndarray
    within_df: float
    within_ss: float

    @property
    def n_latent(self) -> int:
        """Number of latent cell values the sampler carries."""
        return int(self.latent_index.size)

    @property
    def latent_share(self) -> float:
        """Latent cells as a share of the completed cells."""
        return self.n_latent / float(np.prod(self.shape))


def augment_layout(design: Design) -> Augmentation:
    """Complete ``design`` to a balanced one; see the module docstring.

    Parameters
    ----------
    design : Design
        A Gaussian design (any balance).

    Returns
    -------
    Augmentation
    """
    cells = design.cells
    R = int(cells["n"].max())
    levels = dict(design.levels)
    shape = tuple(len(levels[f]) for f in design.facets)
    flat = np.ravel_multi_index(tuple(cells[f].to_numpy() for f in design.facets), shape)
    n_full = np.zeros(int(np.prod(shape)), dtype=int)
    n_full[flat] = cells["n"].to_numpy()
    mean_full = np.zeros(n_full.size)
    mean_full[flat] = cells["mean"].to_numpy()
    latent = np.flatnonzero(n_full < R)
    grid = np.indices(shape).reshape(len(shape), -1)
    padded_cells = pd.DataFrame({f: grid[j] for j, f in enumerate(design.facets)})
    padded_cells["n"] = R
    padded_cells["mean"] = mean_full
    padded_cells["ss"] = 0.0
    padded = dataclasses.replace(
        design,
        cells=padded_cells,
        balanced=design.categories is None or len(set(np.bincount(design.item_category))) == 1,
        row_cell=None,
        row_y=None,
    )
    observed = cells["n"].to_numpy()
    return Augmentation(
        design=padded,
        replicates=R,
        shape=shape,
        observed_sum=n_full * mean_full / R,
        latent_index=latent,
        latent_k=R - n_full[latent],
        latent_n=n_full[latent],
        latent_mean=mean_full[latent],
        within_df=float((observed - 1).sum()),
        within_ss=float(cells["ss"].sum()),
    )


def latent_share(design: Design) -> tuple[float, float]:
    """The share of the full cross's cells short of the most calls a cell holds (empty ones
    included), and the most the item blocks or the augmented model take (:data:`MAX_LATENT_SHARE`).
    """
    n = design.cells["n"].to_numpy()
    full = int((n == n.max()).sum())
    return 1.0 - full / float(design.n_full_cells), MAX_LATENT_SHARE
