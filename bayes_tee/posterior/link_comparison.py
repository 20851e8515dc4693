"""LPM vs logit GLMM: the same decomposition under both links (Messing 2026 App. G, Table 11).

The linear probability model puts shares on the probability scale; the GLMM on the logit scale,
where the same probability gap is larger near 0 or 1 (at a 94% base rate a judge gap of a few
points is a large logit gap). Absolute sizes are not comparable across the two; rankings are,
so the comparison reports both sets of shares of Var(theta_hat) at the observed design, their
ranks, and the Spearman rank correlation with a posterior interval (draws of the two fits
paired at random, ranks taken per pair).

>>> cmp = post_lpm.compare(post_glmm)      # doctest: +SKIP
>>> cmp.table; cmp.spearman; cmp.plot()   # doctest: +SKIP

Fitting both links to one data set is :func:`bayes_tee.tee.refits.compare_links`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from .._core import diagnostics as diag
from .._core.exceptions import ArgumentError
from .._core.intervals import check_level, summarize_samples
from ..families import get_family
from ..plots import plot_link_comparison
from . import components as comp

if TYPE_CHECKING:
    from .fit import Fit


@dataclass
class LinkComparison:
    """Result of :func:`compare_links` / :meth:`bayes_tee.Posterior.compare`.

    Attributes
    ----------
    table : pandas.DataFrame
        ``component, lpm_share_median/low/high, glmm_share_median/low/high, lpm_rank,
        glmm_rank`` (rank 1 = largest median share), ordered by the LPM share.
    spearman : dict
        ``median, low, high`` (90%) of the per-draw Spearman correlation of the shares, and
        ``at_medians`` (of the median shares, the number Messing (2026) Table 11 reports).
    lpm, glmm : Fit
    """

    table: pd.DataFrame
    spearman: dict
    lpm: Fit
    glmm: Fit

    @property
    def warning(self) -> str | None:
        """The failed diagnostics of either fit, or ``None``."""
        msgs = [m for m in (diag.message(self.lpm.diagnostics()), diag.message(self.glmm.diagnostics())) if m]
        return "; ".join(msgs) or None

    def plot(self, **kwargs):
        """Paired share bars with intervals (returns the Figure)."""
        return plot_link_comparison(self, **kwargs)


def _share_draws(post: Fit, labels: list[str]) -> np.ndarray:
    c = comp.contributions(post.component_draws(), post.terms, post.design.counts)
    x = c.sel(component=labels).values.reshape(-1, len(labels))
    total = c.sum("component").values.reshape(-1, 1)
    return x / total


def link_comparison(
    lpm: Fit, glmm: Fit, *, level: float = 0.9, random_seed: int | None = 0
) -> LinkComparison:
    """Compare a linear-model fit with a GLMM fit of the same data (see the module docstring)."""
    if get_family(lpm.family).latent:
        lpm, glmm = glmm, lpm
    if get_family(lpm.family).latent or not get_family(glmm.family).latent:
        raise ArgumentError(
            "compare a family='gaussian' fit with a GLMM fit (family='binomial', 'ordinal' or "
            f"'ordinal_probit') of the same data; got {lpm.family!r} and {glmm.family!r}."
        )
    labels = [t.label for t in lpm.terms if t.label in {u.label for u in glmm.terms}]
    a, b = _share_draws(lpm, labels), _share_draws(glmm, labels)
    rng = np.random.default_rng(random_seed)
    n = min(len(a), len(b))
    a, b = a[rng.permutation(len(a))[:n]], b[rng.permutation(len(b))[:n]]
    # Spearman per pair of draws = Pearson correlation of the ranks, one vectorized expression
    ra, rb = (
        r - r.mean(axis=1, keepdims=True) for r in (stats.rankdata(a, axis=1), stats.rankdata(b, axis=1))
    )
    rho = (ra * rb).sum(axis=1) / np.sqrt((ra**2).sum(axis=1) * (rb**2).sum(axis=1))
    table = pd.DataFrame({"component": labels})
    table = pd.concat(
        [
            table,
            summarize_samples(a, level, "lpm_share_"),
            summarize_samples(b, level, "glmm_share_"),
        ],
        axis=1,
    )
    table["lpm_rank"] = stats.rankdata(-table["lpm_share_median"], method="min").astype(int)
    table["glmm_rank"] = stats.rankdata(-table["glmm_share_median"], method="min").astype(int)
    table = table.sort_values("lpm_share_median", ascending=False).reset_index(drop=True)
    q = (1 - check_level(level)) / 2
    spearman = {
        "median": float(np.median(rho)),
        "low": float(np.quantile(rho, q)),
        "high": float(np.quantile(rho, 1 - q)),
        "at_medians": float(stats.spearmanr(table["lpm_share_median"], table["glmm_share_median"])[0]),
    }
    table.attrs.update(
        spearman=spearman,
        level=level,
        note=(
            f"Linear-model shares on the outcome's scale, {get_family(glmm.family).model_label} shares on "
            "its latent scale (Messing 2026 Table 11)."
        ),
    )
    return LinkComparison(table, spearman, lpm, glmm)
