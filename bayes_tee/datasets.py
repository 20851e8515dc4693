"""Data sets shipped with the package.

``tee_demo`` is a fixed simulated pilot (40 items in 4 categories, 3 prompt variants, 3 judges,
2 temperatures, 3 replicates; 2,160 calls) drawn from :func:`bayes_tee.simulate.tee_dgp` with
the seed 000 Table 8 components; its true components are stored beside it.
Regenerate it with ``python -m bayes_tee.datasets``.

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


def available() -> list[str]:
    """Names of the embedded data sets."""
    return sorted(_DEMOS)


def _check(name: str) -> None:
    if name not in _DEMOS:
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


if __name__ == "__main__":
    _regenerate()
