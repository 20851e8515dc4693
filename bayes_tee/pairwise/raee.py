"""Reference-anchored Elo estimation (RAEE, the RAEE paper (2025) Sec. 2) with posteriors.

Every system is judged against one fixed reference on the same prompts; each outcome is a win
(1), tie (0.5) or loss (0), or a fractional preference in [0, 1] (AlpacaEval's weighted
annotator). Per system (and judge), outcomes are averaged over runs to one score per prompt,
``S_i`` (RAEE paper 2025 Eq. 5), and the win probability ``p`` gets the Jeffreys-Beta posterior
``Beta(sum S_i + 1/2, n - sum S_i + 1/2)`` (Eq. 3). Its mean and quantiles map to the Elo gap
against the reference through ``gamma * logit(p)``, ``gamma = 400 / ln 10`` (Eq. 2). A
finite-population correction ``(M - n) / (M - 1)`` shrinks the posterior variance when the
prompts are drawn without replacement from a pool of ``M`` (moment-matched Beta, so the
interval stays inside (0, 1)).

``hierarchical=True`` partially pools per-prompt win probabilities: ``p_i ~ Beta(mu kappa,
(1 - mu) kappa)`` and each prompt's outcomes are Beta-Binomial given ``mu`` and the
intra-prompt correlation ``rho = 1 / (1 + kappa)`` (priors: Jeffreys on ``mu``, ``Beta(1/2,
1)`` on ``rho``). The posterior of ``mu`` is computed exactly on a grid (two parameters, no
sampler). When prompts are judged several times (runs, judges, both presentation orders), it
widens the interval by as much as the outcomes of one prompt move together, instead of counting
them as independent.

Judges: :meth:`RAEE.judges` screens each judge by ICC(3, k) over repeated runs (Shrout and
Fleiss's two-way mixed consistency model, the RAEE paper (2025) Eq. 6) and :meth:`RAEE.pooled` averages the
strong judges' Elo gaps with the variance ``sigma^2 (rho_k + (1 - rho_k) / J)`` (Prop. 2).

>>> import pandas as pd
>>> df = pd.DataFrame({"model": ["m1"] * 4 + ["m2"] * 4, "q": [1, 2, 3, 4] * 2,
...                    "outcome": [1, 1, 0.5, 0, 0, 0, 1, 0.5]})
>>> r = score(df, system="model", prompt="q", outcome="outcome", reference="ref")
>>> r.table()[["system", "n", "wins", "ties", "losses", "win_rate_raw"]]
  system  n  wins  ties  losses  win_rate_raw
0     m1  4     2     1       1         0.625
1     m2  4     1     1       2         0.375
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats

from .._core.exceptions import ArgumentError, DesignError, UnknownNameError
from ..plots import plot_raee
from .verdicts import ELO_SCALE, from_elo, to_elo, verdict_scores

#: Grid sizes of the hierarchical posterior (logit mu x logit rho).
GRID_MU, GRID_RHO = 241, 121


@dataclass
class _Posterior:
    """Posterior of one win probability: mean, variance and a sampler/quantile function."""

    mean: float
    var: float
    quantile: object  # callable q -> p
    sample: object  # callable (n, rng) -> draws
    rho: float = float("nan")


def _beta_posterior(a: float, b: float) -> _Posterior:
    dist = stats.beta(a, b)
    return _Posterior(
        float(dist.mean()), float(dist.var()), dist.ppf, lambda n, rng: dist.rvs(n, random_state=rng)
    )


def _fpc(post: _Posterior, fpc: float) -> _Posterior:
    """Shrink the variance by ``fpc``: a Beta with the same mean and ``fpc`` times the variance."""
    if fpc >= 1.0:
        return post
    m = post.mean
    if fpc <= 0.0:
        return _Posterior(
            m,
            0.0,
            lambda q: np.full(np.shape(q), m) if np.ndim(q) else m,
            lambda n, rng: np.full(n, m),
            post.rho,
        )
    v = post.var * fpc
    nu = m * (1 - m) / v - 1.0
    out = _beta_posterior(m * nu, (1 - m) * nu)
    out.rho = post.rho
    return out


def _hierarchical_posterior(n: np.ndarray, s: np.ndarray) -> _Posterior:
    """Exact grid posterior of the population win probability ``mu`` under Beta-Binomial
    prompts (fractional successes allowed: the Beta-function likelihood is smooth in ``s``).
    """
    pairs, counts = np.unique(np.column_stack([n, s]), axis=0, return_counts=True)
    nn, ss = pairs[:, 0], pairs[:, 1]
    lm = np.linspace(-9.0, 9.0, GRID_MU)
    lr = np.linspace(-11.0, 6.0, GRID_RHO)
    mu = special.expit(lm)[:, None, None]
    rho = special.expit(lr)[None, :, None]
    kappa = 1.0 / rho - 1.0
    a, b = mu * kappa, (1.0 - mu) * kappa
    loglik = (counts * (special.betaln(ss + a, nn - ss + b) - special.betaln(a, b))).sum(axis=2)
    # Priors: Jeffreys Beta(1/2, 1/2) on mu, Beta(1/2, 1) on rho; grid on the logit scales, so
    # the Jacobian p(1 - p) enters each density.
    m, r = special.expit(lm)[:, None], special.expit(lr)[None, :]
    logprior = (0.5 * np.log(m) + 0.5 * np.log1p(-m)) + (0.5 * np.log(r) + np.log1p(-r))
    lp = loglik + logprior
    w = np.exp(lp - lp.max())
    w /= w.sum()
    w_mu = w.sum(axis=1)
    mu_grid = special.expit(lm)
    mean = float(w_mu @ mu_grid)
    var = float(w_mu @ (mu_grid - mean) ** 2)
    rho_med = float(special.expit(np.interp(0.5, np.cumsum(w.sum(axis=0)), lr)))
    cdf = np.cumsum(w_mu)
    cdf_lm = np.concatenate([[0.0], cdf])
    knots = np.concatenate([[lm[0] - (lm[1] - lm[0]) / 2], lm + (lm[1] - lm[0]) / 2])

    def quantile(q):
        return special.expit(np.interp(q, cdf_lm, knots))

    def sample(k, rng):
        return quantile(rng.random(k))

    return _Posterior(mean, var, quantile, sample, rho_med)


def _icc3(matrix: np.ndarray) -> tuple[float, float]:
    """ICC(3, k) and ICC(3, 1) of a targets x runs matrix (two-way mixed, consistency)."""
    n, k = matrix.shape
    grand = matrix.mean()
    ss_rows = k * ((matrix.mean(axis=1) - grand) ** 2).sum()
    ss_cols = n * ((matrix.mean(axis=0) - grand) ** 2).sum()
    ss_err = ((matrix - grand) ** 2).sum() - ss_rows - ss_cols
    ms_rows = ss_rows / (n - 1)
    ms_err = ss_err / ((n - 1) * (k - 1))
    if ms_rows <= 0:
        return float("nan"), float("nan")
    return float((ms_rows - ms_err) / ms_rows), float((ms_rows - ms_err) / (ms_rows + (k - 1) * ms_err))


@dataclass
class RAEE:
    """Reference-anchored Elo scores of several systems; build it with :func:`score`."""

    scores: pd.DataFrame  # one row per (system, judge, prompt): n_runs, s (sum), mean
    roles: dict
    reference: str | None
    pool_size: int | None
    level: float
    hierarchical: bool
    dropped: dict = field(default_factory=dict)
    notes: tuple = ()
    _raw: pd.DataFrame | None = field(default=None, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def by_judge(self) -> bool:
        """Whether ratings are per judge (a judge column was given)."""
        return self.roles.get("judge") is not None

    def _groups(self) -> list[str]:
        return ["system", "judge"] if self.by_judge else ["system"]

    def _posteriors(self) -> dict:
        if "post" not in self._cache:
            out = {}
            for key, g in self.scores.groupby(self._groups(), sort=True):
                key = key if isinstance(key, tuple) else (key,)
                n = len(g)
                if self.hierarchical:
                    post = _hierarchical_posterior(g["n_runs"].to_numpy(float), g["s"].to_numpy(float))
                else:
                    total = float(g["mean"].sum())
                    post = _beta_posterior(total + 0.5, n - total + 0.5)
                if self.pool_size is not None:
                    post = _fpc(post, (self.pool_size - n) / (self.pool_size - 1))
                out[key] = post
            self._cache["post"] = out
        return self._cache["post"]

    def table(self) -> pd.DataFrame:
        """Per system (and judge): counts, raw and Jeffreys-Beta win rates, Elo gaps.

        Returns
        -------
        pandas.DataFrame
            ``system, [judge,] n, wins, ties, losses, win_rate_raw, win_rate, low, high,
            elo, elo_low, elo_high, elo_se`` (and ``rho``, the intra-prompt correlation, when
            hierarchical). ``n`` counts prompts; wins / ties / losses count prompts whose
            run-averaged score is above / at / below 0.5; ``win_rate_raw`` is the plain mean
            (ties half); ``win_rate`` the posterior mean, ``low``/``high`` its central interval
            at ``level``; ``elo*`` the same through ``gamma * logit``; ``elo_se`` the delta-method
            SE of the RAEE paper (2025) Eq. 4. Sorted by ``elo``, highest first.

        Examples
        --------
        >>> r.table()  # doctest: +SKIP
        """
        a = (1.0 - self.level) / 2.0
        rows = []
        posts = self._posteriors()
        for key, g in self.scores.groupby(self._groups(), sort=True):
            key = key if isinstance(key, tuple) else (key,)
            post = posts[key]
            m = g["mean"].to_numpy()
            lo, hi = (float(x) for x in (post.quantile(a), post.quantile(1.0 - a)))
            row = dict(zip(self._groups(), key))
            row.update(
                n=len(g),
                wins=int((m > 0.5).sum()),
                ties=int((m == 0.5).sum()),
                losses=int((m < 0.5).sum()),
                win_rate_raw=float(m.mean()),
                win_rate=post.mean,
                low=lo,
                high=hi,
                elo=float(to_elo(post.mean)),
                elo_low=float(to_elo(lo)),
                elo_high=float(to_elo(hi)),
                elo_se=float(ELO_SCALE * np.sqrt(post.var) / (post.mean * (1.0 - post.mean))),
            )
            if self.hierarchical:
                row["rho"] = post.rho
            rows.append(row)
        out = pd.DataFrame(rows).sort_values("elo", ascending=False, kind="stable").reset_index(drop=True)
        out.attrs.update(
            level=self.level,
            reference=self.reference,
            pool_size=self.pool_size,
            hierarchical=self.hierarchical,
        )
        return out

    def draws(self, n_draws: int = 4000, random_seed: int | None = 0) -> pd.DataFrame:
        """Posterior draws of each system's (and judge's) win probability, one column each."""
        rng = np.random.default_rng(random_seed)
        cols = {"/".join(map(str, k)): p.sample(n_draws, rng) for k, p in self._posteriors().items()}
        return pd.DataFrame(cols)

    def ranking(self, n_draws: int = 4000, random_seed: int | None = 0) -> pd.DataFrame:
        """Ranks of the systems over posterior draws (independent systems).

        Returns
        -------
        pandas.DataFrame
            ``system, elo, rank (of the posterior mean), rank_median, rank_low, rank_high
            (central interval at level), p_best``, best first.

        Examples
        --------
        >>> r.ranking()  # doctest: +SKIP
        """
        if self.by_judge:
            raise ArgumentError(
                "ranking() ranks systems; with several judges rank the pooled() estimates "
                "or score one judge at a time."
            )
        d = self.draws(n_draws, random_seed)
        ranks = d.rank(axis=1, ascending=False, method="average").to_numpy()
        a = (1.0 - self.level) / 2.0
        tab = self.table().set_index("system")
        out = pd.DataFrame(
            {
                "system": d.columns,
                "elo": tab.loc[d.columns, "elo"].to_numpy(),
                "rank_median": np.median(ranks, axis=0),
                "rank_low": np.quantile(ranks, a, axis=0),
                "rank_high": np.quantile(ranks, 1.0 - a, axis=0),
                "p_best": (ranks == 1).mean(axis=0),
            }
        )
        out.insert(2, "rank", out["elo"].rank(ascending=False, method="min").astype(int))
        return out.sort_values("rank").reset_index(drop=True)

    def gap(self, a: str, b: str, n_draws: int = 4000, random_seed: int | None = 0) -> pd.DataFrame:
        """Elo gap between two systems (``a - b``) with its interval and ``P(a > b)``.

        >>> r.gap("gpt-4o", "gpt-4o-mini")  # doctest: +SKIP
        """
        d = self.draws(n_draws, random_seed)
        for s in (a, b):
            if s not in d:
                raise UnknownNameError(f"No system {s!r}; systems are {list(d.columns)}.")
        diff = to_elo(d[a].to_numpy()) - to_elo(d[b].to_numpy())
        q = (1.0 - self.level) / 2.0
        return pd.DataFrame(
            [
                dict(
                    a=a,
                    b=b,
                    elo_gap_median=float(np.median(diff)),
                    elo_gap_low=float(np.quantile(diff, q)),
                    elo_gap_high=float(np.quantile(diff, 1 - q)),
                    p_a_better=float((diff > 0).mean()),
                )
            ]
        )

    def judges(self, threshold: float = 0.9) -> pd.DataFrame:
        """ICC(3, k) per judge from repeated runs and the strong-judge screen (RAEE paper 2025 Eq. 6).

        Targets are the (system, prompt) units a judge scored in every one of its ``k`` runs;
        units missing a run are left out and counted.

        Returns
        -------
        pandas.DataFrame
            ``judge, k, n_targets, n_incomplete, icc_k, icc_1, strong`` (``icc_k >=
            threshold``).

        Examples
        --------
        >>> r.judges(threshold=0.9)  # doctest: +SKIP
        """
        run = self.roles.get("run")
        if run is None or not self.by_judge:
            raise ArgumentError(
                "judges() needs repeated runs per judge: score(..., judge='<column>', run='<column>')."
            )
        rows = []
        for name, g in self._raw.groupby("judge", sort=True):
            wide = g.pivot_table(index=["system", "prompt"], columns="run", values="y", aggfunc="mean")
            complete = wide.dropna()
            k = wide.shape[1]
            if k < 2 or len(complete) < 2:
                icc_k = icc_1 = float("nan")
            else:
                icc_k, icc_1 = _icc3(complete.to_numpy())
            rows.append(
                dict(
                    judge=name,
                    k=k,
                    n_targets=len(complete),
                    n_incomplete=len(wide) - len(complete),
                    icc_k=icc_k,
                    icc_1=icc_1,
                    strong=bool(icc_k >= threshold),
                )
            )
        out = pd.DataFrame(rows)
        out.attrs["threshold"] = threshold
        return out

    def pooled(self, threshold: float = 0.9, judges: list[str] | None = None) -> pd.DataFrame:
        """Per system: the strong judges' Elo gaps averaged, with the RAEE paper (2025) Prop. 2's variance.

        ``Var = sigma^2 (rho + (1 - rho) / J)``: ``sigma^2`` is the mean of the judges'
        delta-method Elo variances, ``rho`` the mean ICC(3, k) of the pooled judges and ``J``
        their number. ``judges`` overrides the screen (and ``rho`` then needs runs too).

        Returns
        -------
        pandas.DataFrame
            ``system, n_judges, rho, elo, elo_se, elo_low, elo_high, win_rate, low, high,
            se_ratio_single`` (pooled SE over one judge's), highest Elo first.

        Examples
        --------
        >>> r.pooled(threshold=0.9)  # doctest: +SKIP
        """
        screen = self.judges(threshold)
        keep = list(screen.loc[screen["strong"], "judge"]) if judges is None else list(judges)
        if not keep:
            raise ArgumentError(
                f"No judge reaches ICC(3, k) >= {threshold}; lower the threshold or pass judges=."
            )
        rho = float(screen.set_index("judge").loc[keep, "icc_k"].mean())
        tab = self.table()
        tab = tab[tab["judge"].isin(keep)]
        z = float(stats.norm.ppf(1.0 - (1.0 - self.level) / 2.0))
        rows = []
        for system, g in tab.groupby("system", sort=True):
            J = len(g)
            s2 = float((g["elo_se"] ** 2).mean())
            se = float(np.sqrt(s2 * (rho + (1.0 - rho) / J)))
            elo = float(g["elo"].mean())
            rows.append(
                dict(
                    system=system,
                    n_judges=J,
                    rho=rho,
                    elo=elo,
                    elo_se=se,
                    elo_low=elo - z * se,
                    elo_high=elo + z * se,
                    win_rate=float(from_elo(elo)),
                    low=float(from_elo(elo - z * se)),
                    high=float(from_elo(elo + z * se)),
                    se_ratio_single=se / np.sqrt(s2),
                )
            )
        out = pd.DataFrame(rows).sort_values("elo", ascending=False).reset_index(drop=True)
        out.attrs.update(judges=keep, threshold=threshold, level=self.level)
        return out

    def plot(self, ax=None):
        """Elo gap per system with its interval (per judge when scored by several), reference at 0.

        >>> fig = r.plot()  # doctest: +SKIP
        """
        return plot_raee(self.table(), ax=ax)

    def __repr__(self) -> str:
        n_sys = self.scores["system"].nunique()
        ref = f" against {self.reference!r}" if self.reference else ""
        mode = "hierarchical Beta-Binomial" if self.hierarchical else "Jeffreys-Beta"
        return f"RAEE({n_sys} systems{ref}, {mode}, {len(self.scores)} system x prompt scores)"


def score(
    df: pd.DataFrame,
    *,
    system: str,
    prompt: str,
    outcome: str,
    judge: str | None = None,
    run: str | None = None,
    reference: str | None = None,
    pool_size: int | None = None,
    level: float = 0.95,
    hierarchical: bool = False,
) -> RAEE:
    """Reference-anchored Elo scores (RAEE paper 2025 Algorithm 1) with posterior intervals.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per judged comparison of a system against the reference.
    system, prompt, outcome : str
        Columns: the system compared, the prompt (instruction), and the outcome for the system
        (win 1, tie 0.5, loss 0, or a fraction in [0, 1]; labels ``win`` / ``tie`` / ``loss``
        are read too).
    judge, run : str, optional
        Judge and repeated-run columns. Runs (and any repeated rows) are averaged per prompt
        before scoring; ``judges()`` and ``pooled()`` need both.
    reference : str, optional
        Name of the reference system (Elo 0), for the tables and the plot.
    pool_size : int, optional
        Size of the finite prompt pool the prompts were drawn from without replacement
        (applies the finite-population correction).
    level : float
        Credible level of the intervals (default 95%, as the RAEE paper (2025)).
    hierarchical : bool
        Partially pool per-prompt win probabilities (Beta-Binomial), so repeated outcomes of
        one prompt (runs, both presentation orders, duplicated rows) are not counted as
        independent.

    Returns
    -------
    RAEE

    Raises
    ------
    DesignError
        A missing column, an outcome outside [0, 1], a pool smaller than the prompts scored.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"model": "m1", "q": [1, 2, 3, 4], "outcome": ["win", "win", "tie", "loss"]})
    >>> r = score(df, system="model", prompt="q", outcome="outcome", reference="ref")
    >>> r.table()[["win_rate_raw", "win_rate", "elo"]].round(3)
       win_rate_raw  win_rate     elo
    0         0.625       0.6  70.437
    """
    roles = {"system": system, "prompt": prompt, "outcome": outcome, "judge": judge, "run": run}
    for role, col in roles.items():
        if col is not None and col not in df:
            raise DesignError(f"Column {col!r} ({role}) is not in the data; columns are {list(df.columns)}.")
    if not 0.0 < level < 1.0:
        raise ArgumentError(f"level must be in (0, 1), got {level!r}.")
    y = verdict_scores(df[outcome], outcome)
    data = pd.DataFrame({"system": df[system].to_numpy(), "prompt": df[prompt].to_numpy(), "y": y.to_numpy()})
    data["judge"] = df[judge].to_numpy() if judge else "all"
    data["run"] = df[run].to_numpy() if run else 0
    dropped: dict[str, int] = {}
    for col, name in (("y", outcome), ("system", system), ("prompt", prompt)):
        miss = data[col].isna()
        if miss.any():
            dropped[f"{name} is missing"] = int(miss.sum())
            data = data[~miss]
    if data.empty:
        raise DesignError(f"No rows left after dropping {dropped}.")
    notes = []
    if dropped:
        notes.append("Dropped " + ", ".join(f"{v} row(s) where {k}" for k, v in dropped.items()) + ".")
    per = data.groupby(["system", "judge", "prompt"], sort=True)["y"].agg(n_runs="size", s="sum", mean="mean")
    per = per.reset_index()
    repeated = int(len(data) - len(per))
    if repeated:
        notes.append(
            f"{repeated} repeated row(s) (runs or duplicates of a system x prompt) averaged per prompt."
        )
    if pool_size is not None:
        n_max = int(per.groupby(["system", "judge"]).size().max())
        if pool_size < n_max or pool_size < 2:
            raise DesignError(
                f"pool_size={pool_size} is smaller than the {n_max} prompts scored; "
                "pass the size of the pool the prompts were drawn from."
            )
    if not judge:
        per = per.drop(columns="judge")
    return RAEE(per, roles, reference, pool_size, level, hierarchical, dropped, tuple(notes), data)
