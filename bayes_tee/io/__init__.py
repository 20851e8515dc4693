"""Readers for evaluation logs: Inspect AI, promptfoo and lm-evaluation-harness.

Each reader returns the long DataFrame :func:`bayes_tee.fit_posterior` takes, one row per
score, with the columns' roles in ``df.attrs`` so the first fit is one line; rows that cannot
be scored are counted in ``df.attrs["dropped"]`` and said once.

>>> import bayes_tee as bt
>>> post = bt.fit_posterior(bt.read_inspect("logs/"))   # doctest: +SKIP
"""

from .inspect_log import read_inspect
from .lm_eval import read_lm_eval
from .long_frame import describe, score_value
from .promptfoo import read_promptfoo

__all__ = ["describe", "read_inspect", "read_lm_eval", "read_promptfoo", "score_value"]
