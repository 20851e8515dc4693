"""One way in: data and roles (or a formula) -> :class:`~bayes_tee.design.design.Design`.

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

import dataclasses
import warnings
from typing import Literal

import pandas as pd

from .._core.exceptions import DesignError, DesignWarning
from .checks import check_frame, closest_column, scale_use_options
from .design import Design
from .formula import parse_formula
from .from_formula import validate_formula
from .losses import COPY_REASON, drop_copies
from .out_of_core import is_out_of_core, validate_dask
from .roles import ROLES_ATTR, frame_roles, validate_design

#: The crossed facets of the TEE model that a system interacts with, in formula order.
_SYSTEM_FACETS: tuple[str, ...] = ("item", "prompt", "temperature", "judge")
#: The TEE model's two-way interactions (the roles API's), by role.
_TEE_INTERACTIONS: tuple[tuple[str, str], ...] = (
    ("item", "prompt"),
    ("item", "temperature"),
    ("prompt", "temperature"),
    ("item", "judge"),
    ("prompt", "judge"),
)


def system_formula(
    data: pd.DataFrame, roles: dict[str, str | None], system: str, judge_effect: str = "fixed"
) -> tuple[str, tuple[str, ...]]:
    """The TEE formula the roles write, with the compared systems: a fixed main effect of
    ``system`` (its effects are what a leaderboard ranks) and its interaction with every random
    facet (item x system, prompt x system, judge x system, temperature x system), which is
    what separates two systems. Returns the formula and its notes (facets left out).

    A role whose column has one level in the data is left out (said in a note); the widest
    interaction is the cell error when cells repeat, and the residual otherwise.

    >>> import bayes_tee as bt
    >>> df = bt.simulate.gstudy_dgp({"model": 3, "item": 10, "judge": 2}, {"item": 1.0}, random_seed=0)
    >>> system_formula(df, {"outcome": "score", "item": "item", "judge": "judge"}, "model")[0]
    'score ~ model + judge + (1|item) + (1|item:judge) + (1|model:item) + (1|model:judge)'
    """
    cols = {r: c for r, c in roles.items() if c is not None}
    used = [c for r, c in cols.items() if r in (*_SYSTEM_FACETS, "category", "outcome")] + [system]
    rows = data.dropna(subset=[c for c in used if c in data.columns])
    notes: list[str] = []
    present = []
    for role in _SYSTEM_FACETS:
        col = cols.get(role)
        if col is None:
            continue
        if role != "item" and rows[col].nunique() < 2:
            notes.append(f"Column {col!r} ({role}) has one level in the rows used: its terms are dropped.")
            continue
        present.append(role)
    category = cols.get("category") if "category" in cols and rows[cols["category"]].nunique() > 1 else None
    if rows[system].nunique() < 2:
        raise DesignError(
            f"system={system!r} has {rows[system].nunique()} level(s) in the rows used: a comparison needs "
            "two or more systems."
        )
    keys = [cols[r] for r in present] + [system]
    cell_rows = rows.groupby(keys, sort=False, observed=True).size()
    replicates = bool((cell_rows > 1).any())
    if cols.get("replicate") is not None:
        dup = rows.duplicated([*keys, cols["replicate"]])
        if dup.any():
            raise DesignError(
                f"{int(dup.sum())} row(s) repeat a (cell, {cols['replicate']!r}) combination, e.g. row "
                f"{rows.index[dup.to_numpy()][0]!r}. Remove duplicated calls, or leave replicate=None to "
                "count every row of a cell as a replicate."
            )
    col = {r: cols[r] for r in present}
    col["system"] = system
    judge_fixed = "judge" in present and judge_effect == "fixed"
    fixed = [
        system,
        *([col["judge"]] if judge_fixed else []),
        *([col["temperature"]] if "temperature" in present else []),
    ]
    random: list[tuple[str, ...]] = [("item",)]
    if category is not None:
        random.append(("category",))
        col["category"] = category
    random += [(r,) for r in ("prompt",) if r in present]
    if "judge" in present and not judge_fixed:
        random.append(("judge",))
    random += [pair for pair in _TEE_INTERACTIONS if set(pair) <= set(present)]
    random += [("system", r) for r in present]
    widest = {*present, "system"}
    if replicates and not any(set(t) == widest for t in random):
        random.append((*present, "system"))
    if not replicates:  # the widest interaction is the residual: it cannot be a term as well
        random = [t for t in random if set(t) != widest]
    terms = [*fixed, *[f"(1|{':'.join(col[r] for r in t)})" for t in random]]
    return f"{cols['outcome']} ~ " + " + ".join(terms), tuple(notes)


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
    system: str | None = None,
    family: str = "gaussian",
    overdispersion: bool | None = None,
    thresholds: Literal["common", "judge"] = "common",
    spread: Literal["common", "judge"] = "common",
    warn: bool = True,
    client: object = None,
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
    system : str, optional
        The column of the compared systems (models, agents, pipelines): one joint fit with the
        systems as a fixed factor and their interactions with every random facet as variance
        components (:func:`system_formula`); with ``formula=``, the formula's fixed factor that
        holds them. Gaussian family, pandas data.
    family : str
        A name in :data:`bayes_tee.families.FAMILIES`.
    overdispersion : bool, optional
        Binomial and ordinal: the cell-level random effect (default: on when cells repeat).
    thresholds : {"common", "judge"}
        Ordinal: one set of cutpoints for the panel, or each judge its own.
    spread : {"common", "judge"}
        Ordinal only: each (fixed) judge its own latent spread (compression), or none.
    warn : bool
        Say the design's notes (dropped rows, one-level facets) as
        :class:`~bayes_tee.DesignWarning`; callers that say them at their own call pass ``False``.
    client : distributed.Client, optional
        Compute a dask frame's or parquet dataset's per-cell statistics on this
        ``dask.distributed`` cluster (:func:`~bayes_tee.design.out_of_core.validate_dask`).

    Returns
    -------
    Design

    Raises
    ------
    DesignError
        Arguments that contradict each other or the data, with the fix.
    """
    out_of_core = is_out_of_core(data)  # what kind of input this is, decided once
    if client is not None and not out_of_core:
        raise DesignError(
            "client= computes out-of-core data on a dask cluster: pass a dask DataFrame or a parquet "
            "path with it, or leave client=None for a pandas DataFrame (already in memory)."
        )
    for name, value in (("thresholds", thresholds), ("spread", spread)):
        if value != "common" and out_of_core:
            raise DesignError(
                f"{name}={value!r} sets an ordinal fit's scale use per judge, from the scores in memory: "
                "read parquet or dask data with .compute() first."
            )
    scale_use = {"thresholds": thresholds, "spread": spread}
    if system is not None:
        _check_system(data, system, position, swapped, out_of_core)
    copies = 0
    if not out_of_core and isinstance(data, pd.DataFrame):
        named = parse_formula(formula).outcome if formula is not None else outcome
        named = named or frame_roles(data, {"outcome": None, "item": None}, system=system).get("outcome")
        data, copies = drop_copies(data, named)
    design = _build(
        data, formula=formula, outcome=outcome, item=item, prompt=prompt, judge=judge,
        temperature=temperature, replicate=replicate, category=category, position=position,
        swapped=swapped, judge_effect=judge_effect, system=system, family=family,
        overdispersion=overdispersion, scale_use=scale_use, warn=warn, client=client,
        out_of_core=out_of_core,
    )  # fmt: skip
    if not copies:
        return design
    note = (
        f"Dropped {copies} row(s) that copy another row in every column (a continuous score repeated "
        "to the last digit is one call counted twice, not a replicate); give repeated calls an epoch "
        "or call-id column to keep them."
    )
    if warn:
        warnings.warn(note, DesignWarning, stacklevel=2)
    return dataclasses.replace(
        design,
        dropped={COPY_REASON: copies, **design.dropped},
        notes=(note, *design.notes),
    )


