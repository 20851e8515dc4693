"""Data-generating processes with known variance components.

:func:`tee_dgp` draws a fully crossed pilot from the crossed random-effects model of Messing (2026)
(Eq. 1) with the component values of its Table 8 as defaults. The true values are returned in
``df.attrs["truth"]`` on the same scale and with the same labels as
:meth:`bayes_tee.Posterior.components`, so recovery checks are one comparison.

>>> import bayes_tee as bt
>>> df = bt.simulate.tee_dgp(n_items=20, n_prompts=3, n_judges=3, n_temperatures=1,
...                          n_replicates=2, random_seed=0)
>>> len(df), df.attrs["truth"]["item:judge"]
(360, 0.02)
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from .._core.exceptions import ArgumentError
from .._core.moved import moved_names
from ..design.terms import FACETS, cell_term, model_terms

#: Messing (2026), Table 8. ``cell`` is the table's residual (sigma_epsilon^2); the table lists no
#: replicate noise, so ``replicate`` is our choice. ``item`` is the within-category variance.
TABLE8_COMPONENTS: dict[str, float] = {
    "item": 0.04,
    "category": 0.015,
    "prompt": 0.015,
    "item:prompt": 0.008,
    "item:temperature": 0.008,
    "prompt:temperature": 0.003,
    "item:judge": 0.02,
    "prompt:judge": 0.003,
    "cell": 0.03,
    "replicate": 0.02,
}
#: Messing (2026), Table 8: judge and temperature level effects {-0.15, 0, 0.15}, population variance 0.015.
TABLE8_SENSITIVITY: dict[str, float] = {"judge": 0.015, "temperature": 0.015}


def spread_levels(n_levels: int, population_variance: float) -> np.ndarray:
    """Evenly spaced, centred level effects with the given population variance (1/L).

    >>> spread_levels(3, 0.015).round(3).tolist()
    [-0.15, 0.0, 0.15]
    """
    if n_levels == 1:
        return np.zeros(1)
    x = np.linspace(-1.0, 1.0, n_levels)
    return x * np.sqrt(population_variance / np.mean(x**2))


def panel_effects(
    n_levels: int, sensitivity: float, panel: str = "fixed", rng: np.random.Generator | None = None
) -> np.ndarray:
    """Level effects of a judge or temperature panel (see ``panel`` in :func:`tee_dgp`).

    >>> panel_effects(3, 0.015).round(3).tolist()
    [-0.15, 0.0, 0.15]
    """
    rng = np.random.default_rng(rng)
    if panel == "fixed":
        return spread_levels(n_levels, sensitivity)
    if panel == "resample":
        return rng.choice(spread_levels(3, sensitivity), size=n_levels)
    if panel == "normal":
        return rng.normal(0.0, np.sqrt(sensitivity), size=n_levels)
    raise ArgumentError(f"panel must be 'fixed', 'resample' or 'normal', got {panel!r}.")


#: Outcomes simulated on the logit GLMM's latent scale (the call's noise is the logistic).
LATENT = ("logit", "ordinal")


def tee_dgp(
    n_items: int = 30,
    n_prompts: int = 3,
    n_judges: int = 3,
    n_temperatures: int = 3,
    n_replicates: int = 5,
    n_categories: int | None = None,
    *,
    components: dict[str, float] | None = None,
    judge_effects: np.ndarray | None = None,
    temperature_effects: np.ndarray | None = None,
    mu: float = 0.5,
    outcome: Literal["gaussian", "threshold", "bernoulli", "logit", "ordinal"] = "gaussian",
    cutpoints: np.ndarray | None = None,
    panel: Literal["fixed", "resample", "normal"] = "fixed",
    random_seed: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Simulate a fully crossed evaluation from the TEE model.

    Parameters
    ----------
    n_items, n_prompts, n_judges, n_temperatures, n_replicates : int
        Design. A facet with one level gets no column (and no terms).
    n_categories : int, optional
        Items are dealt round-robin into this many categories; ``None`` or 1: no categories
        (and no ``category`` component).
    components : dict, optional
        Variances by component label, overriding :data:`TABLE8_COMPONENTS` (missing labels keep
        the default; set a label to 0 to switch the term off).
    judge_effects, temperature_effects : array, optional
        Fixed level effects; default: evenly spaced with population variance 0.015 (Table 8).
    mu : float
        Grand mean.
    panel : {"fixed", "resample", "normal"}
        How the judge and temperature effects are drawn when not given. ``fixed``: evenly
        spaced levels with the Table 8 population variance (the same panel every call).
        ``resample``: each level drawn with replacement from the three Table 8 levels
        ``{-0.15, 0, 0.15}``, a new panel "like these" per data set (what another equally good
        pipeline would use; this is what the TEE interval targets, and it gives a single-level
        facet its constant bias, as in Messing (2026) App. E.4 scenario A). ``normal``: each level
        drawn from ``N(0, 0.015)``.
    outcome : {"gaussian", "threshold", "bernoulli"}
        ``gaussian`` returns the continuous score; ``threshold`` returns ``1[score > mu]``;
        ``bernoulli`` draws ``Bernoulli(clip(score, 0, 1))``. For those binary outcomes the
        truth stays on the latent continuous scale. ``logit`` is the logit GLMM: ``mu`` and
        every component are on the logit scale, each call is ``Bernoulli(inv_logit(cell
        predictor))`` (the Bernoulli draw is the call-level noise, so ``replicate`` is the
        logistic pi^2/3 in the truth and the ``replicate`` component is not drawn).
        ``ordinal`` is the cumulative-logit GLMM on the same latent scale: each call's score is
        ``1 + #{k: eta + logistic noise > cutpoints[k]}`` (``attrs["cutpoints"]``).
    cutpoints : array, optional
        ``ordinal``: increasing latent cutpoints, default ``[-2, -0.67, 0.67, 2]`` + ``mu``
        (a 5-point scale).
    random_seed : int or Generator, optional
        Seed; the same seed gives the same data.

    Returns
    -------
    pandas.DataFrame
        Columns ``item``, ``category`` (if any), ``prompt``, ``temperature``, ``judge``,
        ``replicate``, ``score``; ``df.attrs["truth"]`` maps component label -> true value
        (the realised population variance for judge and temperature). For the continuous
        outcome ``df.attrs["theta"]`` is the population mean ``mu`` (the TEE target) and
        ``df.attrs["theta_panel"]`` the mean for this judge/temperature panel, ``mu`` plus
        the average judge and temperature effect (the panel target).

    Examples
    --------
    >>> df = tee_dgp(n_items=10, n_replicates=2, components={"prompt": 0.0}, random_seed=1)
    >>> df.attrs["truth"]["prompt"]
    0.0
    """
    sizes = dict(n_items=n_items, n_prompts=n_prompts, n_judges=n_judges)
    sizes |= dict(n_temperatures=n_temperatures, n_replicates=n_replicates)
    for name, value in sizes.items():
        if not (isinstance(value, int | np.integer) and not isinstance(value, bool) and value >= 1):
            raise ArgumentError(f"{name} must be an integer of at least 1, got {value!r}.")
    rng = np.random.default_rng(random_seed)
    comp = {**TABLE8_COMPONENTS, **(components or {})}
    N, V, H, M, R = n_items, n_prompts, n_temperatures, n_judges, n_replicates
    C = n_categories if n_categories and n_categories > 1 else 0
    tau = (
        np.asarray(temperature_effects, float)
        if temperature_effects is not None
        else panel_effects(H, TABLE8_SENSITIVITY["temperature"], panel, rng)
    )
    lam = (
        np.asarray(judge_effects, float)
        if judge_effects is not None
        else panel_effects(M, TABLE8_SENSITIVITY["judge"], panel, rng)
    )
    if tau.shape != (H,) or lam.shape != (M,):
        raise ArgumentError("temperature_effects / judge_effects need one value per level.")

    def draw(label: str, *shape: int) -> np.ndarray:
        return rng.normal(0.0, np.sqrt(comp[label]), size=shape)

    item_cat = np.arange(N) % C if C else np.zeros(N, dtype=int)
    a = draw("item", N) + (draw("category", C)[item_cat] if C else 0.0)
    y = (
        mu
        + a[:, None, None, None, None]
        + draw("prompt", V)[None, :, None, None, None]
        + tau[None, None, :, None, None]
        + lam[None, None, None, :, None]
        + draw("item:prompt", N, V)[:, :, None, None, None]
        + draw("item:temperature", N, H)[:, None, :, None, None]
        + draw("prompt:temperature", V, H)[None, :, :, None, None]
        + draw("item:judge", N, M)[:, None, None, :, None]
        + draw("prompt:judge", V, M)[None, :, None, :, None]
        + draw("cell", N, V, H, M)[..., None]
        + (np.zeros((N, V, H, M, R)) if outcome in LATENT else draw("replicate", N, V, H, M, R))
    )
    grid = np.indices((N, V, H, M, R)).reshape(5, -1)
    temps = np.round(np.linspace(0.0, 1.0, H), 2) if H > 1 else np.zeros(1)
    cols: dict[str, np.ndarray] = {"item": np.array([f"i{k:03d}" for k in range(N)])[grid[0]]}
    if C:
        cols["category"] = np.array([f"c{k}" for k in range(C)])[item_cat][grid[0]]
    if V > 1:
        cols["prompt"] = np.array([f"v{k + 1}" for k in range(V)])[grid[1]]
    if H > 1:
        cols["temperature"] = temps[grid[2]]
    if M > 1:
        cols["judge"] = np.array([f"judge{k + 1}" for k in range(M)])[grid[3]]
    cols["replicate"] = grid[4] + 1
    score = y.reshape(-1)
    if outcome == "threshold":
        score = (score > mu).astype(int)
    elif outcome == "bernoulli":
        score = rng.binomial(1, np.clip(score, 0.0, 1.0))
    elif outcome == "logit":
        score = rng.binomial(1, 1.0 / (1.0 + np.exp(-score)))
    elif outcome == "ordinal":
        cuts = mu + np.array([-2.0, -0.67, 0.67, 2.0]) if cutpoints is None else np.asarray(cutpoints, float)
        if cuts.ndim != 1 or len(cuts) < 2 or np.any(np.diff(cuts) <= 0):
            raise ArgumentError(f"cutpoints must be two or more increasing values, got {cutpoints!r}.")
        latent = score + rng.logistic(size=score.shape)
        score = 1 + (latent[:, None] > cuts[None, :]).sum(axis=1)
    elif outcome != "gaussian":
        raise ArgumentError(
            f"outcome must be 'gaussian', 'threshold', 'bernoulli', 'logit' or 'ordinal', got {outcome!r}."
        )
    cols["score"] = score
    df = pd.DataFrame(cols)

    if outcome == "gaussian":
        df.attrs["theta"] = float(mu)
        df.attrs["theta_panel"] = float(mu + tau.mean() + lam.mean())
    truth = {k: float(v) for k, v in comp.items()}
    if not C:
        truth.pop("category")
    # A facet held at one level confounds its interactions with the lower-order term: the
    # model estimates their sum (one judge's item effects are item + item:judge), so the truth
    # is merged the same way. With one prompt, its effects are a constant (or a shift of the
    # judge/temperature levels), not a component.
    if V == 1:
        for k in ("prompt", "prompt:temperature", "prompt:judge"):
            truth.pop(k)
        truth["item"] += truth.pop("item:prompt")
    for facet, n in (("temperature", H), ("judge", M)):
        if n == 1:
            truth["item"] += truth.pop(f"item:{facet}")
            if f"prompt:{facet}" in truth:
                truth["prompt"] += truth.pop(f"prompt:{facet}")
    if H > 1:
        truth["temperature"] = float(np.mean((tau - tau.mean()) ** 2))
    if M > 1:
        truth["judge"] = float(np.mean((lam - lam.mean()) ** 2))
    facets = tuple(f for f, n in zip(FACETS, (N, V, H, M)) if n > 1)
    if outcome == "ordinal":
        df.attrs["cutpoints"] = cuts.tolist()
    if outcome in LATENT:
        truth["replicate"] = float(np.pi**2 / 3)
        if R == 1:  # one call per cell: the cell effect is not identified, it joins the Bernoulli noise
            truth.pop("cell")
        terms = model_terms(
            facets, replicates=True, category=bool(C), family="binomial", overdispersion=R > 1
        )
        if "cell" in truth and "cell" not in {t.label for t in terms}:
            truth[cell_term(terms[:-1]).label] += truth.pop("cell")
        df.attrs["truth"] = truth
        return df
    if R == 1:
        truth["cell"] += truth.pop("replicate")
    terms = model_terms(facets, replicates=R > 1, category=bool(C))
    if "cell" not in {t.label for t in terms}:  # the cell error coincides with another term
        truth[cell_term(terms).label] += truth.pop("cell")
    df.attrs["truth"] = truth
    return df


