"""The classical plug-in for balanced designs: ANOVA/EMS estimates truncated at zero (what REML
reports in a balanced design, singular fits included), Wald intervals and a parametric
bootstrap. These are the baselines the coverage studies hold the posterior against.

Both intervals for theta use the D-study variance at the plug-in components,
``Var(theta_hat) = sum_k sigma_k^2 / divisor_k`` (Messing 2026 Eq. 3): over the random terms for
the *panel* target (this judge/temperature panel), plus the fixed factors' sensitivity over
their level count for the *TEE* target (another equally good panel).

* Wald: ``theta_hat +- z SE`` and, for a component, ``sigma_hat^2 +- z SE`` with the
  delta-method SE of a linear combination of mean squares, ``Var(MS) = 2 MS^2 / df``.
* Bootstrap (parametric, from the truncated fit): mean squares redrawn exactly as scaled
  chi-squares, ``MS* = EMS(sigma_hat) chi2_df / df``, a fixed factor's level spread as if its
  levels were drawn with the estimated sensitivity; components re-estimated and truncated per
  replicate. theta gets the studentized (bootstrap-t) interval, which carries the
  uncertainty of the SE itself; components the percentile interval.

>>> import bayes_tee as bt
>>> d = bt.validate_design(bt.simulate.tee_dgp(n_items=20, n_replicates=2, random_seed=0),
...                        outcome="score", item="item", prompt="prompt", judge="judge",
...                        temperature="temperature", replicate="replicate")
>>> pf = plugin_fit(d)
>>> sorted(pf.wald_theta(0.9))
['panel', 'tee']

For a G-theory user, :func:`fit` takes a long frame and any formula (``bt.plugin.fit``) and
the fit gives the G-study table (:meth:`PluginFit.components`) and the D-study coefficients
(:meth:`PluginFit.reliability`, E rho^2 and Phi by the same weights as the posterior's,
:mod:`bayes_tee.posterior.reliability`).

>>> g = bt.plugin.fit(bt.datasets.load("tee_demo"), formula="score ~ (1|item) + (1|judge) + (1|prompt)")
>>> g.components()[["component", "estimate"]].round(4).head(2)
  component  estimate
0      item    0.0708
1     judge    0.0198
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .._core.exceptions import ArgumentError, DesignError, DesignWarning
from .._core.intervals import check_level
from ..design.design import Design
from ..design.from_formula import validate_formula
from ..design.roles import validate_design
from ..gstudy.coefficients import coefficients, g_weights, n_grid
from ..gstudy.divisors import divisors
from ..likelihoods.anova import Strata, strata


@dataclass(frozen=True)
class PluginFit:
    """ANOVA/EMS fit of a balanced design (see the module docstring).

    Attributes
    ----------
    raw : dict
        Untruncated EMS estimates by component label (random terms and the residual).
    estimates : dict
        Truncated at zero (random terms), plus each fixed factor's sensitivity, truncated.
    singular : bool
        Some random component's estimate was at or below zero (a singular REML fit).
    """

    design: Design
    st: Strata
    raw: dict[str, float]
    estimates: dict[str, float]
    singular: bool
    mean: float

    @property
    def notes(self) -> tuple[str, ...]:
        """When the ANOVA/EMS estimates are not what REML (lme4) would report, and why."""
        out = []
        negative = [k for k, v in self.raw.items() if v <= 0]
        if negative:
            out.append(
                f"{', '.join(negative)} estimated at or below zero and set to 0 (a singular fit); "
                "REML would re-estimate the other components under that constraint, so they can "
                "differ from lme4's."
            )
        keep = self.st.df > 0
        if keep.sum() > np.linalg.matrix_rank(self.st.coef[keep]):
            out.append(
                "The formula has more strata than components (it is not hierarchical): the EMS "
                "equations are solved by least squares, a moment estimate that is not REML."
            )
        return tuple(out)

    def components(self) -> pd.DataFrame:
        """The G-study table: every component's estimate (truncated at zero), its raw ANOVA/EMS
        value, whether it was truncated, and its share of the per-call variance.

        Fixed factors report their sensitivity index (the population variance of the level
        effects, corrected for noise). Returns ``component, kind, estimate, anova, truncated,
        share``; ``attrs["notes"]``: :attr:`notes`.
        """
        kinds = {t.label: t.kind for t in self.design.terms}
        labels = [t.label for t in self.design.terms]
        est = np.array([self.estimates[k] for k in labels])
        raw = [self.raw[k] if k in self.raw else self._raw_fixed(k) for k in labels]
        out = pd.DataFrame(
            {
                "component": labels,
                "kind": [kinds[k] for k in labels],
                "estimate": est,
                "anova": raw,
                "truncated": [r < 0 for r in raw],
                "share": est / est.sum(),
            }
        )
        out.attrs["notes"] = self.notes
        return out

    def _raw_fixed(self, label: str) -> float:
        fs = next(f for f in self.st.fixed if f.term == label)
        L = fs.deviations.size
        noise = float(fs.coef @ np.array([self.estimates[k] for k in self.st.var_terms]))
        return float(np.mean(fs.deviations**2) - (L - 1) / L * noise / fs.weight)

    def reliability(self, object: str = "item", n: dict | None = None) -> pd.DataFrame:
        """E rho^2 and Phi at the estimates, at the observed design or every combination of the
        counts in ``n`` (facet -> counts), by the rules of :mod:`bayes_tee.posterior.reliability`.

        Returns one row per design: ``n_<facet>`` columns, ``erho2``, ``phi``, and the
        universe-score, relative- and absolute-error variances ``tau``, ``delta``, ``Delta``.
        """
        d = self.design
        obj = d.facet_of(object)
        grid = n_grid(d, obj, n)
        terms = list(d.terms)
        g = coefficients(
            np.array([self.estimates[t.label] for t in terms]), g_weights(terms, obj, grid, d.counts)
        )
        out = grid.reset_index(drop=True).assign(
            **{k: g[k] for k in ("erho2", "phi", "tau", "delta", "Delta")}
        )
        out.attrs.update(object=obj, notes=self.notes)
        return out

    @property
    def random_labels(self) -> list[str]:
        """Labels of the random (variance) terms."""
        return list(self.st.var_terms)

    @property
    def fixed_labels(self) -> list[str]:
        """Labels of the fixed-effect terms."""
        return [fs.term for fs in self.st.fixed]

    def _div(self, labels: list[str]) -> np.ndarray:
        facets = {t.label: t.facets for t in self.design.terms}
        return divisors(labels, self.design.counts, facets=facets)

    def var_theta(self, est: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """D-study Var(theta_hat) for the panel and the TEE target (arrays broadcast over
        bootstrap replicates when ``est`` holds arrays).
        """
        est = self.estimates if est is None else est
        rl, fl = self.random_labels, self.fixed_labels
        panel = sum(np.asarray(est[k]) / d for k, d in zip(rl, self._div(rl)))
        tee = panel + sum((np.asarray(est[k]) / d for k, d in zip(fl, self._div(fl))), 0.0)
        return {"panel": panel, "tee": tee}

    def wald_theta(self, level: float) -> dict[str, tuple[float, float]]:
        """Wald interval of theta for each target."""
        z = stats.norm.ppf(0.5 + level / 2)
        return {
            k: (self.mean - z * np.sqrt(v), self.mean + z * np.sqrt(v)) for k, v in self.var_theta().items()
        }

    def wald_component(self, label: str, level: float) -> tuple[float, float]:
        """Wald interval of a random component (lower end clipped at zero)."""
        keep = self.st.df > 0
        ms = self.st.ss[keep] / self.st.df[keep]
        A = np.linalg.pinv(self.st.coef[keep])
        j = self.random_labels.index(label)
        se = float(np.sqrt(np.sum(A[j] ** 2 * 2 * ms**2 / self.st.df[keep])))
        z = stats.norm.ppf(0.5 + level / 2)
        est = self.estimates[label]
        return max(0.0, est - z * se), est + z * se

    def bootstrap(self, n_boot: int = 1000, rng: np.random.Generator | None = None) -> dict[str, np.ndarray]:
        """Parametric bootstrap replicates: truncated components (by label) and the studentized
        errors of theta, ``t_panel`` and ``t_tee``.
        """
        rng = np.random.default_rng(rng)
        st, keep = self.st, self.st.df > 0
        s2 = np.array([self.estimates[k] for k in self.random_labels])
        ems = st.coef[keep] @ s2
        df = st.df[keep]
        ms = ems * rng.chisquare(df, size=(n_boot, df.size)) / df
        sol = np.maximum(ms @ np.linalg.pinv(st.coef[keep]).T, 0.0)
        est = {k: sol[:, j] for j, k in enumerate(self.random_labels)}
        for fs in st.fixed:
            L, w = fs.deviations.size, fs.weight
            noise, noise_b = float(fs.coef @ s2), sol @ fs.coef
            ms_f = (
                (noise + w * L / (L - 1) * self.estimates[fs.term]) * rng.chisquare(L - 1, n_boot) / (L - 1)
            )
            est[fs.term] = np.maximum((L - 1) / (w * L) * (ms_f - noise_b), 0.0)
        v_hat, v_boot = self.var_theta(), self.var_theta(est)
        z = rng.standard_normal(n_boot)
        out = dict(est)
        for k in ("panel", "tee"):  # theta* - theta_hat ~ N(0, Var at the fitted components)
            out[f"t_{k}"] = z * np.sqrt(v_hat[k]) / np.sqrt(v_boot[k])
        return out

    def bootstrap_intervals(
        self, level: float, labels: list[str], boot: dict[str, np.ndarray]
    ) -> dict[str, tuple[float, float]]:
        """Bootstrap-t intervals of theta (``panel``, ``tee``) and percentile intervals of the
        components in ``labels``.
        """
        a = (1 - check_level(level)) / 2
        out = {}
        for k, v in self.var_theta().items():
            lo_t, hi_t = np.quantile(boot[f"t_{k}"], [a, 1 - a])
            se = float(np.sqrt(v))
            out[k] = (self.mean - hi_t * se, self.mean - lo_t * se)
        for label in labels:
            lo, hi = np.quantile(boot[label], [a, 1 - a])
            out[label] = (float(lo), float(hi))
        return out


def plugin_fit(design: Design) -> PluginFit:
    """The truncated ANOVA/EMS fit of a balanced design.

    Raises
    ------
    ValueError
        When the design is not balanced.
    """
    if not design.balanced:
        raise ArgumentError(
            "The plug-in (ANOVA/EMS) needs a balanced design: every cell with the same calls and "
            "categories of one size; fit the posterior for any other layout."
        )
    st = strata(design)
    keep = st.df > 0
    ms = st.ss[keep] / st.df[keep]
    sol = np.linalg.pinv(st.coef[keep]) @ ms
    raw = dict(zip(st.var_terms, sol.tolist()))
    est = {k: max(0.0, v) for k, v in raw.items()}
    for fs in st.fixed:
        L = fs.deviations.size
        noise = float(fs.coef @ np.array([est[k] for k in st.var_terms]))
        est[fs.term] = max(0.0, float(np.mean(fs.deviations**2) - (L - 1) / L * noise / fs.weight))
    singular = any(v <= 0 for v in raw.values())
    return PluginFit(design, st, raw, est, singular, float(st.grand_mean))


def fit(df: pd.DataFrame, formula: str | None = None, **roles: str | None) -> PluginFit:
    """The classical G-study of a balanced design from long data: ANOVA/EMS estimates (equal to
    REML when none is truncated; :attr:`PluginFit.notes` says when they are not).

    Parameters
    ----------
    df : pandas.DataFrame
        One row per scored call.
    formula : str, optional
        lme4-style formula (:func:`bayes_tee.design.formula.parse_formula`); without it the roles
        (``outcome=``, ``item=``, ``prompt=``...) write the TEE formula, as in
        :func:`bayes_tee.fit_posterior`.
    **roles
        Column roles, as in :func:`bayes_tee.fit_posterior`.

    Returns
    -------
    PluginFit

    Raises
    ------
    DesignError
        The design is not balanced (every cell of the full cross with the same number of
        calls): the moment estimates are then not unique; fit the posterior instead.

    Examples
    --------
    >>> import bayes_tee as bt
    >>> g = bt.plugin.fit(bt.datasets.load("tee_demo"), formula="score ~ (1|item) + (1|judge) + (1|prompt)")
    >>> g.reliability(n={"judge": [1, 4]})[["n_judge", "erho2", "phi"]].round(3)
       n_judge  erho2    phi
    0      1.0  0.935  0.729
    1      4.0  0.983  0.902
    """
    if formula is not None:
        design = validate_formula(
            df, formula, **{k: v for k, v in roles.items() if k != "outcome"}, warn=False
        )
    else:
        design = validate_design(df, **roles, warn=False)
    for note in design.notes:
        warnings.warn(note, DesignWarning, stacklevel=2)
    if not design.balanced:
        raise DesignError(
            f"The plug-in (ANOVA/EMS) needs a balanced design, and this one is not ({design!r}): "
            "with missing cells or unequal replicates the moment estimates are not unique. Fit the "
            "posterior (bt.fit_posterior(df, formula=...)), which handles any layout."
        )
    out = plugin_fit(design)
    if out.notes:
        warnings.warn(" ".join(out.notes), DesignWarning, stacklevel=2)
    return out
