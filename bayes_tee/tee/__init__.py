"""The front door: :func:`~bayes_tee.fit_posterior` as named stages (design -> family
-> likelihood -> sample -> posterior) and the refits of a fitted posterior
(:mod:`~bayes_tee.tee.refits`: leave-one-out and the LPM/GLMM comparison;
:mod:`~bayes_tee.tee.prior_refits`: refits under other prior presets).

The rest of the old ``tee`` room lives in :mod:`bayes_tee.design`, :mod:`bayes_tee.likelihoods`
and :mod:`bayes_tee.posterior`; its old module paths still import, with a
:class:`DeprecationWarning` (:mod:`~bayes_tee.tee.moved`).
"""

from __future__ import annotations

from . import moved

moved.install()


def __getattr__(name: str):
    """``from bayes_tee.tee import design`` and the other moved modules, with a warning."""
    if name in moved.MOVED:
        return moved.resolve(name)
    raise AttributeError(f"module 'bayes_tee.tee' has no attribute {name!r}")
