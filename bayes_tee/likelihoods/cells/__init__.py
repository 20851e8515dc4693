"""The cell likelihood (``cells``, and ``rows`` for the Gaussian family): the many-level effects
sampled, the few-level ones integrated out, as a PyMC model (:mod:`~.model`).
"""
