"""Inspect AI logs -> the long frame: ``bt.read_inspect(logs)``.

One Inspect log is one task run on one model: an ``.eval`` archive (``header.json``,
``summaries.json``, ``samples/{id}_epoch_{n}.json``; Zstandard members since 0.3.2xx) or one
``.json`` document. Its samples are the calls: item = sample ``id``, replicate = ``epoch``,
model = ``eval.model``, temperature = ``plan.config.temperature`` (else
``eval.model_generate_config.temperature``), and one row per scorer in ``scores``: the judge.
A model-graded scorer's judge names its grader (``eval.model_roles``, or the scorer's own
``model`` option). With ``inspect-ai`` installed (``pip install bayes_tee[inspect]``) its
readers are used; without it the archive is read directly (:mod:`bayes_tee.io.archive`).

>>> df = bt.read_inspect("logs/", prompt="wording")       # doctest: +SKIP
>>> post = bt.fit_posterior(df)                           # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Literal

import pandas as pd

from .._core.exceptions import DesignError, DesignWarning
from .archive import ZipJson
from .long_frame import Unscorable, log_files, long_frame, pick, score_value

#: Sample fields a reader skips: the transcript, which holds nearly all of a log's bytes (the
#: model's ``output`` is read for its length, :func:`output_lengths`, then dropped).
SKIPPED = {"events", "events_data", "messages", "attachments", "store", "output"}
READ_SKIPPED = SKIPPED - {"output"}
SUFFIXES = (".eval", ".json")
#: The newest log layout version read directly (``header.json``'s ``version``; 2 since 0.3.2x).
LOG_VERSION = 2
EXPECTED = "an Inspect AI log (.eval archive or .json log with 'eval' and 'samples')"


def inspect_ai_installed() -> bool:
    """Whether inspect-ai can be imported (the optional ``inspect`` extra)."""
    return importlib.util.find_spec("inspect_ai") is not None


def _header_archive(z: ZipJson) -> dict:
    names = set(z.names())
    if "header.json" in names:
        return z.read("header.json")
    if "_journal/start.json" in names:  # a log still running, or one that stopped early
        return z.read("_journal/start.json")
    raise DesignError(f"{z.path}: no header.json in the archive; expected {EXPECTED}.")


def _read_archive(path: Path) -> tuple[dict, Iterator[dict]]:
    """Header and samples (full: summaries drop a score's edit history), without inspect-ai."""
    if path.suffix == ".json":
        try:
            doc = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise DesignError(f"{path}: not valid JSON ({err}); expected {EXPECTED}.") from None
        if not isinstance(doc, dict):
            raise DesignError(f"{path}: expected {EXPECTED}.")
        return doc, iter(doc.get("samples") or [])
    if path.suffix != ".eval":
        raise DesignError(f"{path}: expected {EXPECTED}; the file name ends in {path.suffix or 'nothing'}.")
    z = ZipJson(path, EXPECTED)
    header = _header_archive(z)
    members = [n for n in z.names() if n.startswith("samples/") and n.endswith(".json")]
    return header, (z.read(n) for n in members)


def _read_inspect_ai(path: Path) -> tuple[dict, Iterator[dict]]:
    """The same two through inspect-ai's own readers (which also read remote logs)."""
    log = importlib.import_module("inspect_ai.log")
    try:
        header = log.read_eval_log(str(path), header_only=True).model_dump(mode="python")
    except Exception as err:  # inspect-ai raises many kinds on a foreign file
        raise DesignError(
            f"{path}: inspect-ai could not read it ({type(err).__name__}: {err}); expected {EXPECTED}."
        ) from None
    samples = log.read_eval_log_samples(str(path), all_samples_required=False, exclude_fields=READ_SKIPPED)
    return header, (s.model_dump(mode="python", exclude=READ_SKIPPED) for s in samples)


def output_lengths(output: object) -> tuple[int | None, int | None]:
    """The answer's length in characters (``completion``, else the first choice's text parts,
    as inspect-ai's ``ModelOutput.completion``) and in output tokens (``usage.output_tokens``),
    each ``None`` where the log does not say.

    >>> output_lengths({"completion": "Paris.", "usage": {"output_tokens": 3}})
    (6, 3)
    >>> output_lengths({"choices": [{"message": {"content": [{"type": "text", "text": "ab"}]}}]})
    (2, None)
    """
    if not isinstance(output, dict):
        return None, None
    text = output.get("completion")
    if not text:
        choices = output.get("choices") or []
        content = (choices[0].get("message") or {}).get("content") if choices else None
        if isinstance(content, str):
            text = content
        elif isinstance(content, list):
            text = "\n".join(
                c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text"
            )
    usage = output.get("usage") or {}
    tokens = usage.get("output_tokens") if isinstance(usage, dict) else None
    chars = len(text) if isinstance(text, str) and (text or output.get("choices")) else None
    return chars, (int(tokens) if isinstance(tokens, int | float) and tokens > 0 else None)


def _grader(spec: dict, header: dict, warned: set[str]) -> str | None:
    """The grader model of a model-graded scorer (None for a scorer with no model)."""
    options = spec.get("options") or {}
    if not ({"model", "model_role"} & set(options)):
        return None
    model = options.get("model")
    if model is None and options.get("model_role"):
        role = options["model_role"]
        role = role.get("name") if isinstance(role, dict) else role
        bound = (header["eval"].get("model_roles") or {}).get(role)
        model = bound if bound is not None else header["eval"].get("model")
    models = model if isinstance(model, list) else [model]
    names = [m.get("model") if isinstance(m, dict) else str(m) for m in models]
    if len(names) > 1 and spec["name"] not in warned:
        warned.add(spec["name"])
        warnings.warn(
            f"Scorer {spec['name']!r} majority-votes {len(names)} graders ({', '.join(names)}) into one "
            "score; the individual grades survive only in the log's events, so the judge facet sees "
            "one judge. Give each grader its own scorer (e.g. model_graded_qa(model_role='grader_a')) "
            "to measure judge variance.",
            DesignWarning,
            stacklevel=5,  # _grader, _judges, _frame, read_inspect, the user's call
        )
    return "+".join(names)


def _judges(header: dict, warned: set[str]) -> dict[str, str]:
    judges = {}
    for spec in header["eval"].get("scorers") or []:
        grader = _grader(spec, header, warned)
        judges[spec["name"]] = spec["name"] if grader is None else f"{spec['name']} ({grader})"
    return judges


def _temperature(header: dict) -> float:
    for config in ((header.get("plan") or {}).get("config"), header["eval"].get("model_generate_config")):
        if config and config.get("temperature") is not None:
            return float(config["temperature"])
    return float("nan")


def _values(score: dict) -> tuple[object, object | None]:
    """The judge's value and, for a score edited by a person, the edited value (the label)."""
    history = score.get("history") or []
    edited = [h for h in history if h.get("provenance") is not None]
    if history and edited and history[0].get("value") != "UNCHANGED":
        return history[0]["value"], score.get("value")
    return score.get("value"), None


def read_inspect(
    logs: str | Path | Sequence[str | Path],
    prompt: str | None = None,
    scorers: str | Sequence[str] | None = None,
    *,
    category: str | None = None,
    model: str | None = None,
    engine: Literal["auto", "inspect", "archive"] = "auto",
) -> pd.DataFrame:
    """Read Inspect AI evaluation logs into the long frame ``fit_posterior`` takes.

    Parameters
    ----------
    logs : str, Path or list
        A log file (``.eval`` or ``.json``), a folder (searched recursively) or a list of
        either. Several models are a folder of logs, one per model.
    prompt : str, optional
        The prompt-variant facet: a task argument (``eval.task_args``) or a sample ``metadata``
        key. By default the task arguments that differ between the logs (the task name when
        only tasks differ).
    scorers : str or list of str, optional
        Keep these scorers (default: all). A scorer whose value is a mapping gives one judge
        per key, named ``scorer/key``.
    category : str, optional
        A sample ``metadata`` key holding the item's category.
    model : str, optional
        Keep one model's rows (``eval.model``).
    engine : {"auto", "inspect", "archive"}
        ``archive`` reads the files directly (``.eval`` zip members or the ``.json``
        document); ``inspect`` reads them with inspect-ai's own readers (its pydantic
        validation made it 55x slower on 4,000 samples: ``benchmarks/bench_readers.py``);
        ``auto`` reads directly and hands a log whose layout version it does not know
        (newer than :data:`LOG_VERSION`) to inspect-ai when it is installed.

    Returns
    -------
    pandas.DataFrame
        Columns ``item, prompt, judge, replicate, model, temperature, score, log`` (+ ``task``,
        + ``category``, + ``label`` where a person edited a score with ``edit_score``: the
        judge's original verdict stays in ``score``, the correction is the ``label``). Scores:
        C/I/P/N as 1/0/0.5/0, numbers and booleans as they are. The roles are in ``attrs``, so
        ``fit_posterior(df)`` needs no role arguments; samples that errored and scores that
        are missing or unscored (NaN) are counted in ``attrs["dropped"]`` and said once.

    Raises
    ------
    DesignError
        For a file that is not an Inspect log (naming it), an unknown ``prompt`` key or
        scorer, or logs with nothing scored.

    Examples
    --------
    >>> import bayes_tee as bt
    >>> df = bt.read_inspect("logs/", prompt="wording")     # doctest: +SKIP
    >>> df.attrs["dropped"]                                 # doctest: +SKIP
    {'the score is unscored (NaN, grader_failed)': 4, 'the sample errored': 3}
    >>> post = bt.fit_posterior(df, random_seed=1)          # doctest: +SKIP
    """
    if engine not in ("auto", "inspect", "archive"):
        raise DesignError(f"engine must be 'auto', 'inspect' or 'archive', got {engine!r}.")
    if engine == "inspect" and not inspect_ai_installed():
        raise DesignError("engine='inspect' needs inspect-ai: pip install 'bayes_tee[inspect]'.")
    said: list[str] = []
    files = [p for p in log_files(logs, SUFFIXES, "Inspect AI logs", said) if p.name != "logs.json"]
    reader = _read_inspect_ai if engine == "inspect" else _read_archive
    logs_read = []
    runs: dict[str, Path] = {}
    for path in files:
        header, samples = reader(path)
        newer = isinstance(header, dict) and int(header.get("version") or 0) > LOG_VERSION
        if engine == "auto" and newer and inspect_ai_installed():
            header, samples = _read_inspect_ai(path)
        spec = header.get("eval") if isinstance(header, dict) else None
        if not isinstance(spec, dict) or "task" not in spec or "model" not in spec:
            raise DesignError(f"{path}: expected {EXPECTED}; this file has no 'eval' task and model.")
        run = spec.get("eval_id")
        if run is not None and run in runs:  # one run saved twice (.eval and .json, or renamed)
            said.append(f"{path} holds the same run (eval_id {run}) as {runs[run]}: read once.")
            continue
        if run is not None:
            runs[run] = path
        kept = [
            {k: v for k, v in sample.items() if k not in SKIPPED}
            | dict(
                zip(("_output_length", "_output_tokens"), output_lengths(sample.get("output")), strict=True)
            )
            for sample in samples
        ]
        logs_read.append((path, header, kept))
    source = f"{len(logs_read)} Inspect AI log(s)"
    return _frame(logs_read, prompt, scorers, category, model, source, said)


def _varying_args(logs_read: list) -> list[str]:
    """The task arguments whose values differ between the logs."""
    args = [h["eval"].get("task_args") or {} for _, h, _ in logs_read]
    keys = sorted({k for a in args for k in a})
    return [k for k in keys if len({json.dumps(a.get(k), sort_keys=True, default=str) for a in args}) > 1]


def _prompt_of(logs_read: list, prompt: str | None, notes: list[str]) -> tuple[str, object]:
    """How the prompt facet is found: ('arg', key), ('args', keys), ('meta', key) or ('task', None)."""
    args = [h["eval"].get("task_args") or {} for _, h, _ in logs_read]
    if prompt is not None:
        if any(prompt in a for a in args):
            return "arg", prompt
        if any(prompt in (s.get("metadata") or {}) for _, _, ss in logs_read for s in ss):
            return "meta", prompt
        keys = sorted({k for a in args for k in a})
        meta = sorted({k for _, _, ss in logs_read for s in ss[:50] for k in (s.get("metadata") or {})})
        raise DesignError(
            f"prompt={prompt!r} is neither a task argument ({keys or 'none'}) nor a sample metadata "
            f"key ({meta or 'none'}) in these logs."
        )
    varying = _varying_args(logs_read)
    tasks = {h["eval"]["task"] for _, h, _ in logs_read}
    if varying:
        notes.append(f"prompt facet: the task argument(s) that differ between logs: {', '.join(varying)}")
        return "args", varying
    if len(tasks) > 1:
        notes.append("prompt facet: the task name (the logs differ only in task)")
    return "task", None


def _runs_of_one_config(logs_read) -> dict[int, str]:
    """Log number -> its run's configuration key (task, model, task arguments, temperature)."""
    return {
        k: json.dumps(
            [h["eval"]["task"], h["eval"]["model"], h["eval"].get("task_args") or {}, _temperature(h)],
            sort_keys=True,
            default=str,
        )
        for k, (_, h, _) in enumerate(logs_read)
    }


def _item_namespace(logs_read, how, said: list[str]) -> bool:
    """Whether items are named ``task/id``: tasks that are not the prompt facet and share
    sample ids hold different items, which must not be merged.
    """
    tasks: dict[str, set] = {}
    for _, h, ss in logs_read:
        tasks.setdefault(h["eval"]["task"], set()).update(str(s["id"]) for s in ss)
    if len(tasks) < 2:
        return False
    shared = (
        set.intersection(*tasks.values())
        if len(tasks) == 2
        else {i for t in tasks for i in tasks[t] if sum(i in v for v in tasks.values()) > 1}
    )
    if how == "task":
        if shared:
            said.append(
                f"items: the tasks ({', '.join(sorted(tasks))}) are the prompt facet, so a sample id "
                f"is one item across them ({len(shared)} ids shared); read each task alone if the ids "
                "name different questions."
            )
        return False
    if shared:
        said.append(
            f"items: tasks {', '.join(sorted(tasks))} share {len(shared)} sample id(s) but are not the "
            "prompt facet, so their samples are different items: named 'task/id'."
        )
    return bool(shared)


def _check_unrecorded_args(logs_read, how: str, key: object, rows: list[dict]) -> None:
    """Refuse logs that differ in task arguments the frame does not record when their scores
    would land in the same cell (they would pass for replicates of one configuration).
    """
    varying = _varying_args(logs_read)
    used = [key] if how == "arg" else list(key) if how == "args" else []
    unrecorded = [k for k in varying if k not in used]
    if not unrecorded or not rows:
        return
    frame = pd.DataFrame(rows)
    cell = [c for c in ("model", "task", "prompt", "temperature", "item", "judge", "replicate") if c in frame]
    if frame.duplicated(cell).any():
        facet = f"prompt={key!r}" if how in ("arg", "meta") else "the prompt facet"
        raise DesignError(
            f"The logs differ in task argument(s) {unrecorded}, which {facet} does not record: their "
            f"scores would pool as replicates of one cell. Pass prompt={unrecorded[0]!r}, or read the "
            f"logs of one {unrecorded[0]} at a time."
        )


def _frame(logs_read, prompt, scorers, category, model, source, said=None) -> pd.DataFrame:
    dropped: Counter = Counter()
    notes: list[str] = []
    said = [] if said is None else said
    warned: set[str] = set()
    how, key = _prompt_of(logs_read, prompt, notes)
    if category is not None and not any(
        category in (s.get("metadata") or {}) for _, _, ss in logs_read for s in ss
    ):
        keys = sorted({k for _, _, ss in logs_read for s in ss[:50] for k in (s.get("metadata") or {})})
        raise DesignError(
            f"category={category!r} is not a sample metadata key in these logs; their keys are "
            f"{keys or 'none'}."
        )
    namespaced = _item_namespace(logs_read, how, said)
    config_of = _runs_of_one_config(logs_read)
    seen_uuid: dict[str, str] = {}
    taken: dict[tuple, str] = {}  # (configuration, item, epoch) -> the log that holds it
    tops: dict[tuple, dict[str, int]] = {}  # (configuration, item) -> log -> its largest epoch
    renumbered: Counter = Counter()
    repeated: Counter = Counter()
    judges_of = [_judges(header, warned) for _, header, _ in logs_read]
    all_scorers = [n for judges in judges_of for n in judges] + [
        n for _, _, ss in logs_read for s in ss for n in (s.get("scores") or {})
    ]
    keep = set(pick(all_scorers, scorers, "scorer"))
    rows = []
    for number, ((path, header, samples), judges) in enumerate(zip(logs_read, judges_of)):
        spec = header["eval"]
        order = {sid: k for k, sid in enumerate((spec.get("dataset") or {}).get("sample_ids") or [])}
        names = [n for n in judges if n in keep] or sorted(keep)
        args = spec.get("task_args") or {}
        base = {
            "model": spec["model"],
            "temperature": _temperature(header),
            "task": spec["task"],
            "log": path.name,
        }
        if how == "arg":
            base["prompt"] = str(args.get(key))
        elif how == "args":
            base["prompt"] = (
                ", ".join(f"{k}={args.get(k)}" for k in key) if len(key) > 1 else str(args.get(key[0]))
            )
        elif how == "task":
            base["prompt"] = spec["task"]
        if header.get("status") not in (None, "success"):
            notes.append(f"{path.name}: status {header.get('status')!r} (the samples it holds are read)")
        if not samples:
            said.append(
                f"{path.name} holds no samples (status {header.get('status')!r}): nothing read from it."
            )
        for s in samples:
            meta = s.get("metadata") or {}
            uuid = s.get("uuid")
            if uuid is not None and uuid in seen_uuid:  # a sample carried into a retry's log
                repeated[path.name, seen_uuid[uuid]] += 1
                continue
            if uuid is not None:
                seen_uuid[uuid] = path.name
            if s.get("error"):
                dropped[spec["model"], "the sample errored"] += max(len(names), 1)
                continue
            item = f"{spec['task']}/{s['id']}" if namespaced else s["id"]
            epoch = int(s.get("epoch") or 1)
            cell = (config_of[number], str(item))
            if taken.get((*cell, epoch), path.name) != path.name:
                # a separate run of the same configuration: its epochs follow the earlier runs'
                epoch += max(e for log, e in tops[cell].items() if log != path.name)
                renumbered[path.name] += 1
            taken[(*cell, epoch)] = path.name
            tops.setdefault(cell, {})[path.name] = max(epoch, tops.get(cell, {}).get(path.name, 0))
            row = {**base, "item": item, "replicate": epoch}
            row["output_length"], row["output_tokens"] = s["_output_length"], s["_output_tokens"]
            row["_order"] = (number, row["replicate"], order.get(s["id"], len(order)), str(s["id"]))
            if how == "meta":
                row["prompt"] = None if meta.get(key) is None else str(meta.get(key))
            if category is not None:
                row["category"] = meta.get(category)
            scores = s.get("scores") or {}
            for name in sorted(set(scores) | set(names), key=lambda n: (n not in judges, n)):
                if name not in keep:
                    continue
                if name not in scores:
                    dropped[spec["model"], "the score is missing"] += 1
                    continue
                score = scores[name]
                score = score if isinstance(score, dict) else {"value": score}
                value, label = _values(score)
                pairs = value.items() if isinstance(value, dict) else [(None, value)]
                labels = label if isinstance(label, dict) else {}
                for sub, v in pairs:
                    judge = judges.get(name, name) + ("" if sub is None else f"/{sub}")
                    try:
                        out = {**row, "judge": judge, "score": score_value(v)}
                    except Unscorable as why:
                        reason = str(why)
                        if score.get("reason") and "NaN" in reason:
                            reason = f"{reason[:-1]}, {score['reason']})"
                        dropped[spec["model"], reason] += 1
                        continue
                    lab = labels.get(sub) if sub is not None else label
                    if lab is not None:
                        try:
                            out["label"] = score_value(lab)
                        except Unscorable:
                            pass
                    rows.append(out)
    for (name, earlier), n in repeated.items():
        said.append(f"{name}: {n} sample(s) already read from {earlier} (same sample uuid): read once.")
    for name, n in renumbered.items():
        said.append(
            f"{name}: {n} sample(s) repeat the (item, epoch) of an earlier log of the same task, model "
            "and settings (a separate run): numbered on as further replicates."
        )
    _check_unrecorded_args(logs_read, how, key, rows)
    rows.sort(key=lambda r: r.pop("_order"))  # log, epoch, dataset order: the same for both engines
    return long_frame(rows, dropped, notes, source, model=model, stacklevel=4, said=said)
