"""Controlled comparisons: each system's score with the covariates set to reference values.

A fit with covariates (:mod:`bayes_tee.design.covariates`) has each call's linear predictor
``... + slope(cell) * x``. A system's *uncontrolled* score is its mean over its own calls, at
the covariate values they had (``sum over its cells of n_c slope_c xbar_c / N_s`` added to
``mu + system_effect``): what the raw scores rank. Its score *controlled* at ``x = v``
(AlpacaEval's length-controlled win rate is ``control={"length": 0}``) puts ``v`` in place of
every call's value: ``sum_c n_c slope_c v / N_s``. Per posterior draw both are linear in the
slopes, computed from per-level weights (no per-cell draws):

    K_s = sum_k [ beta_k m_sk + sum_f dev_kf . M_skf + sum_g (sigma_kg z_kg) . M_skg ],

with ``m_sk`` the system's mean covariate (or ``v_k``) and ``M_skf[l]`` its calls' share at level
``l`` of facet ``f`` times their mean covariate there (or ``v_k``). The control's own uncertainty
is carried: the slopes' posterior moves every controlled score and difference
(:func:`adjustment`). A random slope enters at the fitted levels (the panel's biases); the
*new* reading adds a new level's slope variance ``sigma^2 sum_l (Delta M_sl)^2`` (conservative: the
fitted levels' part stays in).

>>> control_values(post, {"length": 0})  # standardised: (0 - mean) / SD  # doctest: +SKIP
{'length': -0.31}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._core.exceptions import DesignError
from .._core.trees import group

if TYPE_CHECKING:
    from .fit import Fit

Control = Mapping[str, float]


def control_values(post: Fit, control: Control | None) -> dict[str, float]:
    """The control values on the standardised scale, checked: every key a covariate of the
    model, every value a finite number.

    Raises
    ------
    DesignError
        A key that is no covariate (a factor, or not in the model), or a value that is no number.
    """
    if not control:
        return {}
    cov = post.design.covariates
    if not isinstance(control, Mapping):
        raise DesignError(
            f"control must be a mapping of covariate to value, e.g. {{'length': 0}}; got {control!r}."
        )
    names = () if cov is None else cov.names
    out = {}
    for key, value in control.items():
        if key not in names:
            facets = set(post.design.columns.values()) | set(post.design.facets)
            what = (
                "a factor of the model: a control sets a covariate (a slope's column) to a value"
                if key in facets
                else "not in the model"
            )
            have = (
                f"its covariates are {list(names)}"
                if names
                else "the model has no covariates (write one in the formula)"
            )
            raise DesignError(f"control={{{key!r}: ...}}: {key!r} is {what}; {have}.")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float | np.integer | np.floating)
            or not np.isfinite(value)
        ):
            raise DesignError(f"control[{key!r}] must be a finite number, got {value!r}.")
        k = cov.of(key)
        out[key] = (float(value) - cov.center[k]) / cov.scale[k]
    return out


def _level_slopes(post: Fit, slope) -> np.ndarray:
    """Draws ``(n_draws, levels)`` of a per-level slope's deviations (fixed) or ``sigma * z``
    (random), per SD of the covariate, on the fit's scale.
    """
    P = group(post.idata, "posterior")
    if slope.kind == "fixed":
        x = P[slope.var_name].transpose("chain", "draw", slope.by).values
        return x.reshape(-1, x.shape[-1])
    z = P[slope.level_name].transpose("chain", "draw", slope.by).values
    z = z.reshape(-1, z.shape[-1])
    return z * P[slope.var_name].values.reshape(-1, 1)


def _weights(post: Fit, k: int, value: float | None, by: str | None) -> np.ndarray:
    """``(n_systems,)`` or ``(n_systems, levels)``: each system's calls' mean covariate ``k``
    (``value``: the control instead), overall or per level of ``by``.
    """
    d = post.design
    cells = d.cells
    n = cells["n"].to_numpy(dtype=float)
    sys_code = cells[d.system].to_numpy()
    S = len(d.levels[d.system])
    x = (
        cells[d.covariates.mean_columns[k]].to_numpy(dtype=float)
        if value is None
        else np.full(len(cells), value)
    )
    total = np.bincount(sys_code, n, minlength=S)
    if by is None:
        return np.bincount(sys_code, n * x, minlength=S) / total
    L = len(d.levels[by])
    flat = sys_code * L + cells[by].to_numpy()
    return np.bincount(flat, n * x, minlength=S * L).reshape(S, L) / total[:, None]


def covariate_part(post: Fit, control: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Draws ``(n_draws, n_systems)`` of every system's covariate part ``K_s`` (module
    docstring) at control values ``control`` (standardised, :func:`control_values`; covariates
    not named stay at their observed values), and ``(n_draws, n_systems)`` the extra variance
    of the *new* reading (a new level's random slope) relative to the observed values.
    """
    d = post.design
    cov = d.covariates
    P = group(post.idata, "posterior")
    n_draws = P.sizes["chain"] * P.sizes["draw"]
    S = len(d.levels[d.system])
    part = np.zeros((n_draws, S))
    extra = np.zeros((n_draws, S))
    control = control or {}
    for s in cov.slopes:
        k = cov.of(s.covariate)
        value = control.get(s.covariate)
        w = _weights(post, k, value, s.by)
        if s.by is None:
            part += P[s.var_name].values.reshape(-1, 1) * w[None, :]
            continue
        part += _level_slopes(post, s) @ w.T
        if s.kind == "random" and value is not None:
            delta = w - _weights(post, k, None, s.by)
            extra += P[s.var_name].values.reshape(-1, 1) ** 2 * (delta**2).sum(axis=1)[None, :]
    return part, extra


