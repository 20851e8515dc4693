"""Running a simulation study's chunks in worker processes or on a dask cluster: submitting,
collecting as they finish, starting spawned workers safely, and a progress bar.

>>> from concurrent.futures import ThreadPoolExecutor
>>> with ThreadPoolExecutor(1) as ex:
...     [f.result() for f in as_completed(ex, [submit(ex, sum, [1, 2])])]
[3]
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys


@contextlib.contextmanager
def main_not_reimported(active: bool):
    """Start spawned workers without re-running the user's main module.

    ``spawn`` makes each worker import ``__main__`` from its file: that fails for a script read
    from stdin (``<stdin>`` is not a file) and re-runs a script without a ``__main__`` guard in
    every worker. The workers need nothing from it (the payload carries any code by value), so
    while they start, ``__main__`` shows no file to import.
    """
    main = sys.modules.get("__main__")
    saved = {k: getattr(main, k) for k in ("__file__", "__spec__") if hasattr(main, k)} if active else {}
    try:
        for k in saved:
            if k == "__file__":
                delattr(main, k)
            else:
                setattr(main, k, None)
        yield
    finally:
        for k, v in saved.items():
            setattr(main, k, v)


def submit(executor, fn, *args):
    """``executor.submit(fn, *args)``; on a dask client, marked impure (every chunk runs)."""
    return executor.submit(fn, *args, pure=False) if is_dask(executor) else executor.submit(fn, *args)


def is_dask(executor) -> bool:
    """Whether ``executor`` is a dask ``distributed`` client."""
    return type(executor).__module__.startswith("distributed")


def as_completed(executor, futures):
    """The futures in the order they finish, for a process pool or a dask client."""
    if is_dask(executor):
        from distributed import as_completed

        return as_completed(futures)
    from concurrent.futures import as_completed

    return as_completed(futures)


class progress:
    """A rich progress bar over data sets (or nothing)."""

    def __init__(self, show: bool, total: int) -> None:
        self.show, self.total = show, total

    def __enter__(self):
        if not self.show or self.total == 0:
            return lambda n: None
        from rich.progress import Progress

        self.bar = Progress()
        self.bar.start()
        task = self.bar.add_task("simulated data sets", total=self.total)
        return lambda n: self.bar.advance(task, n)

    def __exit__(self, *exc) -> None:
        if self.show and self.total:
            self.bar.stop()


def study_key(dgp, design, dgp_kwargs, methods, levels, random_seed, n_components, n_boot, fit_kwargs) -> str:
    """A short digest of a study's arguments: the key its cached results are stored under."""
    name = f"{getattr(dgp, '__module__', '')}.{getattr(dgp, '__qualname__', repr(dgp))}"
    parts = [
        name,
        design,
        dgp_kwargs,
        list(methods),
        list(levels),
        random_seed,
        n_components,
        n_boot,
        fit_kwargs,
    ]
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]
