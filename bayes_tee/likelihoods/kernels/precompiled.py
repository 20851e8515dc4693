"""Kernels compiled ahead of time for a baseline CPU and shipped in the package, so that the first
fit on a new machine loads its kernel instead of compiling it (10-20 s on the 2-core reference
machine, per family).

Every kernel dispatcher's numba cache (``__pycache__`` or ``NUMBA_CACHE_DIR``, compiled for this
machine's CPU) is read first. Where it has no entry, the dispatcher reads the shipped set in
:data:`SHIPPED`: numba's own index and data files, compiled by ``bayes-tee warmup --ship`` for
numba's ``generic`` CPU of the platform (x86-64 without AVX; numba's ``NUMBA_CPU_NAME=generic``,
what numba itself recommends for caches shared between machines). The shipped index is keyed on
:data:`~bayes_tee.likelihoods.kernels.SOURCE_DIGEST` alone (not on the files' modification times,
which an install changes), on the platform's target triple and on numba's version and the Python
version (numba's own file names and index); a process whose platform, Python, numba or kernel
sources differ finds no entry and compiles as before, into its own cache. On the reference
machine the generic kernels sample as fast as the ones compiled for its CPU (a 1,000-item blocks
fit: 3.9-5.4 s generic, 4.2-4.7 s native; the kernels are scalar loops).

``BAYES_TEE_PRECOMPILED=0`` turns the shipped set off (the kernels then compile on a new machine,
as ``benchmarks/bench_startup.py --cold`` measures both ways).

>>> SHIPPED.name
'compiled'
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

from numba.core import config
from numba.core.caching import Cache, IndexDataCacheFile

#: Where the shipped kernels are: one folder per kernel module's folder (``blocks``, ``kernels``, ...).
SHIPPED = Path(__file__).parent / "compiled"
#: The CPU the shipped kernels are compiled for (numba's ``NUMBA_CPU_NAME``; no CPU features).
CPU = "generic"
#: ``"1"``: this process writes the shipped set (``bayes-tee warmup --ship`` sets it in its workers).
BUILD_ENV = "BAYES_TEE_SHIP_KERNELS"
#: ``"0"``: this process does not read the shipped set.
READ_ENV = "BAYES_TEE_PRECOMPILED"


def building() -> bool:
    """Whether this process compiles the shipped set (:data:`BUILD_ENV`)."""
    return os.environ.get(BUILD_ENV) == "1"


def _key(index_key, sig, codegen) -> tuple:
    """The shipped index's key of ``sig``: numba's (``index_key``), with the generic CPU in place of
    this one's.
    """
    sig_key, magic, code = index_key(sig, codegen)
    return sig_key, (magic[0], CPU, ""), code


def attach(cache: Cache, digest: str) -> bool:
    """Give numba's ``cache`` of one kernel the shipped set (module docstring): when
    :func:`building`, its entries are written there (keyed on ``digest``); otherwise an entry it
    lacks is read from there. Returns False where it was attached before.
    """
    if getattr(cache, "_shipped", None) is not None:
        return False
    py_func = cache._py_func
    folder = SHIPPED / Path(inspect.getfile(py_func)).parent.name
    shipped = IndexDataCacheFile(str(folder), cache._impl.filename_base, digest)
    cache._shipped = shipped
    if building():
        if config.CPU_NAME != CPU:
            raise RuntimeError(f"{BUILD_ENV}=1 compiles for numba's {CPU!r} CPU: set NUMBA_CPU_NAME={CPU}.")
        if py_func.__closure__ is not None:  # numba keys a closure on its pickle, which holds paths
            raise RuntimeError(f"{py_func.__qualname__} is a closure: its shipped key would not be portable.")
        folder.mkdir(parents=True, exist_ok=True)
        cache._cache_path, cache._cache_file = str(folder), shipped
        own_key = cache._index_key
        cache._index_key = lambda sig, codegen: _key(own_key, sig, codegen)
        return True
    own_load, own_key = cache.load_overload, cache._index_key

    def load_overload(sig, target_context):
        data = own_load(sig, target_context)
        if data is None and os.environ.get(READ_ENV) != "0":
            payload = shipped.load(_key(own_key, sig, target_context.codegen()))
            if payload is not None:
                data = cache._impl.rebuild(target_context, payload)
        return data

    cache.load_overload = load_overload
    return True
