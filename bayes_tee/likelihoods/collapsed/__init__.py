"""The collapsed Gaussian likelihood (``collapsed``): every linear effect integrated out, only the
SDs sampled, for designs whose random effects are the item's and the cell's (the leaderboard and
judge-bias models: ``score ~ model + length + (1|item)``).

:mod:`~.layout` (the fixed effects' design in their sampled coordinates, their priors, the
sufficient statistics grouped by replicate count and item pattern, the cost and the limits) and
:mod:`~.density` (the NumPy density nutpie samples). Its PyMC form is the marginal model
(``bayes_tee.likelihoods.marginal.model``): the same posterior.
"""
