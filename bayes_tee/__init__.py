"""bayes_tee: Bayesian total evaluation error (TEE) for LLM evaluation pipelines.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> post = bt.fit_posterior(df, outcome="score", item="item", prompt="prompt", judge="judge",
...                         temperature="temperature", replicate="replicate",
...                         category="category", random_seed=1)  # doctest: +SKIP
>>> post.shares()  # doctest: +SKIP

The package is one room per topic (:doc:`/guide/architecture`): :mod:`bayes_tee.design` (data
-> validated design), :mod:`bayes_tee.families`, :mod:`bayes_tee.likelihoods`,
:mod:`bayes_tee.posterior` (the questions asked of a fit), :mod:`bayes_tee.tee` (the front
door, :func:`fit_posterior`, and the refits), :mod:`bayes_tee.calibration`,
:mod:`bayes_tee.pairwise`, :mod:`bayes_tee.noise`, :mod:`bayes_tee.studies` (``bt.simulate``),
:mod:`bayes_tee.plots`, :mod:`bayes_tee.io` (readers for Inspect AI, promptfoo and lm-eval
logs), with shared machinery in ``bayes_tee._core``.

Every public name is imported when first used (``bt.fit_posterior`` loads the fitting
machinery, ``bt.plots`` matplotlib), so ``import bayes_tee`` and the command line start at once.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._core import moved as _moved
from ._core.exceptions import (
    ArgumentError,
    CalibrationWarning,
    DesignError,
    DesignWarning,
    DiagnosticWarning,
    FileError,
    MissingFileError,
    SamplingError,
    UnknownNameError,
)
from ._core.version import __version__

#: Public name -> (module, attribute); attribute ``None``: the name is the module itself.
_LAZY: dict[str, tuple[str, str | None]] = {
    "allocation": ("bayes_tee.allocation", None),
    "adaptive": ("bayes_tee.adaptive", None),
    "run_adaptive": ("bayes_tee.adaptive.run", "run_adaptive"),
    "AdaptiveRun": ("bayes_tee.adaptive.run", "AdaptiveRun"),
    "design": ("bayes_tee.design", None),
    "families": ("bayes_tee.families", None),
    "likelihoods": ("bayes_tee.likelihoods", None),
    "posterior": ("bayes_tee.posterior", None),
    "tee": ("bayes_tee.tee", None),
    "calibration": ("bayes_tee.calibration", None),
    "datasets": ("bayes_tee.datasets", None),
    "io": ("bayes_tee.io", None),
    "noise": ("bayes_tee.noise", None),
    "pairwise": ("bayes_tee.pairwise", None),
    "plots": ("bayes_tee.plots", None),
    "studies": ("bayes_tee.studies", None),
    #: ``bt.simulate`` is the studies package: data-generating processes and coverage studies.
    "simulate": ("bayes_tee.studies", None),
    #: ``bt.plugin``: the classical ANOVA/EMS G-study (``bt.plugin.fit(df, formula=...)``).
    "plugin": ("bayes_tee.studies.plugin", None),
    "priors": ("bayes_tee._core.priors", None),
    "components": ("bayes_tee.posterior.components", None),
    "gaming": ("bayes_tee.posterior.gaming", None),
    "sensitivity": ("bayes_tee.tee.prior_refits", None),
    "raee": ("bayes_tee.pairwise.raee", None),
    "judge_baselines": ("bayes_tee.calibration.baselines", None),
    "beta_from_mode": ("bayes_tee._core.beta_prior", "beta_from_mode"),
    "JudgeCalibration": ("bayes_tee.calibration", "JudgeCalibration"),
    "calibrate": ("bayes_tee.calibration", "calibrate"),
    "read_inspect": ("bayes_tee.io", "read_inspect"),
    "read_lm_eval": ("bayes_tee.io", "read_lm_eval"),
    "read_promptfoo": ("bayes_tee.io", "read_promptfoo"),
    "anova_estimates": ("bayes_tee.likelihoods.anova", "anova_estimates"),
    "Design": ("bayes_tee.design.design", "Design"),
    "validate_design": ("bayes_tee.design.roles", "validate_design"),
    "build_design": ("bayes_tee.design.build", "build_design"),
    "bias_covariates": ("bayes_tee.design.bias", "bias_covariates"),
    "fit_posterior": ("bayes_tee.tee.fit", "fit_posterior"),
    "Posterior": ("bayes_tee.posterior.facade", "Posterior"),
    "SystemsPosterior": ("bayes_tee.posterior.facade", "SystemsPosterior"),
    "load": ("bayes_tee.posterior.facade", "load"),
    "LeaveOneOut": ("bayes_tee.tee.refits", "LeaveOneOut"),
    "compare_links": ("bayes_tee.tee.refits", "compare_links"),
    "leave_one_out": ("bayes_tee.tee.refits", "leave_one_out"),
    "prior_sensitivity": ("bayes_tee.tee.prior_refits", "prior_sensitivity"),
}

if TYPE_CHECKING:  # what a type checker and an IDE see; at run time __getattr__ imports them
    from . import (
        adaptive,
        allocation,
        calibration,
        datasets,
        design,
        families,
        io,
        likelihoods,
        noise,
        pairwise,
        plots,
        posterior,
        studies,
        tee,
    )
    from . import studies as simulate
    from ._core import priors
    from ._core.beta_prior import beta_from_mode
    from .adaptive.run import AdaptiveRun, run_adaptive
    from .calibration import JudgeCalibration, calibrate
    from .calibration import baselines as judge_baselines
    from .design.bias import bias_covariates
    from .design.build import build_design
    from .design.design import Design
    from .design.roles import validate_design
    from .io import read_inspect, read_lm_eval, read_promptfoo
    from .likelihoods.anova import anova_estimates
    from .pairwise import raee
    from .posterior import components, gaming
    from .posterior.facade import Posterior, SystemsPosterior, load
    from .studies import plugin
    from .tee import prior_refits as sensitivity
    from .tee.fit import fit_posterior
    from .tee.prior_refits import prior_sensitivity
    from .tee.refits import LeaveOneOut, compare_links, leave_one_out


def __getattr__(name: str):
    """Import a public name on first use and keep it (PEP 562)."""
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'bayes_tee' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AdaptiveRun",
    "ArgumentError",
    "CalibrationWarning",
    "Design",
    "DesignError",
    "DesignWarning",
    "DiagnosticWarning",
    "FileError",
    "JudgeCalibration",
    "LeaveOneOut",
    "MissingFileError",
    "Posterior",
    "SystemsPosterior",
    "SamplingError",
    "UnknownNameError",
    "__version__",
    "adaptive",
    "allocation",
    "anova_estimates",
    "beta_from_mode",
    "bias_covariates",
    "build_design",
    "calibrate",
    "calibration",
    "compare_links",
    "components",
    "datasets",
    "design",
    "families",
    "fit_posterior",
    "gaming",
    "io",
    "judge_baselines",
    "leave_one_out",
    "likelihoods",
    "load",
    "noise",
    "pairwise",
    "plots",
    "plugin",
    "posterior",
    "prior_sensitivity",
    "priors",
    "raee",
    "read_inspect",
    "read_lm_eval",
    "read_promptfoo",
    "run_adaptive",
    "sensitivity",
    "simulate",
    "studies",
    "tee",
    "validate_design",
]

_moved.install()  # old module paths import, with a DeprecationWarning
