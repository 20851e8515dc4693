"""Pairwise (A/B/tie) verdicts: scoring, presentation-order recoding and order bias.

A pairwise judge sees two responses in two slots and names the better one. Three frames matter:

* the *slot* frame: which slot won ("A" = the response shown first);
* the *system* frame: whether system A (the first system of the pair as listed in the data)
  won, whatever slot it was shown in;
* the outcome as a number: win 1, tie 0.5, loss 0 (RAEE paper 2025 Eq. 1; Messing (2026) App. R).

:func:`verdict_scores` turns verdict labels into numbers, :func:`recode` moves slot-frame
verdicts to the system frame using the presentation-order column (Messing 2026's ``true_order``
recoding), and :func:`order_bias` measures each judge's preference for a slot from pairs judged
in both orders, with a Bayesian-bootstrap interval over pairs.

>>> import pandas as pd
>>> df = pd.DataFrame({"pair": [1, 1, 2, 2], "order": ["AB", "BA", "AB", "BA"],
...                    "slot_winner": ["A", "A", "B", "tie"]})
>>> recode(df, verdict="slot_winner", order="order", swapped="BA")["first_system_wins"].tolist()
[1.0, 0.0, 0.0, 0.5]
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import integrate, stats

from .._core.exceptions import ArgumentError, DesignError
from .._core.intervals import check_level

#: Verdict labels (lower case, spaces removed) and their score in the slot frame: slot A wins 1.
VERDICT_SCORES: dict[str, float] = {
    "a": 1.0,
    "b": 0.0,
    "tie": 0.5,
    "draw": 0.5,
    "win": 1.0,
    "loss": 0.0,
    "a>b": 1.0,
    "a>>b": 1.0,
    "b>a": 0.0,
    "b>>a": 0.0,
    "a=b": 0.5,
    "b<a": 1.0,
    "a<b": 0.0,
    "model_a": 1.0,
    "model_b": 0.0,
    "tie(bothbad)": 0.5,
    "1": 1.0,
    "0": 0.0,
    "0.5": 0.5,
    "1.0": 1.0,
    "0.0": 0.0,
}

#: Elo points per unit of log-odds (RAEE paper 2025 Sec. 2.1: gamma = 400 / ln 10).
ELO_SCALE: float = 400.0 / np.log(10.0)


def verdict_scores(values: pd.Series, column: str = "verdict") -> pd.Series:
    """Verdicts as numbers in [0, 1]: slot A wins 1, tie 0.5, slot B wins 0.

    Numbers pass through (fractional preferences such as AlpacaEval's weighted annotator are
    kept); labels are read case-insensitively (``A``, ``B``, ``tie``, ``A>B``, ``B>A``,
    ``A=B``, ``model_a``, ``model_b``...). Missing values stay missing.

    >>> verdict_scores(pd.Series(["A>B", "b", "Tie", None])).tolist()
    [1.0, 0.0, 0.5, nan]
    """
    if pd.api.types.is_bool_dtype(values):
        return values.astype(float)
    if pd.api.types.is_numeric_dtype(values):
        out = values.astype(float)
    else:
        key = values.astype("string").str.lower().str.replace(" ", "", regex=False)
        out = key.map(VERDICT_SCORES).astype(float)
        unknown = key[out.isna() & values.notna()].unique()
        if len(unknown):
            raise DesignError(
                f"Column {column!r} has verdict labels that are not A/B/tie, e.g. {list(unknown[:3])}. "
                "Map them to 1 (first slot wins), 0.5 (tie) and 0 (second slot wins) first, or use "
                "labels such as 'A', 'B', 'tie', 'A>B', 'B>A', 'A=B'."
            )
    bad = out[(out < 0) | (out > 1)]
    if len(bad):
        hint = (
            " AlpacaEval's `preference` runs 1..2: use preference - 1."
            if out.min() >= 1 and out.max() <= 2
            else ""
        )
        raise DesignError(
            f"Column {column!r} must hold outcomes in [0, 1] (win 1, tie 0.5, loss 0), but has "
            f"{len(bad)} value(s) outside, e.g. {bad.iloc[0]!r}.{hint}"
        )
    return out


def recode(
    df: pd.DataFrame,
    *,
    verdict: str,
    order: str,
    swapped: object,
    out: str = "first_system_wins",
) -> pd.DataFrame:
    """Move slot-frame verdicts to the system frame (Messing 2026 App. R, ``true_order`` recoding).

    Rows whose ``order`` equals ``swapped`` showed the pair's second system in slot A, so their
    score flips (``1 - y``); ties stay 0.5. The result is "the pair's first system wins".

    Parameters
    ----------
    df : pandas.DataFrame
        One row per judged presentation.
    verdict : str
        Slot-frame verdict column (labels or numbers, see :func:`verdict_scores`).
    order : str
        Presentation-order column with two levels.
    swapped : object
        The level of ``order`` in which the slots are swapped.
    out : str
        Name of the new column.

    Returns
    -------
    pandas.DataFrame
        A copy of ``df`` with ``out`` added.

    Examples
    --------
    >>> recode(df, verdict="slot_winner", order="order", swapped="BA")  # doctest: +SKIP
    """
    for col in (verdict, order):
        if col not in df:
            raise DesignError(f"Column {col!r} not found; columns are {list(df.columns)}.")
    levels = pd.unique(df[order].dropna())
    if swapped not in set(levels):
        raise DesignError(
            f"swapped={swapped!r} is not a level of the order column {order!r} (levels: {list(levels)}). "
            "Pass the level under which the pair's second system was shown first."
        )
    if len(levels) != 2:
        raise DesignError(
            f"The order column {order!r} must have two levels (listed and swapped), found {list(levels)}."
        )
    y = verdict_scores(df[verdict], verdict)
    flip = (df[order] == swapped).to_numpy()
    res = df.copy()
    res[out] = np.where(flip, 1.0 - y.to_numpy(), y.to_numpy())
    return res


def order_bias(
    df: pd.DataFrame,
    *,
    item: str,
    verdict: str,
    order: str,
    swapped: object,
    judge: str | None = None,
    level: float = 0.95,
    n_draws: int = 4000,
    random_seed: int | None = 0,
) -> pd.DataFrame:
    """Each judge's preference for the first slot, from pairs judged in both orders.

    For every item judged in both orders, the first-slot score is the mean over the two
    presentations of "the response in slot A won" (ties 0.5). Order bias is its mean over items
    minus 0.5: positive means primacy, negative recency; in the system frame it is exactly the
    presentation-order effect of :func:`bayes_tee.fit_posterior` with ``position=``. The
    interval is a Bayesian bootstrap over items (Dirichlet(1, ..., 1) weights), which keeps the
    two presentations of an item together. Also reported: the share of items whose two verdicts
    agree once recoded (``consistency``) and the share of slot-A wins.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per judged presentation.
    item, verdict, order, swapped
        Item (pair) column, slot-frame verdict column, order column and its swapped level
        (as in :func:`recode`).
    judge : str, optional
        Judge column; one row per judge in the result.
    level : float
        Credible level of the interval.
    n_draws : int
        Bayesian-bootstrap draws.
    random_seed : int, optional
        Seed of the bootstrap weights.

    Returns
    -------
    pandas.DataFrame
        ``judge, n_items, slot_a_rate, consistency, order_bias, order_bias_low,
        order_bias_high, p_primacy`` (posterior probability of a first-slot preference).

    Examples
    --------
    >>> order_bias(df, item="pair", verdict="slot_winner", order="order", swapped="BA")  # doctest: +SKIP
    """
    for col in (item, judge):
        if col is not None and col not in df:
            raise DesignError(f"Column {col!r} not found; columns are {list(df.columns)}.")
    data = recode(df, verdict=verdict, order=order, swapped=swapped, out="_sys").dropna(subset=["_sys"])
    data["_swapped"] = data[order] == swapped
    data["_slot"] = np.where(data["_swapped"], 1.0 - data["_sys"], data["_sys"])  # back to the slot frame
    data["_judge"] = data[judge] if judge is not None else "all"
    rng = np.random.default_rng(random_seed)
    alpha = (1.0 - check_level(level)) / 2.0
    rows = []
    for name, g in data.groupby("_judge", sort=True):
        per = g.groupby([item, "_swapped"])["_sys"].mean().unstack("_swapped")
        per = per.dropna()
        if per.shape[1] < 2 or len(per) < 2:
            raise DesignError(
                f"Judge {name!r} has fewer than 2 items judged in both orders; order bias needs each "
                f"item in both orders (column {order!r})."
            )
        listed, swapped_y = per[False].to_numpy(), per[True].to_numpy()
        # Slot-A score: the listed presentation's system-frame score, and 1 - the swapped one's.
        first = 0.5 * (listed + (1.0 - swapped_y))
        w = rng.dirichlet(np.ones(len(first)), size=n_draws)
        draws = w @ first - 0.5
        rows.append(
            dict(
                judge=name,
                n_items=len(first),
                slot_a_rate=float(g["_slot"].mean()),
                consistency=float(np.mean(np.isclose(listed, swapped_y))),
                order_bias=float(first.mean() - 0.5),
                order_bias_low=float(np.quantile(draws, alpha)),
                order_bias_high=float(np.quantile(draws, 1.0 - alpha)),
                p_primacy=float((draws > 0).mean()),
            )
        )
    out = pd.DataFrame(rows)
    out.attrs["level"] = level
    return out


def expected_max_normal(k: int) -> float:
    """E[max(Z_1, ..., Z_k)] of k independent standard normals (exact, by quadrature).

    The expected best-of-k inflation per unit of pipeline SD (Messing 2026 Sec. 4.4).

    >>> round(expected_max_normal(2), 6)  # 1 / sqrt(pi)
    0.56419
    >>> round(expected_max_normal(27), 3)
    1.998
    """
    if int(k) != k or k < 1:
        raise ArgumentError(f"k must be a positive integer, got {k!r}.")
    if k == 1:
        return 0.0

    def f(x: float) -> float:
        return x * k * stats.norm.pdf(x) * stats.norm.cdf(x) ** (k - 1)

    return float(integrate.quad(f, -np.inf, np.inf, epsabs=1e-12, limit=200)[0])


def to_elo(p: np.ndarray | float) -> np.ndarray:
    """Win probability against the reference -> Elo gap, ``gamma * logit(p)`` (RAEE paper 2025 Eq. 2).

    >>> round(float(to_elo(0.64)), 1)
    100.0
    """
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        return ELO_SCALE * (np.log(p) - np.log1p(-p))


def from_elo(elo: np.ndarray | float) -> np.ndarray:
    """Elo gap -> win probability, the inverse of :func:`to_elo`.

    >>> float(from_elo(0.0))
    0.5
    """
    return 1.0 / (1.0 + np.exp(-np.asarray(elo, dtype=float) / ELO_SCALE))
