"""Simulation studies: data-generating processes with known truth (:mod:`~bayes_tee.studies.dgp`),
interval coverage (:mod:`~bayes_tee.studies.coverage`), repeated-evaluation checks
(:mod:`~bayes_tee.studies.repeated`) and the classical plug-in fit they compare against
(:mod:`~bayes_tee.studies.plugin`). Exposed as ``bt.simulate``.
"""

from . import coverage, dgp, plugin, repeated
from .coverage import CoverageStudy, coverage_staircase, coverage_study
from .dgp import (
    TABLE8_SENSITIVITY,
    gstudy_dgp,
    judge_calibration,
    pairwise_battles,
    panel_effects,
    spread_levels,
    systems_dgp,
    tee_dgp,
)

__all__ = [
    "TABLE8_SENSITIVITY",
    "CoverageStudy",
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
    "spread_levels",
    "systems_dgp",
    "tee_dgp",
]
