"""Convergence diagnostics of a fit: R-hat, bulk/tail ESS, divergences, tree depth, E-BFMI.

R-hat and ESS are checked on the parameters every summary depends on (the SDs, the grand mean
and the fixed level effects), with the thresholds of Vehtari et al. (2021): R-hat <= 1.01,
ESS >= 400. The sampler's own checks are counted as :func:`arviz_stats.diagnose` (and CmdStan's
``diagnose``) count them: no divergent transition, no transition stopped by the maximum tree
depth, and an E-BFMI of at least 0.3 in every chain (Betancourt 2016). nutpie names its
tree-depth statistic ``maxdepth_reached``; it is read under the name ``diagnose`` knows.

>>> import numpy as np, xarray as xr
>>> rng = np.random.default_rng(0)
>>> post = xr.Dataset({"mu": (("chain", "draw"), rng.normal(size=(4, 500)))})
>>> tree = xr.DataTree.from_dict({"posterior": post})
>>> d = check(tree, ["mu"])
>>> d["ok"], d["divergences"]
(True, 0)
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import xarray as xr
from arviz_stats.base.array import array_stats
from arviz_stats.validate import validate_ci_prob

from .exceptions import DiagnosticWarning
from .trees import group

MAX_RHAT = 1.01
MIN_ESS = 400
#: E-BFMI below this in a chain: the momentum resampling explores the energy poorly.
MIN_BFMI = 0.3
#: Sample-stat names of nutpie -> the names :func:`arviz_stats.diagnose` reads (PyMC's).
SAMPLE_STAT_NAMES = {"maxdepth_reached": "reached_max_treedepth"}


def check(tree: xr.DataTree, var_names: list[str]) -> dict:
    """Diagnose ``var_names`` of ``tree``'s posterior and its sampler statistics.

    arviz-stats' rank-normalised split R-hat, bulk and tail ESS, and the divergences in
    ``sample_stats``.

    Returns
    -------
    dict
        ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences``, ``treedepth_hits``
        (transitions stopped by the maximum tree depth), ``min_bfmi`` (``None`` without the
        sampler's energy), ``n_draws``, ``ok`` and ``problems`` (plain-language list, empty
        when ``ok``).
    """
    post = group(tree, "posterior")
    draws = _stacked([post[v] for v in var_names])
    # arviz-stats' own array functions (what its Dataset functions apply to each variable), on
    # every checked value at once: the same numbers in 0.5-0.8x the time (bench_questions.py)
    r_hat = array_stats.rhat(draws, chain_axis=0, draw_axis=1, method="rank")
    bulk = array_stats.ess(draws, chain_axis=0, draw_axis=1, method="bulk")
    tail = array_stats.ess(draws, chain_axis=0, draw_axis=1, method="tail", prob=validate_ci_prob(None))

    def extreme(vals: np.ndarray, fn) -> float:
        """The largest or least value; NaN when none could be computed (R-hat of a single
        short chain), which fails the check below.
        """
        vals = np.asarray(vals, dtype=float).ravel()
        vals = vals[~np.isnan(vals)]
        return float(fn(vals)) if vals.size else float("nan")

    out = {
        "max_rhat": extreme(r_hat, np.max),
        "min_ess_bulk": extreme(bulk, np.min),
        "min_ess_tail": extreme(tail, np.min),
        **_sampler_checks(tree),
        "n_draws": int(draws.shape[0] * draws.shape[1]),
    }
    problems = []
    if np.isnan(out["max_rhat"]):
        problems.append("R-hat could not be computed (sample 2 or more chains)")
    elif not out["max_rhat"] <= MAX_RHAT:
        problems.append(f"max R-hat {out['max_rhat']:.3f} > {MAX_RHAT}")
    if not out["min_ess_bulk"] >= MIN_ESS:
        problems.append(f"min bulk ESS {out['min_ess_bulk']:.0f} < {MIN_ESS}")
    if not out["min_ess_tail"] >= MIN_ESS:
        problems.append(f"min tail ESS {out['min_ess_tail']:.0f} < {MIN_ESS}")
    if out["divergences"]:
        problems.append(f"{out['divergences']} divergent transition(s)")
    if out["treedepth_hits"]:
        problems.append(f"{out['treedepth_hits']} transition(s) stopped at the maximum tree depth")
    if out["min_bfmi"] is not None and not out["min_bfmi"] >= MIN_BFMI:
        problems.append(f"E-BFMI {out['min_bfmi']:.2f} < {MIN_BFMI} in a chain")
    out["ok"] = not problems
    out["problems"] = problems
    return out


def _stacked(arrays: list[xr.DataArray]) -> np.ndarray:
    """The variables' draws side by side, ``(chain, draw, values)``."""
    out = []
    for da in arrays:
        a = da.transpose("chain", "draw", ...).values
        out.append(np.asarray(a, dtype=float).reshape(a.shape[0], a.shape[1], -1))
    return np.concatenate(out, axis=2)


