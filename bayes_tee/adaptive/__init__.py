"""Adaptive evaluation: the loop that buys the calls worth most until a stopping rule is met.

The questions a running evaluation asks of a fit live in the posterior room, as every question
does: :func:`bayes_tee.posterior.decision.decision` (the objective's metric and whether its
target is met) and :func:`bayes_tee.posterior.next_calls.next_calls` (the candidate calls worth
most). This room holds what runs them: :mod:`~.run` (:func:`run_adaptive`, the loop, with its
:mod:`~.checkpoint`) and :mod:`~.inspect_hook` (an Inspect AI early-stopping hook).
"""

from .run import AdaptiveRun, run_adaptive

__all__ = ["AdaptiveRun", "run_adaptive"]
