"""A PyMC model as nutpie's two C callbacks, compiled once per machine and cached on disk.

nutpie's own ``compile_pymc_model`` wraps the model's PyTensor functions in C callbacks that
capture the model's data under fresh random names, so numba cannot cache them and every new
process compiles them again: about 13 s of a tiny ``marginal`` fit's 20 s, and 35 s on a
three-prompt design, with PyTensor's own numba cache already warm. Here the same two
callbacks (the log density with its gradient, and the expansion of a draw) read the data from
a table of addresses (one row per shared variable: address, then shape) instead, so their
source depends only on the PyTensor functions they call and the kinds of the data: numba
caches them in PyTensor's numba cache, keyed on the PyTensor functions' own cache keys. A model
whose graph was compiled before on this machine (the same layout and sizes, in any process)
loads its callbacks from disk; the data are not part of the key.

The model nutpie samples is the same as through ``compile_pymc_model``: the same PyTensor
functions, initial points and draws, bit for bit (``tests/_core/test_native.py``). A graph
PyTensor cannot cache (an op without a numba cache key) is compiled by nutpie as before.

>>> import numpy as np, pymc as pm
>>> with pm.Model() as m:
...     y = pm.Data("y", np.zeros(5))
...     mu = pm.Normal("mu", 0, 1)
...     _ = pm.Normal("obs", mu, 1, observed=y)
>>> compiled = compile_cached(m)  # doctest: +SKIP
>>> compiled.with_data(y=np.ones(5))  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import TYPE_CHECKING

import numba
import numpy as np
from numba.core import sigutils
from numba.core.ccallback import CFunc
from nutpie.compile_pymc import (
    CompiledPyMCModel,
    _make_functions,
    _prepare_dims_and_coords,
    _wrap_with_lock,
    address_as_void_pointer,
)
from pymc.initial_point import make_initial_point_fn
from pytensor.link.numba.cache import CACHED_SRC_FUNCTIONS, compile_numba_function_src

if TYPE_CHECKING:
    import pymc as pm

#: Bumped when the generated source changes in a way its text does not show.
_VERSION = "2"

#: nutpie's log density callback: ``(dim, x, gradient out, logp out, user data) -> code``
#: (0 success, 1 the function raised, 3 a gradient or 4 a log density not finite: nutpie
#: rejects the point), as ``nutpie.compile_pymc`` writes it.
_LOGP_SIGNATURE = "int64(uint64, CPointer(float64), CPointer(float64), CPointer(float64), voidptr)"
#: nutpie's expand callback: ``(dim, n_expanded, x, out, user data) -> code``.
_EXPAND_SIGNATURE = "int64(uint64, uint64, CPointer(float64), CPointer(float64), voidptr)"

_LOGP_SOURCE = """
def logp_callback(dim, x_, out_, logp_, table_):
    if dim != {n_dim}:
        return -1
    t = carray(table_, ({rows}, {width}), int64)
    x = carray(x_, ({n_dim},))
    try:
        value, grad = function(x{reads})
        out = carray(out_, ({n_dim},))
        logp = carray(logp_, ())
        logp[()] = value
        out[...] = grad
        if not np.all(np.isfinite(out)):
            return 3
        if not np.isfinite(value):
            return 4
    except Exception:  # noqa: BLE001
        return 1
    return 0
"""

_EXPAND_SOURCE = """
def expand_callback(dim, n_expanded, x_, out_, table_):
    if dim != {n_dim} or n_expanded != {n_expanded}:
        return -1
    t = carray(table_, ({rows}, {width}), int64)
    x = carray(x_, ({n_dim},))
    try:
        (values,) = function(x{reads})
        out = carray(out_, ({n_expanded},))
        out[...] = values
    except Exception:  # noqa: BLE001
        return -2
    return 0
