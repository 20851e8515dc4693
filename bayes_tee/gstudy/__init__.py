"""G-study algebra that needs no posterior draws: which levels each component is averaged over
and what a design weighs it by.

:mod:`~.divisors` (each component's divisor in Var(theta_hat), which terms a decision keeps),
:mod:`~.weights` (design fields, grids, D-study weights, calls per design),
:mod:`~.coefficients` (G and Phi coefficients' weights), :mod:`~.layouts` (the cells and call
counts of a study to simulate). The posterior's questions (:mod:`bayes_tee.posterior`) multiply
these by variance draws; the classical estimators (:mod:`bayes_tee.studies`, the refits) by
point estimates.
"""
