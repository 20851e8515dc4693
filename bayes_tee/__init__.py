"""bayes_tee: Bayesian total evaluation error (TEE) for LLM evaluation pipelines.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> post = bt.fit_posterior(df, outcome="score", item="item", prompt="prompt", judge="judge",
...                         temperature="temperature", replicate="replicate",
...                         category="category", random_seed=1)  # doctest: +SKIP
>>> post.shares()  # doctest: +SKIP

The package is one room per topic (see the README's layout section): :mod:`bayes_tee.tee`
(the TEE / G-theory core), :mod:`bayes_tee.calibration`, :mod:`bayes_tee.pairwise`,
:mod:`bayes_tee.noise`, :mod:`bayes_tee.studies` (``bt.simulate``), :mod:`bayes_tee.plots`,
:mod:`bayes_tee.io` (readers for Inspect AI, promptfoo and lm-eval logs),
with shared machinery in ``bayes_tee._core``.
"""

from . import allocation, calibration, datasets, io, noise, pairwise, plots, studies
from ._core import priors
from ._core.beta_prior import beta_from_mode
from ._core.exceptions import CalibrationWarning, DesignError, DesignWarning, DiagnosticWarning
from ._core.version import __version__
from .calibration import JudgeCalibration, calibrate
from .calibration import baselines as judge_baselines
from .design.roles import Design, validate_design
from .io import read_inspect, read_lm_eval, read_promptfoo
from .likelihoods.anova import anova_estimates
from .pairwise import raee
from .posterior import components, gaming
from .posterior.facade import Posterior, load
from .tee import prior_refits as sensitivity
from .tee.fit import fit_posterior
from .tee.prior_refits import prior_sensitivity
from .tee.refits import LeaveOneOut, compare_links, leave_one_out

#: ``bt.simulate`` is the studies package: data-generating processes and coverage studies.
simulate = studies
#: ``bt.plugin``: the classical ANOVA/EMS G-study (``bt.plugin.fit(df, formula=...)``).
plugin = studies.plugin

__all__ = [
    "plugin",
    "CalibrationWarning",
    "Design",
    "DesignError",
    "DesignWarning",
    "DiagnosticWarning",
    "JudgeCalibration",
    "LeaveOneOut",
    "Posterior",
    "__version__",
    "allocation",
    "anova_estimates",
    "beta_from_mode",
    "calibrate",
    "calibration",
    "compare_links",
    "components",
    "datasets",
    "fit_posterior",
    "gaming",
    "io",
    "judge_baselines",
    "leave_one_out",
    "load",
    "noise",
    "pairwise",
    "plots",
    "prior_sensitivity",
    "priors",
    "raee",
    "read_inspect",
    "read_lm_eval",
    "read_promptfoo",
    "sensitivity",
    "simulate",
    "studies",
    "validate_design",
]
