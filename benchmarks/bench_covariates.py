"""Judge biases as model terms: the AlpacaEval 2 length-controlled leaderboard, and slope coverage.

    python benchmarks/bench_covariates.py alpaca [--data ../shared/external/alpaca_eval2] [--per-system]
    python benchmarks/bench_covariates.py coverage [--studies 20] [--family gaussian] [--kind fixed]
    python benchmarks/bench_covariates.py glmer [--items 300] [--seed 3]

``alpaca``: the 58 models x 805 instructions of AlpacaEval 2 (weighted gpt-4-turbo judge against
gpt4_1106_preview; the bundled 15-model extract when ``--data`` is absent), ``win = preference - 1``
and AlpacaEval's length covariate ``tanh((len - len_ref) / SD)``. It fits ``win ~ model + length +
(1|instruction_idx)`` (``--per-system``: ``+ length:model``, a slope per system as AlpacaEval's own
GLM has) with ``fit_posterior`` and prints the fit's time and diagnostics, the length slope, and
the Spearman correlations: the uncontrolled board against the raw win rates, the board controlled
at ``length = 0`` against the published length-controlled win rates, and the same for a plain
least-squares fit of the same fixed part (no instruction effect, no uncertainty). With R and lme4
on the machine (``--install-r``: Debian's ``r-base-core r-cran-lme4``) it fits the same model with
``lmer`` in the same run and prints the time ratio and the two slopes.

``glmer``: a binary judge-bias study (``bt.simulate.bias_dgp``, 3 systems x 4 judges, one verdict
per item x system x judge, each judge its own length slope around 0.5 logits) fitted by
``fit_posterior(..., family="binomial")`` and by ``lme4::glmer`` (Laplace) in the same run, with
``score ~ model + judge + length + length:judge + (1|item)``: the common slope and each judge's,
the item SD, and the time ratio.

``coverage``: simulated studies with a known slope (``--kind fixed``: one common slope;
``judge``: a slope per judge, ``length:judge``; ``random``: ``(0 + length|judge)``) for a family;
the share of 90% intervals that hold the truth, with its Monte Carlo SE.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

import bayes_tee as bt

R_SCRIPT = r"""
suppressMessages(library(lme4))
d <- read.csv("{csv}")
d$model <- factor(d$model); d$instruction_idx <- factor(d$instruction_idx)
contrasts(d$model) <- contr.sum(nlevels(d$model))
t <- system.time(m <- lmer({formula}, data = d, REML = TRUE))[["elapsed"]]
cat(sprintf("LMER %.3f %.6f %.6f %.6f %.6f\n", t, fixef(m)[["length"]],
            sqrt(diag(vcov(m)))[["length"]], sqrt(VarCorr(m)$instruction_idx[1]), sigma(m)))
"""


def load_alpaca(path: str | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    if path and Path(path).is_dir():
        prefs = pd.read_csv(Path(path) / "alpaca_eval2_weighted_gpt4turbo_preferences_slim.csv")
        board = pd.read_csv(Path(path) / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", index_col=0)
        prefs = prefs.rename(
            columns={"output_2_len_chars": "output_length", "output_1_len_chars": "reference_length"}
        )
    else:
        prefs = bt.datasets.load("alpaca_eval_reference")
        board = bt.datasets.load("alpaca_eval_leaderboard").set_index("model")
    prefs = prefs.assign(win=prefs["preference"].astype(float) - 1.0)
    prefs = bt.bias_covariates(prefs, length="output_length", reference_length="reference_length")
    return prefs[["model", "instruction_idx", "win", "length"]], board


GLMER_SCRIPT = r"""
suppressMessages(library(lme4))
d <- read.csv("{csv}")
for (f in c("model", "judge", "item")) d[[f]] <- factor(d[[f]])
contrasts(d$model) <- contr.sum(nlevels(d$model)); contrasts(d$judge) <- contr.sum(nlevels(d$judge))
f <- score ~ model + judge + length + length:judge + (1|item)
t <- system.time(m <- glmer(f, data = d, family = binomial))[["elapsed"]]
b <- fixef(m); se <- sqrt(diag(vcov(m)))
dev <- b[grepl("^judge[0-9]+:length|^length:judge", names(b))]
slopes <- b[["length"]] + c(dev, -sum(dev))
cat(sprintf("GLMER %.3f %.6f %.6f %.6f %s\n", t, b[["length"]], se[["length"]], sqrt(VarCorr(m)$item[1]),
            paste(sprintf("%.6f", slopes), collapse = ",")))
