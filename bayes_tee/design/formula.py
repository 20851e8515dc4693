"""lme4-style model formulas: parse them into terms, and write the formula of a roles fit.

A formula names the outcome and every term of the model: ``score ~ judge + (1|item) +
(1|prompt) + (1|item:prompt)``. A bare column is a *fixed* factor (its sensitivity index, the
population variance of its level effects, is reported like a random term's variance);
``(1|a)`` is a random intercept over the levels of ``a``, ``(1|a:b)`` over the combinations of
``a`` and ``b``, and ``(1|a/b)`` is lme4's nesting shorthand for ``(1|a) + (1|a:b)``. The
residual is implied, as in lme4. Facets are the columns the terms name.

>>> f = parse_formula("score ~ judge + (1|item) + (1|prompt/run)")
>>> f.outcome, f.fixed, [":".join(t) for t in f.random]
('score', ('judge',), ['item', 'prompt', 'prompt:run'])
>>> g = parse_formula("score ~ model + length + length:judge + (1|item) + (0 + length|judge)")
>>> g.interactions, g.random_slopes
((('length', 'judge'),), (('length', 'judge'),))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .._core.exceptions import DesignError
from .terms import Term

#: Labels the model gives its own terms, which a facet column may not take.
RESERVED: tuple[str, ...] = ("replicate", "residual", "cell", "mu")

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


@dataclass(frozen=True)
class Formula:
    """A parsed formula.

    Attributes
    ----------
    text : str
        The formula as written.
    outcome : str
        The response column.
    fixed : tuple of str
        Fixed factors (one column each), in the order written.
    random : tuple of tuple of str
        Random-intercept groupings, each a tuple of columns, nesting expanded, in the order written.
    factors : tuple of str
        Fixed columns written ``C(x)``: factors whatever their values.
    interactions : tuple of (str, str)
        Fixed-side ``a:b`` terms, as written (one of the two must be a covariate).
    random_slopes : tuple of (str, str)
        ``(0 + x|g)`` terms: ``(x, g)``.
    """

    text: str
    outcome: str
    fixed: tuple[str, ...]
    random: tuple[tuple[str, ...], ...]
    factors: tuple[str, ...] = ()
    interactions: tuple[tuple[str, str], ...] = ()
    random_slopes: tuple[tuple[str, str], ...] = ()

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column the formula's fixed mains and random intercepts name, in order of first
        appearance (covariates among the fixed mains included until the data decide them).
        """
        seen: dict[str, None] = {}
        for col in (*self.fixed, *(c for grp in self.random for c in grp)):
            seen.setdefault(col, None)
        return tuple(seen)


def _names(expr: str, what: str, text: str) -> list[str]:
    names = [n.strip() for n in expr.split(":")]
    for n in names:
        if not _NAME.match(n):
            raise DesignError(
                f"Cannot read {what} {expr.strip()!r} in formula {text!r}: {n!r} is not a column name. "
                "Write terms like judge, (1|item), (1|item:prompt) or (1|prompt/run); rename columns "
                "with spaces or symbols first."
            )
    return names


_SLOPE = re.compile(
    r"\(\s*(?:0\s*\+\s*|-\s*1\s*\+\s*)?([^()|]+?)(?:\s*\+\s*0|\s*-\s*1)?\s*(\|\|?)\s*([^()|]+)\)"
)


def _random_slope(term: str, text: str) -> tuple[list[tuple[str, ...]], list[tuple[str, str]]] | None:
    """``(0 + x|g)`` (a random slope), ``(x||g)`` (with the intercept, uncorrelated), or ``None``
    when ``term`` is no slope term; correlated slopes are refused with the fix.
    """
    m = _SLOPE.fullmatch(term)
    if m is None:
        return None
    lhs, bar, group = m.group(1).strip(), m.group(2), m.group(3).strip()
    no_intercept = re.match(r"\(\s*(0|-\s*1)\s*\+", term) or re.search(r"(\+\s*0|-\s*1)\s*\|", term)
    if lhs == "1":
        return None
    parts = [p.strip() for p in lhs.split("+")]
    if "1" in parts:
        parts.remove("1")
        no_intercept = None if bar == "|" else no_intercept
        if bar == "|":
            raise DesignError(
                f"Correlated random intercepts and slopes are not supported: {term!r} in {text!r}. Write "
                f"(1|{group}) + (0 + {' + '.join(parts)}|{group}) (uncorrelated), or (x||g)."
            )
    if bar == "|" and not no_intercept:
        raise DesignError(
            f"Correlated random intercepts and slopes are not supported: {term!r} in {text!r}. Write "
            f"(1|{group}) + (0 + {' + '.join(parts)}|{group}) (uncorrelated), or ({lhs}||{group})."
        )
    groups = _names(group, "random slope's group", text)
    if len(groups) != 1:
        raise DesignError(
            f"A random slope varies over one facet: {term!r} in {text!r}; write (0 + x|judge), not over "
            "an interaction."
        )
    slopes = [(_names(p, "random slope", text)[0], groups[0]) for p in parts]
    if any(":" in p for p in parts):
        raise DesignError(f"Write one covariate per random slope: {term!r} in {text!r}.")
    intercepts = [tuple(groups)] if bar == "||" else []
    return intercepts, slopes


