"""Refit and compare: the same data under both links, or without each level of a facet.

* :func:`compare_links` fits the linear probability model and the logit GLMM to the same 0/1
  data and lines up their shares (Messing 2026 App. G; the comparison itself is
  :func:`bayes_tee.posterior.link_comparison.link_comparison`, ``post.compare``).
* :func:`leave_one_out`: Messing (2026) checks its safety decomposition by refitting without each
  judge in turn (Sec. 4.1, footnote on the leave-one-out analysis): with three judges, the judge
  sensitivity rests on three level effects, and one odd judge can carry most of it. It refits the
  same model on the data without each level of a facet and lines up the shares of
  Var(theta_hat), each with its interval, beside the fit on all levels.

Refits under other priors are :mod:`bayes_tee.tee.prior_refits`.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> loo = bt.leave_one_out(df, "judge", outcome="score", item="item", prompt="prompt",
...                        judge="judge", random_seed=1)  # doctest: +SKIP
>>> loo.table(["judge", "item:judge"])  # doctest: +SKIP
>>> cmp = bt.compare_links(df, outcome="safe", item="item", judge="judge")  # doctest: +SKIP
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import pandas as pd

from .._core.exceptions import ArgumentError, DiagnosticWarning
from ..design.formula import parse_formula
from ..design.terms import FACETS
from ..families import get_family
from ..gstudy.weights import FIELDS
from ..posterior.facade import Posterior
from ..posterior.link_comparison import LinkComparison, link_comparison
from .fit import fit_posterior

#: Design-count arguments of :meth:`Posterior.shares`.
_COUNT_ARGS = ("n_items", "n_prompts", "n_judges", "n_temperatures", "n_replicates")


@dataclass
class LeaveOneOut:
    """Result of :func:`leave_one_out`.

    Attributes
    ----------
    shares : pandas.DataFrame
        Long table: ``fit`` ("all" or "without <level>"), ``left_out``, ``component``,
        ``share_median``, ``share_low``, ``share_high``, ``rank``, ``diagnostics_ok``.
    theta : pandas.DataFrame
        One row per fit: ``theta`` (posterior median), ``tee_low``, ``tee_high``,
        ``diagnostics_ok``.
    posteriors : dict
        Fit label -> :class:`Posterior`.
    """

    shares: pd.DataFrame
    theta: pd.DataFrame
    posteriors: dict[str, Posterior] = field(repr=False)

    def table(self, components: list[str] | None = None) -> pd.DataFrame:
        """Wide view: one row per component, ``median (low, high)`` share per fit.

        ``components`` restricts and orders the rows (default: all, by the share in the fit on
        all levels).
        """
        s = self.shares
        cell = s.assign(
            v=[
                f"{m:.1%} ({lo:.1%}, {hi:.1%})"
                for m, lo, hi in zip(s["share_median"], s["share_low"], s["share_high"])
            ]
        )
        wide = cell.pivot(index="component", columns="fit", values="v")
        order = components or list(
            s[s["fit"] == "all"].sort_values("share_median", ascending=False)["component"]
        )
        return wide.loc[order, ["all", *[c for c in wide.columns if c != "all"]]]


def leave_one_out(
    df: pd.DataFrame,
    facet: str,
    *,
    outcome: str,
    item: str,
    prompt: str | None = None,
    judge: str | None = None,
    temperature: str | None = None,
    replicate: str | None = None,
    category: str | None = None,
    shares_at: dict[str, float] | None = None,
    level: float = 0.9,
    full: Posterior | None = None,
    **fit_kwargs,
) -> LeaveOneOut:
    """Refit without each level of ``facet`` and compare shares of Var(theta_hat).

    Parameters
    ----------
    df : pandas.DataFrame
        Long data, as for :func:`bayes_tee.fit_posterior`.
    facet : str
        The role to leave out level by level: ``"judge"``, ``"prompt"`` or ``"temperature"``
        (it needs three or more levels, so that every refit keeps two); with ``formula=`` in
        ``fit_kwargs``, any column the formula names but the items.
    outcome, item, prompt, judge, temperature, replicate, category : str
        Column roles.
    shares_at : dict, optional
        Design counts for the shares (``n_judges=3``, ...), the same for every fit so that the
        shares compare; default: the full data's design.
    level : float
        Credible level of the share intervals.
    full : Posterior, optional
        An existing fit on all levels (saves one fit).
    **fit_kwargs
        Passed to :func:`bayes_tee.fit_posterior`.

    Returns
    -------
    LeaveOneOut
    """
    roles = dict(
        item=item, prompt=prompt, judge=judge, temperature=temperature, replicate=replicate, category=category
    )
    if fit_kwargs.get("formula") is not None:
        columns = parse_formula(fit_kwargs["formula"]).columns
        if facet not in columns or facet == item:
            raise ArgumentError(
                f"facet must be a column of the formula other than the items, one of {columns}."
            )
        column = facet
    elif facet not in FACETS or facet == "item":
        raise ArgumentError(f"facet must be 'prompt', 'judge' or 'temperature', got {facet!r}.")
    else:
        column = roles.get(facet)
    if column is None:
        raise ArgumentError(f"facet {facet!r} has no column: pass {facet}=<column name>.")
    levels = pd.unique(df[column].dropna())
    if len(levels) < 3:
        raise ArgumentError(
            f"Column {column!r} ({facet}) has {len(levels)} levels; leaving one out needs at "
            f"least 3 so that every refit keeps two."
        )
    unknown = set(shares_at or {}) - set(_COUNT_ARGS)
    if unknown:
        raise ArgumentError(f"shares_at takes {', '.join(_COUNT_ARGS)}; got {sorted(unknown)}.")
    fits: dict[str, tuple[object, Posterior]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)  # reported per fit in the table
        post = full if full is not None else fit_posterior(df, outcome=outcome, **roles, **fit_kwargs)
        at = shares_at or {k: post.design.counts[FIELDS[k]] for k in _COUNT_ARGS}
        fits["all"] = (None, post)
        for lev in levels:
            fits[f"without {lev}"] = (
                lev,
                fit_posterior(df[df[column] != lev], outcome=outcome, **roles, **fit_kwargs),
            )
    rows, thetas = [], []
    for name, (lev, p) in fits.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DiagnosticWarning)  # in the diagnostics_ok column
            sh, th = p.shares(**at, level=level), p.theta(level=level).iloc[0]
        sh = sh.assign(
            fit=name,
            left_out=lev,
            diagnostics_ok=p.diagnostics()["ok"],
            rank=sh["share_median"].rank(ascending=False, method="first").astype(int),
        )
        rows.append(
            sh[
                [
                    "fit",
                    "left_out",
                    "component",
                    "share_median",
                    "share_low",
                    "share_high",
                    "rank",
                    "diagnostics_ok",
                ]
            ]
        )
        thetas.append(
            {
                "fit": name,
                "left_out": lev,
                "theta": th["estimate"],
                "tee_low": th["tee_low"],
                "tee_high": th["tee_high"],
                "diagnostics_ok": p.diagnostics()["ok"],
            }
        )
    shares = pd.concat(rows, ignore_index=True)
    shares.attrs.update(facet=facet, design=at, level=level)
    failed = [t["fit"] for t in thetas if not t["diagnostics_ok"]]
    if failed:
        warnings.warn(
            DiagnosticWarning(
                f"Fits failing diagnostics: {', '.join(failed)} (see each posterior's diagnostics()); treat "
                f"their shares as unreliable, or refit with more draws."
            ),
            stacklevel=2,
        )
    return LeaveOneOut(shares, pd.DataFrame(thetas), {k: v[1] for k, v in fits.items()})


def compare_links(
    df: pd.DataFrame,
    *,
    family: str = "binomial",
    random_seed: int | None = None,
    level: float = 0.9,
    **fit_kwargs,
) -> LinkComparison:
    """Fit the linear model and a GLMM to the same data and compare their shares.

    ``family`` is the GLMM: ``binomial`` (the logit GLMM, 0/1 outcomes), ``ordinal`` or
    ``ordinal_probit`` (Likert scores). ``fit_kwargs`` go to both
    :func:`bayes_tee.fit_posterior` calls (roles, sampler settings; ``thresholds=`` to the
    ordinal one only).

    >>> cmp = compare_links(df, outcome="safe", item="item", judge="judge")  # doctest: +SKIP
    >>> cmp = compare_links(df, family="ordinal", outcome="likert", item="item")  # doctest: +SKIP
    """
    if not get_family(family).latent:
        raise ArgumentError(
            f"family= names the GLMM compared with the linear model ('binomial', 'ordinal' or "
            f"'ordinal_probit'), got {family!r}."
        )
    latent_only = {k: fit_kwargs.pop(k) for k in ("thresholds", "spread") if k in fit_kwargs}
    lpm = fit_posterior(df, family="gaussian", random_seed=random_seed, **fit_kwargs)
    glmm = fit_posterior(df, family=family, random_seed=random_seed, **fit_kwargs, **latent_only)
    return link_comparison(lpm, glmm, level=level)
