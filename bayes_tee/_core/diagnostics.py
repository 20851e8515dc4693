"""Convergence diagnostics of a fit: R-hat, bulk/tail ESS and divergences.

Checked on the parameters every summary depends on (the SDs, the grand mean and the fixed
level effects), with the thresholds of Vehtari et al. (2021): R-hat <= 1.01, ESS >= 400,
no divergences.

>>> import numpy as np, xarray as xr
>>> rng = np.random.default_rng(0)
>>> post = xr.Dataset({"mu": (("chain", "draw"), rng.normal(size=(4, 500)))})
>>> tree = xr.DataTree.from_dict({"posterior": post})
>>> d = check(tree, ["mu"])
>>> d["ok"], d["divergences"]
(True, 0)
"""

from __future__ import annotations

import warnings

import numpy as np
import xarray as xr
from arviz_stats import ess, rhat

from .exceptions import DiagnosticWarning
from .trees import group

MAX_RHAT = 1.01
MIN_ESS = 400


def check(tree: xr.DataTree, var_names: list[str]) -> dict:
    """Diagnose ``var_names`` of ``tree``'s posterior and its sampler statistics.

    arviz-stats' rank-normalised split R-hat, bulk and tail ESS, and the divergences in
    ``sample_stats``.

    Returns
    -------
    dict
        ``max_rhat``, ``min_ess_bulk``, ``min_ess_tail``, ``divergences``, ``n_draws``,
        ``ok`` and ``problems`` (plain-language list, empty when ``ok``).
    """
    post = group(tree, "posterior")[var_names]
    r_hat = rhat(post)
    bulk = ess(post, method="bulk")
    tail = ess(post, method="tail")

    def extreme(ds, fn) -> float:
        vals = [float(fn(ds[v].values)) for v in ds.data_vars]
        return float(fn(np.array(vals)))

    out = {
        "max_rhat": extreme(r_hat, np.nanmax),
        "min_ess_bulk": extreme(bulk, np.nanmin),
        "min_ess_tail": extreme(tail, np.nanmin),
        "divergences": _divergences(tree),
        "n_draws": int(post.sizes["chain"] * post.sizes["draw"]),
    }
    problems = []
    if not out["max_rhat"] <= MAX_RHAT:
        problems.append(f"max R-hat {out['max_rhat']:.3f} > {MAX_RHAT}")
    if not out["min_ess_bulk"] >= MIN_ESS:
        problems.append(f"min bulk ESS {out['min_ess_bulk']:.0f} < {MIN_ESS}")
    if not out["min_ess_tail"] >= MIN_ESS:
        problems.append(f"min tail ESS {out['min_ess_tail']:.0f} < {MIN_ESS}")
    if out["divergences"]:
        problems.append(f"{out['divergences']} divergent transition(s)")
    out["ok"] = not problems
    out["problems"] = problems
    return out


def _divergences(tree: xr.DataTree) -> int:
    if "sample_stats" not in tree.children or "diverging" not in tree["sample_stats"].data_vars:
        return 0
    return int(tree["sample_stats"]["diverging"].sum())


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


def stamp(table, diag: dict, stacklevel: int = 4):
    """Warn if the fit failed a check and record the verdict in ``table.attrs``
    (``diagnostics_ok``, and ``warning`` when it failed), so it travels with the table.
    """
    warn_if_failed(diag, stacklevel=stacklevel + 1)
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