def parse_formula(text: str) -> Formula:
    """Parse an lme4-style formula of random intercepts, fixed factors, covariates and slopes.

    Parameters
    ----------
    text : str
        ``outcome ~ term + term + ...`` where a term is a column (fixed factor, or a covariate
        when its values are numbers), ``C(x)`` (a factor whatever its values), ``x:f`` (a slope
        per level of ``f``), ``(1|a)``, ``(1|a:b)``, ``(1|a/b/c)`` (nested: ``a``, ``a:b``,
        ``a:b:c``), ``(0 + x|g)`` (a random slope over ``g``) or ``(x||g)`` (both). ``1`` (the
        intercept) may be written and is always fitted.

    Returns
    -------
    Formula

    Raises
    ------
    DesignError
        What could not be read, with the supported syntax.

    Examples
    --------
    >>> parse_formula("y ~ (1|item) + (1|evaluator) + (1|prompt)").random
    (('item',), ('evaluator',), ('prompt',))
    >>> parse_formula("y ~ C(temperature) + (1|item)").factors
    ('temperature',)
    """
    if not isinstance(text, str) or text.count("~") != 1:
        raise DesignError(
            f"formula must be a string 'outcome ~ terms', e.g. 'score ~ judge + (1|item) + (1|prompt)'; "
            f"got {text!r}."
        )
    depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            break
    if depth != 0:
        raise DesignError(
            f"Unbalanced parentheses in formula {text!r}: {text.count('(')} '(' and {text.count(')')} "
            "')'. Close every random term, e.g. (1|item)."
        )
    lhs, rhs = (s.strip() for s in text.split("~"))
    if not _NAME.match(lhs):
        raise DesignError(f"The formula's left side {lhs!r} must be the outcome column's name.")
    fixed: list[str] = []
    factors: list[str] = []
    interactions: list[tuple[str, str]] = []
    random: list[tuple[str, ...]] = []
    slopes: list[tuple[str, str]] = []
    # split on '+' outside parentheses
    parts, depth, cur = [], 0, ""
    for ch in rhs:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "+" and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for raw in parts:
        term = raw.strip()
        if term in ("1", ""):
            if term == "" and raw is not parts[-1]:
                raise DesignError(f"Empty term in formula {text!r}.")
            continue
        m = re.fullmatch(r"\(\s*1\s*\|\s*([^()|]+)\)", term)
        if m:
            expr = m.group(1).strip()
            if "/" in expr:
                chain = [_names(e, "nested term", text)[0] if ":" not in e else None for e in expr.split("/")]
                if None in chain:
                    raise DesignError(f"Write nesting as (1|a/b), not with ':' inside: {term!r} in {text!r}.")
                random += [tuple(chain[: k + 1]) for k in range(len(chain))]
            else:
                random.append(tuple(_names(expr, "random term", text)))
            continue
        c = re.fullmatch(r"C\(\s*([^()]+?)\s*\)", term)
        if c:
            name = _names(c.group(1), "factor term", text)
            if len(name) != 1:
                raise DesignError(f"C() takes one column: {term!r} in {text!r}.")
            factors += name
            fixed += name
            continue
        if term.startswith("("):
            found = _random_slope(term, text)
            if found is None:
                raise DesignError(
                    f"Cannot read {term!r} in {text!r}. Write random intercepts (1|group) and random slopes "
                    "(0 + x|group)."
                )
            random += found[0]
            slopes += found[1]
            continue
        if "*" in term:
            a, _, b = term.partition("*")
            raise DesignError(
                f"Write {term!r} out in {text!r}: {a.strip()} + {b.strip()} + {a.strip()}:{b.strip()} "
                "(a fixed interaction is a covariate's slope per level of a facet)."
            )
        if ":" in term:
            names = _names(term, "fixed interaction", text)
            if len(names) != 2:
                raise DesignError(
                    f"A fixed interaction is a covariate and one facet, e.g. length:judge; got {term!r} in "
                    f"{text!r}."
                )
            interactions.append((names[0], names[1]))
            continue
        fixed += _names(term, "fixed term", text)
    if not random:
        raise DesignError(f"Formula {text!r} has no random term: add at least the items, e.g. (1|item).")
    named = [*random, *[(f,) for f in fixed], *interactions, *[(x, g) for x, g in slopes]]
    for cols in named:
        bad = [c for c in cols if c in RESERVED]
        if bad:
            raise DesignError(
                f"Column name {bad[0]!r} is reserved for the model's own terms; rename the column "
                f"(e.g. df = df.rename(columns={{{bad[0]!r}: 'run'}})) and the formula with it."
            )
        if len(set(cols)) != len(cols):
            raise DesignError(f"Term {':'.join(cols)!r} names a column twice in {text!r}.")
    if lhs in {c for cols in named for c in cols}:
        raise DesignError(
            f"Column {lhs!r} is the formula's outcome and also one of its terms in {text!r}: a score "
            "cannot group the calls. Drop the term, or name the facet's own column."
        )
    keys = (
        [frozenset(c) for c in random]
        + [frozenset((f,)) for f in fixed]
        + [frozenset(i) | {"~fixed"} for i in interactions]
        + [frozenset(s) | {"~slope"} for s in slopes]
    )
    dup = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
    if dup is not None:
        label = ":".join(sorted(c for c in dup if not c.startswith("~")))
        raise DesignError(f"Term {label!r} appears twice in {text!r}; keep one.")
    return Formula(
        text.strip(), lhs, tuple(fixed), tuple(random), tuple(factors), tuple(interactions), tuple(slopes)
    )


