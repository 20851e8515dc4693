"""Session-scoped reference fits (each compiles once per test session)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import xarray as xr
from jupyter_client import KernelManager
from nbclient import NotebookClient
from pytensor.compile.mode import Mode

import bayes_tee as bt
from bayes_tee._core.priors import get_prior
from bayes_tee._core.trees import draws_tree
from bayes_tee.design.build import build_design
from bayes_tee.likelihoods import LIKELIHOODS, build_model
from bayes_tee.likelihoods.logit_glmm.crossed_kernel import crossed_forward
from bayes_tee.posterior.facade import posterior_for

#: Test files that run longest (measured with --durations), scheduled first: ``make test`` hands
#: whole files to its two workers (``--dist loadfile``, with ``--no-loadscope-reorder`` so that
#: pytest-xdist keeps this order instead of sorting files by their number of tests), and a long
#: file collected last leaves one worker running it alone (longest-processing-time-first).
LONGEST_FIRST = (  # longest first by measured total (seconds on 2 cores, fresh clone, 2026-12-07)
    "test_conformance.py",  # 96
    "test_notebooks.py",  # 73 (120 before the notebooks shared a kernel)
    "test_ordinal.py",  # 70
    "test_coverage.py",  # 51
    "test_notebooks_shared.py",  # 50
    "test_glmm.py",  # 46
    "test_predictive.py",  # 35
    "test_sweep_adaptation.py",  # 34
    "test_calibration.py",  # 30
    "test_cli.py",  # 27
    "test_sbc.py",  # 27
    "test_covariate_recovery.py",  # 23
    "test_glmm_quadrature.py",  # 19 (29 while it built the PyMC gradient graph)
    "test_native.py",  # 19
    "test_dstudy.py",  # 19
    "test_strata_density.py",  # 16 (23 while it built the PyMC gradient graph)
    "test_fit_cells.py",  # 15
    "test_noise.py",  # 15
)


#: Notebook outputs that may say "Warning": bayes_tee's own (a failed diagnostic, a design note).
OWN_WARNINGS = re.compile(r"(Diagnostic|Design|Calibration)Warning")


#: Run before each notebook in the shared kernel: what a fresh kernel has. The user's names
#: go (so a notebook that forgets an import fails), and so do figures, warning filters and
#: pandas' display options that a notebook before it set.
_FRESH = """%reset -f
import os as _os, sys as _sys, warnings as _warnings
_os.chdir({folder!r})
if not hasattr(_sys, "_fresh_filters"):  # the kernel's own, from its first notebook on
    _sys._fresh_filters = list(_warnings.filters)
_warnings.resetwarnings()
for _a, _m, _c, _mod, _l in reversed(_sys._fresh_filters):  # patterns compiled or not
    _m, _mod = getattr(_m, "pattern", _m) or "", getattr(_mod, "pattern", _mod) or ""
    _warnings.filterwarnings(_a, _m, _c, _mod, _l)
if "matplotlib.pyplot" in _sys.modules:
    _sys.modules["matplotlib.pyplot"].close("all")
if "pandas" in _sys.modules:
    _sys.modules["pandas"].reset_option("^display")
"""


@pytest.fixture(scope="session")
def notebook_kernel(tmp_path_factory):
    """One Jupyter kernel per test process, shared by its notebooks: each new kernel imports
    bayes_tee, PyMC, nutpie and ArviZ again (about 4 s). Few draws (``BAYES_TEE_FAST=1``), the
    Agg backend, IPC sockets in a private folder (no TCP ports, no "running over TCP" warning).
    """
    sockets = str(tmp_path_factory.mktemp("kernel") / "k")
    km = KernelManager(kernel_name="python3", transport="ipc", ip=sockets)
    yield km
    if km.has_kernel:
        km.shutdown_kernel(now=True)


@pytest.fixture
def run_notebook(notebook_kernel):
    """Execute a notebook top to bottom with few draws in the shared kernel, from a fresh state
    (``_FRESH``), and check it: no error, and no warning but bayes_tee's own (no library noise
    for users).
    """

    def run(path: Path) -> None:
        if notebook_kernel.has_kernel and not notebook_kernel.is_alive():  # a notebook killed it
            notebook_kernel.shutdown_kernel(now=True)
        if not notebook_kernel.has_kernel:
            with pytest.MonkeyPatch.context() as mp:  # the kernel's environment
                mp.setenv("BAYES_TEE_FAST", "1")
                mp.setenv("MPLBACKEND", "Agg")
                notebook_kernel.start_kernel(cwd=str(path.parent))
        nb = nbformat.read(path, as_version=4)
        nb.cells.insert(0, nbformat.v4.new_code_cell(_FRESH.format(folder=str(path.parent))))
        client = NotebookClient(nb, timeout=900, km=notebook_kernel)
        try:
            client.execute()
        finally:
            if client.kc is not None:
                client.kc.stop_channels()
        outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
        assert not [o for o in outputs if o.get("output_type") == "error"]
        stderr = "".join(o.get("text", "") for o in outputs if o.get("name") == "stderr")
        noise = [line for line in stderr.splitlines() if "Warning" in line and not OWN_WARNINGS.search(line)]
        assert not noise, noise

    return run


def pytest_collection_modifyitems(config, items):
    """Move the longest files to the front, each file's tests staying together and in order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


