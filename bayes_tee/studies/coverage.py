"""Coverage studies: do intervals contain the truth as often as they say over simulated pilots.

Each simulated data set comes from a DGP with known answers (by default
:func:`bayes_tee.studies.dgp.tee_dgp` with ``panel="resample"``: every data set gets a new
judge/temperature panel drawn from the same population of levels). Each method then states
intervals for:

* ``theta (panel)``: the mean for *this* judge/temperature panel (``df.attrs["theta_panel"]``),
  the target of the posterior of ``mu`` and of the plug-in's random-terms-only SE;
* ``theta (TEE)``: what another equally good pipeline would report, the population mean
  (``df.attrs["theta"]``), the target of the TEE interval (sensitivity included);
* the largest variance components (``df.attrs["truth"]``).

Methods: ``naive`` (``ybar +- z s / sqrt(n)``, theta only), ``anova_wald`` and ``bootstrap``
(the truncated ANOVA/EMS plug-in of :mod:`bayes_tee.studies.plugin`, balanced designs only; its
singular rate is reported) and ``bayes`` (:func:`bayes_tee.fit_posterior`). Simulated data sets
are split into chunks that run on local processes (default), any
:class:`concurrent.futures.Executor`, or a ``dask.distributed`` Client; each worker process
keeps its compiled model, so after the first fit of a design every refit only samples. Chunks
are written to ``cache_dir`` as they finish, so an interrupted study resumes where it stopped.

>>> import bayes_tee as bt
>>> study = bt.simulate.coverage_study(
...     bt.simulate.tee_dgp, designs=[dict(n_items=30, n_prompts=3, n_judges=3,
...     n_temperatures=1, n_replicates=3)], n_sims=200, level=0.9, random_seed=1)  # doctest: +SKIP
>>> study.table()  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import multiprocessing as mp
import os
import pickle
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import cloudpickle
import numpy as np
import pandas as pd
from scipy import stats

from .._core.exceptions import ArgumentError, DiagnosticWarning
from ..design.roles import validate_design
from ..plots import plot_coverage, plot_staircase
from ..tee.fit import fit_posterior
from . import workers
from .dgp import tee_dgp
from .plugin import plugin_fit

if TYPE_CHECKING:
    from matplotlib.figure import Figure

METHODS = ("naive", "anova_wald", "bootstrap", "bayes")
ROLE_COLUMNS = ("prompt", "judge", "temperature", "replicate", "category")
THETA_TARGETS = {"theta (panel)": "theta_panel", "theta (TEE)": "theta"}


def design_label(design: dict) -> str:
    """Short label of a design dict: ``N30 V3 M3 H1 R3``.

    >>> design_label(dict(n_items=30, n_prompts=3, n_judges=3, n_temperatures=1, n_replicates=3))
    'N30 V3 M3 H1 R3'
    """
    short = (
        ("n_items", "N"),
        ("n_prompts", "V"),
        ("n_judges", "M"),
        ("n_temperatures", "H"),
        ("n_replicates", "R"),
        ("n_categories", "C"),
    )
    parts = [f"{s}{design[k]}" for k, s in short if k in design and design[k] is not None]
    rest = [f"{k}={v}" for k, v in design.items() if k not in dict(short)]
    return " ".join(parts + rest)


@dataclass
class CoverageStudy:
    """Result of :func:`coverage_study`.

    Attributes
    ----------
    results : pandas.DataFrame
        One row per data set, method, target and level: ``design, sim, method, target,
        level, estimate, low, high, truth, covered, width, singular, diagnostics_ok, fit_s,
        compiled`` (1 when that Bayesian fit compiled its model, 0 when it reused one).
    info : dict
        Settings and timings (``wall_s``, ``fit_s_median``, ``fit_s_max``, ``n_bayes_fits``,
        ``n_compiles``).
    """

    results: pd.DataFrame
    info: dict = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """Coverage per design, method, target and level, with its Monte Carlo SE
        (``sqrt(c (1 - c) / n)``), mean interval width, the plug-in's singular rate and the
        share of Bayesian fits that passed their diagnostics.
        """
        r = self.results
        g = r.groupby(["design", "method", "target", "level"], sort=False)
        out = g.agg(
            coverage=("covered", "mean"),
            mean_width=("width", "mean"),
            singular_rate=("singular", "mean"),
            n_sims=("covered", "size"),
            diagnostics_ok=("diagnostics_ok", "mean"),
        ).reset_index()
        out.insert(5, "mc_se", np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["n_sims"]))
        return out

    def plot(self, target: str | None = None, **kwargs) -> "Figure":
        """Coverage (with Monte Carlo error bars) per method and design, against the nominal
        level (:func:`bayes_tee.plots.studies.plot_coverage`).
        """
        return plot_coverage(self.table(), target=target, **kwargs)

    def staircase_table(self) -> pd.DataFrame:
        """:meth:`table` with each design's ``scenario`` and ``n_items`` (studies from
        :func:`coverage_staircase`).
        """
        scen = self.results.drop_duplicates("design").set_index("design")[["scenario", "n_items"]]
        return self.table().join(scen, on="design")

    def plot_staircase(
        self, level: float = 0.95, target: str = "theta (TEE)", method: str = "bayes"
    ) -> "Figure":
        """Coverage against items per scenario (Messing 2026 Fig. 11b;
        :func:`bayes_tee.plots.studies.plot_staircase`).
        """
        return plot_staircase(self.staircase_table(), level=level, target=target, method=method)


def _applicable(method: str, df: pd.DataFrame) -> bool:
    facets = [c for c in ("prompt", "judge", "temperature") if c in df]
    reps = "replicate" in df and df["replicate"].nunique() > 1
    if method == "naive":
        return True
    return bool(facets) or reps


def _roles(df: pd.DataFrame) -> dict[str, str]:
    roles = {c: c for c in ROLE_COLUMNS if c in df and df[c].nunique() > 1}
    return {"outcome": "score", "item": "item", **roles}


def _rows(
    base: dict, method: str, target: str, level: float, est: float, lo: float, hi: float, truth: float
) -> dict:
    return {
        **base,
        "method": method,
        "target": target,
        "level": level,
        "estimate": est,
        "low": lo,
        "high": hi,
        "truth": truth,
        "covered": bool(lo <= truth <= hi),
        "width": hi - lo,
    }


def simulate_one(
    dgp: Callable[..., pd.DataFrame],
    design: dict,
    dgp_kwargs: dict,
    methods: Sequence[str],
    levels: Sequence[float],
    seed: int,
    n_components: int,
    n_boot: int,
    fit_kwargs: dict,
) -> list[dict]:
    """Simulate one data set and return the interval rows of every method (see
    :class:`CoverageStudy`).
    """
    rng = np.random.default_rng(seed)
    df = dgp(**design, **dgp_kwargs, random_seed=rng)
    truth = df.attrs["truth"]
    roles = _roles(df)
    d = validate_design(df, **roles)
    random_labels = [t.label for t in d.terms if t.kind != "fixed" and t.label in truth]
    comps = sorted(random_labels, key=lambda k: -truth[k])[:n_components]
    targets = {name: float(df.attrs[key]) for name, key in THETA_TARGETS.items()}
    plug = plugin_fit(d) if d.balanced and _applicable("anova_wald", df) else None
    base = {
        "singular": plug.singular if plug is not None else np.nan,
        "diagnostics_ok": np.nan,
        "fit_s": np.nan,
        "compiled": np.nan,
    }
    rows: list[dict] = []
    for method in methods:
        if not _applicable(method, df) or (method in ("anova_wald", "bootstrap") and plug is None):
            continue
        if method == "naive":
            y = df["score"].to_numpy(float)
            se = y.std(ddof=1) / np.sqrt(y.size)
            for lev in levels:
                z = stats.norm.ppf(0.5 + lev / 2)
                for name, tr in targets.items():
                    rows.append(
                        _rows(base, method, name, lev, y.mean(), y.mean() - z * se, y.mean() + z * se, tr)
                    )
        elif method == "anova_wald":
            for lev in levels:
                w = plug.wald_theta(lev)
                for name, key in zip(THETA_TARGETS, ("panel", "tee")):
                    rows.append(_rows(base, method, name, lev, plug.mean, *w[key], targets[name]))
                for c in comps:
                    rows.append(
                        _rows(base, method, c, lev, plug.estimates[c], *plug.wald_component(c, lev), truth[c])
                    )
        elif method == "bootstrap":
            boot = plug.bootstrap(n_boot, rng)
            for lev in levels:
                b = plug.bootstrap_intervals(lev, comps, boot)
                for name, key in zip(THETA_TARGETS, ("panel", "tee")):
                    rows.append(_rows(base, method, name, lev, plug.mean, *b[key], targets[name]))
                for c in comps:
                    rows.append(_rows(base, method, c, lev, plug.estimates[c], *b[c], truth[c]))
        elif method == "bayes":
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DiagnosticWarning)  # recorded per row
                post = fit_posterior(
                    df, **roles, random_seed=int(rng.integers(2**31)), progressbar=False, **fit_kwargs
                )
                fit_s = time.perf_counter() - t0
                b = {
                    **base,
                    "diagnostics_ok": float(post.diagnostics()["ok"]),
                    "fit_s": fit_s,
                    # a native compile of this process (a kernel's C callback compiles nothing)
                    "compiled": float(
                        post.info.get("compiled_with") == "native"
                        and not post.info.get("reused_compiled", False)
                    ),
                }
                for lev in levels:
                    th = post.theta(level=lev).iloc[0]
                    rows.append(
                        _rows(
                            b,
                            method,
                            "theta (panel)",
                            lev,
                            th["estimate"],
                            th["panel_low"],
                            th["panel_high"],
                            targets["theta (panel)"],
                        )
                    )
                    rows.append(
                        _rows(
                            b,
                            method,
                            "theta (TEE)",
                            lev,
                            th["estimate"],
                            th["tee_low"],
                            th["tee_high"],
                            targets["theta (TEE)"],
                        )
                    )
                    ct = post.components(level=lev).set_index("component")
                    for c in comps:
                        rows.append(
                            _rows(
                                b,
                                method,
                                c,
                                lev,
                                ct.loc[c, "median"],
                                ct.loc[c, "low"],
                                ct.loc[c, "high"],
                                truth[c],
                            )
                        )
        else:
            raise ArgumentError(f"Unknown method {method!r}; choose from {METHODS}.")
    return rows


def _run_chunk(
    dgp, design, design_index, dgp_kwargs, methods, levels, sims, n_components, n_boot, fit_kwargs
) -> pd.DataFrame:
    """Run the simulated data sets ``sims`` (pairs of index and seed) of one design."""
    rows = []
    for sim, seed in sims:
        for r in simulate_one(
            dgp, design, dgp_kwargs, methods, levels, seed, n_components, n_boot, fit_kwargs
        ):
            rows.append(
                {"design": design_label(design), "design_index": design_index, "sim": sim, "seed": seed, **r}
            )
    return pd.DataFrame(rows)


def _payload(*args) -> bytes:
    """A chunk's arguments for a worker process, pickled by value where they must be: a ``dgp``
    defined in the user's script or notebook travels as code, not as a name in ``__main__``.
    """
    return cloudpickle.dumps(args)


def _run_payload(payload: bytes) -> pd.DataFrame:
    """Worker entry point: :func:`_run_chunk` on the unpickled arguments."""
    return _run_chunk(*pickle.loads(payload))


def coverage_study(
    dgp: Callable[..., pd.DataFrame],
    designs: Sequence[dict],
    n_sims: int = 200,
    methods: Sequence[str] = METHODS,
    level: float | Sequence[float] = 0.9,
    *,
    random_seed: int | None = None,
    executor=None,
    n_workers: int | None = None,
    chunk_size: int | None = None,
    cache_dir: str | Path | None = None,
    progressbar: bool = True,
    n_components: int = 2,
    n_boot: int = 1000,
    dgp_kwargs: dict | None = None,
    draws: int = 500,
    tune: int = 500,
    chains: int = 4,
    target_accept: float | None = None,
) -> CoverageStudy:
    """Coverage of each method's intervals over data sets simulated from ``dgp``.

    Parameters
    ----------
    dgp : callable
        ``dgp(**design, **dgp_kwargs, random_seed=rng)`` returning long data with ``score``
        and role columns named as in :func:`bayes_tee.studies.dgp.tee_dgp`, and the truth in
        ``attrs`` (``truth``, ``theta``, ``theta_panel``). Must be importable (picklable) to
        run on worker processes.
    designs : list of dict
        Keyword arguments of ``dgp`` per design.
    n_sims : int
        Simulated data sets per design.
    methods : list of str
        Any of ``naive``, ``anova_wald``, ``bootstrap``, ``bayes``; a method that does not
        apply to a design (the plug-in on unbalanced data, anything but ``naive`` on one call
        per item) is skipped.
    level : float or list of float
        Interval level(s).
    random_seed : int, optional
        Seeds every data set (design ``d``, data set ``s`` always gets the same seed, however
        the work is chunked).
    executor : optional
        ``None``: local processes (``n_workers``, default the CPU count; 1 runs in this
        process). Or a :class:`concurrent.futures.Executor`, or a ``dask.distributed`` Client.
    chunk_size : int, optional
        Data sets per task (default: about four tasks per worker per design).
    cache_dir : path, optional
        Write each finished chunk here and reuse finished ones: an interrupted study resumes.
    progressbar : bool
        Show a progress bar (rich) over data sets.
    n_components : int
        Also cover the ``n_components`` largest true random components.
    n_boot : int
        Parametric bootstrap replicates.
    dgp_kwargs : dict, optional
        Extra ``dgp`` arguments; default ``{"panel": "resample"}`` for ``tee_dgp``.
    draws, tune, chains : int
        Sampler settings of the Bayesian fits.
    target_accept : float, optional
        NUTS target acceptance of the Bayesian fits (default: :func:`bayes_tee.fit_posterior`'s).

    Returns
    -------
    CoverageStudy

    Examples
    --------
    >>> study = coverage_study(tee_dgp, [dict(n_items=30, n_prompts=3, n_judges=3,
    ...                        n_temperatures=1, n_replicates=3)], n_sims=50,
    ...                        random_seed=1)  # doctest: +SKIP
    """
    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ArgumentError(f"Unknown method(s) {sorted(unknown)}; choose from {list(METHODS)}.")
    levels = [float(x) for x in np.atleast_1d(level)]
    if dgp_kwargs is None:
        dgp_kwargs = {"panel": "resample"} if "panel" in inspect.signature(dgp).parameters else {}
    fit_kwargs = dict(draws=draws, tune=tune, chains=chains, target_accept=target_accept)
    n_workers = n_workers or os.cpu_count() or 1
    root = np.random.SeedSequence(random_seed)
    seeds = [[int(s.generate_state(1)[0]) for s in ds.spawn(n_sims)] for ds in root.spawn(len(designs))]
    cache = Path(cache_dir) if cache_dir is not None else None

    done: list[pd.DataFrame] = []
    tasks = []
    for i, design in enumerate(designs):
        key = workers.study_key(
            dgp, design, dgp_kwargs, methods, levels, random_seed, n_components, n_boot, fit_kwargs
        )
        finished: set[int] = set()
        if cache is not None and (cache / key).exists():
            for f in sorted((cache / key).glob("*.csv")):
                part = pd.read_csv(f)
                part = part[part["sim"] < n_sims]
                done.append(part)
                finished |= set(part["sim"].unique().tolist())
        todo = [(s, seeds[i][s]) for s in range(n_sims) if s not in finished]
        size = chunk_size or max(1, int(np.ceil(len(todo) / (4 * n_workers))))
        for a in range(0, len(todo), size):
            tasks.append((i, key, todo[a : a + size]))

    def args(i: int, sims) -> tuple:
        return (dgp, designs[i], i, dgp_kwargs, list(methods), levels, sims, n_components, n_boot, fit_kwargs)

    def store(key: str, part: pd.DataFrame) -> None:
        done.append(part)
        if cache is not None and len(part):
            (cache / key).mkdir(parents=True, exist_ok=True)
            part.to_csv(
                cache / key / f"sims_{part['sim'].min():05d}_{part['sim'].max():05d}.csv", index=False
            )

    t0 = time.perf_counter()
    with workers.progress(progressbar, sum(len(t[2]) for t in tasks)) as advance:
        if executor is None and n_workers == 1:
            for i, key, sims in tasks:
                store(key, _run_chunk(*args(i, sims)))
                advance(len(sims))
        else:
            own = None
            if executor is None:
                own = executor = ProcessPoolExecutor(
                    max_workers=n_workers, mp_context=mp.get_context("spawn")
                )
            try:
                with workers.main_not_reimported(own is not None):
                    futures = {
                        workers.submit(executor, _run_payload, _payload(*args(i, sims))): (key, len(sims))
                        for i, key, sims in tasks
                    }
                for fut in workers.as_completed(executor, list(futures)):
                    key, n = futures[fut]
                    store(key, fut.result())
                    advance(n)
            finally:
                if own is not None:
                    own.shutdown()
    wall = time.perf_counter() - t0
    results = pd.concat(done, ignore_index=True) if done else pd.DataFrame()
    if len(results):
        results = results.sort_values(["design_index", "sim", "method", "target", "level"]).reset_index(
            drop=True
        )
    bayes = (
        results[results["method"] == "bayes"] if len(results) else pd.DataFrame(columns=["fit_s", "compiled"])
    )
    per_fit = bayes.drop_duplicates(["design_index", "sim"]) if len(bayes) else bayes
    fit_s = per_fit["fit_s"]
    info = {
        "n_sims": n_sims,
        "levels": levels,
        "methods": list(methods),
        "designs": list(designs),
        "dgp_kwargs": dgp_kwargs,
        "random_seed": random_seed,
        "wall_s": wall,
        "n_tasks": len(tasks),
        "n_workers": n_workers,
        "fit_s_median": float(fit_s.median()) if len(fit_s) else np.nan,
        "fit_s_max": float(fit_s.max()) if len(fit_s) else np.nan,
        "n_bayes_fits": len(per_fit),
        "n_compiles": int(per_fit["compiled"].sum()) if len(per_fit) else 0,
    }
    return CoverageStudy(results, info)


#: Messing (2026) App. E.4, Table 9: what each scenario samples (V, M, H, R). Our model always carries
#: the design x design interactions, so the paper's D and E (same data, with and without them)
#: coincide here as one scenario.
STAIRCASE_SCENARIOS: dict[str, dict[str, int]] = {
    "A naive": dict(n_prompts=1, n_judges=1, n_temperatures=1, n_replicates=1),
    "B + prompts": dict(n_prompts=3, n_judges=1, n_temperatures=1, n_replicates=5),
    "C + judges": dict(n_prompts=3, n_judges=3, n_temperatures=1, n_replicates=5),
    "D/E + temperatures": dict(n_prompts=3, n_judges=3, n_temperatures=3, n_replicates=5),
}


def coverage_staircase(
    n_items: Sequence[int] = (20, 50, 100, 200, 500, 1000, 2000),
    n_sims: int = 200,
    *,
    level: float = 0.95,
    scenarios: dict[str, dict[str, int]] | None = None,
    **kwargs,
) -> CoverageStudy:
    """The coverage staircase of Messing (2026) App. E.4: scenarios A-D (Table 9) at each N.

    Each data set comes from :func:`bayes_tee.studies.dgp.tee_dgp` (Table 8 components) with a new
    judge/temperature panel from the three Table 8 levels, so a facet the design holds at one
    level contributes a bias that does not shrink with N. Scenario A is one call per item at
    one configuration with the naive interval; B-D add prompts, judges and temperatures to the
    design and get the posterior's TEE interval. ``results`` gains ``scenario`` and
    ``n_items``; plot with :func:`bayes_tee.plots.studies.plot_staircase`.

    Parameters
    ----------
    n_items : list of int
        Item counts.
    n_sims : int
        Data sets per scenario and N.
    level : float
        Interval level (the paper uses 95%).
    scenarios : dict, optional
        Scenario name -> design counts; default :data:`STAIRCASE_SCENARIOS`.
    **kwargs
        Passed to :func:`coverage_study` (``random_seed``, ``executor``, ``cache_dir``, ...).

    Examples
    --------
    >>> study = coverage_staircase(n_items=(20, 200), n_sims=100, random_seed=1)  # doctest: +SKIP
    >>> plot_staircase(study)  # doctest: +SKIP
    """
    scenarios = scenarios or STAIRCASE_SCENARIOS
    designs, names = [], {}
    for name, counts in scenarios.items():
        for n in n_items:
            d = dict(n_items=int(n), **counts)
            designs.append(d)
            names[design_label(d)] = (name, int(n))
    kwargs.setdefault("methods", ("naive", "bayes"))
    kwargs.setdefault("n_components", 0)
    study = coverage_study(tee_dgp, designs, n_sims, level=level, **kwargs)
    r = study.results
    r["scenario"] = r["design"].map(lambda lab: names[lab][0])
    r["n_items"] = r["design"].map(lambda lab: names[lab][1])
    study.info["scenarios"] = dict(scenarios)
    return study
