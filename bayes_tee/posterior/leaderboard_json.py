"""A leaderboard as one JSON document a dashboard can read (``bayes-tee leaderboard --json``).

The schema (``"schema": "bayes_tee.leaderboard/1"``) is one object:

============================  ==================================================================
key                           value
============================  ==================================================================
``schema``                    ``"bayes_tee.leaderboard/1"``
``level``                     credible level of every interval (e.g. 0.9)
``simultaneous_level``        level of each pair's simultaneous interval (Sidak over all pairs)
``over``                      ``"new"`` or ``"panel"``: the reading of the ranks, pairs, groups
``note``                      one line: what *new* generalises over (and a fixed judge panel)
``scale``                     units of the estimates: ``outcome``, ``success probability`` or
                              ``expected score``
``higher_is_better``          whether rank 1 is the highest score
``leaderboard``               one record per system, best first: the columns of
                              :func:`bayes_tee.posterior.leaderboard.leaderboard` (``system,
                              estimate, panel_low, panel_high, new_low, new_high, rank_median,
                              rank_low, rank_high, p_best, group``; with costs ``cost,
                              p_pareto``; a latent family's ``latent``)
``groups``                    one record per letter, in letter order: ``{"letter": "a",
                              "systems": [...]}``; systems sharing a letter are not separated
``front``                     with costs: the systems the estimates put on the cost front,
                              else ``null``
``pairs``                     the pairs shown (``pairs_shown``): records of
                              :func:`bayes_tee.posterior.leaderboard.pairs`, plus ``resolved``
                              (the simultaneous interval excludes 0)
``pairs_shown``               ``"all"``, ``"unresolved"`` or ``"none"``
``n_pairs``                   how many pairs there are
``n_unresolved``              how many of them are unresolved
``diagnostics``               the fit's convergence checks (R-hat, ESS, divergences, tree
                              depth, E-BFMI; ``ok``)
``notes``                     the design's notes and, when the fit failed its checks, the
                              warning
``control``                   on a fit with covariates: the reading (``"uncontrolled ..."`` or
                              ``"controlled at length = 0"``, :mod:`.controls`), else ``null``
============================  ==================================================================

Numbers that are not finite are written as ``null``. :func:`read_leaderboard_json` reads the
document back into the same tables.

>>> doc = leaderboard_document(post, pairs="unresolved")  # doctest: +SKIP
>>> read_leaderboard_json(json.dumps(doc))["leaderboard"]  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .._core import diagnostics as diag
from .._core.exceptions import ArgumentError, FileError
from ..gstudy.weights import Over
from . import leaderboard as board
from .cost_front import Cost
from .tie_groups import letter_names

if TYPE_CHECKING:
    from .fit import Fit

SCHEMA = "bayes_tee.leaderboard/1"
#: Which pairs a document (or the command line) shows.
PairsShown = Literal["all", "unresolved", "none"]


def _plain(value):
    """A JSON value: NumPy scalars as Python ones, non-finite numbers as ``None``."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _records(table: pd.DataFrame) -> list[dict]:
    return [_plain(r) for r in table.to_dict("records")]


def resolved(pairs: pd.DataFrame) -> pd.Series:
    """Whether each pair's simultaneous interval excludes 0 (the pair is in no tie group)."""
    return (pairs["simultaneous_low"] > 0) | (pairs["simultaneous_high"] < 0)


def leaderboard_document(
    post: Fit,
    *,
    level: float = 0.9,
    over: Over = "new",
    higher_is_better: bool = True,
    pairs: PairsShown = "all",
    cost: Cost | None = None,
    cost_column: str | None = None,
    control: dict | None = None,
) -> dict:
    """The leaderboard, its tie groups, the pairs, the diagnostics and the notes as one JSON-ready
    object (module docstring).

    Parameters
    ----------
    post : Fit
        A fit with ``system=``.
    level, over, higher_is_better, cost, cost_column, control
        As :func:`bayes_tee.posterior.leaderboard.leaderboard`.
    pairs : {"all", "unresolved", "none"}
        Which pairs to include.

    Returns
    -------
    dict
        Ready for :func:`json.dumps`.

    Examples
    --------
    >>> json.dumps(leaderboard_document(post))  # doctest: +SKIP
    """
    if pairs not in ("all", "unresolved", "none"):
        raise ArgumentError(f"pairs must be 'all', 'unresolved' or 'none', got {pairs!r}.")
    table = board.leaderboard(
        post, level=level, over=over, higher_is_better=higher_is_better, cost=cost, cost_column=cost_column,
        control=control,
    )  # fmt: skip
    every = board.pairs(post, level=level, over=over, systems=table["system"].tolist(), control=control)
    every["resolved"] = resolved(every)
    shown = {"all": every, "unresolved": every[~every["resolved"]], "none": every.iloc[:0]}[pairs]
    checks = post.diagnostics()
    notes = list(post.design.notes)
    if msg := diag.message(checks):
        notes.append(f"WARNING: {msg}")
    a = table.attrs
    return _plain(
        {
            "schema": SCHEMA,
            "level": level,
            "simultaneous_level": a["simultaneous_level"],
            "over": over,
            "note": a["note"],
            "scale": a["scale"],
            "higher_is_better": higher_is_better,
            "leaderboard": _records(table),
            "groups": [
                {"letter": k, "systems": g} for k, g in zip(letter_names(len(a["groups"])), a["groups"])
            ],
            "front": a.get("front"),
            "pairs": _records(shown),
            "pairs_shown": pairs,
            "n_pairs": len(every),
            "n_unresolved": int((~every["resolved"]).sum()),
            "diagnostics": checks,
            "notes": notes,
            "control": a.get("control"),
        }
    )


def read_leaderboard_json(source: str | Path | dict) -> dict:
    """Read a leaderboard document back: the ``leaderboard`` and ``pairs`` as DataFrames (their
    attributes as the leaderboard's), ``groups`` as lists of systems, the rest as written.

    Parameters
    ----------
    source : str, pathlib.Path or dict
        The document's text, a file holding it, or the parsed object.

    Returns
    -------
    dict
        The document with ``leaderboard`` and ``pairs`` as DataFrames and ``groups`` as a list
        of lists.

    Examples
    --------
    >>> doc = read_leaderboard_json('{"schema": "bayes_tee.leaderboard/1", "leaderboard": [], '
    ...                             '"pairs": [], "groups": []}')
    >>> doc["groups"]
    []
    """
    if isinstance(source, dict):
        doc = dict(source)
    else:
        text = str(source)
        if not text.lstrip().startswith("{"):
            path = Path(text)
            if not path.is_file():
                raise FileError(f"{text!r} is neither a leaderboard JSON document nor a file holding one.")
            text = path.read_text(encoding="utf-8")
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as err:
            raise FileError(f"Not a leaderboard JSON document: {err}.") from None
    if doc.get("schema") != SCHEMA:
        raise FileError(f"Not a {SCHEMA} document (its schema is {doc.get('schema')!r}).")
    keys = ("level", "over", "note", "scale", "simultaneous_level", "control")
    attrs = {k: doc[k] for k in keys if doc.get(k) is not None}
    table = pd.DataFrame.from_records(doc["leaderboard"])
    table.attrs.update(attrs, groups=[g["systems"] for g in doc["groups"]])
    if doc.get("front") is not None:
        table.attrs["front"] = doc["front"]
    pairs = pd.DataFrame.from_records(doc["pairs"])
    pairs.attrs.update(attrs)
    return doc | {"leaderboard": table, "pairs": pairs, "groups": table.attrs["groups"]}
