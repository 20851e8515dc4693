"""The item-blocks likelihood (``blocks``): every random effect integrated out exactly, item by
item (one Woodbury step per item) for an unbalanced design.

:mod:`~.layout` (the item blocks, cell types, cost and limits), :mod:`~.density` (the NumPy
density) and :mod:`~.kernel` (its numba kernel). Its PyMC form is the marginal model
(:mod:`bayes_tee.likelihoods.marginal.model`).
"""