def _sampler_checks(tree: xr.DataTree) -> dict:
    """Divergences, tree-depth hits and the least E-BFMI, as :func:`arviz_stats.diagnose`
    counts them (its E-BFMI is arviz-stats' ``bfmi`` of the energy, per chain).
    """
    none = {"divergences": 0, "treedepth_hits": 0, "min_bfmi": None}
    if "sample_stats" not in tree.children:
        return none
    stats = group(tree, "sample_stats")

    def find(stat: str) -> np.ndarray | None:
        """The statistic under its PyMC name, else under nutpie's, as ``(chain, draw)`` floats."""
        for name in (stat, *(k for k, v in SAMPLE_STAT_NAMES.items() if v == stat)):
            if name in stats.data_vars:
                return np.asarray(stats[name].transpose("chain", "draw", ...).values, dtype=float)
        return None

    def total(stat: str) -> int:
        found = find(stat)
        return 0 if found is None else int(found.sum())

    energy = find("energy")
    bfmi = None if energy is None else float(np.min(array_stats.bfmi(energy, chain_axis=0, draw_axis=1)))
    return {
        "divergences": total("diverging"),
        "treedepth_hits": total("reached_max_treedepth"),
        "min_bfmi": bfmi,
    }


def message(diag: dict) -> str:
    """One-line warning text for a failed fit ('' when it passed)."""
    if diag["ok"]:
        return ""
    return (
        "Fit diagnostics failed (" + "; ".join(diag["problems"]) + "): treat these numbers as "
        "unreliable. Sample longer (draws=, tune=), raise target_accept, or check the design."
    )


def warn_if_failed(diag: dict, stacklevel: int = 3) -> None:
    """Emit a :class:`~bayes_tee.DiagnosticWarning` when the fit failed a check."""
    if not diag["ok"]:
        warnings.warn(message(diag), DiagnosticWarning, stacklevel=stacklevel)


@contextlib.contextmanager
def quiet():
    """Silence :class:`~bayes_tee.DiagnosticWarning` inside the block (for a caller that reports a
    failed fit once, in its own text or figure).

    >>> with quiet():
    ...     warn_if_failed({"ok": False, "problems": ["R-hat 1.2"]})
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DiagnosticWarning)
        yield


def stamp(table, diag: dict, stacklevel: int = 4):
    """Warn if the fit failed a check and record the verdict in ``table.attrs``
    (``diagnostics_ok``, and ``warning`` when it failed), so it travels with the table.
    """
    warn_if_failed(diag, stacklevel=stacklevel + 1)
    return record(table, diag)


def record(table, diag: dict):
    """Record the fit's verdict in ``table.attrs`` (``diagnostics_ok``, and ``warning`` when it
    failed) without warning: for a table a report draws under its own diagnostics section.
    """
    table.attrs["diagnostics_ok"] = diag["ok"]
    if not diag["ok"]:
        table.attrs["warning"] = message(diag)
    return table


class FitResult:
    """Mixin of every fitted result (TEE posterior, judge calibration, paired-noise posterior):
    the convergence checks computed once, and tables stamped with their verdict.

    A subclass sets ``idata`` (the draws) and names the variables to check in
    :meth:`_convergence_vars`; :meth:`convergence` returns :func:`check` on them, and
    :meth:`_stamp` makes a failed fit warn from the user's call and records the verdict in the
    table's ``attrs``.
    """

    idata: xr.DataTree
    _convergence: dict | None = None

    def _convergence_vars(self) -> list[str]:
        raise NotImplementedError

    def convergence(self) -> dict:
        """R-hat, bulk/tail ESS and divergences of the fit (:func:`bayes_tee._core.diagnostics.check`).

        Returns
        -------
        dict
            ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences``, ``n_draws``,
            ``ok``, ``problems``.
        """
        if self._convergence is None:
            self._convergence = check(self.idata, self._convergence_vars())
        return dict(self._convergence)

    def _stamp(self, table, stacklevel: int = 4):
        """``table`` with the fit's verdict (warns from the public method's caller)."""
        return stamp(table, self.convergence(), stacklevel=stacklevel)