"""


def timed_fit(df: pd.DataFrame, formula: str, family: str = "gaussian"):
    """``fit_posterior`` and its seconds. The fit's modules (PyMC, ArviZ, nutpie) load on the first
    call: they are imported and timed apart first, as lme4's time leaves out ``library(lme4)``.
    """
    t = time.perf_counter()
    import nutpie  # noqa: F401
    import pymc  # noqa: F401

    from bayes_tee.tee import fit  # noqa: F401

    print(f"imports on the first call: {time.perf_counter() - t:.1f} s (not in the fit's time)")
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        post = bt.fit_posterior(df, formula=formula, system="model", family=family, random_seed=1,
                                progressbar=False)  # fmt: skip
    return post, time.perf_counter() - t


def glmer(args) -> None:
    df = bt.simulate.bias_dgp(
        "binomial", args.items, judge_slopes=(-0.3, 0.0, 0.1, 0.2), effects=(0.0, 0.3, 0.6),
        longer=(0.0, 0.3, 0.6), random_seed=args.seed,
    )  # fmt: skip
    formula = "score ~ model + judge + length + length:judge + (1|item)"
    print(f"binary judge-bias study: {len(df)} verdicts, {args.items} items x 3 systems x 4 judges")
    print(f"formula: {formula}")
    post, fit_s = timed_fit(df, formula, family="binomial")
    d = post.diagnostics()
    print(f"fit: {fit_s:.1f} s ({post.method}; compile {post.info.get('compile_s')} s, sample "
          f"{post.info.get('sample_s')} s); diagnostics ok={d['ok']} {d['problems']}")  # fmt: skip
    coef = post.coefficients()
    common = coef[coef["kind"] == "slope"].iloc[0]
    levels = coef[coef["kind"] == "level slope"].set_index("level")
    item_sd = float(np.sqrt(post.components().set_index("component").loc["item", "median"]))
    if shutil.which("Rscript") is None:
        print("glmer: R with lme4 not on this machine (--install-r installs it); no ratio printed")
        return
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "d.csv"
        df.to_csv(csv, index=False)
        out = subprocess.run(["Rscript", "-e", GLMER_SCRIPT.replace("{csv}", str(csv))], capture_output=True,
                             text=True)  # fmt: skip
    line = next((x for x in out.stdout.splitlines() if x.startswith("GLMER")), None)
    if line is None:
        print("glmer failed:", out.stderr[-500:])
        return
    _, gt, gslope, gse, gitem, gslopes = line.split()
    print(f"glmer (Laplace, same run): {float(gt):.2f} s; bayes_tee/glmer time {fit_s / float(gt):.1f}x")
    print(f"  common slope (logit per unit): glmer {float(gslope):.4f} (SE {float(gse):.4f}); ours "
          f"{common['estimate']:.4f} (posterior SD {common['sd']:.4f}); truth 0.5")  # fmt: skip
    truth = df.attrs["truth"]["judge_slopes"]
    for lab, g in zip(levels.index, gslopes.split(",")):
        row = levels.loc[lab]
        print(f"  judge {lab}: glmer {float(g):.4f}; ours {row['estimate']:.4f} [{row['low']:.4f}, "
              f"{row['high']:.4f}] (90%); truth {truth[lab]:.4f}")  # fmt: skip
    print(f"  SD(item), logit: glmer {float(gitem):.4f}; ours {item_sd:.4f} (posterior median)")


def least_squares(df: pd.DataFrame, per_system: bool) -> pd.Series:
    """Each model's fitted win rate at length 0 from ordinary least squares of the fixed part."""
    X = pd.get_dummies(df["model"], dtype=float)
    cols = [X]
    if per_system:
        cols.append(X.mul(df["length"], axis=0).add_suffix(":length"))
    else:
        cols.append(df[["length"]])
    A = pd.concat(cols, axis=1)
    coef, *_ = np.linalg.lstsq(A.to_numpy(), df["win"].to_numpy(), rcond=None)
    return pd.Series(coef[: X.shape[1]], index=X.columns)