@dataclass(frozen=True)
class Adjustment:
    """What a control adds to a systems table: per draw, each system's covariate part at the
    control values (``part``) and at the observed values (``observed``), and the *new*
    reading's extra variance (``extra``), all ``(n_draws, n_systems)``; ``control`` as given.
    """

    part: np.ndarray
    observed: np.ndarray
    extra: np.ndarray
    control: dict[str, float]

    @property
    def shift(self) -> np.ndarray:
        """Draws of the control's change of every system's score, ``part - observed``."""
        return self.part - self.observed

    def variance(self, over: str) -> np.ndarray:
        """``(n_systems,)``: the control's posterior variance per system under reading ``over``."""
        v = self.shift.var(axis=0)
        return v + (self.extra.mean(axis=0) if over == "new" else 0.0)

    def pair_variance(self, i: int, j: int, over: str) -> float:
        """The control's posterior variance of the difference ``i - j`` under reading ``over``."""
        v = float((self.shift[:, i] - self.shift[:, j]).var())
        return v + (float((self.extra[:, i] + self.extra[:, j]).mean()) if over == "new" else 0.0)


def adjustment(post: Fit, control: Control | None) -> Adjustment | None:
    """The :class:`Adjustment` of ``control`` on a systems fit with covariates (``None``: no
    covariates and no control).

    Raises
    ------
    DesignError
        A control on a fit without covariates, or of a column that is no covariate.
    """
    values = control_values(post, control)
    if post.design.covariates is None:
        return None
    observed, _ = covariate_part(post)
    if not values:
        return Adjustment(observed, observed, np.zeros_like(observed), {})
    part, extra = covariate_part(post, values)
    return Adjustment(part, observed, extra, dict(control or {}))


def reading(control: Control | None) -> str:
    """How a table names its control: ``"uncontrolled"`` or ``"controlled at length = 0"``."""
    if not control:
        return "uncontrolled (each system at its own calls' covariate values)"
    return "controlled at " + ", ".join(f"{k} = {v:g}" for k, v in control.items())
