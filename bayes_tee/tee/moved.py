"""Old import paths of the modules that left ``bayes_tee.tee``: they still import, with
a :class:`DeprecationWarning` naming the new path, until 0.4.

``import bayes_tee.design.roles`` (or ``from bayes_tee.tee import design``) gives the module now at
``bayes_tee.design.roles``; both names are the same module object, so state is shared.

The warning comes once per process, at the first import of the old path (the example forgets
an earlier one so that it shows the warning whatever ran before it):

>>> import importlib, sys, warnings
>>> _ = sys.modules.pop("bayes_tee.tee.anova", None)
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     anova = importlib.import_module("bayes_tee.tee.anova")
>>> anova.__name__, caught[0].category.__name__
('bayes_tee.likelihoods.anova', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import types

from .._core.moved import MODULES, warn_moved
from .._core.moved import install as install_finder

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
    warn_moved(PREFIX + old, new, stacklevel=4)
    return importlib.import_module(new)


def install() -> None:
    """Register the old ``bayes_tee.tee.*`` paths with the package's alias finder
    (:mod:`bayes_tee._core.moved`) and put it first on ``sys.meta_path`` (once).
    """
    MODULES.update({PREFIX + old: new for old, new in MOVED.items()})
    install_finder()
