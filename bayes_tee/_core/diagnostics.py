"""Convergence diagnostics of a fit: R-hat, bulk/tail ESS, divergences, tree depth, E-BFMI.

R-hat and ESS are checked on the parameters every summary depends on (the SDs, the grand mean
and the fixed level effects), with the thresholds of Vehtari et al. (2021): R-hat <= 1.01,
ESS >= 400. The sampler's own checks come from :func:`arviz_stats.diagnose`, as CmdStan's
``diagnose`` makes them: no divergent transition, no transition stopped by the maximum tree
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
from arviz_stats import diagnose, ess, rhat

from .exceptions import DiagnosticWarning
from .trees import group

MAX_RHAT = 1.01
MIN_ESS = 400
#: E-BFMI below this in a chain: the momentum resampling explores the energy poorly.
MIN_BFMI = 0.3
#: Sample-stat names of nutpie -> the names :func:`arviz_stats.diagnose` reads (PyMC's).
SAMPLE_STAT_NAMES = {"maxdepth_reached": "reached_max_treedepth"}
#: The sampler statistics the checks read.
SAMPLER_STATS = ("diverging", "reached_max_treedepth", "energy")


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
    post = group(tree, "posterior")[var_names]
    r_hat = rhat(post)
    bulk = ess(post, method="bulk")
    tail = ess(post, method="tail")

    def extreme(ds, fn) -> float:
        """The largest or least value over every variable; NaN when none could be computed
        (R-hat of a single short chain), which fails the check below.
        """
        vals = np.concatenate([np.ravel(ds[v].values) for v in ds.data_vars]).astype(float)
        vals = vals[~np.isnan(vals)]
        return float(fn(vals)) if vals.size else float("nan")

    out = {
        "max_rhat": extreme(r_hat, np.max),
        "min_ess_bulk": extreme(bulk, np.min),
        "min_ess_tail": extreme(tail, np.min),
        **_sampler_checks(tree, var_names[0]),
        "n_draws": int(post.sizes["chain"] * post.sizes["draw"]),
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


def _sampler_checks(tree: xr.DataTree, var: str) -> dict:
    """Divergences, tree-depth hits and the least E-BFMI, from :func:`arviz_stats.diagnose`."""
    none = {"divergences": 0, "treedepth_hits": 0, "min_bfmi": None}
    if "sample_stats" not in tree.children:
        return none
    stats = tree["sample_stats"].to_dataset()
    stats = stats.rename({k: v for k, v in SAMPLE_STAT_NAMES.items() if k in stats and v not in stats})
    stats = stats[[s for s in SAMPLER_STATS if s in stats.data_vars]]
    if not stats.data_vars:
        return none
    post = group(tree, "posterior")[[var]]
    # diagnose names chains by their coordinate: give one to draws that came without
    post, stats = (
        ds.assign_coords(
            {d: np.arange(ds.sizes[d]) for d in ("chain", "draw") if d in ds.dims and d not in ds.coords}
        )
        for ds in (post, stats.astype(float))
    )
    view = xr.DataTree.from_dict({"posterior": post, "sample_stats": stats})
    with warnings.catch_warnings():  # its R-hat/ESS messages are ours to make (check above)
        warnings.simplefilter("ignore")
        _, found = diagnose(
            view, var_names=[var], bfmi_threshold=MIN_BFMI, show_diagnostics=False, return_diagnostics=True
        )
    bfmi = found.get("bfmi", {}).get("bfmi_values")
    return {
        "divergences": int(found.get("divergent", {}).get("n_divergent", 0)),
        "treedepth_hits": int(found.get("treedepth", {}).get("n_max", 0)),
        "min_bfmi": None if bfmi is None else float(np.min(bfmi)),
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
