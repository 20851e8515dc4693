"""The numba kernels' on-disk cache is keyed on the source of every kernel module, so an edit to
one kernel module (say the prior every kernel inlines) cannot leave a stale binary in use.
"""

import hashlib
from pathlib import Path

import numba
from numba.core.caching import IndexDataCacheFile

from bayes_tee.likelihoods import kernels
from bayes_tee.likelihoods.blocks import kernel as blocks
from bayes_tee.likelihoods.collapsed import kernel as collapsed
from bayes_tee.likelihoods.kernels import prior
from bayes_tee.likelihoods.logit_glmm import kernel as binomial
from bayes_tee.likelihoods.logit_glmm import quadrature_kernel
from bayes_tee.likelihoods.ordinal import kernel as ordinal
from bayes_tee.likelihoods.strata import kernel as strata

MODULES = (strata, blocks, collapsed, binomial, quadrature_kernel, ordinal, prior)


def _dispatchers():
    for module in MODULES:
        for obj in vars(module).values():
            if isinstance(obj, numba.core.registry.CPUDispatcher) and obj.__module__ == module.__name__:
                yield obj


def test_every_kernel_is_keyed_on_every_kernel_source():
    folder = Path(kernels.__file__).parent
    sources = sorted(folder.glob("*.py")) + sorted(folder.parent.glob("*/*kernel.py"))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()
    assert kernels.SOURCE_DIGEST == digest
    # every module of the likelihoods with a numba kernel is one of the digested sources
    compiled = {p for p in folder.parent.rglob("*.py") if "@numba.njit" in p.read_text()}
    assert compiled <= set(sources), sorted(map(str, compiled - set(sources)))
    found = list(_dispatchers())
    assert len(found) == sum(
        src.read_text().count("@numba.njit") for src in (Path(m.__file__) for m in MODULES)
    )
    for d in found:
        assert d._cache._cache_file._source_stamp[-1] == digest, d.py_func.__qualname__


def test_a_binary_cached_under_other_sources_is_not_loaded(tmp_path):
    """Numba's index compares the whole stamp: another digest finds nothing."""
    own = IndexDataCacheFile(str(tmp_path), "kernel-1.py312", (b"file-hash", "old-sources"))
    own.save(("sig", "cpu"), b"compiled")
    assert own.load(("sig", "cpu")) == b"compiled"
    edited = IndexDataCacheFile(str(tmp_path), "kernel-1.py312", (b"file-hash", "new-sources"))
    assert edited.load(("sig", "cpu")) is None


def test_keying_twice_is_a_no_op():
    assert kernels.key_cache_on_sources(vars(strata)) == 0
