"""A fitted posterior and the questions asked of it, in one direction.

At the bottom, :mod:`~.fit`: the plain :class:`~bayes_tee.posterior.fit.Fit` (draws, design,
priors, how it was made, the component draws and diagnostics computed once). Above it, one
module per question, each a function of a ``Fit`` that calls its siblings as plain functions:
:mod:`~.components` (variance components), :mod:`~.theta` (theta_hat and its intervals),
:mod:`~.shares` (of its variance), :mod:`~.dstudy` (projected SEs at other designs),
:mod:`~.reliability` (G and Phi coefficients), :mod:`~.predictive` (posterior-predictive draws
of studies), :mod:`~.simulate` (``simulate_design``: those studies summarised),
:mod:`~.budget`, :mod:`~.gaming`, :mod:`~.effects`, :mod:`~.ordinal`,
:mod:`~.power_scaling` (prior and likelihood sensitivity without refitting),
:mod:`~.link_comparison` (LPM against logit GLMM). The questions of several systems:
:mod:`~.system_scores`, :mod:`~.leaderboard` (leaderboard, pairs, ranks, tie groups) over
:mod:`~.tie_groups` (the letter display) and :mod:`~.cost_front` (``p_pareto``),
:mod:`~.leaderboard_json` (the published document) and :mod:`~.separation` (the error of a
difference: relative D-study, its shares and changes). Then :mod:`~.reports`
(text and HTML), the netCDF file (:mod:`~.netcdf`), and at the top :mod:`~.facade`, the only
module that names :class:`bayes_tee.Posterior` and its comparison kind
:class:`~bayes_tee.posterior.facade.SystemsPosterior`.
"""
