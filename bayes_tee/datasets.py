"""Data sets shipped with the package.

``tee_demo`` is a fixed simulated pilot (40 items in 4 categories, 3 prompt variants, 3 judges,
2 temperatures, 3 replicates; 2,160 calls) drawn from :func:`bayes_tee.simulate.tee_dgp` with
the seed 000 Table 8 components; its true components are stored beside it.
Regenerate it with ``python -m bayes_tee.datasets``.

``arena_judge_calibration`` (MIT, see ``bayes_tee/data/arena_judge_calibration_LICENSE.txt``):
877 Chatbot Arena battles of claude-opus-4-20250514 against three models, each with the human
winner and the picks of two LLM judges (gpt-4o-mini, gpt-5.2), normalised to "Claude wins"
(positions were randomised). One row per battle x judge: ``id, pair, opponent, judge,
human_prefers_claude, judge_prefers_claude`` (NaN where the judge gave no pick). From
yiqunchen/debias-llm-as-a-judge @4b4879a, ``data/judge_results/*.json``; rebuilt by
``python -m bayes_tee.datasets ../shared/external/debias_llm_judge_arena``.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> bt.datasets.truth("tee_demo")["item:judge"]
0.02
"""

from __future__ import annotations

import json
from importlib import resources

import pandas as pd

from .simulate import tee_dgp

_DEMOS = {
    "tee_demo": dict(
        n_items=40, n_categories=4, n_prompts=3, n_judges=3, n_temperatures=2, n_replicates=3,
        random_seed=20261121,
    ),
}


#: Real data sets bundled with their licence (no simulated truth).
_REAL = {"arena_judge_calibration": "MIT"}


def available() -> list[str]:
    """Names of the embedded data sets."""
    return sorted(_DEMOS) + sorted(_REAL)


def _check(name: str) -> None:
    if name not in _DEMOS and name not in _REAL:
        raise KeyError(f"No data set {name!r}; available: {available()}.")


def load(name: str = "tee_demo") -> pd.DataFrame:
    """Load an embedded data set as a long DataFrame (true components in ``df.attrs["truth"]``).

    Examples
    --------
    >>> load("tee_demo").shape
    (2160, 7)
    """
    _check(name)
    with resources.files("bayes_tee.data").joinpath(f"{name}.csv").open() as fh:
        df = pd.read_csv(fh)
    if name in _REAL:
        df.attrs["licence"] = _REAL[name]
        return df
    df.attrs["truth"] = truth(name)
    return df


def truth(name: str = "tee_demo") -> dict[str, float]:
    """True variance components of a simulated data set (labels as in ``components()``)."""
    _check(name)
    with resources.files("bayes_tee.data").joinpath(f"{name}_truth.json").open() as fh:
        return json.load(fh)


def _regenerate() -> None:
    out = resources.files("bayes_tee.data")
    for name, kwargs in _DEMOS.items():
        df = tee_dgp(**kwargs)
        df["score"] = df["score"].round(6)
        with out.joinpath(f"{name}.csv").open("w") as fh:
            df.to_csv(fh, index=False)
        with out.joinpath(f"{name}_truth.json").open("w") as fh:
            json.dump(df.attrs["truth"], fh, indent=1, sort_keys=True)
        print(f"wrote {name}: {len(df)} rows")


def _arena(src: str) -> pd.DataFrame:
    """Normalise the debias-llm-as-a-judge Arena files to one row per battle x judge."""
    import glob
    import os

    rows = []
    for path in sorted(glob.glob(os.path.join(src, "*.json"))):
        stem = os.path.basename(path)[: -len(".json")]
        judge = stem.rsplit("_", 1)[1]
        with open(path) as fh:
            for rec in json.load(fh):
                claude_is_a = rec["model_a"].startswith("claude")
                opponent = rec["model_b"] if claude_is_a else rec["model_a"]
                human = (rec["human_winner"] == "model_a") == claude_is_a
                pick = rec["judge_pick"]
                judged = None if pick is None else float((pick == "A") == claude_is_a)
                rows.append(dict(id=rec["id"], pair=f"claude-vs-{opponent}", opponent=opponent, judge=judge,
                                 human_prefers_claude=int(human), judge_prefers_claude=judged))
    return pd.DataFrame(rows).sort_values(["pair", "id", "judge"]).reset_index(drop=True)


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1:
        out = resources.files("bayes_tee.data").joinpath("arena_judge_calibration.csv")
        arena = _arena(sys.argv[1])
        with out.open("w") as fh:
            arena.to_csv(fh, index=False)
        print(f"wrote arena_judge_calibration: {len(arena)} rows")
    else:
        _regenerate()
