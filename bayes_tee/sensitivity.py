"""Does the answer hinge on the prior? Power-scaling diagnostics and refits under other priors.

Two complementary checks:

* :func:`power_scaling` (``post.sensitivity()``): the power-scaling diagnostic of Kallioinen
  et al. (2023) through :func:`arviz_stats.psense`. It perturbs the prior on the SDs (or the
  likelihood) by raising it to a power near 1, reweights the draws by importance sampling and
  measures how far each component's posterior moves (cumulative Jensen-Shannon distance per
  unit log-power). No refit. Above 0.05 for the prior means the prior is informative for that
  component; if the likelihood's value is then below 0.05 the data say little and the prior
  dominates, if it is also above 0.05 prior and data pull in different directions.
* :func:`prior_sensitivity`: refits under named prior presets (:mod:`bayes_tee.priors`) and
  tabulates each component's share of Var(theta_hat) and the TEE interval of theta under
  each, flagging a component whose top-k membership or interval changes.

The log densities are evaluated per draw on the model itself (PyMC graph, transforms removed,
vectorized over draws), so they hold for every likelihood form that keeps its parameters in
the posterior: balanced, augmented (through the marginal model's likelihood) and marginal fits always; cell-level and GLMM fits while the random
effects are in memory (not after ``save`` without ``keep_effects``).

>>> post.sensitivity()                                     # doctest: +SKIP
>>> s = prior_sensitivity(df, outcome="score", item="item", prompt="prompt",
...                       priors=["default", "half_normal"])  # doctest: +SKIP
>>> s.table(); s.plot()                                     # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import xarray as xr
from arviz_stats import psense

from .exceptions import DiagnosticWarning
from .priors import PriorSpec, get_prior
from .trees import draws_tree, group

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .posterior import Posterior

#: Power-scaling sensitivity above this is "sensitive" (Kallioinen et al. 2023).
PSENS_THRESHOLD = 0.05


def log_densities(post: "Posterior") -> tuple[xr.Dataset, xr.DataArray]:
    """Log prior of every free parameter and the total log likelihood, per draw.

    Returns
    -------
    (xarray.Dataset, xarray.DataArray)
        Log prior per free variable (dims ``chain, draw``) and the log likelihood (the
        observed terms and potentials of the model), both on the constrained scale.

    Raises
    ------
    ValueError
        When a free parameter the likelihood needs is not in the posterior (a cell-level or
        GLMM fit loaded from a file saved without ``keep_effects``).
    """
    import pytensor
    import pytensor.tensor as pt
    from pymc.model.transform.conditioning import remove_value_transforms
    from pytensor.graph.replace import vectorize_graph

    from .model import build_model

    # the augmented model's latent cell means are not kept; the marginal model has the same
    # parameters and priors and its potentials are the likelihood of the data, exactly
    method = "marginal" if post.method == "augmented" else post.method
    model = remove_value_transforms(build_model(post.design, post.priors, method=method))
    free = list(model.free_RVs)
    P = group(post.idata, "posterior")
    missing = [rv.name for rv in free if rv.name not in P]
    if missing:
        raise ValueError(
            f"The posterior lacks {missing[:3]} (the {post.method!r} model's random effects), so its "
            "likelihood cannot be evaluated; refit, or save with keep_effects=True."
        )
    values = [model.rvs_to_values[rv] for rv in free]
    outs = [*model.logp(vars=free, sum=False), model.logp(vars=[*model.potentials, *model.observed_RVs])]
    batched = [pt.tensor(name=v.name, dtype=v.dtype, shape=(None, *v.type.shape)) for v in values]
    fn = pytensor.function(batched, vectorize_graph(outs, replace=dict(zip(values, batched))),
                           mode="FAST_COMPILE", on_unused_input="ignore")
    n_chain, n_draw = P.sizes["chain"], P.sizes["draw"]
    res = fn(*[P[rv.name].values.reshape(n_chain * n_draw, *P[rv.name].shape[2:]).astype(v.dtype)
               for rv, v in zip(free, values)])

    def per_draw(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, float).reshape(n_chain * n_draw, -1).sum(axis=1)
        return x.reshape(n_chain, n_draw)

    coords = {"chain": P["chain"].values, "draw": P["draw"].values}
    prior = xr.Dataset({rv.name: (("chain", "draw"), per_draw(r)) for rv, r in zip(free, res[:-1])}, coords=coords)
    return prior, xr.DataArray(per_draw(res[-1]), dims=("chain", "draw"), coords=coords)


def power_scaling(post: "Posterior", *, delta: float = 0.01, threshold: float = PSENS_THRESHOLD) -> pd.DataFrame:
    """Power-scaling prior and likelihood sensitivity of each variance component.

    The prior that is scaled is the one on the SDs (the choice the presets vary); the
    quantities checked are the components on the variance scale (the population variance of
    the levels for fixed judges/temperatures) and the grand mean.

    Parameters
    ----------
    post : Posterior
    delta : float
        Finite-difference step of the log power.
    threshold : float
        Sensitivity above which a component is flagged (0.05, as in priorsense).

    Returns
    -------
    pandas.DataFrame
        ``component, prior, likelihood, diagnosis``: ``diagnosis`` is ``"-"``,
        ``"prior-data conflict"`` (both above ``threshold``) or ``"strong prior / weak
        likelihood"`` (prior above, likelihood below).

    Examples
    --------
    >>> post.sensitivity()  # doctest: +SKIP
    """
    log_prior, log_lik = log_densities(post)
    sd_vars = [t.var_name for t in post.terms if t.var_name in log_prior and t.kind != "fixed"]
    draws = post.component_draws()
    quantities = {t.label: draws.sel(component=t.label, drop=True) for t in post.terms
                  if not post._fixed_residual(t)}
    quantities["mu"] = group(post.idata, "posterior")["mu"]
    tree = draws_tree(
        xr.Dataset(quantities),
        log_prior=log_prior[sd_vars],
        log_likelihood=xr.Dataset({"loglik": log_lik}),
    )
    # power alpha in [1 / (1 + delta), 1 + delta]: the finite difference of Kallioinen et al.
    alphas = (1.0 / (1.0 + delta), 1.0 + delta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # psense's own divide warnings on constant draws
        prior = psense(tree, group="prior", group_var_names=sd_vars, alphas=alphas)
        lik = psense(tree, group="likelihood", alphas=alphas)
    rows = []
    for name in quantities:
        p, lk = float(prior[name]), float(lik[name])
        if p >= threshold and lk >= threshold:
            dx = "prior-data conflict"
        elif p >= threshold:
            dx = "strong prior / weak likelihood"
        else:
            dx = "-"
        rows.append({"component": name, "prior": p, "likelihood": lk, "diagnosis": dx})
    out = pd.DataFrame(rows)
    out.attrs.update(threshold=threshold, priors=post.priors.name, scaled=sd_vars)
    return out


@dataclass
class PriorSensitivity:
    """Shares of Var(theta_hat) and the theta interval under several priors.

    Attributes
    ----------
    results : pandas.DataFrame
        Long table: ``prior, quantity, median, low, high, rank, diagnostics_ok`` where
        ``quantity`` is a component label (its share of Var(theta_hat)) or ``theta`` (the
        TEE interval); ``rank`` orders components by median share within a prior.
    reference : str
        The prior the others are compared with (the first one).
    top_k : int
        Size of the "top components" set whose membership is compared.
    posteriors : dict
        Prior name -> :class:`Posterior` (empty when built from a stored table).
    """

    results: pd.DataFrame
    reference: str
    top_k: int = 3
    posteriors: dict = field(default_factory=dict, repr=False)

    def table(self) -> pd.DataFrame:
        """``results`` with a ``flag`` column: why a row differs from the reference prior.

        A component is flagged when it enters or leaves the top-k under this prior, when its
        median lies outside the reference interval (or the reference median outside its
        interval), or when its interval is more than 1.5 times wider or narrower.
        """
        res = self.results.copy()
        ref = res[res["prior"] == self.reference].set_index("quantity")
        flags = []
        for _, row in res.iterrows():
            r = ref.loc[row["quantity"]]
            why = []
            if row["quantity"] != "theta" and (row["rank"] <= self.top_k) != (r["rank"] <= self.top_k):
                why.append(f"top-{self.top_k} membership")
            if not (r["low"] <= row["median"] <= r["high"]) or not (row["low"] <= r["median"] <= row["high"]):
                why.append("median outside the other interval")
            ratio = (row["high"] - row["low"]) / max(r["high"] - r["low"], 1e-300)
            if not 2 / 3 <= ratio <= 1.5:
                why.append(f"interval width x{ratio:.2f}")
            flags.append("; ".join(why))
        res["flag"] = flags
        return res

    def flagged(self) -> pd.DataFrame:
        """Only the rows with a flag."""
        t = self.table()
        return t[t["flag"] != ""].reset_index(drop=True)

    def plot(self, **kwargs) -> "Figure":
        """One panel per quantity: median and interval under each prior (flags in red)."""
        from .plots import plot_prior_sensitivity

        return plot_prior_sensitivity(self, **kwargs)

    @classmethod
    def from_table(cls, results: pd.DataFrame, top_k: int = 3) -> "PriorSensitivity":
        """Rebuild from a stored ``results`` table (the reference is its first prior)."""
        return cls(results.reset_index(drop=True), str(results["prior"].iloc[0]), top_k)


def prior_sensitivity(
    df: pd.DataFrame,
    outcome: str,
    item: str,
    prompt: str | None = None,
    judge: str | None = None,
    temperature: str | None = None,
    replicate: str | None = None,
    category: str | None = None,
    *,
    priors: list[str | PriorSpec] | None = None,
    level: float = 0.9,
    top_k: int = 3,
    **fit_kwargs,
) -> PriorSensitivity:
    """Refit under each prior and compare shares of Var(theta_hat) and the theta interval.

    Parameters
    ----------
    df, outcome, item, prompt, judge, temperature, replicate, category
        As in :func:`bayes_tee.fit_posterior`.
    priors : list of str or PriorSpec, optional
        Preset names or specs; the first is the reference. Default: every preset in
        :data:`bayes_tee.priors.PRESETS`, ``default`` first.
    level : float
        Credible level of the share intervals and of the theta (TEE) interval.
    top_k : int
        Flag a component that enters or leaves the ``top_k`` largest shares.
    **fit_kwargs
        Passed to :func:`bayes_tee.fit_posterior` (``draws``, ``random_seed``, ...).

    Returns
    -------
    PriorSensitivity

    Examples
    --------
    >>> s = prior_sensitivity(df, outcome="score", item="item", prompt="prompt",
    ...                       priors=["default", "exponential"], random_seed=1)  # doctest: +SKIP
    >>> s.flagged()  # doctest: +SKIP
    """
    from .fit import fit_posterior
    from .priors import PRESETS

    specs = [get_prior(p) for p in (priors or list(PRESETS))]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"Prior names must be distinct (got {names}); give custom specs their own name.")
    roles = dict(prompt=prompt, judge=judge, temperature=temperature, replicate=replicate, category=category)
    rows, posts = [], {}
    for spec in specs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DiagnosticWarning)  # reported per prior in the table
            post = fit_posterior(df, outcome, item, **roles, priors=spec, **fit_kwargs)
            shares = post.shares(level=level)
            th = post.theta(level=level)
        posts[spec.name] = post
        ok = post.diagnostics()["ok"]
        shares = shares.assign(rank=shares["share_median"].rank(ascending=False, method="first").astype(int))
        for _, s in shares.iterrows():
            rows.append({"prior": spec.name, "quantity": s["component"], "median": s["share_median"],
                         "low": s["share_low"], "high": s["share_high"], "rank": s["rank"], "diagnostics_ok": ok})
        rows.append({"prior": spec.name, "quantity": "theta", "median": th["estimate"].iloc[0],
                     "low": th["tee_low"].iloc[0], "high": th["tee_high"].iloc[0], "rank": 0, "diagnostics_ok": ok})
    results = pd.DataFrame(rows)
    results.attrs.update(level=level, scale=next(iter(posts.values())).scale)
    return PriorSensitivity(results, specs[0].name, top_k, posts)
