"""Paired prediction-vs-data noise of benchmark comparisons (Wang 2025): the exact estimator
(:mod:`~bayes_tee.noise.exact`) and its Beta-Binomial posterior (:mod:`~bayes_tee.noise.bayes`).

>>> import bayes_tee as bt
>>> nz = bt.noise.paired(df, model="model", question="question", correct="correct")  # doctest: +SKIP
"""

from . import bayes, exact
from .bayes import NoisePosterior
from .exact import PairedNoise, beta_theory_se, paired
from .table import QuestionTable, question_table

__all__ = [
    "NoisePosterior",
    "PairedNoise",
    "QuestionTable",
    "bayes",
    "beta_theory_se",
    "exact",
    "paired",
    "question_table",
]
