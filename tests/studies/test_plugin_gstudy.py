"""The classical G-study (``bt.plugin.fit``): equal to closed-form ANOVA and to lme4 REML on
balanced data, with E rho^2 and Phi by the same weights as the posterior's.
"""

import shutil
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt

MAIN = dict(
    levels={"item": 40, "evaluator": 6, "prompt": 3},
    variances={"item": 1.0, "evaluator": 0.3, "prompt": 0.2},
    residual=0.6,
)
NESTED = dict(
    levels={"item": 30, "evaluator": 4, "prompt": 3, "run": 2},
    variances={"item": 1.0, "evaluator": 0.3, "prompt": 0.2, "evaluator:prompt:run": 0.3},
    nested={"run": ("evaluator", "prompt")},
    residual=0.5,
)


def _closed_form_main_effects(df):
    """Two-facet crossed p x e x o design, one call per cell: the textbook EMS solution."""
    y = df.pivot_table(index="item", columns=["evaluator", "prompt"], values="score").to_numpy()
    N, E, P = 40, 6, 3
    y = y.reshape(N, E, P)
    m = y.mean()
    mi, me, mp = y.mean(axis=(1, 2)), y.mean(axis=(0, 2)), y.mean(axis=(0, 1))
    ms_i = E * P * np.sum((mi - m) ** 2) / (N - 1)
    ms_e = N * P * np.sum((me - m) ** 2) / (E - 1)
    ms_p = N * E * np.sum((mp - m) ** 2) / (P - 1)
    resid = y - mi[:, None, None] - me[None, :, None] - mp[None, None, :] + 2 * m
    ms_r = np.sum(resid**2) / (N * E * P - N - E - P + 2)
    return {
        "item": (ms_i - ms_r) / (E * P),
        "evaluator": (ms_e - ms_r) / (N * P),
        "prompt": (ms_p - ms_r) / (N * E),
        "residual": ms_r,
    }


def test_plugin_equals_closed_form_anova():
    df = bt.simulate.gstudy_dgp(**MAIN, random_seed=4)
    g = bt.plugin.fit(df, formula=df.attrs["formula"])
    est = g.components().set_index("component")["estimate"]
    for k, v in _closed_form_main_effects(df).items():
        assert est[k] == pytest.approx(v, rel=1e-8, abs=1e-12), k
    assert g.notes == () and not g.components()["truncated"].any()


def test_plugin_reliability_is_the_g_formula_at_the_estimates():
    df = bt.simulate.gstudy_dgp(**MAIN, random_seed=4)
    g = bt.plugin.fit(df, formula=df.attrs["formula"])
    s = g.components().set_index("component")["estimate"]
    rel = g.reliability(n={"evaluator": [1, 2, 4, 8], "prompt": [1, 2, 3, 6]})
    assert len(rel) == 16
    E, P = rel["n_evaluator"].to_numpy(), rel["n_prompt"].to_numpy()
    delta = s["residual"] / (E * P)
    Delta = delta + s["evaluator"] / E + s["prompt"] / P
    assert rel["erho2"].to_numpy() == pytest.approx(s["item"] / (s["item"] + delta), rel=1e-12)
    assert rel["phi"].to_numpy() == pytest.approx(s["item"] / (s["item"] + Delta), rel=1e-12)


def test_plugin_says_when_it_truncates_and_refuses_unbalanced_data():
    df = bt.simulate.gstudy_dgp(
        {"item": 20, "evaluator": 3, "prompt": 2}, {"item": 1.0, "evaluator": 0.0, "prompt": 0.0},
        random_seed=4,
    )  # fmt: skip
    with pytest.warns(bt.DesignWarning, match="set to 0 \\(a singular fit\\); REML would re-estimate"):
        g = bt.plugin.fit(df, formula=df.attrs["formula"])
    table = g.components().set_index("component")
    assert table.loc[["evaluator", "prompt"], "truncated"].all() and (table["estimate"] >= 0).all()
    with pytest.raises(bt.DesignError, match="needs a balanced design"):
        bt.plugin.fit(df.iloc[1:], formula=df.attrs["formula"])


