"""The ordinal family: Likert and other graded integer scores through a cumulative-link GLMM.

A score ``y`` in ``K >= 3`` ordered categories is a latent value ``eta + e`` cut at ``K - 1``
thresholds, ``e`` logistic (``family="ordinal"``) or standard normal (``"ordinal_probit"``).
The latent linear predictor ``eta`` has the TEE model's crossed random effects exactly as the
logit GLMM does (:mod:`bayes_tee.likelihoods.logit_glmm.layout`); the residual's variance is the
link's constant (pi^2/3 or 1), so components and shares are on the latent scale. The cutpoints
are the whole panel's (``thresholds="common"``) or each judge's own (``"judge"``: scale-use
heterogeneity, the rater's differential item functioning).

>>> ORDINAL.residual_variance == BINOMIAL_RESIDUAL
True
>>> ORDINAL_PROBIT.scale_note
' (on the probit scale)'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._core.exceptions import DesignError
from .base import Family

#: The logistic residual's variance, as for the binomial family.
BINOMIAL_RESIDUAL = float(np.pi**2 / 3)
#: Sampler defaults. With every non-centred level but the cell effect's adapted to its data
#: (:func:`~bayes_tee.likelihoods.logit_glmm.layout.level_adaptation`) the slowest SDs mix at 0.16-0.34
#: ESS a draw on the Likert benchmark (benchmarks/bench_ordinal.py, 4,080 scores, five random
#: terms, six data sets: bulk ESS 661-1,354 in 4 x 1,000 draws) and at 0.10 or more on small
#: designs with one call per cell (40 items, two to four prompts: 400-728), so 2,000 per chain.
#: On a 40-item pilot with two calls per cell, target 0.8 left 2-4 divergences per fit at three
#: seeds, 0.9 left 0-1.
TUNE, DRAWS, TARGET_ACCEPT = 600, 2000, 0.9
#: Draws per chain when the calls repeat (a cell effect sampled, :func:`cell_draws`).
CELL_DRAWS = 3000
#: The fewest categories an ordinal outcome has (two are the binomial family's).
MIN_CATEGORIES = 3


@dataclass(frozen=True)
class Ordinal(Family):
    """Cumulative link on per-cell counts of each category."""

    def cell_counts(
        self, column: str, cells: Any, rows: Any, notes: list[str]
    ) -> tuple[Any, tuple[float, ...] | None]:
        """Each cell's calls per category (columns ``y0 .. y{K-1}``) and the categories: the
        distinct integer scores observed, in order. Integer values inside the range that no call
        used are not categories of the model, and are said in ``notes``.

        Raises
        ------
        DesignError
            Scores that are not whole numbers, fewer than three categories, or rows not in memory.
        """
        if rows is None:
            raise DesignError(
                f"family={self.name!r} counts each cell's calls per category, which needs the rows in "
                "memory: read parquet or dask data with .compute() first."
            )
        row_cell, y = rows
        if not np.all(np.isclose(y, np.round(y))):
            example = np.unique(y[~np.isclose(y, np.round(y))])[:3].tolist()
            raise DesignError(
                f"family={self.name!r} needs integer scores (ordered categories such as a 1-5 Likert "
                f"scale), but column {column!r} has values like {example}. Round or bin them, or use "
                "family='gaussian' for continuous scores."
            )
        values = np.unique(np.round(y))
        if len(values) < MIN_CATEGORIES:
            fix = "family='binomial' for two" if len(values) == 2 else "a score that varies"
            raise DesignError(
                f"family={self.name!r} needs {MIN_CATEGORIES} or more categories, but column {column!r} "
                f"holds {len(values)} ({values.tolist()}): use {fix}."
            )
        unused = sorted(set(range(int(values[0]), int(values[-1]) + 1)) - set(values.astype(int).tolist()))
        if unused:
            notes.append(
                f"Score(s) {unused} of column {column!r} were never given: the model's categories are "
                f"the {len(values)} values used ({', '.join(f'{v:g}' for v in values)})."
            )
        code = np.searchsorted(values, np.round(y))
        counts = np.zeros((len(cells), len(values)), dtype=np.int64)
        np.add.at(counts, (row_cell, code), 1)
        cells = cells.assign(**{f"y{k}": counts[:, k] for k in range(len(values))})
        return cells, tuple(float(v) for v in values)

    def has_cell_term(self, overdispersion: bool) -> bool:
        """The cell effect is there only with overdispersion (calls that repeat), as in the GLMM."""
        return bool(overdispersion)


def cell_draws(terms: list[str]) -> int | None:
    """:data:`CELL_DRAWS` when the model has a cell effect (random ``terms`` by label), else
    ``None`` (the family's draws). Its SD is told apart from the link's residual only by how a
    cell's few calls spread, and mixes at about 0.05 ESS a draw (``sigma_cell`` at two calls per
    cell of the small-facet designs: bulk ESS 187-374 in 4 x 1,000 draws); on those designs the
    SDs of the item and of its interactions, four variances nested in 12 calls of an item, mix at
    0.02-0.06 ESS a draw (five data sets of 2 prompts at 4 x 2,000 draws), so three of 45 fits
    still had an R-hat of 1.012-1.017 at 3,000 draws; at the default draws such a fit goes on
    (:data:`bayes_tee.tee.fit.EXTEND`).

    >>> cell_draws(["item", "prompt", "cell"]), cell_draws(["item", "prompt"])
    (3000, None)
    """
    return CELL_DRAWS if "cell" in terms else None


ORDINAL = Ordinal(
    name="ordinal",
    link="logit",
    model_label="cumulative-logit GLMM",
    scale="latent (logit)",
    tune=TUNE,
    draws=DRAWS,
    target_accept=TARGET_ACCEPT,
    default_method="ordinal",
    theta_variable="score_panel",
    fixed_residual=True,
    formula=True,
    residual_variance=BINOMIAL_RESIDUAL,
)

#: The probit link: the same model with a standard normal residual (variance 1).
ORDINAL_PROBIT = replace(
    ORDINAL,
    name="ordinal_probit",
    link="probit",
    model_label="cumulative-probit GLMM",
    scale="latent (probit)",
    default_method="ordinal_probit",
    residual_variance=1.0,
)
