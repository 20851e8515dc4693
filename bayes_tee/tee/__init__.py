"""The TEE / G-theory core, in data-flow order: terms -> design (validate) -> likelihoods ->
fit (:func:`fit_posterior`) -> :class:`Posterior` (facade; save/load in :mod:`~bayes_tee.tee.io`)
-> components, theta, dstudy, predictive, budget, gaming, psens -> report; refits
(compare_links, prior_sensitivity, leave_one_out).
"""
