"""Data sets shipped with the package.

``tee_demo`` is a fixed simulated pilot (40 items in 4 categories, 3 prompt variants, 3 judges,
2 temperatures, 3 replicates; 2,160 calls) drawn from :func:`bayes_tee.studies.dgp.tee_dgp` with
the Messing (2026) Table 8 components; its true components are stored beside it.
Regenerate it with ``python -m bayes_tee.datasets``.

``arena_judge_calibration`` (MIT, see ``bayes_tee/data/arena_judge_calibration_LICENSE.txt``):
877 Chatbot Arena battles of claude-opus-4-20250514 against three models, each with the human
winner and the picks of two LLM judges (gpt-4o-mini, gpt-5.2), normalised to "Claude wins"
(positions were randomised). One row per battle x judge: ``id, pair, opponent, judge,
human_prefers_claude, judge_prefers_claude`` (NaN where the judge gave no pick). From
yiqunchen/debias-llm-as-a-judge @4b4879a, ``data/judge_results/*.json``.

``alpaca_eval_reference`` (Apache-2.0, ``bayes_tee/data/alpaca_eval_LICENSE.txt``): AlpacaEval
2.0 weighted gpt-4-turbo preferences of 15 models against the fixed reference
gpt4_1106_preview on up to 805 instructions: ``model, instruction_idx, dataset, reference,
preference, output_length, reference_length`` (1..2; ``preference - 1`` is P(model beats the
reference); the two outputs' lengths in characters, for length control); rows as in the source
(vicuna-13b-v1.5 is listed twice there, alpaca-7b_verbose misses three instructions).
``alpaca_eval_leaderboard``: the published leaderboard rows of the same models (``win_rate,
standard_error, n_wins, ...``). From tatsu-lab/alpaca_eval @cd543a1.

``arena_hard_battles`` (Apache-2.0, ``bayes_tee/data/arena_hard_LICENSE.txt``): arena-hard-auto
judgments of four models against the baseline claude-3-haiku-20240307 on 120 questions, repeats
collapsed by :func:`collapse_arena_hard`: one row per ``question_id, model, game`` (the two
position-swapped games), with ``winner``, ``weight`` (1, or 3 for a strong verdict) and
``outcome`` (the model's score: 1 / 0.5 / 0). From lmarena/arena-hard-auto @74e8b6f.

The real sets are rebuilt by ``python -m bayes_tee.datasets ../shared/external``.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> bt.datasets.truth("tee_demo")["item:judge"]
0.02
"""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pandas as pd

from ._core.exceptions import ArgumentError, UnknownNameError
from .studies.dgp import tee_dgp

_DEMOS = {
    "tee_demo": dict(
        n_items=40,
        n_categories=4,
        n_prompts=3,
        n_judges=3,
        n_temperatures=2,
        n_replicates=3,
        random_seed=20261121,
    ),
}


#: Real data sets bundled with their licence (no simulated truth).
_REAL = {
    "arena_judge_calibration": "MIT",
    "alpaca_eval_reference": "Apache-2.0",
    "alpaca_eval_leaderboard": "Apache-2.0",
    "arena_hard_battles": "Apache-2.0",
}

#: AlpacaEval 2.0 models in the bundled extract: 12 spread over the leaderboard, the one its
#: README quotes, one with exact duplicate rows in the source, one with missing instructions.
ALPACA_MODELS: tuple[str, ...] = (
    "FuseChat-Gemma-2-9B-Instruct",
    "vicuna-13b-v1.5",
    "alpaca-7b_verbose",
)


def available() -> list[str]:
    """Names of the embedded data sets."""
    return sorted(_DEMOS) + sorted(_REAL)


def _check(name: str) -> None:
    if name not in _DEMOS and name not in _REAL:
        raise UnknownNameError(f"No data set {name!r}; available: {available()}.")


def load(name: str = "tee_demo") -> pd.DataFrame:
    """Load an embedded data set as a long DataFrame (true components in ``df.attrs["truth"]``).

    Examples
    --------
    >>> load("tee_demo").shape
    (2160, 7)
    """
    _check(name)
    root = resources.files("bayes_tee.data")
    gz = root.joinpath(f"{name}.csv.gz")
    if gz.is_file():
        with gz.open("rb") as fh:
            df = pd.read_csv(fh, compression="gzip")
    else:
        with root.joinpath(f"{name}.csv").open() as fh:
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


