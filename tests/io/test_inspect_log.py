"""bt.read_inspect on real Inspect AI logs, made in the test by Inspect itself on its offline mock
provider (scripts/make_inspect_logs.py): epochs, a wording task argument, three scorers, an
errored sample, unparseable grader verdicts and a reviewer's score edits.
"""

import importlib.util
import json
import math
import re
import shutil
import warnings
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import bayes_tee as bt
from bayes_tee.io import archive, inspect_log
from bayes_tee.io.long_frame import score_value

pytest.importorskip("inspect_ai", reason="inspect-ai (the 'inspect' extra) makes the logs")
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_inspect_logs.py"
MODELS = {"mockllm/model-a": 0.6, "mockllm/model-b": 0.45}


def _generator():
    spec = importlib.util.spec_from_file_location("make_inspect_logs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """Two models x two wordings, 6 items x 3 epochs; the first log in .json, edited."""
    out = tmp_path_factory.mktemp("inspect_logs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        paths = _generator().make_logs(out, n_items=6, epochs=3, models=MODELS, json_log=True)
    return out, paths


def _read(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        return bt.read_inspect(*args, **kwargs)


def _truth(paths):
    """Scores, errors and edits counted through inspect-ai's own reader."""
    from inspect_ai.log import read_eval_log

    scored = errored = unscored = edited = 0
    for path in paths:
        log = read_eval_log(str(path))
        n_scorers = len(log.eval.scorers)
        for s in log.samples:
            if s.error:
                errored += n_scorers
                continue
            for score in s.scores.values():
                value = score.value
                if isinstance(value, float) and math.isnan(value):
                    unscored += 1
                else:
                    scored += 1
                    edited += any(h.provenance is not None for h in score.history)
    return scored, errored, unscored, edited


def test_both_engines_read_the_same_frame(logs):
    folder, paths = logs
    direct = _read(folder, engine="archive")
    through = _read(folder, engine="inspect")
    pd.testing.assert_frame_equal(direct, through)
    assert direct.attrs["dropped"] == through.attrs["dropped"]


def test_rows_losses_and_labels_match_inspects_own_reading(logs):
    folder, paths = logs
    df, said = _said(folder)
    assert re.search("could not be used", said), said
    scored, errored, unscored, edited = _truth(paths)
    assert len(df) == scored
    assert df.attrs["dropped"]["the sample errored"] == errored == 4 * 3  # q2 epoch 2, every log
    assert df.attrs["dropped"]["the score is unscored (NaN, grader_failed)"] == unscored > 0
    assert df["label"].notna().sum() == edited == 2
    flipped = df[df["label"].notna()]
    assert ((flipped["score"] - flipped["label"]).abs() == 1).all()  # the reviewer flipped C <-> I
    assert list(df.columns[:7]) == ["item", "prompt", "judge", "replicate", "model", "temperature", "score"]
    assert set(df["judge"]) == {"match", "includes", "model_graded_qa (mockllm/grader)"}
    assert set(df["prompt"]) == {"plain", "formal"} and set(df["replicate"]) == {1, 2, 3}
    assert set(df["model"]) == set(MODELS) and (df["temperature"] == 0.7).all()
    assert set(df["score"]) <= {0.0, 1.0}
    roles = df.attrs[bt.design.roles.ROLES_ATTR]
    assert roles == {
        "outcome": "score",
        "item": "item",
        "prompt": "prompt",
        "judge": "judge",
        "replicate": "replicate",
    }


def test_answer_lengths_are_inspects_completions(logs):
    from inspect_ai.log import read_eval_log

    folder, paths = logs
    df = _read(paths[1], engine="archive")
    log = read_eval_log(str(paths[1]))
    truth = {(str(s.id), s.epoch): len(s.output.completion) for s in log.samples if not s.error}
    got = df.groupby(["item", "replicate"])["output_length"].first()
    assert got.to_dict() == {(str(k[0]), k[1]): v for k, v in truth.items()}
    assert df["output_length"].dtype.kind in "if"
    # the covariate helper takes the column as it is: a length covariate for the judge-bias model
    frame = bt.bias_covariates(df, length="output_length")
    assert abs(frame["length"].mean()) < 1e-9
    inspect = _read(paths[1], engine="inspect")
    assert inspect["output_length"].tolist() == df["output_length"].tolist()


def test_scores_are_the_logged_values(logs):
    folder, paths = logs
    df = _read(paths[1], engine="archive")  # an .eval archive
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(paths[1]))
    expected = {
        (s.id, s.epoch, name): score_value(score.value)
        for s in log.samples
        if not s.error
        for name, score in s.scores.items()
        if not (isinstance(score.value, float) and math.isnan(score.value))
    }
    got = {(r.item, r.replicate, r.judge.split(" ")[0]): r.score for r in df.itertuples()}
    assert got == expected


