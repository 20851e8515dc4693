"""The kernels as C callbacks that nutpie calls without Python: the GLMMs' and the Gaussian
``blocks``, ``strata`` (balanced, augmented) and ``collapsed`` likelihoods'.

Through a Python callback every gradient pays the call into Python and the kernel's argument
dispatch (about 25 microseconds for the ordinal kernel's 37 arguments), and the chains' threads
queue for the interpreter lock: on the Likert benchmark's layout (``benchmarks/bench_ordinal.py``)
sampling took 32.7 s through Python and 23.8 s through a C callback, at the same draws.

A callback here reads its kernel's arguments from one table (:func:`pack`): per argument a row
``(address, shape[0], shape[1], 0)`` of an array the density keeps alive; scalars are one-element
arrays; a last row holds the address of the kernel's compiled function. Its body is one
intrinsic per callback (:func:`invoker`), which writes the array views straight into the
kernel's arguments and calls the kernel through that address. So a callback's compile is its
own few lines, about 0.5 s: reading 23-59 arguments through inlined numba functions cost 5-6 s of
type inference and LLVM, and calling the kernel by name links the kernel's code into the
callback, where LLVM optimises it a second time (about 2 s). :func:`pack` refuses arguments whose
types differ from the callback's ``KINDS`` (its ``*_KINDS`` tuple), so a kernel whose signature
changes without its callback stops with a clear error instead of reading memory wrongly. Each
callback is compiled once per machine and cached on disk, keyed on every kernel module's source
like the kernels (:func:`~bayes_tee.likelihoods.kernels.key_cache_on_sources`); its code holds no
address, so the cached callback calls the kernel this process compiled or loaded.

>>> cf = callback("ordinal")  # doctest: +SKIP
>>> table, keep = pack(density._args, ORDINAL_KINDS)  # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import math
from functools import cache

import numba
import numpy as np
from numba import types
from numba.core import cgutils, sigutils
from numba.core.ccallback import CFunc
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from ..blocks.kernel import blocks_logp_grad
from ..collapsed.kernel import collapsed_logp_grad
from ..logit_glmm.crossed_kernel import crossed_backward, crossed_forward
from ..logit_glmm.kernel import binomial_logp_grad
from ..ordinal.kernel import ordinal_logp_grad
from ..strata.kernel import strata_logp_grad
from . import key_cache

#: nutpie's log density callback: ``(dim, x, gradient out, logp out, user data) -> code``;
#: code 0 is success, a positive code a point nutpie rejects (a divergence), as
#: ``nutpie.compile_pymc`` writes it.
LOGP_SIGNATURE = types.int64(
    types.uint64, types.CPointer(types.double), types.CPointer(types.double),
    types.CPointer(types.double), types.voidptr,
)  # fmt: skip
#: nutpie's expand callback: ``(dim, n_expanded, x, out, user data) -> code``.
EXPAND_SIGNATURE = types.int64(
    types.uint64, types.uint64, types.CPointer(types.double), types.CPointer(types.double),
    types.voidptr,
)  # fmt: skip
#: Codes a callback returns: the kernel raised (an SD that underflowed to zero), or the log
#: density is not finite. Both are positive: nutpie rejects the point and goes on.
RAISED, NOT_FINITE = 1, 4

#: Argument kinds: ``f``/``i``/``b`` (float64, int64, bool) and the number of dimensions; ``n0``
#: an argument that is ``None`` (the kernel's branches on it pruned when it compiles).
_NUMBA_KINDS = {
    "f0": types.float64, "i0": types.int64, "b0": types.boolean, "n0": types.none,
    "f1": types.float64[::1], "i1": types.int64[::1], "b1": types.boolean[::1],
    "f2": types.float64[:, ::1], "i2": types.int64[:, ::1], "u1": types.uint8[::1],
}  # fmt: skip
_DTYPES = {"f": np.float64, "i": np.int64, "b": np.bool_, "u": np.uint8}

#: The kinds of :func:`~bayes_tee.likelihoods.ordinal.kernel.ordinal_logp_grad`'s arguments
#: after ``x``, in order (the readers in ``_ordinal_logp`` follow it), then the crossed terms'
#: two arrays (:mod:`~bayes_tee.likelihoods.logit_glmm.crossed_kernel`) the callback maps ``x``
#: through.
ORDINAL_KINDS = (
    "i1", "f1", "f1", "f1", "f0", "f0", "b0", "i1", "i1", "f1", "i1", "f1",
    "i1", "i1", "i1", "b1", "i1", "i1", "i1", "b1", "f1", "i1", "i1", "i1", "i1",
    "i2", "f2", "i1", "i0", "i0", "f0", "f0", "i0", "i0", "f2", "i1", "f0", "i1", "f1",
)  # fmt: skip
#: The same for :func:`~bayes_tee.likelihoods.logit_glmm.kernel.binomial_logp_grad`.
BINOMIAL_KINDS = (
    "i1", "f1", "f1", "f1", "f0", "f0", "b0", "i1", "i1", "f1", "i1", "f1",
    "i1", "i1", "i1", "b1", "i1", "i1", "i1", "b1", "f1", "i1", "i1", "i1", "i1",
    "i2", "f1", "f1", "f1", "i0", "f1", "f1", "i1", "f1",
)  # fmt: skip

#: The same for :func:`~bayes_tee.likelihoods.blocks.kernel.blocks_logp_grad`.
BLOCKS_KINDS = (
    "i1", "f1", "f1", "f1", "f0", "f0", "i1", "i1", "f1", "i1", "f1", "i2", "f2", "f2", "i1",
    "i0", "i0", "b0", "i0", "i0", "i0", "i0", "f2", "i1", "f1", "f1", "f1", "f1", "f1", "i1",
    "i1", "i1", "f1", "f2", "u1", "i1", "f2", "f1", "f0", "f0", "f0", "i1", "f1", "f1", "f1",
    "f0", "f1", "f1", "i2", "i1", "i1", "i1", "f1", "i1", "f1", "f1", "f1",
)  # fmt: skip
#: The same for :func:`~bayes_tee.likelihoods.strata.kernel.strata_logp_grad` (balanced and
#: augmented).
STRATA_KINDS = (
    "i1", "f1", "f1", "f1", "f0", "f0", "i1", "i1", "f1", "i1", "f1", "f1", "f1", "f2", "f2",
    "f1", "f1", "f0", "f1", "f1", "f1", "f1", "f1", "f0", "f1", "f1", "b0", "i0", "f1", "i1",
    "f1", "f1", "f0", "f0", "i0", "i1", "f1", "i1", "f2", "f2", "f2", "f2", "f0", "f2", "i0",
    "f2", "i1", "i0", "i1", "f1", "f1", "f0", "f0",
)  # fmt: skip

#: The strata kernel for the balanced likelihood: ``augmented`` is ``None``, so the completed
#: array's code is pruned from this specialization (it compiles in 3.4 s instead of 7.8 s).
BALANCED_KINDS = tuple(
    "n0" if name == "augmented" else kind
    for name, kind in zip(tuple(inspect.signature(strata_logp_grad.py_func).parameters)[1:], STRATA_KINDS)
)
#: The same for :func:`~bayes_tee.likelihoods.collapsed.kernel.collapsed_logp_grad`.
COLLAPSED_KINDS = (
    "i1", "f1", "f1", "f1", "i0", "i0", "i0", "f1", "f1", "f2", "f2", "f1", "f1", "f2", "f2",
    "f2", "f2", "f1", "f1", "f1", "f0", "f0", "f0",
)  # fmt: skip


#: The kernel each callback calls, and how many of its ``*_KINDS`` are the kernel's arguments
#: after ``x`` (the GLMMs' come before the two arrays of the crossed terms, the ``blocks`` one's
#: before the grand mean's position and centre).
_KERNELS = {
    ORDINAL_KINDS: (ordinal_logp_grad, len(ORDINAL_KINDS) - 2),
    BINOMIAL_KINDS: (binomial_logp_grad, len(BINOMIAL_KINDS) - 2),
    BLOCKS_KINDS: (blocks_logp_grad, len(BLOCKS_KINDS)),
    STRATA_KINDS: (strata_logp_grad, len(STRATA_KINDS)),
    BALANCED_KINDS: (strata_logp_grad, len(BALANCED_KINDS)),
    COLLAPSED_KINDS: (collapsed_logp_grad, len(COLLAPSED_KINDS)),
}


def pack(args: tuple, kinds: tuple[str, ...]) -> tuple[np.ndarray, list[np.ndarray]]:
    """The table a callback reads ``args`` from, and the arrays it points into (keep them alive
    as long as the table is used). For a kernel's ``*_KINDS``, a last row holds the address of
    that kernel's compiled function (compiled, or loaded from the cache, here).

    Raises
    ------
    TypeError
        When an argument's type is not its kind in ``kinds`` (the callback would misread it).

    Examples
    --------
    >>> table, keep = pack((np.arange(3), 2.5), ("i1", "f0"))  # no kernel's kinds: no address row
    >>> table.shape, table[0, 1], table[1, 1]
    ((2, 4), np.int64(3), np.int64(1))
    """
    if len(args) != len(kinds):
        raise TypeError(f"{len(args)} kernel arguments for {len(kinds)} kinds.")
    called = kinds in _KERNELS
    table = np.zeros((len(args) + called, 4), dtype=np.int64)
    keep = []
    for row, (a, kind) in enumerate(zip(args, kinds, strict=True)):
        if numba.typeof(a) != _NUMBA_KINDS[kind]:
            raise TypeError(f"kernel argument {row} is {numba.typeof(a)}, its callback reads {kind}.")
        if a is None:  # nothing to read: its row stays zero
            continue
        arr = np.ascontiguousarray(np.atleast_1d(np.asarray(a, dtype=_DTYPES[kind[0]])))
        keep.append(arr)
        table[row, 0] = arr.ctypes.data
        table[row, 1 : 1 + arr.ndim] = arr.shape
    if called:  # the last row: the kernel, compiled or loaded in this process
        table[-1, 0] = _address_of(kinds)
    return table, keep


@intrinsic
def _address(typingctx, address):  # pragma: no cover - compiled
    """An integer address as a ``void *`` (nutpie's ``address_as_void_pointer``)."""

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


def _arguments(kinds: tuple[str, ...]) -> tuple:
    """The numba types of a kernel's arguments: ``x``, then those of ``kinds``."""
    return (types.float64[::1], *(_NUMBA_KINDS[k] for k in kinds))


def _address_of(kinds: tuple[str, ...]) -> int:
    """The address of the compiled function of the kernel of a callback's ``kinds``
    (:data:`_KERNELS`; numba's calling convention), compiled or loaded from the cache here.
    """
    kernel, n_args = _KERNELS[kinds]
    argtypes = _arguments(kinds[:n_args])
    kernel.compile(argtypes)
    compiled = kernel.overloads[argtypes]
    return compiled.library.get_pointer_to_function(compiled.fndesc.llvm_func_name)


def invoker(kinds: tuple[str, ...]):
    """An intrinsic ``call(t, x)`` that returns ``kernel(x, *arguments)`` for the kernel of a
    callback's ``kinds`` (:data:`_KERNELS`): its arguments read from the first rows of the table
    ``t`` (:func:`pack`), arrays as views of the memory the density keeps (as
    :func:`numba.carray` makes them) and scalars as their values; the kernel called through the
    address in the table's last row, with numba's calling convention, its exceptions raised in
    the callback as a direct call's are.

    Examples
    --------
    >>> call = invoker(STRATA_KINDS)  # in a callback: ``value, grad = call(t, x)``
    >>> callable(call)
    True
    """
    kernel, n_args = _KERNELS[kinds]
    argtypes = _arguments(kinds[:n_args])

    @intrinsic
    def call(typingctx, table, x):  # pragma: no cover - compiled
        if x != argtypes[0]:
            raise numba.core.errors.TypingError(f"x is {x}, the kernel takes {argtypes[0]}")
        kernel.compile(argtypes)  # its return type (and the kernel compiled, for pack)
        restype = kernel.overloads[argtypes].signature.return_type

        def codegen(context, builder, signature, args):
            rows = make_array(signature.args[0])(context, builder, value=args[0]).data

            def field(k, j):  # t[k, j]
                return builder.load(builder.gep(rows, [context.get_constant(types.intp, 4 * k + j)]))

            values = [args[1]]
            for k, ty in enumerate(argtypes[1:]):
                if isinstance(ty, types.NoneType):
                    values.append(context.get_dummy_value())
                    continue
                dtype = ty.dtype if isinstance(ty, types.Array) else ty
                data = builder.inttoptr(field(k, 0), context.get_data_type(dtype).as_pointer())
                if not isinstance(ty, types.Array):
                    values.append(context.unpack_value(builder, ty, data))
                    continue
                size = context.get_abi_sizeof(context.get_data_type(dtype))
                itemsize = context.get_constant(types.intp, size)
                shape = [field(k, 1 + d) for d in range(ty.ndim)]
                strides = [itemsize] if ty.ndim == 1 else [builder.mul(shape[1], itemsize), itemsize]
                view = make_array(ty)(context, builder)
                populate_array(
                    view, data=data, shape=cgutils.pack_array(builder, shape),
                    strides=cgutils.pack_array(builder, strides), itemsize=itemsize, meminfo=None,
                )  # fmt: skip
                values.append(view._getvalue())
            function = context.call_conv.get_function_type(restype, argtypes)
            pointer = builder.inttoptr(field(len(kinds), 0), function.as_pointer())  # the last row
            status, out = context.call_conv.call_function(builder, pointer, restype, argtypes, values)
            with cgutils.if_unlikely(builder, status.is_error):  # as numba's own calls
                context.call_conv.return_status_propagate(builder, status)
            return out

        return restype(table, x), codegen

    return call


@numba.njit(inline="always")
def _f1(t, k):  # pragma: no cover - compiled
    return numba.carray(_address(t[k, 0]), (t[k, 1],), np.float64)


@numba.njit(inline="always")
def _i1(t, k):  # pragma: no cover - compiled
    return numba.carray(_address(t[k, 0]), (t[k, 1],), np.int64)


@numba.njit(inline="always")
def _finish(value, grad, dim, out_, logp_):  # pragma: no cover - compiled
    """Copy the kernel's result out; the code nutpie reads."""
    out = numba.carray(out_, (dim,))
    for j in range(dim):  # a loop: a slice assignment compiles numba's shape-error formatting
        out[j] = grad[j]
    logp_[0] = value
    return 0 if math.isfinite(value) else NOT_FINITE


_ordinal, _binomial = invoker(ORDINAL_KINDS), invoker(BINOMIAL_KINDS)


def _ordinal_logp(dim, x_, out_, logp_, table_):  # pragma: no cover - compiled
    t = numba.carray(table_, (len(ORDINAL_KINDS) + 1, 4), np.int64)
    x = numba.carray(x_, (dim,))
    try:
        c_int, c_flt = _i1(t, len(ORDINAL_KINDS) - 2), _f1(t, len(ORDINAL_KINDS) - 1)
        mapped, log_jac = crossed_forward(x, c_int, c_flt)
        value, grad = _ordinal(t, mapped)
        value, grad = value + log_jac, crossed_backward(x, grad, c_int, c_flt)
    except Exception:  # noqa: BLE001 - an SD underflowed to zero: nutpie rejects the point
        return RAISED
    return _finish(value, grad, dim, out_, logp_)


def _binomial_logp(dim, x_, out_, logp_, table_):  # pragma: no cover - compiled
    t = numba.carray(table_, (len(BINOMIAL_KINDS) + 1, 4), np.int64)
    x = numba.carray(x_, (dim,))
    try:
        c_int, c_flt = _i1(t, len(BINOMIAL_KINDS) - 2), _f1(t, len(BINOMIAL_KINDS) - 1)
        mapped, log_jac = crossed_forward(x, c_int, c_flt)
        value, grad = _binomial(t, mapped)
        value, grad = value + log_jac, crossed_backward(x, grad, c_int, c_flt)
    except Exception:  # noqa: BLE001 - as in _ordinal_logp
        return RAISED
    return _finish(value, grad, dim, out_, logp_)


_blocks, _strata = invoker(BLOCKS_KINDS), invoker(STRATA_KINDS)
_balanced, _collapsed = invoker(BALANCED_KINDS), invoker(COLLAPSED_KINDS)

# The log density callbacks of the kernels whose sampled ``x`` is their own (the Gaussian
# kernels'): the kernel's value and gradient at ``x``, ``RAISED`` where it raises (an SD that
# underflowed to zero; for ``collapsed`` also a matrix not positive definite). Module functions,
# not closures over their invoker: numba keys a closure's cache on its pickle, which holds paths,
# so a closure's compiled callback could not ship (:mod:`.precompiled`).


def _blocks_logp(dim, x_, out_, logp_, table_):  # pragma: no cover - compiled
    x, t = numba.carray(x_, (dim,)), numba.carray(table_, (len(BLOCKS_KINDS) + 1, 4), np.int64)
    try:
        value, grad = _blocks(t, x)
    except Exception:  # noqa: BLE001 - as in _ordinal_logp
        return RAISED
    return _finish(value, grad, dim, out_, logp_)


def _strata_logp(dim, x_, out_, logp_, table_):  # pragma: no cover - compiled
    x, t = numba.carray(x_, (dim,)), numba.carray(table_, (len(STRATA_KINDS) + 1, 4), np.int64)
    try:
        value, grad = _strata(t, x)
    except Exception:  # noqa: BLE001 - as in _ordinal_logp
        return RAISED
    return _finish(value, grad, dim, out_, logp_)


def _balanced_logp(dim, x_, out_, logp_, table_):  # pragma: no cover - compiled
    x, t = numba.carray(x_, (dim,)), numba.carray(table_, (len(BALANCED_KINDS) + 1, 4), np.int64)
    try:
        value, grad = _balanced(t, x)
    except Exception:  # noqa: BLE001 - as in _ordinal_logp
        return RAISED
    return _finish(value, grad, dim, out_, logp_)


def _collapsed_logp(dim, x_, out_, logp_, table_):  # pragma: no cover - compiled
    x, t = numba.carray(x_, (dim,)), numba.carray(table_, (len(COLLAPSED_KINDS) + 1, 4), np.int64)
    try:
        value, grad = _collapsed(t, x)
    except Exception:  # noqa: BLE001 - as in _ordinal_logp
        return RAISED
    return _finish(value, grad, dim, out_, logp_)


def _copy(dim, n_expanded, x_, out_, table_):  # pragma: no cover - compiled
    """The draws as sampled: the unconstrained vector, expanded after sampling."""
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (n_expanded,))
    for j in range(n_expanded):
        out[j] = x[j]
    return 0