def gstudy_dgp(
    levels: dict[str, int],
    variances: dict[str, float],
    *,
    nested: dict[str, tuple[str, ...]] | None = None,
    n_replicates: int = 1,
    residual: float = 1.0,
    mean: float = 0.0,
    outcome: str = "score",
    random_seed: int | None = None,
) -> pd.DataFrame:
    """A fully crossed G-study of any facets, from random intercepts with known variances.

    Every facet in ``levels`` is crossed with every other (a *nested* facet is crossed with
    the facets outside its nest, and its labels are made unique within it, as field data code
    runs or seeds). Each term of ``variances`` (``"item"``, ``"evaluator:prompt:run"``...)
    adds one normal effect per combination of its facets' levels; ``residual`` is the variance
    of the per-call noise. The truth is ``df.attrs["truth"]`` with the labels of a
    ``fit_posterior(df, formula=df.attrs["formula"])`` fit (the residual as ``residual``).

    Parameters
    ----------
    levels : dict
        Facet -> number of levels (a nested facet: levels within each cell of its nest).
    variances : dict
        Term label -> variance; labels join facets with ``:``.
    nested : dict, optional
        Facet -> the facets it is nested in, e.g. ``{"run": ("evaluator", "prompt")}``.
    n_replicates : int
        Calls per cell of the full cross.
    residual, mean : float
        Per-call noise variance and grand mean.
    outcome : str
        Name of the score column.
    random_seed : int, optional
        Same seed, same data.

    Returns
    -------
    pandas.DataFrame
        One row per call: a column per facet and the outcome; ``attrs["truth"]`` and
        ``attrs["formula"]``.

    Examples
    --------
    >>> df = gstudy_dgp({"item": 10, "evaluator": 3, "prompt": 2, "run": 2},
    ...                 {"item": 1.0, "evaluator": 0.2, "evaluator:prompt:run": 0.1},
    ...                 nested={"run": ("evaluator", "prompt")}, random_seed=0)
    >>> len(df), df.attrs["formula"]
    (120, 'score ~ (1|item) + (1|evaluator) + (1|evaluator:prompt:run)')
    """
    rng = np.random.default_rng(random_seed)
    nested = dict(nested or {})
    names = list(levels)
    for label in variances:
        unknown = [f for f in label.split(":") if f not in levels]
        if unknown:
            raise ArgumentError(f"term {label!r} names facet(s) {unknown} not in levels {names}.")
    grids = np.meshgrid(*[np.arange(levels[f]) for f in names], np.arange(n_replicates), indexing="ij")
    codes = {f: g.ravel() for f, g in zip(names, grids)}
    y = np.full(codes[names[0]].size, float(mean))
    for label, var in variances.items():
        fs = label.split(":")
        shape = [levels[f] for f in fs]
        effect = rng.normal(0.0, np.sqrt(var), size=shape)
        y += effect[tuple(codes[f] for f in fs)]
    y += rng.normal(0.0, np.sqrt(residual), size=y.size)
    out = {}
    for f in names:
        labels = np.char.add(f[0], codes[f].astype(str))
        for g in nested.get(f, ()):
            labels = np.char.add(np.char.add(np.char.add(g[0], codes[g].astype(str)), "."), labels)
        out[f] = labels
    df = pd.DataFrame(out)
    df[outcome] = y
    df.attrs["truth"] = {**variances, "residual": float(residual)}
    df.attrs["formula"] = f"{outcome} ~ " + " + ".join(f"(1|{label})" for label in variances)
    return df


