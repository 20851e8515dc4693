"""A formula and long data -> a validated :class:`~bayes_tee.design.design.Design` of any design.

The roles API (:func:`~bayes_tee.design.roles.validate_design`) writes the TEE formula; this
module takes any formula of random intercepts and fixed factors (:mod:`.formula`) and checks
that the data identify it:

- The columns the formula names are the facets; the object of measurement (the items) is the
  ``item=`` column, else a column called ``item``, else the first random main effect. A column
  given for a role (``prompt=``, ``judge=``, ``temperature=``) takes that role's name, so the
  D-study keywords (``n_prompts``...) apply to it; every other facet keeps its column name.
- A facet coded with labels unique within another facet (runs ``e1-p2-r3`` nested in evaluator
  x prompt) is *nested*: its levels are recoded to their rank within the enclosing cell, and
  a term naming it is the term of its whole nest (``(1|run)`` is ``(1|evaluator:prompt:run)``,
  as lme4 reads unique labels).
- A random main effect that groups the items (each item in one level) is the items'
  category, nested as in the roles API.
- Two terms that group the calls identically, or a term with one call per level and no
  replicates (the residual), cannot be separated: one error names both.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> d = validate_formula(df, "score ~ judge + (1|item) + (1|prompt) + (1|item:prompt)")
>>> [t.label for t in d.terms]
['item', 'prompt', 'judge', 'item:prompt', 'residual']
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pandas as pd

from .._core.exceptions import DesignError, DesignWarning
from ..families import get_family
from .checks import check_frame, closest_column, outcome_values
from .coding import cell_stats, is_constant, level_codes
from .covariates import (
    Covariates,
    Slope,
    check_covariate,
    covariate_cells,
    flat_levels,
    refuse_float_factor,
)
from .design import Design, Roles
from .formula import Formula, formula_terms, parse_formula
from .losses import drop_missing, dropped_notes, log_losses
from .roles import is_balanced
from .terms import Term

#: Roles a formula's column can take, so that the roles API's keywords reach it.
FORMULA_ROLES: tuple[str, ...] = ("item", "prompt", "judge", "temperature", "category", "system")


def _facet_names(f: Formula, roles: dict[str, str | None], notes: list[str]) -> dict[str, str]:
    """Column -> facet name: the role a column was given, ``item`` for the object, else itself."""
    rename = {col: role for role, col in roles.items() if col is not None and role in FORMULA_ROLES}
    for col, role in rename.items():
        if col not in f.columns:
            raise DesignError(
                f"{role}={col!r} is not a column the formula names ({list(f.columns)}); add its term "
                f"(e.g. (1|{col})) or drop {role}=."
            )
    if "item" not in rename.values():
        mains = [grp[0] for grp in f.random if len(grp) == 1]
        item = "item" if "item" in f.columns else (mains[0] if mains else None)
        if item is None:
            raise DesignError(
                f"Formula {f.text!r} has no random main effect to measure: add (1|item) for the "
                "objects of measurement, or name their column with item=."
            )
        if item != "item":
            notes.append(
                f"Column {item!r} is the object of measurement (labelled 'item' in the tables); "
                "pass item= to choose another."
            )
        rename[item] = "item"
    taken = {v: k for k, v in rename.items()}
    for col in f.columns:
        if col not in rename and col in taken:
            raise DesignError(
                f"Column {col!r} and column {taken[col]!r} would both be called {col!r}; rename one."
            )
    return {col: rename.get(col, col) for col in f.columns}


def _nests(codes: dict[str, np.ndarray], facets: list[str]) -> dict[str, tuple[str, ...]]:
    """Facet -> the facets it is nested in (each of its levels meets one level of each), for
    facets that are not one-to-one with that nest.
    """
    out = {}
    for f in facets:
        inside = []
        for g in facets:
            if g == f:
                continue
            per = pd.DataFrame({"f": codes[f], "g": codes[g]}).groupby("f")["g"].nunique()
            if int(per.max()) == 1:
                inside.append(g)
        if inside:
            nest_levels = pd.MultiIndex.from_arrays([codes[g] for g in inside]).nunique()
            if nest_levels < int(codes[f].max()) + 1:
                out[f] = tuple(inside)
    return out


def _confounded(terms: list[Term], codes: dict[str, np.ndarray], replicates: bool, n_cells: int) -> None:
    """One error naming the first pair of terms the data cannot separate."""

    def groups(t: Term) -> pd.Series:
        fs = [f for f in t.facets if f in codes]
        return pd.MultiIndex.from_arrays([codes[f] for f in fs]) if len(fs) > 1 else pd.Index(codes[fs[0]])

    own = [t for t in terms if t.label not in ("residual", "category") and t.kind != "residual"]
    size = {t.label: groups(t).nunique() for t in own}
    for a, b in combinations(own, 2):
        joint = pd.MultiIndex.from_arrays(
            [codes[f] for f in dict.fromkeys((*a.facets, *b.facets)) if f in codes]
        ).nunique()
        if size[a.label] == size[b.label] == joint:
            raise DesignError(
                f"Terms {a.label!r} and {b.label!r} group the calls identically in these data, so "
                "their variances cannot be separated: drop one of them from the formula."
            )
    for t in own:
        if size[t.label] < 2:
            raise DesignError(f"Term {t.label!r} has a single level in these data; drop it from the formula.")
        if not replicates and size[t.label] == n_cells and t.kind != "fixed":
            raise DesignError(
                f"Term {t.label!r} has one call per level (no replicates), so it is confounded with "
                "the residual: drop it from the formula (the residual is implied)."
            )


def validate_formula(
    df: pd.DataFrame,
    formula: str,
    *,
    item: str | None = None,
    prompt: str | None = None,
    judge: str | None = None,
    temperature: str | None = None,
    category: str | None = None,
    system: str | None = None,
    family: str = "gaussian",
    overdispersion: bool | None = None,
    warn: bool = True,
) -> Design:
    """Check a formula against long data and build the :class:`~bayes_tee.design.design.Design`.

    Parameters
    ----------
    df : pandas.DataFrame
        One row per scored call.
    formula : str
        lme4-style: ``"score ~ judge + (1|item) + (1|prompt) + (1|item:prompt)"``
        (:func:`~bayes_tee.design.formula.parse_formula`).
    item, prompt, judge, temperature, category : str, optional
        Roles of the formula's columns (see the module docstring); by default the items are a
        column called ``item`` or the first random main effect.
    system : str, optional
        The column of the compared systems: a fixed main effect of the formula (``+ model``),
        named ``system`` in the tables; its interactions are the formula's random terms that
        name it.
    family : str
        ``gaussian``, or a GLMM family (``binomial``, ``ordinal``): the formula's terms on the
        latent scale, the residual the link's constant.
    overdispersion : bool, optional
        GLMM families: the cell (observation-level) effect; default on when cells repeat.
    warn : bool
        Emit the notes as :class:`~bayes_tee.DesignWarning`.

    Returns
    -------
    Design
        With ``formula`` set and ``facet_columns`` mapping each facet to its column.

    Raises
    ------
    DesignError
        A column missing, a term the data cannot separate, or an unsupported formula.

    Examples
    --------
    >>> import bayes_tee as bt
    >>> d = validate_formula(bt.datasets.load("tee_demo"), "score ~ (1|item) + (1|judge) + (1|prompt)")
    >>> d.formula
    'score ~ (1|item) + (1|judge) + (1|prompt)'
    """
    if not isinstance(df, pd.DataFrame):
        raise DesignError(f"formula= needs a pandas DataFrame, got {type(df).__name__}.")
    fam = get_family(family)
    if not fam.formula:
        raise DesignError(
            f"formula= does not fit family={family!r} yet; use the roles API: "
            f"fit_posterior(df, outcome=..., item=..., family={family!r})."
        )
    written = parse_formula(formula)
    notes: list[str] = []
    roles = dict(item=item, prompt=prompt, judge=judge, temperature=temperature, category=category)
    roles["system"] = system
    check_frame(df)
    columns = [str(c) for c in df.columns]
    named = dict.fromkeys(
        (
            *written.columns,
            *(c for i in written.interactions for c in i),
            *(c for s in written.random_slopes for c in s),
        )
    )
    missing = [
        f"{'outcome' if c == written.outcome else 'term column'} {c!r}{closest_column(c, columns)}"
        for c in (written.outcome, *named)
        if c not in df.columns
    ]
    if missing:
        raise DesignError(
            f"Formula {written.text!r} names column(s) not in the data: {'; '.join(missing)}. Available "
            f"columns: {columns}."
        )
    f, slopes = _split_covariates(written, df, {c for c in roles.values() if c is not None})
    covariates = list(dict.fromkeys(s.covariate for s in slopes))
    rename = _facet_names(f, roles, notes)
    y = outcome_values(df, f.outcome)
    keep, dropped = drop_missing(
        df, y, f.outcome, {col: col for col in f.columns} | {c: f"covariate {c}" for c in covariates}
    )
    data, yv = df.loc[keep], y.to_numpy()[keep]
    in_logs = log_losses(df)
    notes = dropped_notes(dropped | in_logs, len(data), len(df) + sum(in_logs.values())) + notes
    dropped = dropped | {f"{reason} (in the logs)": n for reason, n in in_logs.items()}

    codes, levels = {}, {}
    for col in f.columns:
        codes[rename[col]], levels[rename[col]] = level_codes(data[col])
        if len(levels[rename[col]]) < 2:
            left = " (the others were dropped with missing values)" if dropped else ""
            raise DesignError(
                f"Column {col!r} has a single level ({levels[rename[col]][0]!r}) in the rows used{left}: "
                "its terms cannot be estimated. Drop them from the formula."
            )
    names = [rename[c] for c in f.columns]
    # the items' category: a random main effect that groups the items
    categories, item_category = None, None
    cat = next(
        (
            n for n in names
            if n != "item" and (n,) in [tuple(rename[c] for c in g) for g in f.random]
            and pd.DataFrame({"i": codes["item"], "c": codes[n]}).groupby("i")["c"].nunique().max() == 1
            and len(levels[n]) < len(levels["item"])
        ),
        None,
    )  # fmt: skip
    if cat is not None:
        if any(cat in g and len(g) > 1 for g in [tuple(rename[c] for c in grp) for grp in f.random]) or (
            cat in [rename[c] for c in f.fixed]
        ):
            raise DesignError(
                f"Column {cat!r} groups the items (each item is in one level), so it enters as their "
                "category; its interactions are not supported. Keep only (1|{cat}).".replace("{cat}", cat)
            )
        pairs = pd.DataFrame({"i": codes["item"], "c": codes[cat]}).drop_duplicates()
        item_category = np.empty(len(levels["item"]), dtype=np.int64)
        item_category[pairs["i"].to_numpy()] = pairs["c"].to_numpy()
        categories = levels.pop(cat)
        codes.pop(cat)
        names.remove(cat)
        rename = {c: ("category" if n == cat else n) for c, n in rename.items()}
    facets = ["item", *[n for n in dict.fromkeys(names) if n != "item"]]
    nests = _nests(codes, facets)
    random = []
    for grp in f.random:
        fs = [rename[c] for c in grp]
        if fs == ["category"]:
            continue
        full = list(dict.fromkeys(x for n in fs for x in (*nests.get(n, ()), n)))
        if len(full) > len(fs):
            notes.append(
                f"{':'.join(fs)} is nested in {' x '.join(x for x in full if x not in fs)} (its labels "
                f"are unique there): (1|{':'.join(grp)}) is fitted as (1|{':'.join(full)})."
            )
        random.append(tuple(full))
    for n in nests:
        if n in [rename[c] for c in f.fixed]:
            raise DesignError(
                f"Fixed factor {n!r} is nested in {' x '.join(nests[n])}; a nested facet must be random: "
                f"write (1|{':'.join((*nests[n], n))})."
            )
        # recode to the rank of the level within its nest, so the facet is a crossed axis
        key = pd.DataFrame({g: codes[g] for g in nests[n]}).assign(_f=codes[n])
        rank = key.drop_duplicates().sort_values("_f")
        rank["_r"] = rank.groupby(list(nests[n])).cumcount()
        codes[n] = key.merge(rank, how="left", on=[*nests[n], "_f"])["_r"].to_numpy()
        levels[n] = tuple(str(k + 1) for k in range(int(codes[n].max()) + 1))
    fixed = [rename[c] for c in f.fixed]
    if system is not None and "system" not in fixed:
        raise DesignError(
            f"system={system!r} is compared as a fixed factor: write '+ {system}' in the formula "
            f"(its interactions with random facets stay random, e.g. (1|{system}:item))."
        )
    stripped = Formula(f.text, f.outcome, tuple(fixed), tuple(random))
    cell_codes = np.stack([codes[n] for n in facets], axis=1)
    cells, row_cell = cell_stats(cell_codes, yv, facets)
    replicates = bool((cells["n"] > 1).any())
    terms = formula_terms(stripped, tuple(facets), replicates=replicates)
    if fam.fixed_residual:  # a GLMM: the call-level residual is the link's constant
        terms, overdispersion = _latent_terms(terms, facets, replicates, fam, overdispersion)
    if categories is not None:
        terms.insert(1, Term("category", ("category",), "random"))
    _confounded(terms, codes, replicates, len(cells))
    non_binary = np.unique(yv[~np.isin(yv, (0.0, 1.0))])[:3].tolist()
    fam.check_outcome(f.outcome, non_binary)
    cells, outcome_levels = fam.cell_counts(f.outcome, cells, (row_cell, yv), notes)
    cov = None
    if slopes:
        x = np.stack([check_covariate(data[c], c) for c in covariates], axis=1)
        stats, center, scale, within = covariate_cells(
            x, yv, row_cell, len(cells), tuple(covariates), gaussian=not fam.latent
        )
        cells = pd.concat([cells.reset_index(drop=True), stats], axis=1)
        cov = Covariates(
            tuple(covariates),
            center,
            scale,
            tuple(_slope_facet(s, rename, nests, terms) for s in slopes),
            within,
        )
        notes += flat_levels(cov, x, codes, levels)
    balanced = is_balanced(cells, [len(levels[n]) for n in facets], item_category)
    y_sd = float(np.std(yv, ddof=1)) if len(yv) > 1 else 0.0
    if is_constant(y_sd, float(np.mean(yv))):
        raise DesignError(f"Outcome {f.outcome!r} is constant over the rows used: nothing to decompose.")
    role_of = {n: c for c, n in rename.items()}
    judge_term = next((t for t in terms if t.facets == ("judge",)), None)
    if warn:
        for note in notes:
            warnings.warn(note, DesignWarning, stacklevel=3)
    return Design(
        roles=Roles(
            outcome=f.outcome,
            **{r: role_of.get(r) for r in ("item", "prompt", "judge", "temperature", "category")},
        ),
        facets=tuple(facets),
        levels=levels,
        categories=categories,
        item_category=item_category,
        cells=cells,
        n_rows=int(len(yv)),
        dropped=dropped,
        notes=tuple(notes),
        balanced=bool(balanced),
        y_mean=float(np.mean(yv)),
        y_sd=y_sd,
        binary=bool(np.isin(yv, (0.0, 1.0)).all()),
        judge_effect="fixed" if judge_term is None or judge_term.kind == "fixed" else "random",
        family=family,
        overdispersion=bool(overdispersion) if fam.fixed_residual else False,
        terms=tuple(terms),
        row_cell=row_cell,
        row_y=yv,
        formula=f.text,
        facet_columns={
            n: c
            for n, c in role_of.items()
            if n not in ("item", "prompt", "judge", "temperature", "category")
        },
        system="system" if system is not None else None,
        outcome_levels=outcome_levels,
        covariates=cov,
    )


def _is_covariate(values: pd.Series) -> bool:
    """Whether a fixed column is a covariate: numbers (not booleans, which are two-level factors)."""
    return pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)


def _split_covariates(f: Formula, df: pd.DataFrame, role_columns: set[str]) -> tuple[Formula, list[Slope]]:
    """The formula of factors only, and the slope terms: a fixed main whose column holds numbers
    (unless written ``C(x)``, given a role or grouping a random term) is a covariate; ``x:f`` a
    slope per level of facet ``f``; ``(0 + x|g)`` a random slope over the random facet ``g``.
    Columns of many distinct floats taken as factors are refused
    (:func:`~.covariates.refuse_float_factor`).
    """
    # a column that also groups a random term is a factor whatever its values (a temperature
    # with its item x temperature interaction)
    forced = set(f.factors) | role_columns | {c for g in f.random for c in g}

    def covariate(col: str) -> bool:
        return col not in forced and _is_covariate(df[col])

    factors = [c for c in f.fixed if not covariate(c)]
    slopes = [Slope(c) for c in f.fixed if covariate(c)]
    for c in factors:
        if c not in set(f.factors) | role_columns:
            refuse_float_factor(df[c], c)
    intercept_groups = {g for g in f.random}
    facet_columns = set(factors) | {c for g in f.random for c in g}
    for a, b in f.interactions:
        kinds = [covariate(a), covariate(b)]
        if kinds == [False, False]:
            raise DesignError(
                f"Fixed interactions of two factors are not supported: {a}:{b} in {f.text!r}. Write the "
                f"interaction as a random term, (1|{a}:{b}), whose variance is then reported (a fixed "
                "interaction is a covariate's slope per level of a facet)."
            )
        if kinds == [True, True]:
            raise DesignError(
                f"{a}:{b} in {f.text!r} multiplies two covariates; add their product as a column of its own "
                f"(df['{a}_{b}'] = df[{a!r}] * df[{b!r}]) and write it as a covariate."
            )
        x, by = (a, b) if kinds[0] else (b, a)
        if by not in facet_columns:
            raise DesignError(
                f"{a}:{b} in {f.text!r} gives each level of {by!r} its own slope, so {by!r} must be a "
                f"facet of "
                f"the model: add + {by} (fixed) or (1|{by}) (random)."
            )
        slopes.append(Slope(x, by, "fixed"))
    for x, g in f.random_slopes:
        if g in factors:
            raise DesignError(
                f"(0 + {x}|{g}) in {f.text!r} is a random slope over {g!r}, which the formula has as a fixed "
                f"factor: a fixed panel gets a slope per level, {x}:{g}; or make {g} random, (1|{g})."
            )
        if (g,) not in intercept_groups:
            raise DesignError(
                f"(0 + {x}|{g}) in {f.text!r} is a random slope over {g!r}, which has no random intercept: "
                "add "
                f"(1|{g}), or write ({x}||{g})."
            )
        if not (x not in forced and pd.api.types.is_numeric_dtype(df[x])):
            check_covariate(df[x], x)  # raises the fix for text
        slopes.append(Slope(x, g, "random"))
    for s in slopes:
        if s.covariate in facet_columns:
            raise DesignError(
                f"Column {s.covariate!r} is both a covariate and a facet in {f.text!r}; write it once (a "
                f"factor: C({s.covariate}) or (1|{s.covariate}); a slope: + {s.covariate})."
            )
        if s.covariate in role_columns:
            raise DesignError(
                f"Column {s.covariate!r} is given a role (item=, judge=, system=...), which makes it a "
                "factor; "
                "it cannot also be a covariate."
            )
    # each covariate's common slope first, whatever was written
    mains = list(dict.fromkeys(s.covariate for s in slopes))
    ordered = [Slope(x) for x in mains] + [s for s in slopes if s.by is not None]
    return Formula(f.text, f.outcome, tuple(factors), f.random), ordered


def _slope_facet(s: Slope, rename: dict[str, str], nests: dict, terms: list[Term]) -> Slope:
    """A slope with its ``by`` column renamed to the facet it is (``judge=`` -> ``judge``)."""
    if s.by is None:
        return s
    by = rename[s.by]
    if by == "category" or by in nests:
        what = "the items' category" if by == "category" else "nested"
        raise DesignError(
            f"A slope per level of {s.by!r}, which is {what}, "
            "is not supported; give the slope over a crossed facet."
        )
    if s.kind == "random" and any(t.facets == (by,) and t.kind == "fixed" for t in terms):
        raise DesignError(
            f"A random slope over the fixed facet {s.by!r} is not supported; write {s.covariate}:{s.by}."
        )
    return Slope(s.covariate, by, s.kind)


def _latent_terms(
    terms: list[Term], facets: list[str], replicates: bool, fam, overdispersion: bool | None
) -> tuple[list[Term], bool]:
    """A GLMM's terms from a formula's: the residual is the link's fixed constant (labelled
    ``replicate``, as in the roles API), and with repeated calls a cell (observation-level)
    effect unless the formula already has the full interaction or ``overdispersion=False``.
    Without repeated calls a cell effect is not identified: ``overdispersion=True`` is refused.
    """
    kept = [t for t in terms if t.label != "residual"]
    full = any(t.kind == "random" and set(t.facets) == set(facets) for t in kept)
    if overdispersion and not replicates:
        raise DesignError(
            "overdispersion=True needs repeated calls per cell (the cell effect is otherwise the "
            "residual); drop it."
        )
    cell = replicates and not full and (overdispersion is None or overdispersion) and fam.has_cell_term(True)
    if cell:
        kept.append(Term("cell", tuple(facets), "random"))
    kept.append(Term("replicate", (*facets, "replicate"), "residual"))
    return kept, cell or full
