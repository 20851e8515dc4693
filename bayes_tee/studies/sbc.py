"""Simulation-based calibration (Talts et al. 2018; Modrak et al. 2023) of a likelihood.

Each round draws every parameter from the prior the fit uses (a prior fixed by
``PriorSpec(reference=...)``, so that it does not look at the data), simulates scores on a
small design with the model's own data-generating process (every random term's level effects,
the fixed effects, the residual or the link's noise, cutpoints for Likert scores), fits them
with the likelihood under test, and records the rank of each true value among thinned
posterior draws. If the sampler and the likelihood are right, each parameter's ranks are
uniform; a chi-square test per parameter says whether they are.

>>> import bayes_tee as bt
>>> run = bt.simulate.sbc_study(method="balanced", n_fits=40, random_seed=1)  # doctest: +SKIP
>>> run.uniformity()  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .._core.density import zerosum_basis
from .._core.exceptions import ArgumentError, DesignError, DesignWarning, DiagnosticWarning
from .._core.priors import PriorSpec
from ..design.design import Design
from ..design.roles import validate_design
from ..families import get_family
from ..likelihoods.logit_glmm.layout import INTERCEPT_UNIT, LOGIT_UNIT
from ..likelihoods.ordinal.layout import GAP_SD, gap_centre
from ..plots import plot_sbc
from ..tee.fit import fit_posterior

#: The prior every round draws from and fits with: relative to location 0 and scale 1.
SBC_PRIOR = PriorSpec(name="sbc", reference=(0.0, 1.0))
#: Posterior draws each true value is ranked among (thinned evenly from all chains).
RANKED_DRAWS = 99
#: Families and the likelihoods that fit them.
FAMILY_OF = {"binomial": "binomial", "binomial_quadrature": "binomial", "ordinal": "ordinal",
             "ordinal_probit": "ordinal_probit"}  # fmt: skip
ROLES = dict(item="item", prompt="prompt", judge="judge", replicate="replicate")


@dataclass
class SBCRun:
    """The ranks of one SBC run: one row per round and parameter (``round``, ``parameter``,
    ``truth``, ``rank`` out of ``n_ranked``, ``ok``: the round's fit passed its diagnostics).
    """

    method: str
    ranks: pd.DataFrame
    settings: dict = field(default_factory=dict)

    def uniformity(self, bins: int | None = None) -> pd.DataFrame:
        """Per parameter, the chi-square test of uniform ranks over ``bins`` equal bins
        (default: about five rounds per bin, at most 10): ``chi2``, ``p_value``, ``n_rounds``.
        """
        rows = []
        for name, part in self.ranks.groupby("parameter", sort=False):
            n = len(part)
            b = bins or int(np.clip(n // 5, 2, 10))
            n_ranked = int(part["n_ranked"].iloc[0])
            counts = np.bincount(
                np.minimum(part["rank"].to_numpy() * b // (n_ranked + 1), b - 1), minlength=b
            )
            chi2, p = stats.chisquare(counts)
            rows.append(
                {"parameter": name, "chi2": float(chi2), "p_value": float(p), "n_rounds": n, "bins": b}
            )
        return pd.DataFrame(rows)

    def plot(self, bins: int = 10):
        """Rank histograms per parameter (:func:`bayes_tee.plots.studies.plot_sbc`)."""
        return plot_sbc(self.ranks.assign(method=self.method), bins=bins)


def prior_draw(design: Design, spec: PriorSpec, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One draw of every parameter from the prior the fit of ``design`` uses (``spec`` with a
    ``reference``): each SD, the grand mean ``mu``, each fixed facet's zero-sum effects and,
    for an ordinal outcome with common cutpoints, the ``cutpoints``.
    """
    if spec.reference is None:
        raise ArgumentError("SBC needs a prior that does not look at the data: PriorSpec(reference=...).")
    loc, scale = spec.reference
    fam = get_family(design.family)
    unit = LOGIT_UNIT if fam.latent else scale
    out: dict[str, np.ndarray] = {}
    for t in design.terms:
        if t.kind == "fixed":
            L = len(design.levels[t.facets[0]])
            sd = spec.fixed_scale_of(t.label, design.system) * unit
            out[t.var_name] = zerosum_basis(L) @ rng.normal(0.0, sd, L - 1)
        elif not (fam.fixed_residual and t.kind == "residual"):
            out[t.var_name] = np.asarray(spec.for_component(t.label).sample(rng, unit))
    out["mu"] = np.asarray(rng.normal(loc, spec.intercept_scale * (INTERCEPT_UNIT if fam.latent else scale)))
    if design.outcome_levels is not None:
        K = len(design.outcome_levels)
        gaps = np.exp(rng.normal(gap_centre(K, fam.link), GAP_SD, K - 2))
        cut = np.concatenate([[0.0], np.cumsum(gaps)])
        out["cutpoints"] = cut - cut.mean()
    return out


def simulate_scores(design: Design, truth: dict[str, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Scores for ``design``'s rows (``row_cell``) from parameters ``truth``: each random term's
    level effects drawn at its SD, the fixed effects and ``mu``, then the outcome's own noise.
    """
    cells, row = design.cells, design.row_cell
    fam = get_family(design.family)
    eta = np.full(len(cells), float(truth["mu"]))
    residual = 0.0
    for t in design.terms:
        codes = cells[list(t.facets)].to_numpy() if t.kind != "residual" else None
        if t.kind == "fixed":
            eta += truth[t.var_name][codes[:, 0]]
        elif t.kind == "random":
            _, level = np.unique(codes, axis=0, return_inverse=True)
            eta += rng.normal(0.0, float(truth[t.var_name]), level.max() + 1)[level.ravel()]
        elif t.var_name in truth:
            residual = float(truth[t.var_name])
    eta = eta[row]
    if design.outcome_levels is not None:
        noise = rng.logistic(size=eta.size) if fam.link == "logit" else rng.standard_normal(eta.size)
        category = (eta[:, None] + noise[:, None] > truth["cutpoints"][None, :]).sum(axis=1)
        return np.asarray(design.outcome_levels)[category]
    if fam.latent:
        return (rng.random(eta.size) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    return eta + rng.normal(0.0, residual, eta.size)


def sbc_study(
    method: str = "balanced",
    *,
    n_fits: int = 100,
    n_items: int = 6,
    n_prompts: int = 2,
    n_judges: int = 2,
    n_replicates: int = 2,
    n_categories: int = 4,
    lost: float = 0.0,
    priors: PriorSpec = SBC_PRIOR,
    fit_priors: PriorSpec | None = None,
    chains: int = 2,
    draws: int = 300,
    tune: int = 300,
    random_seed: int = 0,
) -> SBCRun:
    """Simulation-based calibration of one likelihood on a small crossed design (items x
    prompts x fixed judges x replicates).

    Parameters
    ----------
    method : str
        The likelihood (a name of :data:`bayes_tee.likelihoods.registry.LIKELIHOODS`; ``ordinal_probit``
        for that family); its family follows.
    n_fits : int
        Rounds: prior draw, simulated scores, fit, ranks.
    n_items, n_prompts, n_judges, n_replicates : int
        The design.
    n_categories : int
        Ordinal scores' categories.
    lost : float
        Share of calls lost at random in each round (an unbalanced layout).
    priors : PriorSpec
        The prior drawn from (with a ``reference``).
    fit_priors : PriorSpec, optional
        The prior fitted with (default ``priors``); a different one is a negative control: the
        ranks are then not uniform.
    chains, draws, tune, random_seed
        Sampler settings of each fit and the run's seed.

    Returns
    -------
    SBCRun
        The ranks; :meth:`SBCRun.uniformity` tests them.
    """
    family = FAMILY_OF.get(method, "gaussian")
    rng = np.random.default_rng(random_seed)
    grid = np.meshgrid(range(n_items), range(n_prompts), range(n_judges), range(n_replicates), indexing="ij")
    frame = pd.DataFrame({k: g.ravel() for k, g in zip(("item", "prompt", "judge", "replicate"), grid)})
    for col, tag in (("item", "i"), ("prompt", "p"), ("judge", "j")):
        frame[col] = tag + frame[col].astype(str)
    # the layout's terms do not depend on the scores: any valid ones lay it out
    dummy = np.arange(len(frame)) % (n_categories if family.startswith("ordinal") else 2)
    dummy = dummy + 1 if family.startswith("ordinal") else dummy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DesignWarning)
        template = validate_design(frame.assign(score=dummy), outcome="score", family=family, **ROLES)
    rows, skipped = [], 0
    for r in range(n_fits):
        truth = prior_draw(template, priors, rng)
        df = frame.assign(score=simulate_scores(template, truth, rng))
        if lost:
            df = df[rng.random(len(df)) >= lost]
        levels = template.outcome_levels
        if levels is not None and not {levels[0], levels[-1]} <= set(df["score"]):
            # an end category no call used: the fit would take the scale as shorter, another
            # model; leave the round out (by its data, which keeps the ranks uniform)
            skipped += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DesignWarning)
            warnings.simplefilter("ignore", DiagnosticWarning)
            try:
                post = fit_posterior(
                    df, outcome="score", **ROLES, family=family, priors=fit_priors or priors, chains=chains,
                    draws=draws, tune=tune, random_seed=int(rng.integers(2**31)), progressbar=False,
                    **({} if method == "ordinal_probit" else {"method": method}),
                )  # fmt: skip
            except DesignError:
                # data the fit refuses (every call one outcome, a category never used): ranks are
                # uniform given the data, so leaving out rounds by their data keeps the test valid
                skipped += 1
                continue
        P = post.idata["posterior"]
        ok = bool(post.diagnostics()["ok"])
        for name, value in truth.items():
            if name not in P or np.ndim(value) > 0:
                continue
            x = P[name].values.ravel()
            x = x[np.linspace(0, x.size - 1, RANKED_DRAWS).round().astype(int)]
            rows.append({"round": r, "parameter": name, "truth": float(value), "rank": int((x < value).sum()),
                         "n_ranked": RANKED_DRAWS, "ok": ok})  # fmt: skip
    settings = dict(n_fits=n_fits, n_items=n_items, n_prompts=n_prompts, n_judges=n_judges,
                    n_replicates=n_replicates, lost=lost, draws=draws, tune=tune, chains=chains,
                    skipped=skipped)  # fmt: skip
    return SBCRun(method, pd.DataFrame(rows), settings)