def test_plugin_with_roles_is_the_tee_anova(demo_df):
    from tests.conftest import DEMO_ROLES

    g = bt.plugin.fit(demo_df, **DEMO_ROLES)
    est = bt.anova_estimates(bt.validate_design(demo_df, **DEMO_ROLES, warn=False))
    table = g.components().set_index("component")
    for k, v in est.items():
        assert table.loc[k, "anova"] == pytest.approx(v, rel=1e-10), k


def _lme4(df: pd.DataFrame, formula: str) -> dict[str, float]:
    script = (
        "suppressMessages(library(lme4)); d <- read.csv(file('stdin'));"
        "for (c in setdiff(names(d), 'score')) d[[c]] <- factor(d[[c]]);"
        f"m <- lmer({formula}, data = d, REML = TRUE,"
        " control = lmerControl(optimizer = 'nloptwrap', optCtrl = list(xtol_abs = 1e-14, ftol_abs = 1e-16,"
        " xtol_rel = 1e-14, ftol_rel = 1e-16, maxeval = 1e5)));"
        "v <- as.data.frame(VarCorr(m)); write.csv(v[, c('grp', 'vcov')], row.names = FALSE)"
    )
    out = subprocess.run(
        ["Rscript", "-e", script], input=df.to_csv(index=False), capture_output=True, text=True, check=True
    )
    from io import StringIO

    v = pd.read_csv(StringIO(out.stdout))
    return dict(zip(v["grp"].str.replace("Residual", "residual"), v["vcov"]))


def _has_lme4() -> bool:
    if shutil.which("Rscript") is None:
        return False
    return subprocess.run(["Rscript", "-e", "library(lme4)"], capture_output=True).returncode == 0


@pytest.mark.slow
@pytest.mark.skipif(
    not _has_lme4(), reason="R with lme4 is not installed (apt install r-base-core r-cran-lme4)"
)
@pytest.mark.parametrize("spec", ["main effects", "nested run"])
def test_plugin_equals_lme4_reml_on_balanced_data(spec):
    df = bt.simulate.gstudy_dgp(**(MAIN if spec == "main effects" else NESTED), random_seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        g = bt.plugin.fit(df, formula=df.attrs["formula"])
    assert not g.singular
    ref = _lme4(df, df.attrs["formula"])
    est = g.components().set_index("component")["estimate"]
    for k, v in ref.items():
        label = "evaluator:prompt:run" if k.startswith("evaluator:prompt:run") else k
        # lme4 stops at its optimizer's tolerance; the EMS solution is exact (closed form above)
        assert est[label] == pytest.approx(v, rel=1e-6), k


def test_systems_as_the_object_of_measurement():
    """object="model": the items become a facet of measurement, divided by their count."""
    df = bt.simulate.gstudy_dgp(
        {"item": 30, "model": 5, "judge": 3},
        {"item": 1.0, "model": 0.3, "judge": 0.2, "item:model": 0.4, "model:judge": 0.1, "item:judge": 0.2},
        n_replicates=2,
        random_seed=6,
    )
    g = bt.plugin.fit(df, formula=df.attrs["formula"])
    s = g.components().set_index("component")["estimate"]
    rel = g.reliability(object="model", n={"item": [50, 200], "judge": [1, 3]})
    assert list(rel.columns[:3]) == ["n_item", "n_judge", "n_replicate"]
    N, M, R = rel["n_item"].to_numpy(), rel["n_judge"].to_numpy(), rel["n_replicate"].to_numpy()
    delta = s["item:model"] / N + s["model:judge"] / M + s["residual"] / (N * M * R)
    Delta = delta + s["item"] / N + s["judge"] / M + s["item:judge"] / (N * M)
    assert rel["erho2"].to_numpy() == pytest.approx(s["model"] / (s["model"] + delta), rel=1e-12)
    assert rel["phi"].to_numpy() == pytest.approx(s["model"] / (s["model"] + Delta), rel=1e-12)
    with pytest.raises(ValueError, match="not of the object"):
        g.reliability(object="model", n={"model": [2]})
