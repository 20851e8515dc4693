"""The kernels shipped compiled for the generic CPU (:mod:`bayes_tee.likelihoods.kernels.precompiled`):
written by a build process, loaded by a process whose own cache is empty, refused under other
sources or when turned off, and (where the package holds a current shipped set) every kernel
fit loads its kernel without compiling.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from bayes_tee.likelihoods.blocks.kernel import blocks_logp_grad
from bayes_tee.likelihoods.kernels import precompiled

#: A process that attaches a tiny njit function's cache to a shipped set at ``argv[2]`` (keyed on
#: the digest ``argv[3]``), calls it, and prints its result and numba's cache hits and misses.
SCRIPT = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from bayes_tee.likelihoods.kernels import precompiled
    precompiled.SHIPPED = Path(sys.argv[2])
    import tiny
    precompiled.attach(tiny.twice_plus_one._cache, sys.argv[3])
    value = tiny.twice_plus_one(3.0)
    stats = tiny.twice_plus_one.stats
    print(json.dumps([value, sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]))
    """
)


def _run(tmp_path, case: str, digest: str = "sources-1", **env) -> list:
    module = tmp_path / "module"
    module.mkdir(exist_ok=True)
    (module / "tiny.py").write_text(
        "import numba\n\n@numba.njit(cache=True)\ndef twice_plus_one(x):\n    return 2.0 * x + 1.0\n"
    )
    environ = {k: v for k, v in os.environ.items() if k not in (precompiled.BUILD_ENV, precompiled.READ_ENV)}
    environ |= {"NUMBA_CACHE_DIR": str(tmp_path / f"own-{case}"), **env}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(module), str(tmp_path / "shipped"), digest],
        env=environ, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_kernel_built_for_the_generic_cpu_loads_where_the_own_cache_is_empty(tmp_path):
    build = {precompiled.BUILD_ENV: "1", "NUMBA_CPU_NAME": precompiled.CPU}
    assert _run(tmp_path, "build", **build) == [7.0, 0, 1]  # compiled, written to the shipped set
    assert list((tmp_path / "shipped" / "module").glob("tiny.twice_plus_one-*.nbi"))
    assert not list((tmp_path / "own-build").rglob("*.nbi"))  # not to the build process's own cache
    assert _run(tmp_path, "user") == [7.0, 1, 0]  # loaded, not compiled
    assert _run(tmp_path, "edited", digest="sources-2") == [7.0, 0, 1]  # other sources: compiled
    assert _run(tmp_path, "off", **{precompiled.READ_ENV: "0"}) == [7.0, 0, 1]


def test_building_for_this_cpu_is_refused(tmp_path):
    with pytest.raises(subprocess.CalledProcessError) as err:
        _run(tmp_path, "native", **{precompiled.BUILD_ENV: "1"})
    assert "NUMBA_CPU_NAME=generic" in err.value.stderr


def _current() -> bool:
    """Whether the package holds a shipped set compiled from these kernel sources (numba's index
    of the blocks kernel there, read under :data:`~bayes_tee.likelihoods.kernels.SOURCE_DIGEST`).
    """
    return bool(blocks_logp_grad._cache._shipped._load_index())


FIT_ALL = textwrap.dedent(
    """
    import json
    from numba.core import event
    from bayes_tee.cli.warmup import _warm
    from bayes_tee.likelihoods.kernels.callbacks import callback
    compiled = []
    class Compiles(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)
        def on_end(self, ev):
            pass
    event.register("numba:compile", Compiles())
    families = ("balanced", "blocks", "collapsed", "binomial", "ordinal")
    methods = [_warm(name)[2] for name in families]
    loaded = [callback(name).cache_hits for name in families]
    print(json.dumps([methods, compiled, loaded]))
    """
)


@pytest.mark.skipif(not _current(), reason="no shipped kernels of these sources (bayes-tee warmup --ship)")
def test_every_kernel_family_fits_without_compiling_on_a_new_machine(tmp_path):
    """With numba's own cache empty, a fit of each kernel family loads its kernels from the
    shipped set: numba compiles nothing (the warm-up's layouts cover what a fit calls).
    """
    environ = {k: v for k, v in os.environ.items() if k not in (precompiled.BUILD_ENV, precompiled.READ_ENV)}
    environ["NUMBA_CACHE_DIR"] = str(tmp_path / "empty")
    out = subprocess.run(
        [sys.executable, "-c", FIT_ALL], env=environ, capture_output=True, text=True, check=True
    )
    methods, compiled, loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert methods == ["balanced", "blocks", "collapsed", "binomial", "ordinal"]
    assert compiled == []  # no kernel compiled
    assert loaded == [1, 1, 1, 1, 1]  # and each C callback loaded
