"""The exact marginal likelihood (``marginal``): every random effect integrated out over the whole
design at once, as a PyMC model (:mod:`~.model`: the model, its layout and its cost).
"""