"""


@dataclasses.dataclass(frozen=True)
class CachedPyMCModel(CompiledPyMCModel):
    """nutpie's compiled PyMC model whose callbacks read the data from :func:`_table`'s table
    (``user_data``) of the arrays in ``shared_data``; ``with_data`` builds a new table.
    """

    def with_data(self, **updates):
        shared = dict(self.shared_data)
        for name, value in updates.items():
            keys = [key for var, key in self.shared_var_keys.items() if var.name == name]
            if len(keys) != 1:
                raise KeyError(f"Unknown shared variable: {name}")
            old = shared[keys[0]]
            new = np.array(value, dtype=old.dtype, order="C", copy=True)
            if new.ndim != old.ndim:
                raise ValueError(f"Shared variable {name} must have rank {old.ndim}")
            new.flags.writeable = False
            shared[keys[0]] = new
        order = list(self.shared_var_keys.values())
        return dataclasses.replace(
            self, shared_data=shared, user_data=_table([shared[k] for k in order], self.user_data.shape[1])
        )


def _table(arrays: list[np.ndarray], width: int) -> np.ndarray:
    """Per array a row ``(address, shape...)`` (zeros past its rank), ``width`` columns."""
    table = np.zeros((max(len(arrays), 1), width), dtype=np.int64)
    for row, a in enumerate(arrays):
        table[row, 0] = a.ctypes.data
        table[row, 1 : 1 + a.ndim] = a.shape
    return table


def _reads(rows: list[int], arrays: list[np.ndarray]) -> tuple[str, dict]:
    """The argument list reading ``arrays[row]`` for each row from the table ``t``, and the
    dtypes it names.
    """
    parts, env = [], {}
    for row in rows:
        a = arrays[row]
        shape = ", ".join(f"t[{row}, {1 + d}]" for d in range(a.ndim))
        env[f"dtype_{row}"] = a.dtype.type
        parts.append(f", carray(address(t[{row}, 0]), ({shape}{',' if a.ndim == 1 else ''}), dtype_{row})")
    return "".join(parts), env


def _callback(source: str, name: str, signature: str, function, env: dict, key: str) -> CFunc:
    """Compile ``source`` (a function ``name`` calling ``function``) as a C callback, cached
    in PyTensor's numba cache under ``key``.
    """
    # (``__name__``: numba pickles the module a cached function's environment is rebuilt from)
    glob = {"__name__": __name__, "np": np, "carray": numba.carray, "int64": np.int64,
            "address": address_as_void_pointer, "function": function, **env}  # fmt: skip
    py_func = compile_numba_function_src(source, name, glob, cache_key=key)
    compiled = CFunc(py_func, sigutils.normalize_signature(signature), locals={}, options={})
    compiled.enable_caching()
    compiled.compile()
    return compiled


def compile_cached(model: pm.Model) -> CompiledPyMCModel | None:
    """``model`` as nutpie's compiled model with cached C callbacks, or ``None`` when PyTensor
    cannot cache its functions (compile it with ``nutpie.compile_pymc_model`` then).

    Examples
    --------
    >>> compiled = compile_cached(model)  # doctest: +SKIP
    """
    # nutpie's defaults: support points, jittered
    initial = make_initial_point_fn(
        model=model, default_strategy="support_point", jitter_rvs=set(model.free_RVs), return_transformed=True
    )
    n_dim, n_expanded, logp_pt, expand_pt, initial_fn, shape_info, renamed = _make_functions(
        model, mode="NUMBA", compute_grad=True, join_expanded=True,
        pymc_initial_point_fn=_wrap_with_lock(initial),  # nutpie's chains ask for points at once
    )  # fmt: skip
    logp_fn, expand_fn = logp_pt.vm.jit_fn, expand_pt.vm.jit_fn
    keys = (CACHED_SRC_FUNCTIONS.get(logp_fn.py_func), CACHED_SRC_FUNCTIONS.get(expand_fn.py_func))
    if None in keys:
        return None
    variables = list(dict.fromkeys([*logp_pt.get_shared(), *expand_pt.get_shared()]))
    arrays = []
    for var in variables:
        a = np.array(var.get_value(), order="C", copy=True)
        a.flags.writeable = False
        arrays.append(a)
    width = 1 + max([2, *(a.ndim for a in arrays)])
    position = {var: row for row, var in enumerate(variables)}
    logp_reads, logp_env = _reads([position[v] for v in logp_pt.get_shared()], arrays)
    expand_reads, expand_env = _reads([position[v] for v in expand_pt.get_shared()], arrays)
    sizes = dict(n_dim=n_dim, n_expanded=n_expanded, rows=max(len(arrays), 1), width=width)
    logp_src = _LOGP_SOURCE.format(reads=logp_reads, **sizes)
    expand_src = _EXPAND_SOURCE.format(reads=expand_reads, **sizes)

    def key(src: str, function_key: str) -> str:
        return hashlib.sha256(f"bayes_tee {_VERSION}\n{function_key}\n{src}".encode()).hexdigest()

    logp_cb = _callback(logp_src, "logp_callback", _LOGP_SIGNATURE, logp_fn, logp_env, key(logp_src, keys[0]))
    expand_cb = _callback(
        expand_src, "expand_callback", _EXPAND_SIGNATURE, expand_fn, expand_env, key(expand_src, keys[1])
    )
    dims, coords = _prepare_dims_and_coords(model, shape_info, renamed)
    names = [f"shared_{row}" for row in range(len(arrays))]
    return CachedPyMCModel(
        _n_dim=n_dim,
        dims=dims,
        _coords=coords,
        _shapes={name: tuple(shape) for name, _, shape in zip(*shape_info, strict=True)},
        compiled_logp_func=logp_cb,
        compiled_expand_func=expand_cb,
        initial_point_func=initial_fn,
        shared_data=dict(zip(names, arrays, strict=True)),
        shared_var_keys=dict(zip(variables, names, strict=True)),
        user_data=_table(arrays, width),
        n_expanded=n_expanded,
        shape_info=shape_info,
        logp_func=logp_pt,
        expand_func=expand_pt,
        reparameterized_names=renamed,
    )
