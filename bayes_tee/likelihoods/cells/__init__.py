"""The cell likelihood (``cells``, and ``rows`` for the Gaussian family): the many-level effects
sampled, the few-level ones integrated out, as a PyMC model (:mod:`~.model`).
"""

from ..._core.moved import moved_names  # noqa: E402

#: ``bayes_tee.likelihoods.cells`` was a module: its names still import from here, with a warning.
__getattr__ = moved_names(
    __name__,
    {
        "cell_model": "bayes_tee.likelihoods.cells.model",
        "MAX_MARGINAL_LEVELS": "bayes_tee.likelihoods.cells.model",
        "MAX_MARGINAL_COLUMNS": "bayes_tee.likelihoods.cells.model",
    },
)