def formula_terms(
    formula: Formula,
    facets: tuple[str, ...],
    *,
    rename: dict[str, str] | None = None,
    replicates: bool,
) -> list[Term]:
    """The model's terms from a parsed formula, over the design's (internal) facet names.

    ``rename`` maps a column to its facet name (the item column is the ``item`` facet);
    ``replicates``: some cell of the full cross holds two or more rows, so the residual is the
    within-cell noise and the full interaction, if written, is a term of its own. Without
    replicates the residual is the cell-level error, indexed by every facet.

    >>> f = parse_formula("y ~ judge + (1|item) + (1|item:judge)")
    >>> [(t.label, t.kind) for t in formula_terms(f, ("item", "judge"), replicates=True)]
    [('item', 'random'), ('judge', 'fixed'), ('item:judge', 'random'), ('residual', 'residual')]
    """
    rename = rename or {}
    order = {f: i for i, f in enumerate(facets)}

    def term(cols: tuple[str, ...], kind: str) -> Term:
        names = tuple(rename.get(c, c) for c in cols)
        return Term(":".join(names), tuple(sorted(names, key=order.__getitem__)), kind)  # type: ignore[arg-type]

    terms = [term(cols, "random") for cols in formula.random] + [term((f,), "fixed") for f in formula.fixed]
    # main effects first, then by order (lme4 prints them in the order written)
    terms = sorted(terms, key=lambda t: len(t.facets))
    if replicates:
        terms.append(Term("residual", (*facets, "replicate"), "residual"))
    else:
        terms.append(Term("residual", tuple(facets), "random"))
    return terms


def write_formula(outcome: str, terms: list[Term], columns: dict[str, str]) -> str:
    """The lme4 formula of a model: fixed factors, then random intercepts, residual implied.

    ``columns`` maps each facet to its column name. A cell term (every crossed facet) is
    written out as the interaction it is when replicate noise is a term of its own; without
    replicates it is the residual, which the formula implies.

    >>> write_formula("score", [Term("item", ("item",), "random"), Term("judge", ("judge",), "fixed"),
    ...                         Term("replicate", ("item", "judge", "replicate"), "residual")],
    ...               {"item": "item_id", "judge": "judge"})
    'score ~ judge + (1|item_id)'
    """
    fixed = [columns[t.facets[0]] for t in terms if t.kind == "fixed"]
    has_residual = any(t.kind == "residual" for t in terms)
    widest = max((len(t.facets) for t in terms if t.kind != "residual" and t.label != "category"), default=0)
    random = []
    for t in terms:
        if t.kind != "random" or (not has_residual and len(t.facets) == widest and len(t.facets) > 1):
            continue
        if t.label == "category":
            random.append(f"(1|{columns['category']})")
        else:
            random.append("(1|" + ":".join(columns[f] for f in t.facets) + ")")
    return f"{outcome} ~ " + " + ".join(fixed + random)
