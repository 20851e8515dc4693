"""Property-based tests of the front door (hypothesis): any long frame a user may hold, with any
roles or formula, gives a valid design whose cells are the data's, or one package error.

The frames are generated with random facets and dtypes (strings, integers, floats, booleans,
categoricals with unused categories, columns mixing ``1`` and ``"1"``), missing values, lost
calls, repeated rows, constant, binary or extreme scores, and random role, formula and family
choices. The budget here is small and derandomised, so ``make test`` gives the same verdict on
every machine; ``benchmarks/property_front_door.py`` runs the same property much longer.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bayes_tee as bt
from bayes_tee.design.build import build_design

FACETS = ("prompt", "judge", "temperature")
DTYPES = ("str", "int", "float", "bool", "categorical", "mixed")
#: Score kinds, the usual ones more often than the ones that must be refused.
SCORES = ("gaussian",) * 3 + ("binary", "integers") * 2 + ("constant", "near-constant", "huge")
#: The budget of ``make test``; the benchmark script passes a larger one.
EXAMPLES = 60


def _column(rng: np.random.Generator, codes: np.ndarray, dtype: str, name: str) -> pd.Series:
    """Level codes as a column of ``dtype``; booleans hold two levels (codes modulo 2)."""
    if dtype == "str":
        return pd.Series([f"{name}{c}" for c in codes])
    if dtype == "int":
        return pd.Series(codes * 3 + 1)
    if dtype == "float":
        return pd.Series(codes * 0.25)
    if dtype == "bool":
        return pd.Series(codes % 2 == 1)
    if dtype == "categorical":
        present = [f"{name}{c}" for c in range(int(codes.max()) + 1)]
        return pd.Series(pd.Categorical([present[c] for c in codes], categories=[*present, f"{name}_unused"]))
    # mixed: integers and strings in one object column; level 1 is both 1 and "1" in some rows
    values = [int(c) if c % 2 == 0 else str(c) for c in codes]
    if rng.random() < 0.5:
        values = [1 if v == "1" and rng.random() < 0.5 else v for v in values]
    return pd.Series(values, dtype=object)


@st.composite
def frames(draw) -> tuple[pd.DataFrame, dict]:
    """A long frame and how it is given to the front door."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n_items = draw(st.sampled_from([1, 2, 3, 5, 7, 7]))
    levels = {f: draw(st.integers(1, 4)) for f in FACETS if draw(st.booleans())}
    reps = draw(st.integers(1, 3))
    grid = pd.MultiIndex.from_product(
        [range(n_items), *[range(k) for k in levels.values()], range(reps)],
        names=["item", *levels, "rep"],
    ).to_frame(index=False)
    lost = draw(st.sampled_from([0.0, 0.0, 0.05, 0.3]))
    grid = grid[rng.random(len(grid)) >= lost].reset_index(drop=True)
    if grid.empty:
        grid = pd.DataFrame({"item": [0], **{f: [0] for f in levels}, "rep": [0]})
    df = pd.DataFrame({"item": _column(rng, grid["item"].to_numpy(), draw(st.sampled_from(DTYPES)), "i")})
    for f in levels:
        df[f] = _column(rng, grid[f].to_numpy(), draw(st.sampled_from(DTYPES)), f[0])
    df["replicate"] = grid["rep"].to_numpy() + 1
    kind = draw(st.sampled_from(SCORES))
    y = {
        "gaussian": rng.normal(size=len(df)),
        "binary": (rng.random(len(df)) < 0.6).astype(float),
        "constant": np.full(len(df), 0.7),
        "near-constant": 0.7 + 1e-17 * rng.normal(size=len(df)),
        "huge": rng.normal(size=len(df)) * 1e200,
        "integers": rng.integers(1, 6, size=len(df)).astype(float),
    }[kind]
    df["score"] = y
    if draw(st.booleans()):  # missing scores and missing facet values
        df.loc[rng.random(len(df)) < 0.1, "score"] = np.nan
        for f in levels:
            if draw(st.booleans()):
                col = df[f].astype(object)
                col[rng.random(len(df)) < 0.05] = None
                df[f] = col
    if draw(st.integers(0, 3)) == 0 and len(df) > 1:  # a repeated call
        df = pd.concat([df, df.iloc[[0]]], ignore_index=True)
    if draw(st.booleans()):  # items in categories (sometimes an item in two)
        cat = pd.Series(grid["item"].to_numpy() % 2).reindex(range(len(df))).ffill().fillna(0)
        if draw(st.integers(0, 3)) == 0:
            cat.iloc[0] = 1 - cat.iloc[0]
        df["category"] = cat.map({0: "c0", 1: "c1"}).to_numpy()
    how = draw(st.sampled_from(["roles", "roles", "formula"]))
    facets = [f for f in levels if draw(st.booleans())]
    family = draw(st.sampled_from(["gaussian", "gaussian", "binomial"]))
    systems = draw(st.sampled_from([0, 0, 0, 1, 2, 3]))  # compared systems (0: none)
    if systems:
        df["model"] = [f"m{k}" for k in rng.integers(0, systems, size=len(df))]
    if how == "roles":
        spec = {"outcome": "score", "item": "item", **{f: f for f in facets}, "family": family}
        if systems:
            spec["system"] = "model"
        if draw(st.booleans()):
            spec["replicate"] = "replicate"
        if "category" in df and draw(st.booleans()):
            spec["category"] = "category"
        if "judge" in facets:
            spec["judge_effect"] = draw(st.sampled_from(["fixed", "random"]))
    else:
        terms = ["(1|item)", *[f"(1|{f})" for f in facets]]
        if len(facets) >= 2 and draw(st.booleans()):
            terms.append(f"(1|item:{facets[0]})")
        if "judge" in facets and draw(st.booleans()):
            terms[terms.index("(1|judge)")] = "judge"
        if systems:
            terms += ["model", "(1|model:item)"]
        spec = {"formula": "score ~ " + " + ".join(terms), "family": family}
        if systems:
            spec["system"] = "model"
    return df, spec


