"""The Inspect AI early-stopping hook on a real (offline, mock-model) Inspect run: the epochs not
needed once the interval target is met are skipped, the log says why, and the scores kept fit
the same theta as the hook reported.
"""

import gc
import warnings

import numpy as np
import pytest

import bayes_tee as bt

inspect_ai = pytest.importorskip("inspect_ai", reason="inspect-ai (the 'inspect' extra) runs the task")
from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.scorer import Score, mean, scorer  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402

from bayes_tee.adaptive.inspect_hook import TEEEarlyStopping  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    # Inspect's scheduler leaves anyio streams for the garbage collector: its teardown, not ours
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]
N, EPOCHS = 40, 6
ITEM = np.random.default_rng(0).normal(0.6, 0.15, N)


@scorer(metrics=[mean()])
def noisy():
    """A judge whose score is the item's level plus call noise (deterministic per call)."""

    async def score(state, target):
        i = int(state.sample_id)
        rng = np.random.default_rng(1000 * i + state.epoch)
        return Score(value=float(ITEM[i] + rng.normal(0, 0.3)))

    return score


def _respond(messages, tools, tool_choice, config):
    out = ModelOutput.from_content(model="mockllm", content="an answer")
    out.usage = ModelUsage(input_tokens=12, output_tokens=6, total_tokens=18)  # no tokenizer download
    return out


def _run(hook, tmp_path):
    task = Task(
        dataset=[Sample(input=f"q{i}", target="a", id=i) for i in range(N)],
        solver=generate(), scorer=noisy(), epochs=EPOCHS, early_stopping=hook,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (log,) = eval(
            task,
            model=get_model("mockllm/model", custom_outputs=_respond),
            log_dir=str(tmp_path),
            display="none",
            max_samples=4,
        )
        gc.collect()  # Inspect's scheduler leaves anyio streams behind: finalise them here
    return log


def test_epochs_stop_once_the_interval_is_narrow_enough(tmp_path):
    hook = TEEEarlyStopping(target=0.06, min_scores=60, every=20, random_seed=1)
    log = _run(hook, tmp_path)
    summary = log.results.early_stopping
    assert summary.manager == "bayes_tee"
    meta = summary.metadata
    assert meta["stopped"] and meta["met"] and meta["metric"] <= 0.06
    assert summary.early_stops and all(s.reason == meta["stopped"] for s in summary.early_stops)
    assert len(summary.early_stops) == hook.skipped and meta["scores"] + hook.skipped <= N * EPOCHS
    assert meta["scores"] < N * EPOCHS
    # the hook's theta is a fit of the scores it kept: it covers the truth's neighbourhood
    assert meta["theta_low"] < float(ITEM.mean()) + 0.1 and meta["theta_high"] > float(ITEM.mean()) - 0.1


def test_a_target_never_met_skips_nothing(tmp_path):
    hook = TEEEarlyStopping(target=1e-4, min_scores=200, every=1000, random_seed=1)
    log = _run(hook, tmp_path)
    assert not log.results.early_stopping.early_stops and hook.skipped == 0
    assert log.results.early_stopping.metadata["met"] is False


def test_bad_settings_are_refused():
    with pytest.raises(bt.DesignError, match="positive number"):
        TEEEarlyStopping(target=0)
    with pytest.raises(bt.DesignError, match="skip must be"):
        TEEEarlyStopping(target=0.1, skip="items")
