"""Old import paths of modules and names that moved: they still import, with a
:class:`DeprecationWarning` naming the new place, until 0.4.

Modules: ``import bayes_tee.posterior.report`` gives the module now at
``bayes_tee.posterior.reports.single`` (the same module object, so state is shared). Names: a
module that gave a name away ends with ``__getattr__ = moved_names(__name__, {...})``, so
``from bayes_tee.posterior.dstudy import counts_with`` still works, with the warning.

The warning comes once per process, at the first import of the old path (the example forgets
an earlier one so that it shows the warning whatever ran before it):

>>> import importlib, sys, warnings
>>> _ = sys.modules.pop("bayes_tee.posterior.comparison", None)
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     comparison = importlib.import_module("bayes_tee.posterior.comparison")
>>> comparison.__name__, caught[0].category.__name__
('bayes_tee.posterior.reports.systems', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from typing import Any, Callable

#: Old module -> its module now (full dotted names).
MODULES: dict[str, str] = {
    "bayes_tee.posterior.report": "bayes_tee.posterior.reports.single",
    "bayes_tee.posterior.comparison": "bayes_tee.posterior.reports.systems",
    # one folder per likelihood family (an old module now a folder's name hands out its names
    # from the folder's __init__ instead)
    "bayes_tee.likelihoods.augment": "bayes_tee.likelihoods.strata.augment",
    "bayes_tee.likelihoods.balanced": "bayes_tee.likelihoods.strata.balanced",
    "bayes_tee.likelihoods.augmented": "bayes_tee.likelihoods.strata.augmented",
    "bayes_tee.likelihoods.strata_density": "bayes_tee.likelihoods.strata.density",
    "bayes_tee.likelihoods.kernels.strata": "bayes_tee.likelihoods.strata.kernel",
    "bayes_tee.likelihoods.blocks_layout": "bayes_tee.likelihoods.blocks.layout",
    "bayes_tee.likelihoods.blocks_density": "bayes_tee.likelihoods.blocks.density",
    "bayes_tee.likelihoods.kernels.blocks": "bayes_tee.likelihoods.blocks.kernel",
    "bayes_tee.likelihoods.glmm_layout": "bayes_tee.likelihoods.logit_glmm.layout",
    "bayes_tee.likelihoods.binomial": "bayes_tee.likelihoods.logit_glmm.model",
    "bayes_tee.likelihoods.quadrature": "bayes_tee.likelihoods.logit_glmm.quadrature",
    "bayes_tee.likelihoods.binomial_density": "bayes_tee.likelihoods.logit_glmm.density",
    "bayes_tee.likelihoods.kernels.binomial": "bayes_tee.likelihoods.logit_glmm.kernel",
    "bayes_tee.likelihoods.ordinal_layout": "bayes_tee.likelihoods.ordinal.layout",
    "bayes_tee.likelihoods.ordinal_density": "bayes_tee.likelihoods.ordinal.density",
    "bayes_tee.likelihoods.kernels.ordinal": "bayes_tee.likelihoods.ordinal.kernel",
}


def warn_moved(old: str, new: str, stacklevel: int) -> None:
    """Warn that ``old`` moved to ``new`` (a :class:`DeprecationWarning` at ``stacklevel``)."""
    warnings.warn(
        f"{old} moved to {new}; import it from there (the old path is removed in 0.4).",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def moved_names(module: str, names: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that hands out the ``names`` it gave away (name -> the module
    now holding it), each with a deprecation warning.
    """

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warn_moved(f"{module}.{name}", f"{names[name]}.{name}", stacklevel=3)
        return getattr(importlib.import_module(names[name]), name)

    return __getattr__


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path of :data:`MODULES` and loads it as the module at its new path."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: D102
        return importlib.machinery.ModuleSpec(fullname, self) if fullname in MODULES else None

    def create_module(self, spec):  # noqa: D102
        return types.ModuleType(spec.name)

    def exec_module(self, module):  # noqa: D102
        # the import system returns what sys.modules holds under the name after this call
        new = MODULES[module.__name__]
        warn_moved(module.__name__, new, stacklevel=4)
        sys.modules[module.__name__] = importlib.import_module(new)


def install() -> None:
    """Put the alias finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