def _build(
    data, *, formula, outcome, item, prompt, judge, temperature, replicate, category, position,
    swapped, judge_effect, system, family, overdispersion, scale_use, warn, client, out_of_core,
) -> Design:  # fmt: skip
    """:func:`build_design` after the frame's kind is known and its copied rows dropped."""
    if formula is not None:
        if position is not None or replicate is not None or swapped is not None:
            raise DesignError(
                "formula= takes no position= or replicate=: the rows of a cell of the formula's facets "
                "are its replicates; write any other facet into the formula as a term."
            )
        if out_of_core:
            raise DesignError(
                "formula= needs a pandas DataFrame; read parquet or dask data with .compute() first."
            )
        if judge_effect != "fixed":
            raise DesignError(
                "formula= writes the judges' effect in the formula: '+ judge' for a fixed panel, "
                "'+ (1|judge)' for a random facet; drop judge_effect=."
            )
        parsed = parse_formula(formula)
        lhs = parsed.outcome
        if (
            system is None
            and isinstance(data, pd.DataFrame)
            and ROLES_ATTR in data.attrs
            and "model" in data.columns
            and "model" not in parsed.columns
            and data["model"].nunique() > 1
        ):
            raise DesignError(
                "The frame holds several models in column 'model' and the formula does not name it: "
                "their scores would be pooled as replicates. Compare them with system='model' (and "
                "'+ model' in the formula), or fit one at a time, e.g. df[df['model'] == ...]."
            )
        if outcome is not None and outcome != lhs:
            raise DesignError(
                f"outcome={outcome!r} but the formula's outcome is {lhs!r}; give one of the two."
            )
        design = validate_formula(
            data, formula, item=item, prompt=prompt, judge=judge, temperature=temperature,
            category=category, system=system, family=family, overdispersion=overdispersion, warn=warn,
        )  # fmt: skip
        return _with_scale_use(design, scale_use)
    if system is not None:
        design = _system_design(
            data, system=system, judge_effect=judge_effect, family=family, warn=warn, outcome=outcome,
            item=item, prompt=prompt, judge=judge, temperature=temperature, replicate=replicate,
            category=category,
        )  # fmt: skip
        return _with_scale_use(design, scale_use)
    if out_of_core:
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
            overdispersion=overdispersion, warn=warn, client=client,
        )  # fmt: skip
    return validate_design(
        data, outcome=outcome, item=item, prompt=prompt, judge=judge, temperature=temperature,
        replicate=replicate, category=category, position=position, swapped=swapped,
        judge_effect=judge_effect, family=family, overdispersion=overdispersion,
        thresholds=scale_use["thresholds"], spread=scale_use["spread"], warn=warn,
    )  # fmt: skip


