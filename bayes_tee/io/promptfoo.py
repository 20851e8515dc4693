"""promptfoo results -> the long frame: ``bt.read_promptfoo(path)``.

``promptfoo eval -o results.json`` writes ``{"results": {"version": 3, "results": [...]}}``
(``-o results.jsonl``: one result per line). Each result is one call: ``vars`` (the test
case), ``prompt.label``, ``provider`` (``label`` or ``id``: the model), ``score``,
``success``, ``response.output`` (its length in characters is the frame's ``output_length``, a
judge-bias covariate for :func:`bayes_tee.bias_covariates`) and, per assertion,
``gradingResult.componentResults[]`` with ``assertion``
(``type``, ``value``, ``provider`` for model-graded ones), ``score`` and ``pass``. Each
assertion is a judge. With ``--repeat`` promptfoo renumbers ``testIdx`` per repeat and writes
no repeat index, so the item is a hash of ``vars`` and the replicate the order of the repeats.

>>> df = bt.read_promptfoo("results.json")              # doctest: +SKIP
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .._core.exceptions import DesignError
from .long_frame import Unscorable, log_files, long_frame, pick, score_value

EXPECTED = "promptfoo results (-o results.json with results.results[], or -o results.jsonl)"
#: promptfoo's ResultFailureReason: 2 is an error (the provider or the test failed to run).
FAILURE_ERROR = 2
#: Marks the score of an assertion whose call errored.
ERRORED = object()
#: Assertion types graded by a model (promptfoo's model-graded metrics).
MODEL_GRADED = (
    "llm-rubric",
    "g-eval",
    "model-graded-closedqa",
    "model-graded-factuality",
    "factuality",
    "answer-relevance",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "conversation-relevance",
    "select-best",
    "search-rubric",
    "pi",
)


def _provider_name(provider: object) -> str | None:
    if provider is None:
        return None
    if isinstance(provider, dict):
        return provider.get("label") or provider.get("id")
    return str(provider)


def _item(vars_: dict) -> str:
    return hashlib.sha1(json.dumps(vars_, sort_keys=True, default=str).encode()).hexdigest()[:12]


def _results(path: Path) -> tuple[list[dict], dict]:
    """The result records and the config (empty for JSON lines) of one file."""
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise DesignError(f"{path}: not a text file; expected {EXPECTED}.") from None
    try:
        if path.suffix == ".jsonl":
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
            return records, {}
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise DesignError(f"{path}: not valid JSON ({err}); expected {EXPECTED}.") from None
    inner = doc.get("results") if isinstance(doc, dict) else None
    records = inner.get("results") if isinstance(inner, dict) else inner if isinstance(inner, list) else None
    if not isinstance(records, list):
        raise DesignError(f"{path}: no results.results list; expected {EXPECTED}.")
    return records, doc.get("config") or {}


def _temperatures(config: dict) -> dict[str, float]:
    out = {}
    for p in config.get("providers") or []:
        if (
            isinstance(p, dict)
            and isinstance(p.get("config"), dict)
            and p["config"].get("temperature") is not None
        ):
            out[_provider_name(p)] = float(p["config"]["temperature"])
    return out


class _Judges:
    """Names for assertions: the metric name when set, else the type (with its grader for a
    model-graded one), numbered when one test suite has several of the same kind.
    """

    def __init__(self) -> None:
        self.base: dict[tuple, str] = {}

    def key(self, assertion: dict, grader: str | None) -> tuple:
        value = json.dumps(assertion.get("value"), sort_keys=True, default=str)
        return (assertion.get("type"), value, grader, assertion.get("metric"))

    def add(self, key: tuple) -> None:
        if key not in self.base:
            kind, _, grader, metric = key
            self.base[key] = metric or (f"{kind} ({grader})" if grader else str(kind))

    def names(self) -> dict[tuple, str]:
        counts = Counter(self.base.values())
        seen: Counter = Counter()
        out = {}
        for key, name in self.base.items():
            if counts[name] > 1:
                seen[name] += 1
                name = f"{name} #{seen[name]}"
            out[key] = name
        return out


def read_promptfoo(
    path: str | Path | Sequence[str | Path],
    scorers: str | Sequence[str] | None = None,
    *,
    model: str | None = None,
) -> pd.DataFrame:
    """Read promptfoo eval results into the long frame ``fit_posterior`` takes.

    Parameters
    ----------
    path : str, Path or list
        ``results.json`` or ``results.jsonl`` from ``promptfoo eval -o``, a folder of them or a
        list.
    scorers : str or list of str, optional
        Keep these judges (assertion names as in the ``judge`` column; default all).
    model : str, optional
        Keep one provider's rows.

    Returns
    -------
    pandas.DataFrame
        Columns ``item, prompt, judge, replicate, model, temperature, score, assertion``: one
        row per call x assertion; item = a hash of the test's ``vars`` (``vars`` kept as
        JSON), prompt = ``prompt.label``, model = provider label or id, temperature from the
        provider's config where the file has it. A result with no assertion gives one row
        with judge ``score``. Errored calls are counted in ``attrs["dropped"]`` and said once.

    Raises
    ------
    DesignError
        For a file that is not promptfoo output, naming it.

    Examples
    --------
    >>> import bayes_tee as bt
    >>> df = bt.read_promptfoo("results.json")              # doctest: +SKIP
    >>> df.groupby("judge").score.mean()                     # doctest: +SKIP
    """
    said: list[str] = []
    files = log_files(path, (".json", ".jsonl"), "promptfoo results", said)
    dropped: Counter = Counter()
    notes: list[str] = []
    judges = _Judges()
    pending = []
    seen: dict[str, str] = {}  # result id -> the file it was first read from
    repeated: Counter = Counter()
    for file in files:
        records, config = _results(file)
        temps = _temperatures(config)
        if not records:
            said.append(f"{file.name} holds no results: nothing read from it.")
        for r in records:
            if not isinstance(r, dict) or "provider" not in r or not ({"vars", "testCase"} & set(r)):
                raise DesignError(f"{file}: a result without provider and vars; expected {EXPECTED}.")
            rid = r.get("id")
            if rid is not None and str(rid) in seen:  # one eval saved twice (.json and .jsonl)
                repeated[file.name, seen[str(rid)]] += 1
                continue
            if rid is not None:
                seen[str(rid)] = file.name
            vars_ = r.get("vars") or (r.get("testCase") or {}).get("vars") or {}
            prompt = r.get("prompt") or {}
            base = {
                "item": _item(vars_),
                "prompt": prompt.get("label") or prompt.get("raw") or str(r.get("promptId")),
                "model": _provider_name(r["provider"]),
                "test": int(r.get("testIdx", 0)),
                "vars": json.dumps(vars_, sort_keys=True, default=str),
            }
            base["temperature"] = temps.get(base["model"], float("nan"))
            output = (r.get("response") or {}).get("output")
            # the answer's length in characters: a judge-bias covariate (bt.bias_covariates)
            base["output_length"] = float(len(output)) if isinstance(output, str) else float("nan")
            grading = r.get("gradingResult") or {}
            components = grading.get("componentResults") or []
            test_case = r.get("testCase") or {}
            default_grader = _provider_name((test_case.get("options") or {}).get("provider"))
            if r.get("failureReason") == FAILURE_ERROR or (r.get("error") and not components):
                # the call's assertions, each a score lost (counted for the judges kept)
                components = [{"assertion": a, "score": ERRORED} for a in test_case.get("assert") or []]
                if not components:
                    pending.append((base, ("score",), ERRORED, None))
            elif not components:
                pending.append((base, ("score",), r.get("score", r.get("success")), None))
            for c in components:
                assertion = c.get("assertion") or {}
                if not assertion:
                    continue  # promptfoo's own summary entries
                graded = assertion.get("type") in MODEL_GRADED
                grader = _provider_name(assertion.get("provider")) or (default_grader or "default grader")
                key = judges.key(assertion, grader if graded else None)
                judges.add(key)
                value = c.get("score", c.get("pass"))
                pending.append((base, key, value, str(assertion.get("value"))))
    names = judges.names() | {("score",): "score"}
    keep = set(pick(names.values(), scorers, "judge"))
    rows = []
    for base, key, value, text in pending:
        judge = names[key]
        if judge not in keep:
            continue
        if value is ERRORED:
            dropped[base["model"], "the call errored"] += 1
            continue
        try:
            rows.append({**base, "judge": judge, "score": score_value(value), "assertion": text})
        except Unscorable as why:
            dropped[base["model"], str(why)] += 1
    frame = pd.DataFrame(rows)
    if not frame.empty:  # the repeats: order of testIdx within a (vars, prompt, provider, judge)
        frame = frame.sort_values("test", kind="stable")
        frame["replicate"] = frame.groupby(["item", "prompt", "model", "judge"]).cumcount() + 1
        if frame["replicate"].max() > 1:
            notes.append("replicate: the order of promptfoo's --repeat runs (testIdx) within a call")
        frame = frame.sort_index().drop(columns="test")
        if frame["output_length"].isna().all():  # no result kept its response text
            frame = frame.drop(columns="output_length")
    for (name, earlier), n in repeated.items():
        said.append(f"{name}: {n} result(s) already read from {earlier} (same result id): read once.")
    source = f"{len(files)} promptfoo result file(s)"
    return long_frame(frame.to_dict("records"), dropped, notes, source, model=model, said=said)
