"""Data-generating processes for judge verdicts with known truth: binary verdicts of judges with
given sensitivity and specificity (:func:`judge_calibration`, for the calibration model) and
Arena-like pairwise battles judged in both orders (:func:`pairwise_battles`).

>>> test, calib = judge_calibration({"A": 0.8}, se=0.9, sp=0.85, n_test=50, n_calib=20, random_seed=0)
>>> sorted(test.columns)[:2]
['item', 'judge']
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .dgp import spread_levels


def judge_calibration(
    accuracy: dict[str, float],
    se: dict[str, float] | float,
    sp: dict[str, float] | float,
    n_test: int = 600,
    n_calib: int = 200,
    n_judges: int = 1,
    random_seed: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Simulated judge verdicts for the calibration model (LLM-as-a-Judge bias paper 2026, Sec. 5).

    Every system answers the same ``n_calib + n_test`` items (ids ``i0000``...); item ``i`` is
    correct for system ``s`` with probability ``accuracy[s]``, independently. Each judge's
    verdict is correct with probability ``se[s]`` on correct answers and ``sp[s]`` on wrong ones
    (a per-system dict models a calibration gap), independently across judges given the truth.
    The first ``n_calib`` items are the labelled calibration set.

    Returns
    -------
    (test_df, calib_df)
        Columns ``system, item, judge, verdict`` (and ``label`` in ``calib_df``); the truth is in
        ``attrs["truth"]`` (accuracy, se, sp, and the realised test-set accuracy per system).

    Examples
    --------
    >>> test, calib = judge_calibration({"A": 0.7, "B": 0.6}, se=0.8, sp=0.8, random_seed=1)
    >>> sorted(calib.columns)
    ['item', 'judge', 'label', 'system', 'verdict']
    """
    rng = np.random.default_rng(random_seed)
    systems = list(accuracy)
    se_of = se if isinstance(se, dict) else {s: se for s in systems}
    sp_of = sp if isinstance(sp, dict) else {s: sp for s in systems}
    n = n_calib + n_test
    items = np.array([f"i{i:04d}" for i in range(n)])
    rows = []
    realised = {}
    for s in systems:
        truth = (rng.random(n) < accuracy[s]).astype(int)
        realised[s] = float(truth[n_calib:].mean())
        for j in range(n_judges):
            p_pos = np.where(truth == 1, se_of[s], 1 - sp_of[s])
            verdict = (rng.random(n) < p_pos).astype(int)
            rows.append(
                pd.DataFrame(
                    {"system": s, "item": items, "judge": f"judge{j + 1}", "verdict": verdict, "label": truth}
                )
            )
    df = pd.concat(rows, ignore_index=True)
    is_cal = df["item"].isin(items[:n_calib])
    calib = df[is_cal].reset_index(drop=True)
    test = df[~is_cal].drop(columns="label").reset_index(drop=True)
    truth = {"accuracy": dict(accuracy), "se": se_of, "sp": sp_of, "test_accuracy": realised}
    test.attrs["truth"] = calib.attrs["truth"] = truth
    return test, calib


#: The roles of :func:`pairwise_battles`' columns: ``fit_posterior(df, **PAIRWISE_ROLES)``.
PAIRWISE_ROLES = dict(
    outcome="slot_winner", item="item", prompt="prompt", judge="judge", position="order", swapped="BA"
)


def pairwise_battles(
    n_items: int = 200,
    n_prompts: int = 5,
    n_judges: int = 3,
    n_replicates: int = 1,
    *,
    mu: float = -0.2,
    sd: dict[str, float] | None = None,
    judge_effects: np.ndarray | None = None,
    order_bias: float = 0.3,
    tie_rate: float = 0.1,
    random_seed: int | None = None,
) -> pd.DataFrame:
    """Arena-like pairwise judging: each item (a battle of system A vs B) judged in both orders.

    On the logit scale, P(system A wins) = ``mu`` + item + prompt + judge + item:judge +
    prompt:judge effects (random, SDs in ``sd``; judge effects fixed at ``judge_effects``,
    default evenly spread with SD 0.3) ± ``order_bias`` (added when A is shown first,
    subtracted when second). A call is a tie with probability ``tie_rate``.

    Returns
    -------
    pandas.DataFrame
        ``item, prompt, judge, order ("AB" or "BA"), replicate, slot_winner ("A", "B" or
        "tie", the slot frame) and first_system_wins`` (1 / 0.5 / 0, the system frame);
        ``attrs["truth"]`` holds the logit-scale parameters and ``attrs["p_first"]`` the mean
        probability that A wins (ties half) over the simulated items, prompts and judges,
        counterbalanced over orders.

    Examples
    --------
    >>> df = pairwise_battles(n_items=20, n_prompts=2, n_judges=2, random_seed=1)
    >>> len(df), sorted(df["order"].unique())
    (160, ['AB', 'BA'])
    """
    rng = np.random.default_rng(random_seed)
    sd = {"item": 1.0, "prompt": 0.2, "item:judge": 0.4, "prompt:judge": 0.15, **(sd or {})}
    N, V, M, R = n_items, n_prompts, n_judges, n_replicates
    lam = (
        np.asarray(judge_effects, float)
        if judge_effects is not None
        else spread_levels(M, 0.09)
        if M > 1
        else np.zeros(1)
    )
    eta = (
        mu
        + rng.normal(0, sd["item"], N)[:, None, None]
        + rng.normal(0, sd["prompt"], V)[None, :, None]
        + lam[None, None, :]
        + rng.normal(0, sd["item:judge"], (N, M))[:, None, :]
        + rng.normal(0, sd["prompt:judge"], (V, M))[None, :, :]
    )
    sign = np.array([1.0, -1.0])  # AB: A in the first slot; BA: A in the second
    p_win = 1.0 / (1.0 + np.exp(-(eta[..., None] + order_bias * sign)))  # (N, V, M, 2)
    shape = (N, V, M, 2, R)
    tie = rng.random(shape) < tie_rate
    a_wins = rng.random(shape) < p_win[..., None]
    y = np.where(tie, 0.5, a_wins.astype(float))
    grid = np.indices(shape).reshape(len(shape), -1)
    order = np.array(["AB", "BA"])[grid[3]]
    yv = y.reshape(-1)
    slot_a = np.where(order == "AB", yv, 1.0 - yv)
    df = pd.DataFrame(
        {
            "item": np.array([f"battle{i:04d}" for i in range(N)])[grid[0]],
            "prompt": np.array([f"p{v + 1}" for v in range(V)])[grid[1]],
            "judge": np.array([f"judge{m + 1}" for m in range(M)])[grid[2]],
            "order": order,
            "replicate": grid[4],
            "slot_winner": np.select([slot_a == 1.0, slot_a == 0.0], ["A", "B"], "tie"),
            "first_system_wins": yv,
        }
    )
    df.attrs["truth"] = {
        "mu": mu,
        **{k: float(v) for k, v in sd.items()},
        "judge_effects": lam.tolist(),
        "order_bias": order_bias,
        "tie_rate": tie_rate,
    }
    df.attrs["p_first"] = float((1 - tie_rate) * p_win.mean() + tie_rate * 0.5)
    return df