def systems_dgp(
    n_systems: int = 6,
    n_items: int = 60,
    n_judges: int = 3,
    n_prompts: int = 2,
    *,
    system_sd: float = 0.5,
    variances: dict[str, float] | None = None,
    residual: float = 0.5,
    n_replicates: int = 1,
    outcome: Literal["gaussian", "logit", "ordinal"] = "gaussian",
    mu: float = 0.0,
    cutpoints: np.ndarray | None = None,
    random_seed: int | None = None,
) -> pd.DataFrame:
    """Several systems scored on the same items by the same judges under the same prompts,
    with known per-system truth: the data a leaderboard is fitted to.

    ``y = mu + alpha_s + a_i + p_v + lambda_j + (sa)_si + (sp)_sv + (sj)_sj + (ap)_iv +
    (aj)_ij + c_sivj + e``, ``c`` the cell effect (a call's system x item x prompt x judge
    cell; separable from ``e`` with replicates). The system effects ``alpha`` are spread evenly
    over ``system_sd`` (fixed truths), the judges are a fixed panel (their effects spread
    evenly over 0.3) and every other term is drawn from ``N(0, variances[label])``.

    ``outcome="logit"`` makes each call a 0/1 verdict: ``1`` when ``mu + y - e`` plus logistic
    noise is positive (``residual`` unused); ``"ordinal"`` a score
    ``1 + #{k: mu + y - e + logistic noise > cutpoints[k]}`` (default cutpoints
    ``[-2, -0.67, 0.67, 2]``). Their truths are on the latent scale, and ``attrs["truth"]``
    adds ``new_score``: each system's success probability or expected score over the
    population of items and prompts for this judge panel (its fixed judge and judge x system
    effects), by Gauss-Hermite over the other terms' summed variance.

    Returns
    -------
    pandas.DataFrame
        Columns ``model, item, prompt, judge, replicate, score``; ``attrs["truth"]`` holds the
        variances and, per system, ``new`` (its mean over the population of items and prompts,
        for this judge panel) and ``panel`` (over the item population, for these prompts and
        judges), each with the grand mean.

    Examples
    --------
    >>> df = systems_dgp(n_systems=3, n_items=10, random_seed=0)
    >>> len(df), sorted(df.attrs["truth"]["new"])
    (180, ['s0', 's1', 's2'])
    >>> df = systems_dgp(n_systems=2, n_items=10, outcome="logit", random_seed=0)
    >>> sorted(df["score"].unique().tolist()), sorted(df.attrs["truth"]["new_score"])
    ([0, 1], ['s0', 's1'])
    """
    v = {
        "item": 1.0,
        "prompt": 0.05,
        "system:item": 0.2,
        "system:prompt": 0.02,
        "system:judge": 0.05,
        "item:prompt": 0.05,
        "item:judge": 0.1,
        "cell": 0.05,
    } | dict(variances or {})
    rng = np.random.default_rng(random_seed)
    S, N, M, V, R = n_systems, n_items, n_judges, n_prompts, n_replicates
    alpha = spread_levels(S, system_sd**2)
    lam = spread_levels(M, 0.3**2)
    eff = {
        "item": rng.normal(0, np.sqrt(v["item"]), N),
        "prompt": rng.normal(0, np.sqrt(v["prompt"]), V),
        "system:item": rng.normal(0, np.sqrt(v["system:item"]), (S, N)),
        "system:prompt": rng.normal(0, np.sqrt(v["system:prompt"]), (S, V)),
        "system:judge": rng.normal(0, np.sqrt(v["system:judge"]), (S, M)),
        "item:prompt": rng.normal(0, np.sqrt(v["item:prompt"]), (N, V)),
        "item:judge": rng.normal(0, np.sqrt(v["item:judge"]), (N, M)),
        "cell": rng.normal(0, np.sqrt(v["cell"]), (S, N, V, M)),
    }
    s, i, p, j, r = (g.ravel() for g in np.meshgrid(*map(np.arange, (S, N, V, M, R)), indexing="ij"))
    y = (
        alpha[s] + eff["item"][i] + eff["prompt"][p] + lam[j] + eff["system:item"][s, i]
        + eff["system:prompt"][s, p] + eff["system:judge"][s, j] + eff["item:prompt"][i, p]
        + eff["item:judge"][i, j] + eff["cell"][s, i, p, j]
    )  # fmt: skip
    names = [f"s{k}" for k in range(S)]
    new = alpha + lam.mean() + eff["system:judge"].mean(axis=1)
    panel = new + eff["prompt"].mean() + eff["system:prompt"].mean(axis=1)
    extra = {}
    if outcome == "gaussian":
        y = y + rng.normal(0, np.sqrt(residual), s.size)
    elif outcome in LATENT:
        cuts = np.array([-2.0, -0.67, 0.67, 2.0]) if cutpoints is None else np.asarray(cutpoints, float)
        if outcome == "ordinal" and (cuts.ndim != 1 or cuts.size < 2 or np.any(np.diff(cuts) <= 0)):
            raise ArgumentError(f"cutpoints must be two or more increasing values, got {cutpoints!r}.")
        latent = mu + y + rng.logistic(size=y.shape)
        y = (latent > 0).astype(int) if outcome == "logit" else 1 + (latent[:, None] > cuts).sum(axis=1)
        # each system's score over new items and prompts, for this panel (Gauss-Hermite)
        x, w = np.polynomial.hermite.hermgauss(40)
        spread = np.sqrt(2.0 * sum(val for k, val in v.items() if k != "system:judge"))
        at = (mu + alpha[:, None] + lam + eff["system:judge"])[..., None] + spread * x  # (S, M, nodes)
        if outcome == "logit":
            g = 1.0 / (1.0 + np.exp(-at))
        else:  # 1 + the number of cutpoints passed: 1 + sum_k P(latent > c_k)
            g = 1.0 + (1.0 / (1.0 + np.exp(-(at[..., None] - cuts)))).sum(axis=-1)
        extra["new_score"] = dict(zip(names, ((g * w).sum(axis=-1).mean(axis=1) / np.sqrt(np.pi)).tolist()))
    else:
        raise ArgumentError(f"outcome must be 'gaussian', 'logit' or 'ordinal', got {outcome!r}.")
    df = pd.DataFrame(
        {
            "model": np.array(names)[s],
            "item": np.char.add("i", i.astype(str)),
            "prompt": np.char.add("p", p.astype(str)),
            "judge": np.char.add("j", j.astype(str)),
            "replicate": r,
            "score": y,
        }
    )
    df.attrs["truth"] = {
        **v,
        "residual": float(residual),
        "new": dict(zip(names, new.tolist())),
        "panel": dict(zip(names, panel.tolist())),
        **extra,
    }
    return df


#: Names that moved (old imports still work, with a DeprecationWarning).
__getattr__ = moved_names(
    __name__,
    {
        "judge_calibration": "bayes_tee.studies.verdicts_dgp",
        "pairwise_battles": "bayes_tee.studies.verdicts_dgp",
    },
)
