"""One way in: data and roles (or a formula) -> :class:`~bayes_tee.design.roles.Design`.

:func:`build_design` is the only dispatcher between the three validators: column roles on a
pandas frame (:func:`~bayes_tee.design.roles.validate_design`), an lme4-style formula
(:func:`~bayes_tee.design.from_formula.validate_formula`) and parquet or dask data reduced out
of core (:func:`~bayes_tee.design.out_of_core.validate_dask`). ``fit_posterior``, the command
line and the plug-in G-study all call it, so they accept and refuse the same inputs with the
same messages.

>>> import bayes_tee as bt
>>> d = build_design(bt.datasets.load("tee_demo"), outcome="score", item="item", prompt="prompt")
>>> d.facets, d.balanced
(('item', 'prompt'), True)
>>> build_design(bt.datasets.load("tee_demo"), formula="score ~ (1|item)", replicate="replicate")
Traceback (most recent call last):
...
bayes_tee._core.exceptions.DesignError: formula= takes no position= or replicate=: ...
"""

from __future__ import annotations

from typing import Literal

from .._core.exceptions import DesignError
from .formula import parse_formula
from .from_formula import validate_formula
from .out_of_core import is_out_of_core, validate_dask
from .roles import Design, validate_design


def build_design(
    data: object,
    *,
    formula: str | None = None,
    outcome: str | None = None,
    item: str | None = None,
    prompt: str | None = None,
    judge: str | None = None,
    temperature: str | None = None,
    replicate: str | None = None,
    category: str | None = None,
    position: str | None = None,
    swapped: object = None,
    judge_effect: Literal["fixed", "random"] = "fixed",
    family: str = "gaussian",
    overdispersion: bool | None = None,
    warn: bool = True,
) -> Design:
    """The validated design of long evaluation data.

    Parameters
    ----------
    data : pandas.DataFrame, dask.dataframe.DataFrame or path
        One row per scored call; a dask frame or a parquet path is reduced to per-cell
        statistics out of core (roles only).
    formula : str, optional
        An lme4-style formula (:mod:`bayes_tee.design.from_formula`); role arguments then only
        say which column plays which role.
    outcome, item, prompt, judge, temperature, replicate, category, position : str, optional
        Column roles (see :func:`bayes_tee.fit_posterior`).
    swapped : optional
        Pairwise data: the ``position`` level whose verdicts are in the swapped slot frame.
    judge_effect : {"fixed", "random"}
        Judges as a fixed panel or a random facet.
    family : str
        A name in :data:`bayes_tee.families.FAMILIES`.
    overdispersion : bool, optional
        Binomial: the cell-level random effect (default: on when cells repeat).
    warn : bool
        Say the design's notes (dropped rows, one-level facets) as
        :class:`~bayes_tee.DesignWarning`; callers that say them at their own call pass ``False``.

    Returns
    -------
    Design

    Raises
    ------
    DesignError
        Arguments that contradict each other or the data, with the fix.
    """
    if formula is not None:
        if position is not None or replicate is not None or swapped is not None:
            raise DesignError(
                "formula= takes no position= or replicate=: the rows of a cell of the formula's facets "
                "are its replicates; write any other facet into the formula as a term."
            )
        if is_out_of_core(data):
            raise DesignError(
                "formula= needs a pandas DataFrame; read parquet or dask data with .compute() first."
            )
        if judge_effect != "fixed":
            raise DesignError(
                "formula= writes the judges' effect in the formula: '+ judge' for a fixed panel, "
                "'+ (1|judge)' for a random facet; drop judge_effect=."
            )
        lhs = parse_formula(formula).outcome
        if outcome is not None and outcome != lhs:
            raise DesignError(
                f"outcome={outcome!r} but the formula's outcome is {lhs!r}; give one of the two."
            )
        return validate_formula(
            data, formula, item=item, prompt=prompt, judge=judge, temperature=temperature,
            category=category, family=family, warn=warn,
        )  # fmt: skip
    if is_out_of_core(data):
        if outcome is None or item is None:
            raise DesignError("outcome= and item= are required for parquet or dask data.")
        if position is not None or swapped is not None:
            raise DesignError(
                "position=/swapped= (pairwise verdict labels) need a pandas DataFrame; recode the "
                "verdicts to 0/0.5/1 scores first (bt.pairwise.recode) to fit parquet or dask data."
            )
        return validate_dask(
            data, outcome=outcome, item=item, prompt=prompt, judge=judge, temperature=temperature,
            replicate=replicate, category=category, judge_effect=judge_effect, family=family,
            overdispersion=overdispersion, warn=warn,
        )  # fmt: skip
    return validate_design(
        data, outcome=outcome, item=item, prompt=prompt, judge=judge, temperature=temperature,
        replicate=replicate, category=category, position=position, swapped=swapped,
        judge_effect=judge_effect, family=family, overdispersion=overdispersion, warn=warn,
    )  # fmt: skip