def run_lmer(df: pd.DataFrame, formula: str) -> tuple[float, ...] | None:
    if shutil.which("Rscript") is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "d.csv"
        df.to_csv(csv, index=False)
        script = R_SCRIPT.replace("{csv}", str(csv)).replace("{formula}", formula)
        out = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True)
    line = next((x for x in out.stdout.splitlines() if x.startswith("LMER")), None)
    if line is None:
        print("lmer failed:", out.stderr[-500:])
        return None
    return tuple(float(x) for x in line.split()[1:])


def alpaca(args) -> None:
    df, board = load_alpaca(args.data)
    formula = "win ~ model + length + (1|instruction_idx)"
    if args.per_system:
        formula = "win ~ model + length + length:model + (1|instruction_idx)"
    print(
        f"AlpacaEval 2: {df['model'].nunique()} models x {df['instruction_idx'].nunique()} "
        f"instructions, {len(df)} rows"
    )
    print(f"formula: {formula}")
    post, fit_s = timed_fit(df, formula)
    d = post.diagnostics()
    timing = {k: post.info.get(k) for k in ("compile_s", "sample_s", "tune", "draws", "n_free_parameters")}
    print(f"fit: {fit_s:.1f} s ({post.method}; {timing}); diagnostics ok={d['ok']} {d['problems']}")
    coef = post.coefficients().iloc[0]
    print(f"length slope: {coef['estimate']:.4f} [{coef['low']:.4f}, {coef['high']:.4f}] per unit (90%)")
    raw = df.groupby("model")["win"].mean() * 100
    t = time.perf_counter()
    free = post.leaderboard().set_index("system")
    ctrl = post.leaderboard(control={"length": 0.0}).set_index("system")
    print(f"leaderboards: {time.perf_counter() - t:.1f} s")
    models = [m for m in free.index if m in board.index]
    lc = board.loc[models, "length_controlled_winrate"]

    def rho(a, b):
        return stats.spearmanr(a, b).statistic

    print(
        f"uncontrolled board vs raw win rates: Spearman {rho(free.loc[models, 'estimate'], raw[models]):.4f}"
    )
    print(f"controlled board vs published LC win rates: Spearman {rho(ctrl.loc[models, 'estimate'], lc):.4f}")
    for per in (False, True):
        ols = least_squares(df, per)
        label = "per-system slopes" if per else "common slope"
        print(f"least squares ({label}) at length 0 vs published LC: Spearman {rho(ols[models], lc):.4f}")
    width = (ctrl["new_high"] - ctrl["new_low"]).median() * 100 / 2
    print(
        f"median half-width of our controlled 90% intervals: {width:.2f} points; published LC SE median "
        f"{board.loc[models, 'lc_standard_error'].median():.2f}"
        if "lc_standard_error" in board
        else ""
    )
    lm = run_lmer(df, formula)
    if lm is None:
        print("lmer: R with lme4 not on this machine (--install-r installs it); no ratio printed")
    else:
        lt, slope, se, sd_item, sd_res = lm
        ours = post.coefficients().iloc[0]
        comp = post.components().set_index("component")
        print(
            f"lmer (REML, same run): {lt:.2f} s; bayes_tee/lmer time {fit_s / lt:.1f}x\n"
            f"  slope: lmer {slope:.4f} (SE {se:.4f}); ours {ours['estimate']:.4f} "
            f"(posterior SD {ours['sd']:.4f})\n"
            f"  SD(instruction): lmer {sd_item:.4f}; "
            f"ours {np.sqrt(comp.loc['item', 'median']):.4f} (posterior median)\n"
            f"  residual SD: lmer {sd_res:.4f}; ours {np.sqrt(comp.loc['residual', 'median']):.4f}"
        )