def _with_scale_use(design: Design, options: dict[str, str]) -> Design:
    """A formula's or a comparison's design with an ordinal fit's per-judge cutpoints or
    spread (:func:`~bayes_tee.design.checks.scale_use_options`: they need the judge role).
    """
    if all(v == "common" for v in options.values()):
        return design
    options = {**options, "judge_effect": design.judge_effect}
    thresholds, spread = scale_use_options(
        options, design.outcome_levels is not None, design.family, list(design.facets)
    )
    return dataclasses.replace(design, thresholds=thresholds, spread=spread)


def _check_system(data: object, system: str, position, swapped, out_of_core: bool) -> None:
    """Refuse what a comparison of systems cannot fit, naming the limitation."""
    if out_of_core:
        raise DesignError(
            "system= needs a pandas DataFrame; read parquet or dask data with .compute() first."
        )
    if position is not None or swapped is not None:
        raise DesignError(
            "system= takes no position=/swapped=: pairwise verdicts compare two systems already "
            "(fit them with position=, without system=)."
        )
    check_frame(data)
    if system not in data.columns:
        raise DesignError(
            f"system={system!r} is not a column of the data."
            f"{closest_column(system, list(map(str, data.columns)))}"
        )


def _system_design(data: pd.DataFrame, *, system: str, judge_effect, family, warn, **roles) -> Design:
    """The design of a comparison of systems from column roles: the formula they write with
    the systems (:func:`system_formula`), and its notes.
    """
    given = frame_roles(data, roles, system=system)
    text, notes = system_formula(data, given, system, judge_effect)
    keep = {k: given.get(k) for k in ("item", "prompt", "judge", "temperature", "category")}
    keep = {k: v for k, v in keep.items() if v is not None and v in text}
    design = validate_formula(data, text, **keep, system=system, family=family, warn=warn)
    return dataclasses.replace(design, notes=(*notes, *design.notes))
