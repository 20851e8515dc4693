"""Does the answer hinge on the prior? Refits under named prior presets.

:func:`prior_sensitivity` refits under presets (:mod:`bayes_tee._core.priors`) and tabulates each
component's share of Var(theta_hat) and the TEE interval of theta under each, flagging a
component whose top-k membership or interval changes. The no-refit check is the power-scaling
diagnostic, :func:`bayes_tee.posterior.power_scaling.power_scaling` (``post.sensitivity()``).

>>> s = prior_sensitivity(df, outcome="score", item="item", prompt="prompt",
...                       priors=["default", "half_normal"])  # doctest: +SKIP
>>> s.table(); s.plot()                                     # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from .. import plots
from .._core.exceptions import ArgumentError, DiagnosticWarning
from .._core.priors import PRESETS, PriorSpec, get_prior
from .fit import fit_posterior

if TYPE_CHECKING:
    from matplotlib.figure import Figure


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
        return plots.plot_prior_sensitivity(self.table(), self.reference, **kwargs)

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
        :data:`bayes_tee._core.priors.PRESETS`, ``default`` first.
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
    specs = [get_prior(p) for p in (priors or list(PRESETS))]
    names = [s.name for s in specs]
    if len(set(names)) != len(names):
        raise ArgumentError(f"Prior names must be distinct (got {names}); give custom specs their own name.")
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
            rows.append(
                {
                    "prior": spec.name,
                    "quantity": s["component"],
                    "median": s["share_median"],
                    "low": s["share_low"],
                    "high": s["share_high"],
                    "rank": s["rank"],
                    "diagnostics_ok": ok,
                }
            )
        rows.append(
            {
                "prior": spec.name,
                "quantity": "theta",
                "median": th["estimate"].iloc[0],
                "low": th["tee_low"].iloc[0],
                "high": th["tee_high"].iloc[0],
                "rank": 0,
                "diagnostics_ok": ok,
            }
        )
    results = pd.DataFrame(rows)
    results.attrs.update(level=level, scale=next(iter(posts.values())).scale)
    return PriorSensitivity(results, specs[0].name, top_k, posts)