DEMO_ROLES = dict(
    outcome="score",
    item="item",
    prompt="prompt",
    judge="judge",
    temperature="temperature",
    replicate="replicate",
    category="category",
)


@pytest.fixture(scope="session")
def demo_df():
    return bt.datasets.load("tee_demo")


@pytest.fixture(scope="session")
def demo_post(demo_df):
    """The demo pilot with default sampler settings (the 'clean geometry' claim)."""
    return bt.fit_posterior(demo_df, **DEMO_ROLES, random_seed=1, progressbar=False)


@pytest.fixture(scope="session")
def agrees_with_the_balanced_shortcut():
    """Check that a general likelihood matches the balanced shortcut on the same data: every
    component's median within a quarter of a posterior SD, no divergences.
    """

    def check(balanced, other) -> None:
        a, b = balanced.component_draws(), other.component_draws()
        for k in a["component"].values:
            xa, xb = a.sel(component=k).values.ravel(), b.sel(component=k).values.ravel()
            assert abs(np.median(xa) - np.median(xb)) < 0.25 * xa.std(), k
        assert other.diagnostics()["divergences"] == 0

    return check


def value_name(name, kind):
    return {"log": f"{name}_log__", "zerosum": f"{name}_zerosum__"}.get(kind, name)


def assert_same_density(d, method, priors=None, n_points=3):
    """The likelihood's NumPy density and its PyMC model agree in log density and gradient
    at ``n_points`` jittered points (the parameters matched by name and transform).
    """
    spec = bt.priors.get_prior(priors)
    model = build_model(d, spec, method=method)
    dens = LIKELIHOODS[method].density(d, spec)
    # PyTensor's Python linker with no graph rewrites: nothing to compile or rewrite for a
    # handful of evaluations (the rewrites took most of this check's time)
    mode = Mode(linker="py", optimizer=None)
    logp = model.compile_logp(mode=mode)
    dlogp = None  # compiled where a point needs it: a mapped density's gradient is checked otherwise
    names = {value_name(n, k): n for n, k, _ in dens.layout.parameters}
    assert set(names) == {v.name for v in model.value_vars}
    shapes = {k: np.shape(v) for k, v in model.initial_point().items()}  # one compile, not one per value
    rng = np.random.default_rng(0)
    for _ in range(n_points):
        x = dens.initial_point(rng) + rng.normal(scale=0.3, size=dens.layout.ndim)
        value, grad = dens.logp_grad(x)
        # a density that samples other coordinates than the model's (the GLMMs' crossed terms):
        # the model at the mapped point, plus the map's log Jacobian
        mapped, log_jac = (x, 0.0) if not hasattr(dens, "report") else _mapped_point(dens, x)
        point = {v.name: mapped[dens.layout.slices[names[v.name]]] for v in model.value_vars}
        point = {k: v.reshape(shapes[k]) for k, v in point.items()}
        # PyTensor's gammaln differs from scipy's in the 8th digit: constants, not gradients
        np.testing.assert_allclose(value, logp(point) + log_jac, rtol=1e-9, atol=1e-5)
        if log_jac != 0.0:  # the gradient through the map: against central differences
            np.testing.assert_allclose(grad, _central_differences(dens, x), rtol=1e-5, atol=1e-5)
            continue
        # (building the gradient's graph is most of this check's time: only where it is read)
        dlogp = model.compile_dlogp(mode=mode) if dlogp is None else dlogp
        expected = np.ravel(dlogp(point))
        mine = np.concatenate([grad[dens.layout.slices[names[v.name]]] for v in model.value_vars])
        np.testing.assert_allclose(mine, expected, rtol=1e-9, atol=1e-8 * np.abs(expected).max())


