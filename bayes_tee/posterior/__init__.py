"""A fitted posterior and the questions asked of it.

:class:`~bayes_tee.posterior.facade.Posterior` is a thin facade; each method hands its draws to
one module per question: :mod:`~.components` (variance components), :mod:`~.theta` (theta_hat
and its intervals), :mod:`~.shares` (of its variance), :mod:`~.simulate` (posterior-predictive
simulation of designs), :mod:`~.dstudy`, :mod:`~.reliability` (G and Phi
coefficients), :mod:`~.predictive` (posterior-predictive simulation of designs),
:mod:`~.budget`, :mod:`~.gaming`, :mod:`~.power_scaling` (prior and likelihood sensitivity
without refitting), :mod:`~.link_comparison` (LPM against logit GLMM), :mod:`~.report`; the
netCDF file is :mod:`~.netcdf`.
"""
