"""Pairwise (A/B) evaluation: verdict coding, presentation-order bias and Elo conversions
(:mod:`~bayes_tee.pairwise.verdicts`), and RAEE ratings with their noise (:mod:`~bayes_tee.pairwise.raee`).
"""

from . import raee, verdicts
from .verdicts import ELO_SCALE, expected_max_normal, from_elo, order_bias, recode, to_elo, verdict_scores

__all__ = [
    "ELO_SCALE",
    "expected_max_normal",
    "from_elo",
    "order_bias",
    "raee",
    "recode",
    "to_elo",
    "verdict_scores",
    "verdicts",
]