def test_zstandard_members_are_read_without_zipfile_support(logs, monkeypatch):
    folder, paths = logs
    with zipfile.ZipFile(paths[1]) as z:
        assert {i.compress_type for i in z.infolist()} == {archive.ZSTD_METHOD}

    def unsupported(self, name, pwd=None):
        raise NotImplementedError("That compression method is not supported")

    monkeypatch.setattr(archive, "_zstd_std", None)  # as on Python < 3.14
    monkeypatch.setattr(zipfile.ZipFile, "read", unsupported)
    with archive.ZipJson(paths[1]) as z:
        header = z.read("header.json")
    assert header["eval"]["task"] == "qa"
    monkeypatch.undo()
    assert _read(paths[1], engine="archive").equals(_read(paths[1], engine="inspect"))


def test_a_damaged_member_is_refused(logs, tmp_path, monkeypatch):
    folder, paths = logs
    bad = tmp_path / "damaged.eval"
    data = bytearray(paths[1].read_bytes())
    with zipfile.ZipFile(paths[1]) as z:
        info = z.getinfo("header.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for k in range(8, info.compress_size - 8, 7):  # damage the compressed bytes, not the frame header
        data[start + k] ^= 0x5A
    bad.write_bytes(bytes(data))

    def unsupported(self, name, pwd=None):
        raise NotImplementedError("That compression method is not supported")

    monkeypatch.setattr(archive, "_zstd_std", None)
    monkeypatch.setattr(zipfile.ZipFile, "read", unsupported)
    with pytest.raises(bt.DesignError, match=r"damaged.eval:header.json: damaged archive member"):
        with archive.ZipJson(bad) as z:
            z.read("header.json")


def test_prompt_from_a_task_argument_or_metadata_key(logs):
    folder, _ = logs
    auto = _read(folder)
    named = _read(folder, prompt="wording")
    pd.testing.assert_frame_equal(auto, named)
    assert "wording" in " ".join(auto.attrs["notes"])
    # the wording differs between the logs: a metadata prompt facet would pool the wordings
    with pytest.raises(bt.DesignError, match=r"differ in task argument\(s\) \['wording'\].*prompt='topic'"):
        _read(folder, prompt="topic", category="topic")
    by_topic = _read(sorted(folder.iterdir())[0], prompt="topic", category="topic")
    assert set(by_topic["prompt"]) == {"arithmetic", "geography", "science"}
    assert (by_topic["prompt"] == by_topic["category"]).all()
    with pytest.raises(
        bt.DesignError, match=r"neither a task argument .*wording.* nor a sample metadata key .*topic"
    ):
        _read(folder, prompt="style")


def test_scorers_and_model_select(logs):
    folder, _ = logs
    df = _read(folder, scorers=["match"], model="mockllm/model-b")
    assert set(df["judge"]) == {"match"} and set(df["model"]) == {"mockllm/model-b"}
    assert bt.design.roles.ROLES_ATTR in df.attrs and "judge" not in df.attrs[bt.design.roles.ROLES_ATTR]
    assert df.attrs["dropped"] == {"the sample errored": 2}  # one match score in each of model-b's logs
    with pytest.raises(bt.DesignError, match=r"No scorer \['exact'\].*match"):
        _read(folder, scorers=["exact"])
    with pytest.raises(bt.DesignError, match="No model 'gpt'"):
        _read(folder, model="gpt")


def test_several_models_are_refused_by_the_fit(logs):
    folder, _ = logs
    df = _read(folder)
    with pytest.raises(bt.DesignError, match="several models in column 'model'.*mockllm/model-a"):
        bt.validate_design(df)
    one = df[df["model"] == "mockllm/model-a"]
    d = bt.validate_design(one, warn=False)
    assert d.counts["item"] == 6 and d.counts["judge"] == 3
    # the design counts the logs' losses of the model it holds
    assert d.dropped["the sample errored (in the logs)"] == 2 * 3


@pytest.mark.slow
def test_first_fit_is_one_line(logs):
    folder, paths = logs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bt.DesignWarning)
        post = bt.fit_posterior(
            bt.read_inspect(folder, model="mockllm/model-a"), random_seed=1, progressbar=False
        )
    assert post.design.roles.judge == "judge" and post.design.roles.replicate == "replicate"
    assert "the sample errored (in the logs)" in post.design.dropped
    assert set(post.shares()["component"]) >= {"item", "prompt", "judge", "replicate"}


