"""The Bayesian judge-calibration model (sensitivity/specificity with Beta priors).

True accuracy ``pi_s`` per system, and per judge a sensitivity ``Se`` and specificity ``Sp``:

``shared``
    one (Se, Sp) per judge, used for every system;
``system``
    one (Se, Sp) per judge x system, each with its own Beta prior;
``hierarchical``
    ``logit Se_js = mu_j + tau_j z_js`` (and the same for Sp): per-system values partially
    pooled around a judge-level mean. ``mu_j`` gets the logit-scale mean and SD of the Beta
    prior, ``tau_j`` a half-t(3) prior; the posterior of ``tau_j`` is the Bayesian form of the
    LLM-as-a-Judge bias paper (2026)'s calibration-gap diagnostic.

Calibration items contribute ``P(verdict | label)``: the true positives out of the positively
labelled items are Binomial(Se), the true negatives out of the negatives Binomial(Sp). With
``use_labels`` (calibration items drawn at random from the system's outputs), the labels are
also Binomial(pi_s) draws. A test item's verdicts are conditionally independent across judges
given its latent truth, which is summed out:

``P(v) = pi prod_j Se^v (1-Se)^(1-v) + (1-pi) prod_j (1-Sp)^v Sp^(1-v)``

over the judges that rated it, evaluated once per verdict pattern and weighted by the pattern's
count (sufficient statistics: the cost does not grow with the number of items). With one judge
this is the binomial likelihood of the positive rate ``Se pi + (1-Sp)(1-pi)``.

>>> model = build_model(data, mode="hierarchical")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from .._core.beta_prior import logit_moments
from .._core.exceptions import ArgumentError
from .data import MISSING, CalibrationData

Mode = Literal["shared", "system", "hierarchical"]
MODES = ("shared", "system", "hierarchical")


def model_data(
    data: CalibrationData,
    se_prior: tuple[float, float] = (1.0, 1.0),
    sp_prior: tuple[float, float] = (1.0, 1.0),
    accuracy_prior: tuple[float, float] = (1.0, 1.0),
    gap_scale: float = 0.5,
    use_labels: bool = True,
) -> dict[str, np.ndarray]:
    """Everything the model reads through ``pm.Data``: counts, prior parameters and the label
    switch, so a compiled model is refitted with new data or priors without recompiling.
    """
    return {
        "tp": data.tp,
        "fn": data.fn,
        "tn": data.tn,
        "fp": data.fp,
        "label_n": data.label_n,
        "label_pos": data.label_pos,
        "pattern_counts": data.pattern_counts,
        "se_prior": np.array(se_prior, float),
        "sp_prior": np.array(sp_prior, float),
        "se_logit": np.array(logit_moments(*se_prior)),
        "sp_logit": np.array(logit_moments(*sp_prior)),
        "accuracy_prior": np.array(accuracy_prior, float),
        "gap_scale": np.array(float(gap_scale)),
        "use_labels": np.array(float(use_labels)),
    }


def _rates(name: str, mode: str, d: dict) -> pt.TensorVariable:
    """Se or Sp as a ``(judge, system)`` tensor."""
    prior = d[f"{name}_prior"]
    if mode == "shared":
        per_judge = pm.Beta(f"{name}_judge", prior[0], prior[1], dims="judge")
        return pt.outer(per_judge, pt.ones(len(pm.modelcontext(None).coords["system"])))
    if mode == "system":
        return pm.Beta(f"{name}_system", prior[0], prior[1], dims=("judge", "system"))
    m = d[f"{name}_logit"]
    mu = pm.Normal(f"{name}_logit_mean", m[0], m[1], dims="judge")
    tau = pm.HalfStudentT(f"{name}_gap_sd", nu=3, sigma=d["gap_scale"], dims="judge")
    # non-centred (measured on the sweep's 2-system fits: the centred form diverges in every
    # fit, this one in about half of them at target_accept 0.95, hence 0.99 there)
    z = pm.Normal(f"{name}_z", 0.0, 1.0, dims=("judge", "system"))
    return pm.math.sigmoid(mu[:, None] + tau[:, None] * z)


def build_model(
    data: CalibrationData,
    mode: Mode = "hierarchical",
    se_prior: tuple[float, float] = (1.0, 1.0),
    sp_prior: tuple[float, float] = (1.0, 1.0),
    accuracy_prior: tuple[float, float] = (1.0, 1.0),
    gap_scale: float = 0.5,
    use_labels: bool = True,
) -> pm.Model:
    """The PyMC model; see the module docstring.

    Parameters
    ----------
    data : CalibrationData
    mode : {"shared", "system", "hierarchical"}
    se_prior, sp_prior, accuracy_prior : (a, b)
        Beta priors (in ``hierarchical`` mode, Se/Sp's logit-scale mean prior matches them).
    gap_scale : float
        Scale of the half-t(3) prior on the logit-scale SD of Se/Sp across systems.
    use_labels : bool
        Calibration labels also inform each system's accuracy (random-sample calibration).
    """
    if mode not in MODES:
        raise ArgumentError(f"calibration must be one of {MODES}, got {mode!r}.")
    A1 = (data.patterns == 1).astype(float)  # (n_pat, J)
    A0 = (data.patterns == 0).astype(float)
    assert (data.patterns != MISSING).any(axis=1).all()
    coords = {"system": data.systems, "judge": data.judges}
    with pm.Model(coords=coords) as model:
        values = model_data(data, se_prior, sp_prior, accuracy_prior, gap_scale, use_labels)
        d = {k: pm.Data(k, v) for k, v in values.items()}
        pi = pm.Beta("accuracy", d["accuracy_prior"][0], d["accuracy_prior"][1], dims="system")
        se = pm.Deterministic("se", _rates("se", mode, d), dims=("judge", "system"))
        sp = pm.Deterministic("sp", _rates("sp", mode, d), dims=("judge", "system"))
        pm.Deterministic("youden", se + sp - 1.0, dims=("judge", "system"))
        log_se, log_1se = pt.log(se), pt.log1p(-se)
        log_sp, log_1sp = pt.log(sp), pt.log1p(-sp)
        pm.Potential(
            "calibration", pt.sum(d["tp"] * log_se + d["fn"] * log_1se + d["tn"] * log_sp + d["fp"] * log_1sp)
        )
        pm.Potential(
            "labels",
            d["use_labels"]
            * pt.sum(d["label_pos"] * pt.log(pi) + (d["label_n"] - d["label_pos"]) * pt.log1p(-pi)),
        )
        l1 = pt.dot(log_se.T, A1.T) + pt.dot(log_1se.T, A0.T)  # (S, n_pat): log P(v | truth 1)
        l0 = pt.dot(log_1sp.T, A1.T) + pt.dot(log_sp.T, A0.T)  # log P(v | truth 0)
        ll = pt.logaddexp(pt.log(pi)[:, None] + l1, pt.log1p(-pi)[:, None] + l0)
        pm.Potential("test", pt.sum(d["pattern_counts"] * ll))
    return model


def free_names(mode: str) -> list[str]:
    """Variables whose convergence every summary depends on."""
    base = ["accuracy", "se", "sp"]
    return base + (["se_gap_sd", "sp_gap_sd"] if mode == "hierarchical" else [])