def simulate(family: str, kind: str, rng: np.random.Generator, n_items=40, n_judges=4):
    """A judge-bias study (:func:`bayes_tee.studies.bias_designs.bias_dgp`): judges' slopes off 0.5 by
    ``N(0, 0.25^2)`` (``fixed``: none; ``judge``: centred), systems 0 / 0.2 / 0.4 and ever longer.
    """
    u = rng.normal(0, 0.25, n_judges) if kind != "fixed" else np.zeros(n_judges)
    if kind == "judge":
        u = u - u.mean()
    df = bt.simulate.bias_dgp(
        family, n_items, judge_slopes=u, effects=(0.0, 0.2, 0.4), longer=(0.0, 0.3, 0.6),
        random_seed=int(rng.integers(2**31)),
    )  # fmt: skip
    return df, 0.5 + u


def coverage(args) -> None:
    formula = {
        "fixed": "score ~ model + judge + length + (1|item)",
        "judge": "score ~ model + judge + length + length:judge + (1|item)",
        "random": "score ~ model + length + (1|item) + (1|judge) + (0 + length|judge)",
    }[args.kind]
    rng = np.random.default_rng(args.seed)
    hits, times, ok = [], [], 0
    for k in range(args.studies):
        df, truth = simulate(args.family, args.kind, rng)
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = bt.fit_posterior(
                df, formula=formula, system="model", family=args.family, random_seed=k, progressbar=False
            )
        times.append(time.perf_counter() - t)
        ok += post.diagnostics()["ok"]
        table = post.coefficients(level=0.9)
        if args.kind == "fixed":
            rows, targets = table[table["kind"] == "slope"], [0.5]
        else:
            rows = table[table["kind"] == "level slope"].set_index("level")
            targets = [truth[int(lab[1:])] for lab in rows.index]
        hits += [bool(lo <= t <= hi) for lo, hi, t in zip(rows["low"], rows["high"], targets)]
    h = np.mean(hits)
    print(
        f"{args.family} {args.kind}: {args.studies} studies, {len(hits)} intervals; 90% coverage {h:.3f} "
        f"+- {np.sqrt(h * (1 - h) / len(hits)):.3f}; diagnostics ok {ok}/{args.studies}; "
        f"median fit {np.median(times):.1f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("alpaca")
    a.add_argument(
        "--data", default=str(Path(__file__).resolve().parents[2] / "shared/external/alpaca_eval2")
    )
    a.add_argument("--per-system", action="store_true")
    a.add_argument("--install-r", action="store_true")
    c = sub.add_parser("coverage")
    c.add_argument("--studies", type=int, default=20)
    c.add_argument("--family", default="gaussian", choices=("gaussian", "binomial", "ordinal"))
    c.add_argument("--kind", default="fixed", choices=("fixed", "judge", "random"))
    c.add_argument("--seed", type=int, default=7)
    g = sub.add_parser("glmer")
    g.add_argument("--items", type=int, default=300)
    g.add_argument("--seed", type=int, default=3)
    g.add_argument("--install-r", action="store_true")
    args = ap.parse_args()
    if getattr(args, "install_r", False) and shutil.which("Rscript") is None:
        subprocess.run(["apt-get", "install", "-y", "r-base-core", "r-cran-lme4"], check=False)
    {"alpaca": alpaca, "coverage": coverage, "glmer": glmer}[args.what](args)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
