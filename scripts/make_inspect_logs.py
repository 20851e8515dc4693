"""Make real Inspect AI logs offline, on Inspect's mock provider (no network, no API key).

A question-answering task with a ``wording`` task argument (two prompt wordings), several
epochs and three scorers: ``match``, ``includes`` and ``model_graded_qa`` graded by a mock
grader bound to the ``grader`` role. The mock model answers correctly with a probability that
depends on the item, the wording and the model; the mock grader flips 15% of its verdicts and
returns an unparseable verdict on every ``grader_fail_every``-th call (the sample is then
unscored, as with a real grader). One call errors (``error_item``, epoch 2) and, when
``edits`` is set, two model-graded verdicts are corrected by a reviewer with ``edit_score``
(the human label for judge calibration). One log per model x wording.

    python scripts/make_inspect_logs.py notebooks/data/inspect_logs --items 24 --epochs 3

The tests call :func:`make_logs` into a temporary folder when inspect-ai is installed.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.log import ProvenanceData, edit_score, read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import ScoreEdit, includes, match, model_graded_qa
from inspect_ai.solver import Generate, TaskState, generate, prompt_template, solver

WORDINGS = {
    "plain": "{prompt}",
    "formal": "Please answer the following question with one word or number.\n\n{prompt}",
}
TOPICS = ("arithmetic", "geography", "science")


def _uniform(*key: object) -> float:
    digest = hashlib.sha256("|".join(map(str, key)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _output(text: str) -> ModelOutput:
    out = ModelOutput.from_content(model="mockllm", content=text)
    out.usage = ModelUsage(input_tokens=12, output_tokens=6, total_tokens=18)  # no tokenizer download
    return out


def _questions(n_items: int) -> list[tuple[str, str, str]]:
    return [
        (f"Question {i + 1}: what is {i + 2} + {i + 3}?", str(2 * i + 5), TOPICS[i % 3])
        for i in range(n_items)
    ]


def _answerer(model: str, skill: float):
    calls = {"n": 0}

    def respond(messages, tools, tool_choice, config) -> ModelOutput:
        calls["n"] += 1
        text = messages[-1].text
        formal = text.startswith("Please")
        for question, answer, _ in _questions(1000):
            if question in text:
                easiness = _uniform("item", question) - 0.5  # an item effect shared by all calls
                p = skill + 0.6 * easiness + (0.1 if formal else 0.0)
                correct = _uniform(model, text, calls["n"]) < p
                return _output(f"The answer is {answer}." if correct else "I am not sure.")
        return _output("?")

    return respond


def _grader(name: str, fail_every: int):
    calls = {"n": 0}

    def respond(messages, tools, tool_choice, config) -> ModelOutput:
        calls["n"] += 1
        if fail_every and calls["n"] % fail_every == 0:
            return _output("I cannot grade this submission.")
        good = "The answer is" in messages[-1].text
        flip = _uniform(name, calls["n"]) < 0.15
        return _output(f"The submission was read.\nGRADE: {'C' if good != flip else 'I'}")

    return respond


@solver
def _fail_on(item: str, epoch: int):
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if state.sample_id == item and state.epoch == epoch:
            raise RuntimeError("simulated provider failure")
        return state

    return solve


@task
def qa(wording: str = "plain", n_items: int = 6, error_item: str = "") -> Task:
    """The question-answering task; ``wording`` picks the prompt template."""
    return Task(
        dataset=[
            Sample(id=f"q{i + 1}", input=q, target=a, metadata={"topic": topic})
            for i, (q, a, topic) in enumerate(_questions(n_items))
        ],
        solver=[_fail_on(error_item, 2), prompt_template(WORDINGS[wording]), generate()],
        scorer=[match(location="any"), includes(), model_graded_qa(model_role="grader")],
    )


def make_logs(
    out: str | Path,
    n_items: int = 6,
    epochs: int = 3,
    models: dict[str, float] | None = None,
    grader_fail_every: int = 9,
    error_item: str = "q2",
    edits: bool = True,
    json_log: bool = False,
) -> list[Path]:
    """Run the task for every model x wording into ``out``; return the log paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    models = models or {"mockllm/model": 0.6}
    paths = []
    for m, (model, skill) in enumerate(models.items()):
        for w, wording in enumerate(WORDINGS):
            logs = eval(
                qa(wording=wording, n_items=n_items, error_item=error_item),
                model=get_model(model, custom_outputs=_answerer(model, skill)),
                model_roles={
                    "grader": get_model("mockllm/grader", custom_outputs=_grader(model, grader_fail_every))
                },
                epochs=epochs,
                temperature=0.7,
                fail_on_error=False,
                log_dir=str(out),
                log_format="json" if json_log and m == w == 0 else "eval",
                display="none",
            )
            paths.append(Path(logs[0].location))
    if edits:  # a reviewer corrects two grader verdicts in the first log
        log = read_eval_log(paths[0])
        reviewer = ProvenanceData(author="reviewer", reason="checked by hand")
        for sample in [s for s in log.samples if s.scores and "model_graded_qa" in s.scores][:2]:
            old = sample.scores["model_graded_qa"].value
            edit = ScoreEdit(value="I" if old == "C" else "C", provenance=reviewer)
            edit_score(log, sample.id, "model_graded_qa", edit, epoch=sample.epoch)
        write_eval_log(log, paths[0])
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--items", type=int, default=6)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="write the first log as .json")
    args = parser.parse_args()
    for path in make_logs(args.out, n_items=args.items, epochs=args.epochs, json_log=args.json):
        print(path)


if __name__ == "__main__":
    main()
