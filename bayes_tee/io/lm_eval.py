"""lm-evaluation-harness samples -> the long frame: ``bt.read_lm_eval(path)``.

``lm_eval ... --log_samples --output_path out`` writes, per model folder,
``samples_<task>_<timestamp>.jsonl`` (one line per document and filter: ``doc_id``,
``doc_hash``, ``prompt_hash``, ``filter``, ``metrics`` and one key per metric) beside
``results_<timestamp>.json`` (``model_name``, ``config`` with ``gen_kwargs``, ``configs``
per task with ``doc_to_text`` and ``generation_kwargs``). There is no judge facet: each
metric (with its filter, as ``metric,filter`` when not ``none``) is a scoring rule, in the
``judge`` column. The item is the document's hash (shared by tasks over the same documents);
runs of the same task and model are the replicates, in time order.

>>> df = bt.read_lm_eval("out/")                        # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import pandas as pd

from .._core.exceptions import DesignError
from .long_frame import Unscorable, log_files, long_frame, pick, score_value

SAMPLES = re.compile(
    r"^samples_(?P<task>.+)_(?P<stamp>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$"
)
EXPECTED = "lm-evaluation-harness samples (samples_<task>_<timestamp>.jsonl from --log_samples)"
#: The task-config keys that make up a prompt template.
TEMPLATE_KEYS = (
    "doc_to_text",
    "doc_to_choice",
    "description",
    "num_fewshot",
    "fewshot_config",
    "target_delimiter",
)


def _results_beside(path: Path, stamp: str) -> dict:
    results = path.with_name(f"results_{stamp}.json")
    if not results.exists():
        return {}
    try:
        return json.loads(results.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DesignError(f"{results}: not valid JSON ({err}); expected lm-eval's results file.") from None


def _kwargs(value: object) -> dict:
    """lm-eval's model_args / gen_kwargs: a dict, or the command line's ``"k=v,k2=v2"``."""
    if isinstance(value, str):
        return dict(kv.split("=", 1) for kv in value.split(",") if "=" in kv)
    return value if isinstance(value, dict) else {}


def _model(results: dict, path: Path) -> str:
    """The model: ``pretrained=`` or ``model=`` of model_args, else the model type, else the
    results' ``model_name`` (random for some model types), else the folder's name.
    """
    config = results.get("config") or {}
    args = _kwargs(config.get("model_args"))
    return str(
        args.get("pretrained")
        or args.get("model")
        or config.get("model")
        or results.get("model_name")
        or path.parent.name
    )


def _temperature(results: dict, task: str) -> float:
    task_config = (results.get("configs") or {}).get(task) or {}
    for kwargs in ((results.get("config") or {}).get("gen_kwargs"), task_config.get("generation_kwargs")):
        kwargs = _kwargs(kwargs)
        if kwargs.get("temperature") is not None:
            return float(kwargs["temperature"])
    return float("nan")


def _template(results: dict, task: str) -> str:
    task_config = (results.get("configs") or {}).get(task)
    if not task_config:
        raise DesignError(
            f"prompt='template' needs the results_<timestamp>.json beside the samples of task {task!r}."
        )
    parts = {k: task_config.get(k) for k in TEMPLATE_KEYS}
    parts["system_instruction"] = results.get("system_instruction")
    digest = hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return f"{task}@{digest}"


def _answer_length(doc: dict) -> int | None:
    """A generated answer's length in characters (``filtered_resps``' text; ``None`` for a
    log-likelihood task, whose responses are numbers).

    >>> _answer_length({"filtered_resps": ["Paris"]}), _answer_length({"filtered_resps": [[-1.2, True]]})
    (5, None)
    """
    resps = doc.get("filtered_resps")
    first = resps[0] if isinstance(resps, list) and resps else resps
    return len(first) if isinstance(first, str) else None


def read_lm_eval(
    path: str | Path | Sequence[str | Path],
    prompt: Literal["task", "template"] = "task",
    scorers: str | Sequence[str] | None = None,
    *,
    model: str | None = None,
) -> pd.DataFrame:
    """Read lm-evaluation-harness sample logs into the long frame ``fit_posterior`` takes.

    Parameters
    ----------
    path : str, Path or list
        An output folder (searched recursively), a ``samples_*.jsonl`` file or a list.
    prompt : {"task", "template"}
        The prompt-variant facet: the task name (prompt variants as tasks over the same
        documents), or the task's prompt template (``doc_to_text``, description, few-shot
        settings and system instruction, from the results file), for one task run under
        several templates. ``prompt_hash`` is not offered: it hashes the prompt filled with
        each document, so it names a document x template pair, not a template.
    scorers : str or list of str, optional
        Keep these metrics (``acc``, ``exact_match,strict-match``...; default all).
    model : str, optional
        Keep one model's rows (the ``model`` column: ``pretrained=`` or ``model=`` of the
        run's model_args, else the model type).

    Returns
    -------
    pandas.DataFrame
        Columns ``item, prompt, judge, replicate, model, temperature, score, task, doc_id,
        run``. Metrics with no per-document value (corpus-level ones such as BLEU keep a tuple
        per document) are counted in ``attrs["dropped"]`` and said once.

    Raises
    ------
    DesignError
        For a file that is not an lm-eval samples file, naming it.

    Examples
    --------
    >>> import bayes_tee as bt
    >>> df = bt.read_lm_eval("out/", prompt="task")        # doctest: +SKIP
    """
    if prompt not in ("task", "template"):
        extra = " (prompt_hash hashes each filled prompt: use 'template')" if prompt == "prompt_hash" else ""
        raise DesignError(f"prompt must be 'task' or 'template', got {prompt!r}{extra}.")
    said: list[str] = []
    files = log_files(path, (".jsonl",), "lm-eval samples files", said)
    dropped: Counter = Counter()
    notes: list[str] = []
    rows = []
    for file in files:
        match = SAMPLES.match(file.name)
        if match is None:
            raise DesignError(f"{file}: expected {EXPECTED}; the file name does not match.")
        task, stamp = match["task"], match["stamp"]
        results = _results_beside(file, stamp)
        if not results:
            notes.append(f"{file.name}: no results_{stamp}.json beside it; model = the folder name")
        name = _model(results, file)
        base = {
            "prompt": task if prompt == "task" else _template(results, task),
            "model": name,
            "temperature": _temperature(results, task),
            "task": task,
            "run": stamp,
        }
        lines = file.read_text().splitlines()
        if not any(line.strip() for line in lines):
            said.append(f"{file.name} holds no samples: nothing read from it.")
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as err:
                raise DesignError(f"{file}, line {n}: not valid JSON ({err}); expected {EXPECTED}.") from None
            if not isinstance(doc, dict) or "doc_id" not in doc or "metrics" not in doc:
                raise DesignError(f"{file}, line {n}: no doc_id and metrics; expected {EXPECTED}.")
            item = str(doc.get("doc_hash") or f"{task}:{doc['doc_id']}")[:16]
            filt = doc.get("filter") or "none"
            length = _answer_length(doc)
            for metric in doc["metrics"]:
                judge = metric if filt == "none" else f"{metric},{filt}"
                try:
                    value = score_value(doc.get(metric))
                except Unscorable:
                    dropped[name, f"the metric {metric} has no per-document value"] += 1
                    continue
                rows.append(
                    {**base, "item": item, "judge": judge, "score": value, "doc_id": doc["doc_id"],
                     "output_length": length}
                )  # fmt: skip
    frame = pd.DataFrame(rows)
    if not frame.empty:
        keep = pick(frame["judge"], scorers, "metric")
        frame = frame[frame["judge"].isin(keep)]
        runs = frame.groupby(["task", "model"])["run"].transform(lambda r: pd.factorize(r, sort=True)[0] + 1)
        frame = frame.assign(replicate=runs)
        if frame["replicate"].max() > 1:
            notes.append("replicate: repeated runs of a task and model, in time order")
    source = f"{len(files)} lm-eval samples file(s)"
    return long_frame(frame.to_dict("records"), dropped, notes, source, model=model, said=said)
