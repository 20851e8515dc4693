"""bt.read_lm_eval on real lm-evaluation-harness output (tests/io/fixtures/lm_eval, made by its
make.sh with the lm_eval CLI): two prompt wordings as tasks over the same six documents,
lm-eval's dummy model, --log_samples, two runs.
"""

import json
import shutil
import warnings
from pathlib import Path

import pytest

import bayes_tee as bt

OUT = Path(__file__).parent / "fixtures" / "lm_eval" / "out"


def _read(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", bt.DesignWarning)  # nothing is lost in these files
        return bt.read_lm_eval(*args, **kwargs)


def test_rows_items_prompts_and_runs():
    df = _read(OUT)
    files = sorted(OUT.rglob("samples_*.jsonl"))
    lines = [json.loads(x) for f in files for x in f.read_text().splitlines()]
    assert len(files) == 4 and len(df) == sum(len(d["metrics"]) for d in lines) == 48
    assert set(df["prompt"]) == {"qa_plain", "qa_formal"} and set(df["judge"]) == {"acc", "acc_norm"}
    assert "output_length" not in df  # a log-likelihood task generates no text
    # the same six documents under both wordings: the item is the document's hash
    assert df["item"].nunique() == 6
    assert df.groupby("item")["prompt"].nunique().eq(2).all()
    assert set(df["replicate"]) == {1, 2} and set(df["model"]) == {"dummy"}
    assert df.attrs[bt.design.roles.ROLES_ATTR] == {
        "outcome": "score",
        "item": "item",
        "prompt": "prompt",
        "judge": "judge",
        "replicate": "replicate",
    }
    expected = {
        (
            d["doc_hash"][:16],
            f.name.split("_2026")[0].removeprefix("samples_"),
            m,
            f.stem.rsplit("_", 1)[1],
        ): d[m]
        for f in files
        for d in map(json.loads, f.read_text().splitlines())
        for m in d["metrics"]
    }
    got = {(r.item, r.task, r.judge, r.run): r.score for r in df.itertuples()}
    assert got == expected


def test_prompt_template_and_refusals():
    df = _read(OUT, prompt="template")
    assert df["prompt"].nunique() == 2 and all("@" in p for p in df["prompt"].unique())
    with pytest.raises(bt.DesignError, match="prompt_hash hashes each filled prompt"):
        _read(OUT, prompt="prompt_hash")
    assert set(_read(OUT, scorers="acc")["judge"]) == {"acc"}


def test_foreign_files_get_one_clear_error(tmp_path):
    wrong = tmp_path / "results.jsonl"
    wrong.write_text('{"a": 1}\n')
    with pytest.raises(bt.DesignError, match="results.jsonl: expected lm-evaluation-harness samples"):
        _read(wrong)
    named = tmp_path / "samples_qa_2026-01-01T00-00-00.000001.jsonl"
    named.write_text('{"a": 1}\n')
    with pytest.raises(bt.DesignError, match="line 1: no doc_id and metrics"):
        _read(named)


def test_a_generation_task_with_filters_and_temperature():
    df = _read(OUT.parent / "out_gen")
    assert set(df["judge"]) == {"exact_match,first", "exact_match,majority"}
    assert len(df) == 2 * 6 and (df["temperature"] == 0.7).all() and set(df["prompt"]) == {"qa_gen"}
    assert df.attrs[bt.design.roles.ROLES_ATTR] == {"outcome": "score", "item": "item", "judge": "judge"}
    # the generated answers' lengths (the dummy model answers "lol"), a judge-bias covariate
    assert (df["output_length"] == 3).all()


def test_a_copied_samples_file_is_read_once_and_said(tmp_path):
    run = sorted(OUT.rglob("samples_*.jsonl"))[0].parent
    shutil.copytree(run, tmp_path / "a")
    shutil.copytree(run, tmp_path / "b")  # the same run in two folders
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = bt.read_lm_eval(tmp_path)
    assert sum("is a copy of" in str(w.message) for w in caught) == 2  # both of the run's files
    assert set(df["replicate"]) == {1} and len(df) == len(_read(run))
