"""Column roles -> a validated :class:`Design` with per-cell sufficient statistics.

This is the one place where user input is checked and every error message is written. A
*cell* is one (item, prompt, temperature, judge) combination; its replicate calls are
exchangeable, so the Gaussian model only needs each cell's count, mean and within-cell sum of
squares.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> d = bt.validate_design(df, outcome="score", item="item", prompt="prompt", judge="judge")
>>> d.counts["item"], d.balanced
(40, True)
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError, DesignWarning
from ..families import FAMILIES, get_family
from ..pairwise.verdicts import recode, verdict_scores
from .checks import check_frame, closest_column, outcome_values, scale_use_options
from .coding import cell_stats, is_constant, level_codes
from .design import Design, Roles
from .losses import ROLES_ATTR, drop_missing, dropped_notes, log_losses
from .terms import FACETS, model_terms


def check_roles(df: pd.DataFrame, roles: Roles) -> None:
    """Every role is a string naming a distinct column of ``df``; the error names the fix."""
    given = {k: v for k, v in roles.as_dict().items() if v is not None}
    for role, col in given.items():
        if not isinstance(col, str):
            raise DesignError(f"Role {role!r} must be a column name (a string), got {col!r}.")
    seen: dict[str, str] = {}
    for role, col in given.items():
        if col in seen:
            raise DesignError(
                f"Column {col!r} is given for two roles, {seen[col]!r} and {role!r}. "
                "Each role needs its own column; drop one of the two arguments."
            )
        seen[col] = role
    columns = [str(c) for c in df.columns]
    missing = [(role, col) for role, col in given.items() if col not in df.columns]
    if missing:
        lines = "; ".join(f"{role}={col!r}{closest_column(col, columns)}" for role, col in missing)
        raise DesignError(
            f"Column(s) not in the data: {lines}. Available columns: {columns}. "
            "Pass the right column name for each role, or leave an optional role out."
        )


def frame_roles(
    df: pd.DataFrame, roles: dict[str, str | None], system: str | None = None
) -> dict[str, str | None]:
    """The roles given, completed from the roles a log reader stored in ``df.attrs``.

    With ``outcome`` and ``item`` both given, the roles are the ones given. With neither, the
    stored roles are used and any role given overrides its stored column. A frame holding
    several models (a ``model`` column from a reader) is refused unless ``system`` names that
    column: the models are then the compared systems of one joint fit.

    >>> import pandas as pd
    >>> df = pd.DataFrame({"score": [1.0], "item": ["a"]})
    >>> df.attrs[ROLES_ATTR] = {"outcome": "score", "item": "item"}
    >>> frame_roles(df, {"outcome": None, "item": None, "judge": None})["outcome"]
    'score'
    """
    if roles.get("outcome") is not None and roles.get("item") is not None:
        return roles
    stored = df.attrs.get(ROLES_ATTR) if isinstance(df, pd.DataFrame) else None
    if roles.get("outcome") is None and roles.get("item") is None and stored:
        if "model" in df.columns and df["model"].nunique() > 1 and system != "model":
            names = ", ".join(map(repr, sorted(df["model"].dropna().astype(str).unique())))
            raise DesignError(
                f"The frame holds several models in column 'model' ({names}); the decomposition "
                "is per model: compare them in one fit with system='model', fit one at a time, e.g. "
                "df[df['model'] == ...], or read one model with the reader's model= argument."
            )
        return {**roles, **stored, **{k: v for k, v in roles.items() if v is not None}}
    missing = [r for r in ("outcome", "item") if roles.get(r) is None]
    raise DesignError(
        f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required: name the score "
        "column with outcome= and the item column with item= (a frame from bt.read_inspect, "
        "bt.read_promptfoo or bt.read_lm_eval carries its roles and needs neither)."
    )


def validate_design(
    df: pd.DataFrame,
    *,
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
    thresholds: Literal["common", "judge"] = "common",
    spread: Literal["common", "judge"] = "common",
    warn: bool = True,
) -> Design:
    """Check column roles and build the :class:`Design`.

    Rows with a missing outcome or a missing role value are dropped and counted in
    ``Design.dropped``; a role with a single level has its terms dropped (said once, as a
    :class:`~bayes_tee.DesignWarning`).

    Parameters
    ----------
    df : pandas.DataFrame
        Long data, one row per scored call.
    outcome, item : str
        Required columns: the score and the item identifier (optional for a frame from a log
        reader, which carries its roles: :func:`frame_roles`).
    prompt, judge, temperature, replicate, category : str, optional
        Optional facet columns. ``replicate`` labels calls within a cell; without it every row
        in a cell counts as a replicate.
    position : str, optional
        Pairwise data: the presentation-order column (Messing 2026 App. H), a fixed factor with
        its sensitivity index. The outcome may then hold verdict labels (``A``, ``B``,
        ``tie``, ``A>B``...), scored 1 / 0.5 / 0 (:func:`bayes_tee.pairwise.verdicts.verdict_scores`).
    swapped : optional
        With ``position``: the order level whose verdicts are in the swapped slot frame; those
        rows are recoded to "the pair's first system wins" (``1 - y``, ties stay 0.5; seed
        000 App. R, :func:`bayes_tee.pairwise.verdicts.recode`). Leave it out when the outcome is
        already in the system frame.
    judge_effect : {"fixed", "random"}
        How judges enter the model.
    family : {"gaussian", "binomial"}
        ``gaussian``: the linear (probability) model. ``binomial``: the logit GLMM, for 0/1
        outcomes only.
    overdispersion : bool, optional
        Binomial and ordinal: a cell-level random effect (default: on when some cell has two
        or more calls, where it is identified).
    thresholds : {"common", "judge"}
        Ordinal only: one set of cutpoints for the panel, or each judge its own.
    spread : {"common", "judge"}
        Ordinal only: each (fixed) judge its own latent spread (compression), or none.
    warn : bool
        Emit the notes as warnings.

    Returns
    -------
    Design

    Raises
    ------
    DesignError
        With the column and the fix in the message.

    Examples
    --------
    >>> import bayes_tee as bt
    >>> df = bt.datasets.load("tee_demo")
    >>> d = validate_design(df, outcome="score", item="item", prompt="prompt")
    >>> d.dropped
    {}
    """
    check_frame(df)
    if judge_effect not in ("fixed", "random"):
        raise DesignError(f"judge_effect must be 'fixed' or 'random', got {judge_effect!r}.")
    if family not in FAMILIES:
        names = " or ".join(f"{n!r} ({f.model_label})" for n, f in FAMILIES.items())
        raise DesignError(f"family must be {names}, got {family!r}.")
    given = dict(
        outcome=outcome, item=item, prompt=prompt, judge=judge, temperature=temperature,
        replicate=replicate, category=category, position=position,
    )  # fmt: skip
    roles = Roles(**frame_roles(df, given))
    outcome, position, replicate = roles.outcome, roles.position, roles.replicate
    check_roles(df, roles)
    if swapped is not None and position is None:
        raise DesignError(
            "swapped= names a level of the presentation-order column; pass position='<column>' too."
        )
    if position is not None:
        if swapped is not None:
            df = recode(df, verdict=outcome, order=position, swapped=swapped, out=outcome)
        else:
            df = df.assign(**{outcome: verdict_scores(df[outcome], outcome)})
    y = outcome_values(df, outcome)

    keep = np.ones(len(df), dtype=bool)
    given = {col: f"{col} ({role})" for role, col in roles.as_dict().items() if role != "outcome" and col}
    keep, dropped = drop_missing(df, y, outcome, given)
    data = df.loc[keep]
    yv = y.to_numpy()[keep]

    in_logs = log_losses(df)
    notes = dropped_notes(dropped | in_logs, len(data), len(df) + sum(in_logs.values()))
    dropped = dropped | {f"{reason} (in the logs)": n for reason, n in in_logs.items()}
    codes, levels, facets = facet_codes(data, roles, notes)
    categories, item_category = categories_of(data, roles, codes["item"], levels["item"], notes)

    cell_codes = np.stack([codes[f] for f in facets], axis=1)
    if replicate is not None:
        key = pd.DataFrame(cell_codes, columns=facets).assign(_rep=data[replicate].to_numpy())
        dup = key.duplicated()
        if dup.any():
            raise DesignError(
                f"{int(dup.sum())} row(s) repeat a (cell, {replicate!r}) combination, e.g. row "
                f"{data.index[np.flatnonzero(dup.to_numpy())[0]]!r}. Remove duplicated calls, or "
                "leave replicate=None to count every row of a cell as a replicate."
            )
    cells, row_cell = cell_stats(cell_codes, yv, facets)
    non_binary = np.unique(yv[~np.isin(yv, (0.0, 1.0))])[:3].tolist()
    y_sd = float(np.std(yv, ddof=1)) if len(yv) > 1 else 0.0
    return assemble_design(
        roles,
        facets,
        levels,
        categories,
        item_category,
        cells,
        notes,
        summary=dict(n_rows=int(len(yv)), dropped=dropped, y_mean=float(np.mean(yv)), y_sd=y_sd),
        non_binary=non_binary,
        options=dict(
            judge_effect=judge_effect,
            family=family,
            overdispersion=overdispersion,
            thresholds=thresholds,
            spread=spread,
        ),
        warn=warn,
        rows=(row_cell, yv),
    )


def is_balanced(cells: pd.DataFrame, n_levels: list[int], item_category: np.ndarray | None) -> bool:
    """Every cell of the full cross present with the same calls (and, with categories, every
    category holding the same number of items).
    """
    balanced = len(cells) == int(np.prod(n_levels)) and cells["n"].nunique() == 1
    if balanced and item_category is not None:
        balanced = len(set(np.bincount(item_category).tolist())) == 1
    return bool(balanced)


def facet_codes(
    data: pd.DataFrame, roles: Roles, notes: list[str]
) -> tuple[dict[str, np.ndarray], dict[str, tuple[str, ...]], list[str]]:
    """Level codes and labels of every facet column of ``data`` (rows, or one row per cell),
    and the facets with two or more levels; a facet with one level is noted and left out.
    """
    levels: dict[str, tuple[str, ...]] = {}
    codes: dict[str, np.ndarray] = {}
    facets: list[str] = []
    for f in FACETS:
        col = getattr(roles, f)
        if col is None:
            continue
        codes[f], levels[f] = level_codes(data[col])
        if len(levels[f]) >= 2:
            facets.append(f)
        elif f == "item":
            raise DesignError(
                f"Item column {roles.item!r} has a single level ({levels[f][0]!r}); the decomposition "
                "needs two or more items. Check the column or the rows kept."
            )
        else:
            notes.append(
                f"{f} column {col!r} has a single level ({levels[f][0]!r}): its terms are "
                "dropped from the model."
            )
    return codes, levels, facets


def assemble_design(
    roles: Roles,
    facets: list[str],
    levels: dict[str, tuple[str, ...]],
    categories: tuple[str, ...] | None,
    item_category: np.ndarray | None,
    cells: pd.DataFrame,
    notes: list[str],
    *,
    summary: dict,
    non_binary: list,
    options: dict,
    warn: bool,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
) -> Design:
    """The :class:`Design` from per-cell statistics (``cells``: facet codes, ``n``, ``mean``,
    ``ss``) and the outcome's summary (``n_rows``, ``dropped``, ``y_mean``, ``y_sd``); ``rows``
    is each row's cell and score when the rows are in memory.
    """
    balanced = is_balanced(cells, [len(levels[f]) for f in facets], item_category)
    family, overdispersion = options["family"], options["overdispersion"]
    outcome = roles.outcome
    fam = get_family(family)
    fam.check_outcome(outcome, non_binary)
    cells, outcome_levels = fam.cell_counts(outcome, cells, rows, notes)
    thresholds, spread = scale_use_options(options, outcome_levels is not None, family, facets)
    if overdispersion is None:
        overdispersion = bool((cells["n"] > 1).any())
    if is_constant(summary["y_sd"], summary["y_mean"]):
        raise DesignError(
            f"Outcome {outcome!r} is constant ({summary['y_mean']!r}) over the rows used: there is no "
            "variance to decompose."
        )
    terms = model_terms(
        tuple(facets),
        replicates=bool((cells["n"] > 1).any()),
        category=categories is not None,
        judge_effect=options["judge_effect"],
        family=family,
        overdispersion=bool(overdispersion),
    )
    if warn:
        for note in notes:
            warnings.warn(note, DesignWarning, stacklevel=3)
    return Design(
        roles=roles,
        facets=tuple(facets),
        levels=levels,
        categories=categories,
        item_category=item_category,
        cells=cells,
        n_rows=int(summary["n_rows"]),
        dropped=summary["dropped"],
        notes=tuple(notes),
        balanced=bool(balanced),
        y_mean=float(summary["y_mean"]),
        y_sd=float(summary["y_sd"]),
        binary=not non_binary,
        judge_effect=options["judge_effect"],
        family=family,
        overdispersion=bool(overdispersion),
        terms=tuple(terms),
        row_cell=None if rows is None else rows[0],
        row_y=None if rows is None else rows[1],
        outcome_levels=outcome_levels,
        thresholds=thresholds,
        spread=spread,
    )


def categories_of(
    data: pd.DataFrame,
    roles: Roles,
    item_codes: np.ndarray,
    item_levels: tuple[str, ...],
    notes: list[str],
) -> tuple[tuple[str, ...] | None, np.ndarray | None]:
    """Category labels and each item's category code (``None``, ``None`` without a category
    column or with a single category); an item in two categories is an error.
    """
    if roles.category is None:
        return None, None
    cat_codes, cat_levels = level_codes(data[roles.category])
    pairs = pd.DataFrame({"item": item_codes, "cat": cat_codes}).drop_duplicates()
    multi = pairs["item"].value_counts()
    multi = multi[multi > 1]
    if len(multi):
        bad = item_levels[int(multi.index[0])]
        cats = [cat_levels[c] for c in pairs.loc[pairs["item"] == multi.index[0], "cat"]]
        raise DesignError(
            f"Items must each sit in one category, but {len(multi)} item(s) appear in several "
            f"(item {bad!r} is in {cats}). Fix column {roles.category!r} or leave category out."
        )
    if len(cat_levels) < 2:
        notes.append(
            f"category column {roles.category!r} has a single level ({cat_levels[0]!r}): the "
            "category term is dropped."
        )
        return None, None
    item_category = np.empty(len(item_levels), dtype=np.int64)
    item_category[pairs["item"].to_numpy()] = pairs["cat"].to_numpy()
    return cat_levels, item_category
