"""The strata likelihoods (``balanced``, ``augmented``): the ANOVA strata of a complete cross,
exact through their sums of squares, and latent completion of a nearly complete one.

:mod:`~.augment` (the latent cells that complete a design), :mod:`~.balanced` and
:mod:`~.augmented` (the PyMC models), :mod:`~.density` (the NumPy density nutpie samples) and
:mod:`~.kernel` (its numba kernel). The strata algebra itself is :mod:`bayes_tee.likelihoods.anova`.
"""
