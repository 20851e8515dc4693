"""Simulation studies: data-generating processes with known truth (:mod:`~bayes_tee.studies.dgp`;
judge-bias designs with slopes, :mod:`~bayes_tee.studies.bias_designs`),
interval coverage (:mod:`~bayes_tee.studies.coverage`), repeated-evaluation checks
(:mod:`~bayes_tee.studies.repeated`), the classical plug-in fit they compare against
(:mod:`~bayes_tee.studies.plugin`) and simulation-based calibration of the likelihoods
(:mod:`~bayes_tee.studies.sbc`). Exposed as ``bt.simulate``.
"""

from . import bias_designs, coverage, dgp, plugin, repeated, sbc, verdicts_dgp
from .bias_designs import bias_dgp
from .coverage import CoverageStudy, coverage_staircase, coverage_study
from .dgp import (
    TABLE8_SENSITIVITY,
    gstudy_dgp,
    panel_effects,
    spread_levels,
    systems_dgp,
    tee_dgp,
)
from .sbc import SBCRun, sbc_study
from .verdicts_dgp import judge_calibration, pairwise_battles

__all__ = [
    "TABLE8_SENSITIVITY",
    "CoverageStudy",
    "bias_dgp",
    "bias_designs",
    "coverage",
    "coverage_staircase",
    "coverage_study",
    "dgp",
    "gstudy_dgp",
    "judge_calibration",
    "pairwise_battles",
    "panel_effects",
    "plugin",
    "repeated",
    "SBCRun",
    "sbc",
    "sbc_study",
    "spread_levels",
    "systems_dgp",
    "tee_dgp",
    "verdicts_dgp",
]