_FUNCTIONS = {
    "ordinal": (_ordinal_logp, LOGP_SIGNATURE), "binomial": (_binomial_logp, LOGP_SIGNATURE),
    "blocks": (_blocks_logp, LOGP_SIGNATURE), "strata": (_strata_logp, LOGP_SIGNATURE),
    "balanced": (_balanced_logp, LOGP_SIGNATURE), "collapsed": (_collapsed_logp, LOGP_SIGNATURE),
    "copy": (_copy, EXPAND_SIGNATURE),
}  # fmt: skip


@cache
def callback(name: str) -> CFunc:
    """The C callback ``name`` (``"ordinal"``, ``"binomial"``, ``"blocks"``, ``"strata"``
    (augmented), ``"balanced"``, ``"collapsed"``: a kernel's log density;
    ``"copy"``: the expand callback that reports ``x`` itself), compiled on first use in this
    process and cached on disk.

    Examples
    --------
    >>> callback("copy").address > 0  # doctest: +SKIP
    True
    """
    function, signature = _FUNCTIONS[name]
    compiled = CFunc(function, sigutils.normalize_signature(signature), locals={}, options={})
    compiled.enable_caching()
    key_cache(compiled._cache)  # keyed on every kernel's source, as the kernels are
    compiled.compile()
    return compiled
