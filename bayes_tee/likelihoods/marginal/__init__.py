"""The exact marginal likelihood (``marginal``): every random effect integrated out over the whole
design at once, as a PyMC model (:mod:`~.model`: the model, its layout and its cost).
"""

from ..._core.moved import moved_names  # noqa: E402

#: ``bayes_tee.likelihoods.marginal`` was a module: its names still import from here, with a warning.
__getattr__ = moved_names(
    __name__,
    {
        "marginal_model": "bayes_tee.likelihoods.marginal.model",
        "marginal_cost": "bayes_tee.likelihoods.marginal.model",
        "marginal_layout": "bayes_tee.likelihoods.marginal.model",
    },
)
