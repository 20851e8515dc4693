"""The cached C callbacks of a PyMC model: the same model nutpie compiles, loaded from disk in
a new process.
"""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import nutpie
import pymc as pm
import pytest

from bayes_tee._core.native import CachedPyMCModel, compile_cached


def _model(prior_sd: float = 2.0) -> pm.Model:
    rng = np.random.default_rng(3)
    with pm.Model(coords={"group": range(4)}) as model:
        y = pm.Data("y", rng.normal(size=(4, 6)) + np.arange(4)[:, None])
        n = pm.Data("n", np.full(4, 6.0))  # a second container, read by the expansion too
        mu = pm.Normal("mu", 0, prior_sd)
        sd = pm.HalfNormal("sd", 1)
        effect = pm.Normal("effect", 0, sd, dims="group")
        pm.Normal("obs", mu + effect[:, None], 1, observed=y)
        pm.Deterministic("total", effect.sum() * n[0] / 6.0)
    return model


def _draws(compiled) -> dict:
    tree = nutpie.sample(compiled, chains=2, tune=60, draws=40, seed=5, progress_bar=False)
    return {k: tree["posterior"][k].to_numpy() for k in tree["posterior"].data_vars}


def test_the_cached_model_samples_exactly_as_nutpies_own_compile():
    model = _model()
    ours, theirs = compile_cached(model), nutpie.compile_pymc_model(model)
    assert isinstance(ours, CachedPyMCModel)
    a, b = _draws(ours), _draws(theirs)
    assert a.keys() == b.keys() and {"mu", "sd", "effect", "total"} <= a.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    # new data through the table: again the draws nutpie's own with_data gives
    new = np.full((4, 6), 3.0)
    a, b = _draws(ours.with_data(y=new)), _draws(theirs.with_data(y=new))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
    assert not np.array_equal(a["mu"], _draws(ours)["mu"])
    with pytest.raises(KeyError, match="Unknown shared variable"):
        ours.with_data(z=new)
    with pytest.raises(ValueError, match="rank 2"):
        ours.with_data(y=np.zeros(4))


_CHILD = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {tests!r})
    from _core.test_native import _model
    from bayes_tee._core.native import compile_cached
    compiled = compile_cached(_model({sd!r}))
    print(json.dumps([compiled.compiled_logp_func.cache_hits, compiled.compiled_expand_func.cache_hits]))
    """
)


@pytest.mark.slow
def test_a_second_process_loads_the_callbacks_from_disk():
    # a prior SD no earlier run used: a graph this machine has not compiled
    sd = float(1.0 + np.random.default_rng().random())
    code = _CHILD.format(tests=str(Path(__file__).parents[1]), sd=sd)

    compiled = compile_cached(_model(sd))  # here: this process has its imports already
    assert compiled.compiled_logp_func.cache_hits == 0  # compiled (the expansion may be cached)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [1, 1]  # both loaded
