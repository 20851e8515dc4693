import bayes_tee as bt
from bayes_tee.cli import main


def test_fit_reports_a_missing_column_with_exit_1(tmp_path, capsys):
    csv = tmp_path / "pilot.csv"
    bt.datasets.load("tee_demo").to_csv(csv, index=False)
    code = main(["fit", str(csv), "--outcome", "scroe", "--item", "item", "--out", str(tmp_path / "x.nc")])
    assert code == 1
    assert "Did you mean 'score'" in capsys.readouterr().err


def test_fit_and_summary_roundtrip(tmp_path, capsys):
    csv = tmp_path / "pilot.csv"
    df = bt.simulate.tee_dgp(n_items=12, n_prompts=2, n_judges=2, n_temperatures=1, n_replicates=2,
                             random_seed=1)
    df.to_csv(csv, index=False)
    out = tmp_path / "pilot.nc"
    code = main(["fit", str(csv), "--outcome", "score", "--item", "item", "--prompt", "prompt",
                 "--judge", "judge", "--out", str(out), "--draws", "300", "--tune", "300", "--quiet"])
    assert code in (0,) and out.exists()
    assert main(["summary", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Shares of Var(theta_hat)" in text and "item:judge" in text
