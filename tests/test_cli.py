import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.cli import main

ROOT = Path(__file__).resolve().parents[1]
INSPECT_LOGS = ROOT / "notebooks" / "data" / "inspect_logs"
PROMPTFOO = ROOT / "tests" / "io" / "fixtures" / "promptfoo" / "results.json"
LM_EVAL = ROOT / "tests" / "io" / "fixtures" / "lm_eval" / "out"
ROLES_TOML = 'outcome = "score"\nitem = "item"\nprompt = "prompt"\njudge = "judge"\n'
SECTIONS = (
    "Write-up",
    "Diagnostics",
    "Design",
    "Variance components and shares",
    "theta: corrected",
    "D-study",
    "Single design changes",
    "Budget allocation",
    "Prior sensitivity",
    "Reporting checklist",
)


@pytest.fixture(scope="module")
def pilot(tmp_path_factory):
    """A pilot CSV, its roles TOML, a costs TOML, fitted through the CLI."""
    tmp = tmp_path_factory.mktemp("cli")
    df = bt.simulate.tee_dgp(
        n_items=12, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=2, random_seed=1
    )
    (tmp / "pilot.csv").write_text(df.to_csv(index=False))
    (tmp / "roles.toml").write_text(ROLES_TOML)
    (tmp / "costs.toml").write_text("cost_per_item = 0.5\n[cost_per_call]\njudge1 = 2.0\njudge2 = 0.5\n")
    out = tmp / "pilot.nc"
    code = main(
        [
            "fit",
            str(tmp / "pilot.csv"),
            "--roles",
            str(tmp / "roles.toml"),
            "--out",
            str(out),
            "--draws",
            "300",
            "--tune",
            "300",
            "--quiet",
        ]
    )
    assert code == 0 and out.exists()
    return tmp


def test_fit_reports_a_missing_column_with_exit_1(tmp_path, capsys):
    csv = tmp_path / "pilot.csv"
    bt.datasets.load("tee_demo").to_csv(csv, index=False)
    code = main(["fit", str(csv), "--outcome", "scroe", "--item", "item", "--out", str(tmp_path / "x.nc")])
    assert code == 1
    assert "Did you mean 'score'" in capsys.readouterr().err


