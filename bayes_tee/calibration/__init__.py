"""Judge calibration (LLM-as-a-Judge bias paper 2026): judge sensitivity and specificity from
labelled calibration
items with Beta priors (:mod:`~bayes_tee.calibration.model`), the corrected accuracy per system
(:mod:`~bayes_tee.calibration.fit`) and the classical baselines it is compared with
(:mod:`~bayes_tee.calibration.baselines`: naive, Rogan-Gladen, PPI++).
"""

from . import baselines, data, model
from .fit import JudgeCalibration, calibrate, split

__all__ = ["JudgeCalibration", "baselines", "calibrate", "data", "model", "split"]