def _mapped_point(dens, x):
    """The point the model reads at the density's sampled ``x``, and the map's log Jacobian: the
    GLMMs' crossed terms, or the Gaussian kernels' grand mean (``grand_mean``).
    """
    if hasattr(dens, "grand_mean"):
        return dens.report(x), float(dens.grand_mean(x)[1])
    return crossed_forward(np.ascontiguousarray(x), *dens._crossed)


def _central_differences(dens, x, h=1e-6):
    """The log density's gradient at ``x`` by central differences."""
    out = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (dens.logp_grad(x + e)[0] - dens.logp_grad(x - e)[0]) / (2 * h)
    return out


@pytest.fixture
def same_density():
    """:func:`assert_same_density`, for the likelihood tests."""
    return assert_same_density


def assert_letters_match_pairs(post, over="new", level=0.9):
    """Two systems share a tie-group letter exactly when the simultaneous interval of their
    difference in ``post.pairs`` contains 0 (every pair checked), and the groups are the letters.
    """
    table = post.leaderboard(level, over=over)
    letters = dict(zip(table["system"], table["group"]))
    groups = table.attrs["groups"]
    assert all(letters.values()), "every system holds a letter"
    for r in post.pairs(level, over=over).itertuples():
        tied = r.simultaneous_low <= 0 <= r.simultaneous_high
        share = any(r.system_a in g and r.system_b in g for g in groups)
        assert share == tied, (r.system_a, r.system_b, letters[r.system_a], letters[r.system_b])
        assert share == bool(set(letters[r.system_a]) & set(letters[r.system_b])) or len(groups) > 52
    return table


@pytest.fixture(scope="session")
def letters_match_pairs():
    """:func:`assert_letters_match_pairs`, for the tests of every family and layout."""
    return assert_letters_match_pairs


#: The hand-built comparison's component SDs.
SIGMA = {"item": 0.5, "prompt": 0.3, "item:prompt": 0.2, "item:judge": 0.2, "prompt:judge": 0.1,
         "system:item": 0.3, "system:prompt": 0.05, "system:judge": 0.1,
         "item:prompt:judge:system": 0.3, "residual": 0.35}  # fmt: skip


def term_draws(design, effects, sd, rng, shape, *, jitter=0.05, noise=1e-3) -> dict[str, xr.DataArray]:
    """Hand-built iid draws of a design's terms and ``mu``: each fixed term its levels (the
    system's ``effects``, others 0) off by ``noise``, each random term's SD ``sd(label)`` off by a
    log-normal ``jitter``.
    """
    data = {}
    for t in design.terms:
        if t.kind == "fixed":
            levels = list(design.levels[t.facets[0]])
            base = effects if t.facets[0] == "system" else np.zeros(len(levels))
            values = base + noise * rng.standard_normal((*shape, len(levels)))
            data[t.var_name] = xr.DataArray(
                values, dims=("chain", "draw", t.facets[0]), coords={t.facets[0]: levels}
            )
        else:
            data[t.var_name] = xr.DataArray(
                sd(t.label) * np.exp(jitter * rng.standard_normal(shape)), dims=("chain", "draw")
            )
    data["mu"] = xr.DataArray(1.0 + noise * rng.standard_normal(shape), dims=("chain", "draw"))
    return data


@pytest.fixture(scope="session")
def hand_built_terms():
    """:func:`term_draws`: a design's term draws without sampling."""
    return term_draws


def comparison_from_draws(effects, seed=0, *, sigma=None, jitter=0.05, n_items=30, shape=(4, 250)):
    """A comparison of ``len(effects)`` systems whose posterior is hand-built iid draws (no
    sampling; 4 x 250 draws: every ESS near 1,000): the system effects ``effects``, the component
    SDs ``sigma`` (default :data:`SIGMA`), each draw's SDs off them by a log-normal ``jitter``.
    """
    sigma = SIGMA if sigma is None else sigma
    df = bt.simulate.systems_dgp(
        n_systems=len(effects), n_items=n_items, n_replicates=2, outcome="gaussian", random_seed=4
    )
    design = build_design(df, outcome="score", item="item", prompt="prompt", judge="judge", system="model")
    rng = np.random.default_rng(seed)
    data = term_draws(design, effects, sigma.__getitem__, rng, shape, jitter=jitter)
    return posterior_for(draws_tree(xr.Dataset(data)), design, get_prior(), "balanced")


@pytest.fixture(scope="session")
def hand_built_comparison():
    """:func:`comparison_from_draws`: a comparison's posterior without sampling."""
    return comparison_from_draws
