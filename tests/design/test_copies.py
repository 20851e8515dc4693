"""Rows that copy another row in every column: a continuous score's copies are dropped, counted
and said; 0/1 verdicts and integer scores repeat legitimately and are kept.
"""

import numpy as np
import pandas as pd
import pytest

from bayes_tee import DesignWarning
from bayes_tee.design.build import build_design
from bayes_tee.design.losses import COPY_REASON


def _frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "model": np.repeat(["a", "b", "c"], 20),
            "item": np.tile(np.arange(20), 3),
            "score": rng.normal(size=60),
        }
    )
    return pd.concat([df, df[df["model"] == "c"]], ignore_index=True)  # model c appended twice


@pytest.mark.parametrize("formula", [None, "score ~ model + (1|item)"])
def test_copies_of_a_continuous_score_are_dropped_and_counted(formula):
    df = _frame()
    with pytest.warns(DesignWarning, match="Dropped 20 row"):
        d = build_design(df, outcome="score", item="item", system="model", formula=formula)
    assert d.dropped[COPY_REASON] == 20
    assert d.n_rows == 60
    if formula is None:  # with the copies, model c's cells held two calls and made a term of them
        assert "system:item" not in [t.label for t in d.terms]


def test_repeated_verdicts_are_replicates_not_copies():
    df = _frame().assign(score=lambda x: (x["score"] > 0).astype(float))
    d = build_design(df, outcome="score", item="item", system="model", family="binomial", warn=False)
    assert COPY_REASON not in d.dropped and d.n_rows == 80


def test_a_call_id_keeps_repeated_continuous_scores():
    df = _frame().assign(call=np.arange(80))
    d = build_design(df, outcome="score", item="item", system="model", warn=False)
    assert COPY_REASON not in d.dropped and d.n_rows == 80
