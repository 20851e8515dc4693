"""The numba kernels behind the likelihoods that compile nothing per layout: :mod:`~.strata`
(balanced and augmented strata), :mod:`~.binomial` (the logit GLMM) and :mod:`~.prior` (the SD
priors both call). Each is checked against its PyMC reference in the tests.
"""
