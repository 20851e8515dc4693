"""The cumulative-link GLMM of ordinal scores (``ordinal``, ``ordinal_probit``): each cell's calls
per category.

:mod:`~.layout` (the per-cell category counts), :mod:`~.model` (the PyMC model),
:mod:`~.density` (the NumPy density and C callback) and :mod:`~.kernel` (its numba kernel). The
family is :mod:`bayes_tee.families.ordinal`; its questions (cutpoints, spreads)
:mod:`bayes_tee.posterior.ordinal`.
"""