def _alpaca(src: str, n_spread: int = 12) -> tuple[pd.DataFrame, pd.DataFrame]:
    """AlpacaEval 2.0 extract: preferences of a spread of models against gpt4_1106_preview and
    their published leaderboard rows.
    """
    import os

    prefs = pd.read_csv(
        os.path.join(src, "alpaca_eval2_weighted_gpt4turbo_preferences_slim.csv"), dtype={"preference": str}
    )
    board = pd.read_csv(os.path.join(src, "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"), index_col=0)
    board = board[board.index.isin(prefs["model"])].sort_values("win_rate")
    picks = board.index[np.linspace(0, len(board) - 1, n_spread).round().astype(int)]
    models = list(dict.fromkeys([*picks, *ALPACA_MODELS]))
    prefs = prefs[prefs["model"].isin(models)]
    keep = ["model", "instruction_idx", "dataset", "generator_1_reference", "preference"]
    out = prefs[[*keep, "output_2_len_chars", "output_1_len_chars"]]
    out = out.rename(
        columns={
            "generator_1_reference": "reference",
            "output_2_len_chars": "output_length",
            "output_1_len_chars": "reference_length",
        }
    )
    cols = [
        "win_rate",
        "standard_error",
        "n_wins",
        "n_wins_base",
        "n_draws",
        "n_total",
        "discrete_win_rate",
        "length_controlled_winrate",
        "avg_length",
    ]
    lb = board.loc[models, cols].rename_axis("model").reset_index().sort_values("win_rate", ascending=False)
    return out.reset_index(drop=True), lb.reset_index(drop=True)


def collapse_arena_hard(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per (model, question, game) from arena-hard-auto battle rows.

    Each (model, question) has the two position-swapped games, each written once or three times
    (a strong verdict counts three times): 2, 4 or 6 consecutive rows. Four rows are (3, 1) when
    the first three agree, else (1, 3). ``weight`` keeps the repeat count; ``outcome`` is the
    candidate's (``model_b``'s) score: win 1, tie 0.5, loss 0.
    """
    rows = []
    for (model, q), g in raw.groupby(["model_b", "question_id"], sort=False):
        w = list(g["winner"])
        if len(w) == 2:
            games = [(w[0], 1), (w[1], 1)]
        elif len(w) == 6:
            games = [(w[0], 3), (w[3], 3)]
        elif len(w) == 4:
            games = [(w[0], 3), (w[3], 1)] if w[0] == w[1] == w[2] else [(w[0], 1), (w[1], 3)]
        else:
            raise ArgumentError(f"{model} question {q}: {len(w)} rows, expected 2, 4 or 6.")
        for game, (winner, weight) in enumerate(games, start=1):
            rows.append(
                dict(
                    question_id=int(q),
                    model=model,
                    baseline=g["model_a"].iloc[0],
                    game=game,
                    winner=winner,
                    weight=weight,
                    outcome={"model_b": 1.0, "tie": 0.5, "model_a": 0.0}[winner],
                )
            )
    return pd.DataFrame(rows)


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
                rows.append(
                    dict(
                        id=rec["id"],
                        pair=f"claude-vs-{opponent}",
                        opponent=opponent,
                        judge=judge,
                        human_prefers_claude=int(human),
                        judge_prefers_claude=judged,
                    )
                )
    return pd.DataFrame(rows).sort_values(["pair", "id", "judge"]).reset_index(drop=True)


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 1:
        import os

        root = resources.files("bayes_tee.data")
        src = sys.argv[1]
        if os.path.isdir(os.path.join(src, "debias_llm_judge_arena")):  # the ../shared/external folder
            tables = {"arena_judge_calibration": _arena(os.path.join(src, "debias_llm_judge_arena"))}
            prefs, board = _alpaca(os.path.join(src, "alpaca_eval2"))
            tables.update(alpaca_eval_reference=prefs, alpaca_eval_leaderboard=board)
            raw = pd.read_json(
                os.path.join(src, "arena_hard_battles", "arena_hard_battles.jsonl"), lines=True
            )
            tables["arena_hard_battles"] = collapse_arena_hard(raw)
        else:
            tables = {"arena_judge_calibration": _arena(src)}
        for name, table in tables.items():
            if len(table) > 5000:  # large extracts ship gzipped
                with root.joinpath(f"{name}.csv.gz").open("wb") as fh:
                    table.to_csv(fh, index=False, compression={"method": "gzip", "mtime": 0})
            else:
                with root.joinpath(f"{name}.csv").open("w") as fh:
                    table.to_csv(fh, index=False)
            print(f"wrote {name}: {len(table)} rows")
    else:
        _regenerate()
