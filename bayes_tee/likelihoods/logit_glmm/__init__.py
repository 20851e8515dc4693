"""The logit GLMM (``binomial``, ``binomial_quadrature``, and ``rows`` for binary scores):
successes out of trials per cell.

:mod:`~.layout` (its terms, level adaptation, data and key), :mod:`~.model` (the PyMC model),
:mod:`~.quadrature` (the cell effect integrated out by adaptive Gauss-Hermite), :mod:`~.density`
(the NumPy density and C callback nutpie samples), :mod:`~.kernel` and :mod:`~.quadrature_kernel`
(its numba kernels).
"""