def _used_columns(design: bt.Design) -> dict[str, str]:
    """The data column of each of the design's facets."""
    roles = design.roles.as_dict()
    columns = {**{f: roles.get(f) for f in design.facets}, **(design.facet_columns or {})}
    if design.system is not None:
        columns["system"] = "model"
    return {f: columns[f] for f in design.facets}


def check_front_door(df: pd.DataFrame, spec: dict) -> str:
    """The property: a design whose cells and levels are the data's, or one package error.
    Returns what happened ('design' or the error class), for the benchmark's tally.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bt.DesignWarning)
            design = build_design(df, **spec)
    except bt.DesignError as err:
        assert str(err).strip(), "a package error with no message"
        return type(err).__name__
    columns = _used_columns(design)
    outcome = design.roles.outcome
    role_cols = [c for c in design.roles.as_dict().values() if c is not None and c != outcome]
    needed = [c for c in dict.fromkeys([*columns.values(), *role_cols]) if c in df.columns]
    kept = df[df[outcome].notna() & df[needed].notna().all(axis=1)]
    assert design.n_rows == len(kept), (design.n_rows, len(kept))
    assert sum(design.dropped.values()) == len(df) - len(kept)
    assert int(design.cells["n"].sum()) == len(kept)
    for facet, col in columns.items():  # no phantom level, no merged level
        assert len(design.levels[facet]) == kept[col].nunique(), (facet, design.levels[facet])
        assert len(design.levels[facet]) >= 2
    counts = kept.groupby(list(columns.values()), observed=True, dropna=False).size()
    assert sorted(design.cells["n"].astype(int)) == sorted(counts.astype(int)), "cell counts differ"
    assert np.isfinite(design.y_sd) and design.y_sd > 0
    if design.family == "binomial":
        assert np.isin(kept[outcome].astype(float), (0.0, 1.0)).all()
    return "design"


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(frames())
def test_the_front_door_gives_the_datas_design_or_one_package_error(case):
    df, spec = case
    check_front_door(df, spec)


@pytest.mark.parametrize(
    "spec",
    [
        {"outcome": "score", "item": "item", "prompt": "prompt"},
        {"formula": "score ~ (1|item) + (1|prompt)"},
    ],
)
def test_known_cases_of_the_property(spec):
    """Cases the generator reaches, written out: a categorical with an unused level, and 1/'1'."""
    df = pd.DataFrame(
        {
            "item": np.repeat(["a", "b", "c"], 4),
            "prompt": pd.Categorical(np.tile(["p", "q"], 6), categories=["p", "q", "never"]),
            "score": np.arange(12.0) % 5,
        }
    )
    assert check_front_door(df, spec) == "design"
    mixed = df.assign(prompt=[1, "1"] * 6)
    assert check_front_door(mixed, spec) == "DesignError"


# loading PyTensor on the first fit raises the recursion limit, which hypothesis notes
@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")
@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(frames())
def test_the_front_door_fits_what_it_accepts(case):
    df, spec = case
    check_fit(df, spec)


def check_fit(df: pd.DataFrame, spec: dict) -> str:
    """Past the design: ``fit_posterior`` on an accepted frame returns a posterior whose shares
    are finite, or one package error (a short fit; its diagnostics may fail and then warn).
    Returns the likelihood fitted or the error class.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        try:
            post = bt.fit_posterior(df, **spec, draws=30, tune=30, chains=1, random_seed=1, progressbar=False)
        except bt.DesignError as err:
            return type(err).__name__
        shares = post.leaderboard() if post.design.system else post.shares()
    assert np.isfinite(shares.select_dtypes("number").to_numpy()).all()
    assert int(post.design.cells["n"].sum()) == post.design.n_rows
    return f"fit ({post.method})"