def test_foreign_files_get_one_clear_error(logs, tmp_path):
    csv = tmp_path / "scores.csv"
    csv.write_text("a,b\n1,2\n")
    with pytest.raises(bt.DesignError, match=r"scores.csv: expected an Inspect AI log"):
        _read(csv)
    notzip = tmp_path / "run.eval"
    notzip.write_text("hello")
    with pytest.raises(bt.DesignError, match=r"run.eval: not a zip archive.*expected an Inspect AI log"):
        _read(notzip)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"results": []}))
    with pytest.raises(bt.DesignError, match=r"other.json: expected an Inspect AI log"):
        _read(other)
    with pytest.raises(bt.DesignError, match="No file or folder .*missing"):
        _read(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(bt.DesignError, match="No Inspect AI logs found"):
        _read(tmp_path / "empty")


def test_a_folder_ignores_inspects_listing_and_reads_subfolders(logs, tmp_path):
    folder, paths = logs
    nested = tmp_path / "runs" / "a"
    nested.mkdir(parents=True)
    for p in paths:
        shutil.copy(p, nested / p.name)
    (tmp_path / "runs" / "logs.json").write_text(json.dumps({"x": 1}))  # inspect's log listing
    pd.testing.assert_frame_equal(_read(tmp_path / "runs"), _read(folder))


def test_a_majority_vote_grader_is_warned():
    header = {
        "eval": {
            "task": "qa",
            "model": "m",
            "scorers": [{"name": "model_graded_qa", "options": {"model": ["a/x", "b/y", "c/z"]}}],
        }
    }
    with pytest.warns(bt.DesignWarning, match="majority-votes 3 graders"):
        judges = inspect_log._judges(header, set())
    assert judges == {"model_graded_qa": "model_graded_qa (a/x+b/y+c/z)"}


def test_score_values():
    assert [score_value(v) for v in ("C", "I", "P", "N", "c", True, False, 3, 0.25, "0.5")] == [
        1.0,
        0.0,
        0.5,
        0.0,
        1.0,
        1.0,
        0.0,
        3.0,
        0.25,
        0.5,
    ]
    for bad, why in ((float("nan"), "unscored"), (None, "empty"), ("maybe", "text"), ([1], "list")):
        with pytest.raises(ValueError, match=why):
            score_value(bad)


def _said(*args, **kwargs) -> tuple[pd.DataFrame, str]:
    """The frame and every DesignWarning the reader said, joined."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = bt.read_inspect(*args, **kwargs)
    return df, "\n".join(str(w.message) for w in caught if issubclass(w.category, bt.DesignWarning))


def _rewrite(path: Path, out: Path, **changes) -> Path:
    """A copy of a log with its eval fields changed (a new run, another task) or no samples."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(path))
    samples = changes.pop("samples", log.samples)
    log.eval = log.eval.model_copy(update=changes)
    log.samples = [s.model_copy(update={"uuid": f"{s.uuid}-new"}) for s in samples]
    write_eval_log(log, str(out))
    return out


def test_a_log_read_twice_is_read_once_and_said(logs, tmp_path):
    folder, paths = logs
    one = paths[1]
    reference = _read(one)
    copies = tmp_path / "copies"
    copies.mkdir()
    shutil.copy(one, copies / "a.eval")
    shutil.copy(one, copies / "b.eval")  # a byte-for-byte copy under another name
    twice, said = _said(copies)
    assert re.search(r"b.eval is a copy of .*a.eval: read once", said), said
    assert len(twice) == len(reference) and twice.attrs["dropped"] == reference.attrs["dropped"]
    # the same run saved as .eval and as .json (same eval_id, other bytes)
    from inspect_ai.log import read_eval_log, write_eval_log

    formats = tmp_path / "formats"
    formats.mkdir()
    shutil.copy(one, formats / "run.eval")
    write_eval_log(read_eval_log(str(one)), str(formats / "run.json"))
    both, said = _said(formats)
    assert re.search(r"holds the same run \(eval_id", said), said
    assert len(both) == len(reference)


def test_separate_runs_of_one_configuration_are_further_replicates(logs, tmp_path):
    folder, paths = logs
    one = paths[1]
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(one, runs / "a.eval")
    _rewrite(one, runs / "b.eval", eval_id="another-run", run_id="another")
    df, said = _said(runs)
    assert re.search(r"b.eval: \d+ sample\(s\) repeat the \(item, epoch\).*further", said), said
    assert len(df) == 2 * len(_read(one))
    assert sorted(df["replicate"].unique()) == [1, 2, 3, 4, 5, 6]
    assert not df.duplicated(["item", "judge", "replicate"]).any()


def test_tasks_sharing_sample_ids_are_different_items(logs, tmp_path):
    folder, paths = logs
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    shutil.copy(paths[1], tasks / "a.eval")
    _rewrite(paths[1], tasks / "b.eval", eval_id="b", task="other_benchmark")
    df, said = _said(tasks, prompt="wording")
    assert re.search("share 6 sample id\\(s\\) but are not the prompt facet", said), said
    assert df["item"].str.startswith(("qa/", "other_benchmark/")).all()
    assert df["item"].nunique() == 12
    # the same ids as the prompt facet (the task name): one item set, and said
    df, said = _said(tasks)
    assert re.search("a sample id is one item across them", said), said
    assert df["item"].nunique() == 6 and set(df["prompt"]) == {"qa", "other_benchmark"}


def test_an_empty_log_and_an_unknown_category_key_are_said(logs, tmp_path):
    folder, paths = logs
    some = tmp_path / "some"
    some.mkdir()
    shutil.copy(paths[1], some / "a.eval")
    _rewrite(paths[1], some / "empty.eval", eval_id="empty", samples=[])
    df, said = _said(some)
    assert re.search("empty.eval holds no samples", said), said
    assert len(df) == len(_read(paths[1]))
    with pytest.raises(bt.DesignError, match=r"category='topik' is not a sample metadata key.*\['topic'\]"):
        _read(paths[1], category="topik")