@pytest.mark.slow
def test_summary_dstudy_allocate_and_json(pilot, capsys):
    nc = str(pilot / "pilot.nc")
    assert main(["summary", nc]) == 0
    text = capsys.readouterr().out
    assert "Shares of Var(theta_hat)" in text and "item:judge" in text
    assert main(["summary", nc, "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert {"components", "shares", "theta", "diagnostics"} <= set(s)
    assert main(["dstudy", nc, "--items", "12,48", "--prompts", "1,4", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 4 and {r["n_items"] for r in rows} == {12, 48}
    # more items and prompts: smaller projected SE
    se = {(r["n_items"], r["n_prompts"]): r["se_median"] for r in rows}
    assert se[(48, 4)] < se[(12, 1)]
    assert main(["allocate", nc, "--budget", "400", "--costs", str(pilot / "costs.toml"), "--json"]) == 0
    best = json.loads(capsys.readouterr().out)[0]
    judge_cost = 2.0 + 0.5 if best["n_judges"] == 2 else 0.5  # the cheapest judges first
    per_item = best["n_prompts"] * best["n_temperatures"] * best["n_replicates"] * judge_cost + 0.5
    assert best["cost"] == pytest.approx(best["n_items"] * per_item) and best["cost"] <= 400


def test_dry_run_describes_without_fitting(pilot, capsys):
    assert main(["fit", str(pilot / "pilot.csv"), "--roles", str(pilot / "roles.toml"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "rows used 96, dropped 0; balanced: True" in out


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_parquet_and_json_lines_input(pilot, fmt, capsys):
    import pandas as pd

    df = pd.read_csv(pilot / "pilot.csv")
    path = pilot / f"pilot.{fmt}"
    df.to_parquet(path) if fmt == "parquet" else df.to_json(path, orient="records", lines=True)
    assert main(["fit", str(path), "--roles", str(pilot / "roles.toml"), "--dry-run"]) == 0
    assert "rows used 96" in capsys.readouterr().out


def test_parquet_dataset_directory_is_read_out_of_core(pilot, tmp_path, capsys):
    pytest.importorskip("dask.dataframe")
    df = pd.read_csv(pilot / "pilot.csv")
    df.loc[3, "score"] = np.nan
    (tmp_path / "calls").mkdir()
    df.iloc[:50].to_parquet(tmp_path / "calls" / "part.0.parquet")
    df.iloc[50:].to_parquet(tmp_path / "calls" / "part.1.parquet")
    argv = ["fit", str(tmp_path / "calls"), "--roles", str(pilot / "roles.toml")]
    assert main([*argv, "--dry-run"]) == 0
    assert "rows used 95, dropped 1" in capsys.readouterr().out
    nc = tmp_path / "calls.nc"
    with pytest.warns(bt.DesignWarning, match="Dropped 1 row"):
        assert main([*argv, "--out", str(nc), "--draws", "200", "--tune", "200", "--quiet"]) == 0
    assert bt.load(nc).design.n_rows == 95


def test_rich_summary_on_a_terminal(pilot, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["summary", str(pilot / "pilot.nc")]) == 0
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)
    assert "Shares of Var(theta_hat)" in out and "item:judge" in out and "diagnostics" in out


def test_report_is_self_contained_with_every_section(pilot, capsys):
    html = pilot / "report.html"
    assert (
        main(["report", str(pilot / "pilot.nc"), "--html", str(html), "--costs", str(pilot / "costs.toml")])
        == 0
    )
    text = html.read_text()
    for section in SECTIONS:
        assert f"<h2>{section}" in text, section
    assert len(re.findall(r'src="data:image/png;base64,', text)) >= 4
    # no network fetches: no external src/href, no scripts, no stylesheets by URL
    assert not re.search(r'(src|href)\s*=\s*["\']?(https?:)?//', text)
    assert "<script" not in text and "<link" not in text
    assert "missing" in text and "from data" in text  # the checklist says what the data lack
    writeup = bt.load(pilot / "pilot.nc").writeup()
    assert writeup.split(". ")[0] in text


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")),
    reason="Chromium not installed (Debian package 'chromium')",
)
def test_report_renders_in_a_browser(pilot):
    html = pilot / "report.html"
    if not html.exists():
        main(["report", str(pilot / "pilot.nc"), "--html", str(html)])
    png = pilot / "report.png"
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--screenshot={png}",
            "--window-size=1100,4000",
            html.as_uri(),
        ],
        check=True,
        timeout=120,
        capture_output=True,
    )
    assert png.exists() and png.stat().st_size > 50_000


@pytest.mark.parametrize(
    "argv, message",
    [
        (["fit", "{d}/nope.csv", "--outcome", "score", "--item", "item", "--out", "x.nc"], "No file"),
        (
            ["fit", "{d}/bad.parquet", "--outcome", "score", "--item", "item", "--out", "x.nc"],
            "Could not read",
        ),
        (
            ["fit", "{d}/pilot.csv", "--outcome", "score", "--item", "item", "--bogus", "1"],
            "unrecognized arguments",
        ),
        (["fit", "{d}/pilot.csv", "--item", "item", "--out", "x.nc"], "--outcome is required"),
        (["fit", "{d}/pilot.csv", "--roles", "{d}/bad.toml", "--dry-run"], "not valid TOML"),
        (["fit", "{d}/pilot.csv", "--roles", "{d}/typo.toml", "--dry-run"], "Unknown role"),
        (["fit", "{d}/pilot.csv", "--roles", "{d}/roles.toml"], "--out is required"),
        (["dstudy", "{d}/pilot.nc", "--items", "ten"], "comma-separated integers"),
        (["allocate", "{d}/pilot.nc"], "--budget"),
        (["summary", "{d}/pilot.csv"], "not a bayes_tee posterior"),
        (["fit", "{d}/pilot.csv", "--from", "inspect", "--dry-run"], "expected an Inspect AI log"),
        (
            ["fit", "{logs}", "--from", "inspect", "--judge", "j", "--dry-run"],
            "fills the roles from the logs",
        ),
        (["fit", "{pf}", "--from", "promptfoo", "--out", "x.nc"], "fit one at a time with --model NAME"),
        (["fit", "{pf}", "--from", "promptfoo", "--model", "gpt", "--dry-run"], "No model 'gpt'"),
        (["fit", "{lm}", "--from", "lm-eval", "--prompt", "prompt_hash", "--dry-run"], "use 'template'"),
        (["fit", "{d}/pilot.csv", "--roles", "{d}/roles.toml", "--model", "a", "--dry-run"], "add --from"),
        (["dstudy", "{d}/pilot.nc", "--n", "evaluator="], "not a facet of this design"),
        (["dstudy", "{d}/pilot.nc", "--n", "prompt="], "has no counts"),
        (["dstudy", "{d}/pilot.nc", "--prompts", "2", "--n", "prompt=3"], "given twice"),
        (["dstudy", "{d}/pilot.nc", "--target-se", "-1"], "target_se must be positive"),
        (["reliability", "{d}/pilot.nc", "--n", "prompt=0"], "must be at least 1"),
    ],
)
def test_every_user_error_exits_1_without_traceback(pilot, argv, message, capsys):
    (pilot / "bad.parquet").write_text("not parquet")
    (pilot / "bad.toml").write_text("outcome = \n")
    (pilot / "typo.toml").write_text(ROLES_TOML + 'judg = "judge"\n')
    assert main([a.format(d=pilot, logs=INSPECT_LOGS, pf=PROMPTFOO, lm=LM_EVAL) for a in argv]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_fit_with_random_judges_a_prior_preset_and_a_method(pilot, tmp_path, capsys):
    out = tmp_path / "random.nc"
    argv = ["fit", str(pilot / "pilot.csv"), "--roles", str(pilot / "roles.toml"), "--out", str(out)]
    flags = ["--judge-effect", "random", "--priors", "half_normal", "--method", "augmented", "--quiet"]
    assert main(argv + flags + ["--draws", "300", "--tune", "300"]) == 0
    post = bt.load(out)
    assert post.design.judge_effect == "random" and post.method == "augmented"
    assert post.priors.name == "half_normal"
    assert main(argv + ["--priors", "flat"]) == 1
    assert "invalid choice: 'flat'" in capsys.readouterr().err


def test_dry_run_of_evaluation_logs(capsys):
    assert main(["fit", str(INSPECT_LOGS), "--from", "inspect", "--prompt", "wording", "--dry-run"]) == 0
    out, err = capsys.readouterr()
    assert "342 scores; roles: outcome=score, item=item (20), prompt=prompt (2), judge=judge (3)" in out
    assert "18 dropped" in out and "342 of 360 rows used" in out
    assert "warning: 18 score(s) in 2 Inspect AI log(s) could not be used" in err
    assert main(["fit", str(PROMPTFOO), "--from", "promptfoo", "--dry-run"]) == 0
    assert "Several models: add --model NAME (one of model-a, model-b)" in capsys.readouterr().out


def test_fit_evaluation_logs_in_one_call(tmp_path, capsys):
    out = tmp_path / "lm.nc"
    argv = ["fit", str(LM_EVAL), "--from", "lm-eval", "--out", str(out), "--quiet"]
    assert main(argv + ["--draws", "300", "--tune", "300"]) == 0
    post = bt.load(out)
    assert post.design.roles.prompt == "prompt" and post.design.counts["prompt"] == 2
    assert "Posterior saved" in capsys.readouterr().out


@pytest.mark.slow
def test_demo_in_a_fresh_process_prints_no_library_warnings(tmp_path):
    """What a new user sees: the demo's output and nothing from PyTensor, ArviZ, numba or xarray."""
    exe = Path(sys.executable).with_name("bayes-tee")
    if not exe.exists():
        pytest.skip("the bayes-tee entry point is not installed in this environment")
    out = subprocess.run(
        [exe, "demo", "--out", str(tmp_path), "--quiet"],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONWARNINGS": "default"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Diagnostics:" in out.stdout and (tmp_path / "shares.png").exists()
    assert not [line for line in out.stderr.splitlines() if re.search(r"Warning|warn", line)], out.stderr[
        -2000:
    ]


@pytest.mark.slow
def test_report_of_a_pilot_with_calls_lost_at_random(pilot, tmp_path, capsys):
    """The CLI's main output on the data users have: fit a pilot with 2% of calls lost (the
    blocks likelihood, whose power-scaling goes through the marginal model), then report.
    """
    df = pd.read_csv(pilot / "pilot.csv")
    df = df[np.random.default_rng(3).random(len(df)) > 0.02]  # the issue: a 2%-missing pilot
    (tmp_path / "lossy.csv").write_text(df.to_csv(index=False))
    nc, html = tmp_path / "lossy.nc", tmp_path / "lossy.html"
    argv = ["fit", str(tmp_path / "lossy.csv"), "--roles", str(pilot / "roles.toml"), "--out", str(nc)]
    assert main([*argv, "--draws", "300", "--tune", "300", "--quiet"]) == 0
    assert bt.load(nc).method == "blocks"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DiagnosticWarning)
        assert main(["report", str(nc), "--html", str(html)]) == 0
    page = html.read_text()
    for section in SECTIONS:
        assert section in page, section


@pytest.mark.slow
def test_fit_a_formula_then_reliability_and_dstudy_over_any_facet(tmp_path, capsys):
    df = bt.simulate.gstudy_dgp(
        {"item": 30, "evaluator": 4, "prompt": 3, "run": 2},
        {"item": 1.0, "evaluator": 0.3, "prompt": 0.2, "evaluator:prompt:run": 0.2},
        nested={"run": ("evaluator", "prompt")},
        random_seed=2,
    )
    data, out = tmp_path / "g.csv", tmp_path / "g.nc"
    df.to_csv(data, index=False)
    formula = "score ~ (1|item) + (1|evaluator) + (1|prompt) + (1|run)"
    assert main(["fit", str(data), "--formula", formula, "--dry-run"]) == 0
    assert "run levels" in capsys.readouterr().out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)  # the nested run is said
        code = main(["fit", str(data), "--formula", formula, "--out", str(out), "--quiet", "--draws", "300"])
    assert code == 0 and out.exists()
    capsys.readouterr()
    assert main(["reliability", str(out), "--n", "evaluator=2,4,6", "--n", "prompt=1,3", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 6 and {"n_evaluator", "n_prompt", "n_run", "erho2_median", "phi_high"} <= set(rows[0])
    assert rows[-1]["phi_median"] > rows[0]["phi_median"]
    assert main(["dstudy", str(out), "--n", "run=1,5", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["n_run"] for r in rows] == [1, 5] and rows[1]["se_median"] < rows[0]["se_median"]
    assert main(["reliability", str(out), "--n", "judge=2"]) == 1
    assert "not a facet of this design" in capsys.readouterr().err
    assert (
        main(["fit", str(data), "--formula", "score ~ (1|item) + (1|item:evaluator:prompt:run)", "--dry-run"])
        == 1
    )
    assert "confounded with the residual" in capsys.readouterr().err


@pytest.mark.slow
def test_leaderboard_fits_systems_and_reads_a_saved_comparison(tmp_path, capsys):
    df = bt.simulate.systems_dgp(n_systems=4, n_items=20, n_replicates=2, random_seed=5)
    csv, nc = tmp_path / "systems.csv", tmp_path / "systems.nc"
    df.to_csv(csv, index=False)
    roles = ["--outcome", "score", "--item", "item", "--prompt", "prompt", "--judge", "judge"]
    sampler = ["--draws", "600", "--tune", "400", "--quiet"]
    assert main(["leaderboard", str(csv), *roles, "--system", "model", *sampler, "--out", str(nc)]) == 0
    text = capsys.readouterr().out
    assert "Leaderboard (90% intervals" in text and "group" in text and nc.exists()
    assert "pairwise differences" not in text  # the pairs only with --pairs
    assert main(["leaderboard", str(nc), "--json", "--over", "panel"]) == 0
    out = json.loads(capsys.readouterr().out)
    raw = df.groupby("model")["score"].mean().sort_values(ascending=False)
    assert [r["system"] for r in out["leaderboard"]] == list(raw.index)
    assert len(out["pairs"]) == 6 and "fixed panel" in out["note"]
    assert main(["summary", str(nc)]) == 0
    assert "Leaderboard" in capsys.readouterr().out
    assert main(["dstudy", str(nc), "--items", "20,80"]) == 0
    assert "a difference between two systems" in capsys.readouterr().out
    assert main(["leaderboard", str(csv), *roles, "--quiet"]) == 1
    assert "--system" in capsys.readouterr().err


@pytest.mark.slow
def test_next_writes_the_chosen_calls_and_says_whether_to_stop(tmp_path, capsys):
    df = bt.simulate.systems_dgp(n_systems=4, n_items=24, n_judges=2, n_prompts=1, random_seed=3)
    df = df.drop(columns=["prompt", "replicate"])
    items = df["item"].unique()
    pilot, rest = df[df["item"].isin(items[:8])], df[~df["item"].isin(items[:8])]
    csv, pool, out, nc = (tmp_path / f for f in ("pilot.csv", "pool.csv", "next.csv", "fit.nc"))
    pilot.to_csv(csv, index=False)
    rest.drop(columns="score").to_csv(pool, index=False)
    roles = ["--outcome", "score", "--item", "item", "--judge", "judge", "--system", "model", "--quiet"]
    assert main(["leaderboard", str(csv), *roles, "--out", str(nc)]) == 0
    capsys.readouterr()
    assert (
        main(["next", str(nc), "--pool", str(pool), "--n", "12", "--objective", "rank", "--out", str(out)])
        == 0
    )
    assert "12 calls written" in capsys.readouterr().out
    chosen = pd.read_csv(out, index_col=0)
    assert len(chosen) == 12 and set(chosen.index) <= set(range(len(rest)))
    assert {"model", "item", "judge", "gain", "cost"} <= set(chosen.columns)
    assert main(["next", str(nc), "--status", "--objective", "best", "--target", "0.5", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    lb = bt.load(nc).leaderboard()
    assert status["metric"] == pytest.approx(lb["p_best"].iloc[0]) and status["about"] == lb["system"].iloc[0]
    # arguments are checked before any data is read or fitted
    assert main(["next", str(csv), *roles]) == 1
    assert "--pool" in capsys.readouterr().err
    assert main(["next", str(csv), *roles, "--pool", str(tmp_path / "nope.csv")]) == 1
    assert "no such file" in capsys.readouterr().err
    assert main(["next", str(csv), *roles, "--pool", str(pool), "--objective", "separate"]) == 1
    assert "--systems" in capsys.readouterr().err


@pytest.fixture(scope="module")
def comparison_nc(tmp_path_factory, hand_built_comparison):
    """A saved comparison of 14 systems from hand-built draws (no sampling)."""
    path = tmp_path_factory.mktemp("board") / "board.nc"
    return hand_built_comparison(np.linspace(0.6, -0.6, 14)).save(path)


def test_leaderboard_prints_groups_on_one_screen_and_pairs_on_request(comparison_nc, tmp_path, capsys):
    assert main(["leaderboard", str(comparison_nc)]) == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert len(lines) <= 24 and max(map(len, lines[:16])) <= 160  # one screen
    assert lines[1].split()[-1] == "group" and "Reading: 'new' intervals generalise" in out
    assert "a - b" not in out
    assert main(["leaderboard", str(comparison_nc), "--pairs", "unresolved"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(_json(comparison_nc, capsys, "--pairs", "unresolved"))
    assert f"{doc['n_unresolved']} unresolved pairs" in out and doc["pairs_shown"] == "unresolved"
    assert all(not p["resolved"] for p in doc["pairs"])
    costs = tmp_path / "costs.csv"
    table = pd.DataFrame({"model": [f"s{i}" for i in range(14)], "usd": np.arange(14) + 1.0})
    table.to_csv(costs, index=False)
    doc = json.loads(_json(comparison_nc, capsys, "--cost", str(costs)))
    assert doc["schema"] == "bayes_tee.leaderboard/1" and len(doc["pairs"]) == 91
    assert {"p_pareto", "cost", "group"} <= set(doc["leaderboard"][0]) and doc["front"]
    assert [g["letter"] for g in doc["groups"]][:2] == ["a", "b"]
    assert main(["leaderboard", str(comparison_nc), "--cost", str(costs)]) == 0
    assert "P(front)" in capsys.readouterr().out


def _json(nc, capsys, *flags) -> str:
    assert main(["leaderboard", str(nc), "--json", *flags]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--system", "model", "--item", "item"], "--outcome is required"),
        (["--outcome", "score", "--item", "item"], "--system"),
        (["--system", "model", "--outcome", "score", "--item", "item", "--level", "1.5"], "--level"),
        (["--system", "model", "--outcome", "score", "--item", "item", "--cost", "nope.csv"], "--cost"),
        (["--system", "model", "--outcome", "score", "--item", "item", "--cost-column", "usd"], "--cost"),
    ],
)
def test_leaderboard_arguments_are_checked_before_the_data(flags, message, capsys):
    """The data file does not exist: each error is about the argument, not the file."""
    assert main(["leaderboard", "no-such-data.csv", *flags]) == 1
    err = capsys.readouterr().err
    assert message in err and "no-such-data" not in err


def test_leaderboard_costs_are_checked_against_the_systems(comparison_nc, tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"model": ["s0", "zz"], "cost": [1.0, -2.0]}).to_csv(bad, index=False)
    assert main(["leaderboard", str(comparison_nc), "--cost", str(bad)]) == 1
    assert "not negative" in capsys.readouterr().err
    toml = tmp_path / "costs.toml"
    toml.write_text("s0 = 1.0\ns1 = 2.0\n")
    assert main(["leaderboard", str(comparison_nc), "--cost", str(toml)]) == 1
    assert "no cost for" in capsys.readouterr().err


def test_a_failing_fit_is_one_line_not_a_traceback(monkeypatch, capsys):
    import bayes_tee.cli as cli

    def boom(args):
        raise RuntimeError("All initialization points failed\n  at nutpie::sampler (Rust backtrace...)")

    monkeypatch.setattr(cli, "_run", boom)
    assert main(["demo", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "bayes-tee: error: the fit failed: All initialization points failed"


def test_help_loads_neither_numpy_nor_scipy():
    """`bayes-tee --help` answers before any numerical library is imported (the registries'
    names are read only when a subcommand's help or arguments need them).
    """
    code = (
        "import sys\nfrom bayes_tee.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pandas') if m in sys.modules), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "[]"


def test_an_unexpected_error_is_one_line_exit_3(monkeypatch, capsys):
    import bayes_tee.cli as cli

    def defect(args):
        raise TypeError("unsupported operand type(s)\n  more detail")

    monkeypatch.setattr(cli, "_run", defect)
    monkeypatch.delenv("BAYES_TEE_TRACEBACK", raising=False)
    assert main(["demo", "--quiet"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unexpected TypeError: unsupported operand type(s)" in err
    monkeypatch.setenv("BAYES_TEE_TRACEBACK", "1")
    with pytest.raises(TypeError):
        main(["demo", "--quiet"])


@pytest.mark.filterwarnings("ignore::bayes_tee.DesignWarning")
def test_fit_likert_scores_with_judge_scale_use(tmp_path, capsys):
    df = bt.simulate.tee_dgp(20, 2, 3, 1, 2, outcome="ordinal", random_seed=2)
    df.loc[df.index[:4], "score"] = np.nan  # rows lost: counted, not silent
    data = tmp_path / "likert.csv"
    df.to_csv(data, index=False)
    argv = ["fit", str(data), "--outcome", "score", "--item", "item", "--prompt", "prompt"]
    argv += ["--judge", "judge"]
    scale = ["--family", "ordinal", "--thresholds", "judge", "--spread", "judge"]
    sampler = ["--draws", "200", "--tune", "200", "--quiet"]
    assert main(argv + scale + ["--out", str(tmp_path / "p"), *sampler]) == 0
    out = capsys.readouterr().out
    assert "cumulative-logit GLMM" in out and "each judge its own cutpoints and latent spread" in out
    assert "Cutpoints (latent scale" in out and "Judge latent spreads" in out
    assert "4 dropped" in out
    assert main(argv + ["--spread", "judge", "--out", str(tmp_path / "q")]) == 1
    assert "family='gaussian' has none" in capsys.readouterr().err
