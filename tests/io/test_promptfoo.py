"""bt.read_promptfoo on real promptfoo output (tests/io/fixtures/promptfoo, made by its make.sh with
the promptfoo CLI on offline custom providers): two prompts, two providers, three assertions,
--repeat 3, one provider erroring on one question.
"""

import hashlib
import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

import bayes_tee as bt

FIXTURES = Path(__file__).parent / "fixtures" / "promptfoo"
JSON, JSONL = FIXTURES / "results.json", FIXTURES / "results.jsonl"


def _read(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.read_promptfoo(*args, **kwargs)


def _raw():
    return json.loads(JSON.read_text())["results"]["results"]


def test_rows_judges_replicates_and_losses():
    with pytest.warns(bt.DesignWarning, match="18 score.*where the call errored"):
        df = bt.read_promptfoo(JSON)
    raw = _raw()
    errored = [r for r in raw if r["failureReason"] == 2]
    assert len(errored) == 2 * 3  # model-b on one question, both prompts, three repeats
    assert len(df) == 3 * (len(raw) - len(errored))
    assert df.attrs["dropped"] == {"the call errored": 3 * len(errored)}
    assert df.attrs["dropped_by_model"] == {"model-b": {"the call errored": 18}}
    assert set(df["judge"]) == {
        "contains",
        "llm-rubric (file://grader.js) #1",
        "llm-rubric (file://grader.js) #2",
    }
    assert set(df["prompt"]) == {"plain", "formal"} and set(df["model"]) == {"model-a", "model-b"}
    assert df["item"].nunique() == 4 and set(df["replicate"]) == {1, 2, 3}
    # every (item, prompt, model, judge) call appears once per repeat
    per_call = df.groupby(["item", "prompt", "model", "judge"])["replicate"].agg(["nunique", "size"])
    assert (per_call["nunique"] == per_call["size"]).all() and (per_call["size"] == 3).all()
    assert (df["temperature"] == 0.7).all()  # from the providers' config


def test_items_hash_vars_and_scores_are_the_assertions():
    df = _read(JSON)
    raw = [r for r in _raw() if r["failureReason"] != 2]
    for r in raw[:10]:
        item = hashlib.sha1(json.dumps(r["vars"], sort_keys=True).encode()).hexdigest()[:12]
        rows = df[
            (df["item"] == item)
            & (df["prompt"] == r["prompt"]["label"])
            & (df["model"] == r["provider"]["label"])
        ]
        logged = sorted(c["score"] for c in r["gradingResult"]["componentResults"])
        assert (
            sorted(set(rows["score"])) <= sorted(set(logged))
            and json.loads(rows["vars"].iloc[0]) == r["vars"]
        )
    assert df.groupby("judge")["score"].sum().sum() == sum(
        c["score"] for r in raw for c in r["gradingResult"]["componentResults"]
    )


def test_json_lines_give_the_same_rows():
    a, b = _read(JSON), _read(JSONL)
    cols = ["item", "prompt", "judge", "replicate", "model", "score"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert b["temperature"].isna().all()  # JSON lines carry no provider config
    assert "temperature" not in b.attrs[bt.design.roles.ROLES_ATTR]


def test_select_and_fit_one_model():
    df = _read(JSON, model="model-b", scorers=["contains"])
    assert set(df["model"]) == {"model-b"} and set(df["judge"]) == {"contains"}
    d = bt.validate_design(df, warn=False)
    assert d.counts["item"] == 3 and d.dropped == {"the call errored (in the logs)": 6}
    with pytest.raises(bt.DesignError, match=r"No judge \['exact'\]"):
        _read(JSON, scorers="exact")


def test_foreign_files_get_one_clear_error(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"eval": {"task": "x"}}))
    with pytest.raises(
        bt.DesignError, match="other.json: no results.results list; expected promptfoo results"
    ):
        _read(other)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"a": 1}\n')
    with pytest.raises(bt.DesignError, match="broken.jsonl: a result without provider and vars"):
        _read(broken)
    text = tmp_path / "bad.json"
    text.write_text("not json")
    with pytest.raises(bt.DesignError, match="bad.json: not valid JSON"):
        _read(text)


def test_one_eval_saved_twice_is_read_once_and_said(tmp_path):
    shutil.copy(JSON, tmp_path / "results.json")
    shutil.copy(JSONL, tmp_path / "results.jsonl")  # the same results, as JSON lines
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        both = bt.read_promptfoo(tmp_path)
    said = " ".join(str(w.message) for w in caught)
    assert "results.jsonl: 48 result(s) already read from results.json (same result id)" in said
    pd.testing.assert_frame_equal(both, _read(JSON))
    assert both.attrs["dropped"] == _read(JSON).attrs["dropped"]
    (tmp_path / "empty.jsonl").write_text("")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bt.read_promptfoo([JSON, tmp_path / "empty.jsonl"])
    assert any("empty.jsonl holds no results" in str(w.message) for w in caught)


def test_each_answer_s_length_is_a_column():
    df = _read(JSON)
    lengths = {
        (
            r["vars"] and json.dumps(r["vars"], sort_keys=True),
            r["provider"].get("label") or r["provider"]["id"],
        ): len(r["response"]["output"])
        for r in _raw()
        if r["failureReason"] != 2 and isinstance((r.get("response") or {}).get("output"), str)
    }
    assert df["output_length"].notna().all()
    for (vars_, model), n in list(lengths.items())[:10]:
        rows = df[(df["vars"] == vars_) & (df["model"] == model)]
        assert n in set(rows["output_length"])
