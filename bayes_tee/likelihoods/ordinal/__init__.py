"""The cumulative-link GLMM of ordinal scores (``ordinal``, ``ordinal_probit``): each cell's calls
per category.

:mod:`~.layout` (the per-cell category counts), :mod:`~.model` (the PyMC model),
:mod:`~.density` (the NumPy density and C callback) and :mod:`~.kernel` (its numba kernel). The
family is :mod:`bayes_tee.families.ordinal`; its questions (cutpoints, spreads)
:mod:`bayes_tee.posterior.ordinal`.
"""

from ..._core.moved import moved_names  # noqa: E402

#: ``bayes_tee.likelihoods.ordinal`` was a module: its names still import from here, with a warning.
__getattr__ = moved_names(
    __name__,
    {
        "ordinal_model": "bayes_tee.likelihoods.ordinal.model",
    },
)
