"""bayes_tee: Bayesian total evaluation error (TEE) for LLM evaluation pipelines.

>>> import bayes_tee as bt
>>> df = bt.datasets.load("tee_demo")
>>> post = bt.fit_posterior(df, outcome="score", item="item", prompt="prompt", judge="judge",
...                         temperature="temperature", replicate="replicate",
...                         category="category", random_seed=1)  # doctest: +SKIP
>>> post.shares()  # doctest: +SKIP
"""

__version__ = "0.2.0"

from . import allocation, calibration, datasets, gaming, judge_baselines, noise, pairwise, priors, raee, sensitivity, simulate  # noqa: E402
from .beta_prior import beta_from_mode  # noqa: E402
from .calibration import JudgeCalibration, calibrate  # noqa: E402
from .anova import anova_estimates  # noqa: E402
from .design import Design, validate_design  # noqa: E402
from .exceptions import CalibrationWarning, DesignError, DesignWarning, DiagnosticWarning  # noqa: E402
from .fit import fit_posterior  # noqa: E402
from .leave_out import LeaveOneOut, leave_one_out  # noqa: E402
from .links import compare_links  # noqa: E402
from .posterior import Posterior, load  # noqa: E402
from .sensitivity import prior_sensitivity  # noqa: E402

__all__ = [
    "CalibrationWarning",
    "Design",
    "DesignError",
    "DesignWarning",
    "DiagnosticWarning",
    "JudgeCalibration",
    "LeaveOneOut",
    "Posterior",
    "allocation",
    "anova_estimates",
    "beta_from_mode",
    "calibrate",
    "calibration",
    "compare_links",
    "datasets",
    "fit_posterior",
    "judge_baselines",
    "leave_one_out",
    "load",
    "noise",
    "prior_sensitivity",
    "priors",
    "sensitivity",
    "simulate",
    "validate_design",
]
