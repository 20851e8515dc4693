"""The numba machinery the likelihoods' kernels share (each kernel sits in its likelihood's folder):
:mod:`~bayes_tee.likelihoods.strata.kernel` (balanced and augmented strata),
:mod:`~bayes_tee.likelihoods.logit_glmm.kernel` (the logit GLMM),
:mod:`~bayes_tee.likelihoods.blocks.kernel`, :mod:`~bayes_tee.likelihoods.collapsed.kernel`,
:mod:`~bayes_tee.likelihoods.ordinal.kernel`; here
``prior`` (the SD priors they call), ``dense`` (small Cholesky factors and inverses),
``callbacks`` (the C callbacks nutpie calls), ``precompiled`` (the kernels shipped compiled in the
package) and the cache key over all of their sources. Each is checked against its PyMC reference in the tests.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .precompiled import attach

#: The kernel modules: the shared ones here and each likelihood folder's ``*kernel.py``.
KERNEL_SOURCES = sorted(Path(__file__).parent.glob("*.py")) + sorted(
    Path(__file__).parent.parent.glob("*/*kernel.py")
)
#: Digest of the source of every kernel module. numba keys a cached kernel on its own file's
#: modification time and size only, so a kernel that inlines another module's function (every
#: kernel calls :mod:`.prior`) would load a stale binary after that module is edited; every
#: kernel's cache key carries this digest too, so an edit to any kernel module recompiles them all.
SOURCE_DIGEST = hashlib.sha256(b"".join(p.read_bytes() for p in KERNEL_SOURCES)).hexdigest()


def key_cache(cache) -> bool:
    """Key numba's on-disk ``cache`` of one kernel (a dispatcher's ``_cache``) on
    :data:`SOURCE_DIGEST` too, and give it the shipped kernels (:mod:`.precompiled`); False where
    it was keyed before.
    """
    stamped = cache._cache_file
    stamp = stamped._source_stamp
    keyed = isinstance(stamp, tuple) and stamp[-1:] == (SOURCE_DIGEST,)
    if keyed or getattr(cache, "_shipped", None) is not None:
        return False
    # numba's stamp is any picklable value compared for equality (a hash of the file now)
    stamped._source_stamp = (stamp, SOURCE_DIGEST)
    attach(cache, SOURCE_DIGEST)
    return True


def key_cache_on_sources(namespace: dict) -> int:
    """Key the on-disk cache of every numba dispatcher in ``namespace`` (a kernel module's
    ``globals()``, before any of them is called) with :func:`key_cache`; returns how many were
    keyed.
    """
    caches = (getattr(obj, "_cache", None) for obj in list(namespace.values()))
    return sum(key_cache(c) for c in caches if getattr(c, "_cache_file", None) is not None)
