"""Old import paths of the modules that left ``bayes_tee.tee``: they still import, with
a :class:`DeprecationWarning` naming the new path, until 0.4.

``import bayes_tee.design.roles`` (or ``from bayes_tee.tee import design``) gives the module now at
``bayes_tee.design.roles``; both names are the same module object, so state is shared.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from bayes_tee.tee import anova
>>> anova.__name__, caught[0].category.__name__
('bayes_tee.likelihoods.anova', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

#: Old module (under ``bayes_tee.tee``) -> its module now.
MOVED: dict[str, str] = {
    "terms": "bayes_tee.design.terms",
    "formula": "bayes_tee.design.formula",
    "design": "bayes_tee.design.roles",
    "formula_design": "bayes_tee.design.from_formula",
    "outofcore": "bayes_tee.design.out_of_core",
    "losses": "bayes_tee.design.losses",
    "anova": "bayes_tee.likelihoods.anova",
    "augment": "bayes_tee.likelihoods.strata.augment",
    "linalg": "bayes_tee.likelihoods.linalg",
    "likelihoods": "bayes_tee.likelihoods",
    "likelihoods.augmented": "bayes_tee.likelihoods.strata.augmented",
    "likelihoods.balanced": "bayes_tee.likelihoods.strata.balanced",
    "likelihoods.binomial": "bayes_tee.likelihoods.logit_glmm.model",
    "likelihoods.binomial_density": "bayes_tee.likelihoods.logit_glmm.density",
    "likelihoods.cells": "bayes_tee.likelihoods.cells.model",
    "likelihoods.marginal": "bayes_tee.likelihoods.marginal.model",
    "likelihoods.parts": "bayes_tee.likelihoods.parts",
    "likelihoods.quadrature": "bayes_tee.likelihoods.logit_glmm.quadrature",
    "likelihoods.strata_density": "bayes_tee.likelihoods.strata.density",
    "likelihoods.strata_kernel": "bayes_tee.likelihoods.strata.kernel",
    "likelihoods.binomial_kernel": "bayes_tee.likelihoods.logit_glmm.kernel",
    "likelihoods.prior_kernel": "bayes_tee.likelihoods.kernels.prior",
    "posterior": "bayes_tee.posterior.facade",
    "io": "bayes_tee.posterior.netcdf",
    "components": "bayes_tee.posterior.components",
    "dstudy": "bayes_tee.posterior.dstudy",
    "reliability": "bayes_tee.posterior.reliability",
    "predictive": "bayes_tee.posterior.predictive",
    "budget": "bayes_tee.posterior.budget",
    "gaming": "bayes_tee.posterior.gaming",
    "report": "bayes_tee.posterior.reports.single",
    "theta": "bayes_tee.posterior.theta",
    "psens": "bayes_tee.posterior.power_scaling",
    "links": "bayes_tee.posterior.link_comparison",
    "sensitivity": "bayes_tee.tee.prior_refits",
}
PREFIX = "bayes_tee.tee."


def resolve(old: str) -> types.ModuleType:
    """The module now at the place of ``bayes_tee.tee.<old>``, with a deprecation warning."""
    new = MOVED[old]
    warnings.warn(
        f"bayes_tee.tee.{old} moved to {new}; import it from there (the old path is removed in 0.4).",
        DeprecationWarning,
        stacklevel=3,
    )
    return importlib.import_module(new)


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``bayes_tee.tee.<old>`` and loads it as the module at its new path."""

    def find_spec(self, fullname, path=None, target=None):  # noqa: D102
        old = fullname.removeprefix(PREFIX)
        if fullname.startswith(PREFIX) and old in MOVED:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):  # noqa: D102
        return types.ModuleType(spec.name)

    def exec_module(self, module):  # noqa: D102
        # the import system returns what sys.modules holds under the name after this call
        sys.modules[module.__name__] = resolve(module.__name__.removeprefix(PREFIX))


def install() -> None:
    """Put the alias finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _Alias) for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias())
